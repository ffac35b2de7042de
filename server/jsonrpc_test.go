package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkRead reads line as the go-sdk's stdio transport does (the decoder
// that ends a session when it cannot read a message), n messages of it.
func sdkRead(line []byte, n int) ([]jsonrpc.Message, error) {
	conn, err := (&mcp.IOTransport{Reader: io.NopCloser(bytes.NewReader(append(line, '\n'))), Writer: nopWriteCloser{}}).Connect(context.Background())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var msgs []jsonrpc.Message
	for range n {
		m, err := conn.Read(context.Background())
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }

// deep is a ping nested depth levels deep, the message's object included.
func deep(depth int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":%s%s}}`,
		strings.Repeat("[", depth-2), strings.Repeat("]", depth-2))
}

// TestDepthIsTheGoSDKs: maxDepth is the go-sdk's: the deepest message
// the front door lets through, alone or in a batch, is one the go-sdk
// reads, and one level more it cannot read.
func TestDepthIsTheGoSDKs(t *testing.T) {
	for _, c := range []struct {
		name string
		body func(depth int) []byte
	}{
		{"message", deep},
		{"batch", func(depth int) []byte { return append(append([]byte("["), deep(depth-1)...), ']') }},
	} {
		ok, over := c.body(maxDepth), c.body(maxDepth+1)
		if _, rerr := readMessages(ok, DefaultMaxNumberDigits); rerr != nil {
			t.Errorf("%s %d deep: refused: %s", c.name, maxDepth, rerr.message)
		}
		if _, err := sdkRead(ok, 1); err != nil {
			t.Errorf("%s %d deep: the go-sdk cannot read it: %v", c.name, maxDepth, err)
		}
		if _, rerr := readMessages(over, DefaultMaxNumberDigits); rerr == nil || rerr.code != jsonrpc.CodeInvalidRequest {
			t.Errorf("%s %d deep: %v, want invalid request", c.name, maxDepth+1, rerr)
		}
		if _, err := sdkRead(over, 1); err == nil {
			t.Errorf("%s %d deep: the go-sdk reads it: maxDepth is no longer its bound", c.name, maxDepth+1)
		}
	}
}

// FuzzReadMessagesAsTheGoSDK: whatever readMessages lets through, the
// go-sdk's stdio transport reads without ending the session, as the same
// messages: request or response, method, id.
func FuzzReadMessagesAsTheGoSDK(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x","data":null}}`,
		`{"jsonrpc":"2.0","id":1,"error":"boom"}`, `{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":null}`, `{"jsonrpc":"2.0","id":2.0,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]`,
		`{"jsonrpc":"2.0","id":1e2,"method":"ping","error":null,"result":[1]}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\\u0041\",\"method\":\"p\xffing\"}",
		`{"jsonrpc":"2.0","id":1,"error":{"code":-0,"message":"x","Code":"y"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Add(deep(maxDepth))
	f.Fuzz(func(t *testing.T, b []byte) {
		if bytes.ContainsAny(b, "\r\n") {
			return // one line
		}
		msgs, rerr := readMessages(trimSpace(b), DefaultMaxNumberDigits)
		if rerr != nil {
			return
		}
		got, err := sdkRead(trimSpace(b), len(msgs))
		if err != nil {
			t.Fatalf("%q: let through, but the go-sdk cannot read it: %v", b, err)
		}
		for i, m := range msgs {
			switch g := got[i].(type) {
			case *jsonrpc.Request:
				if !m.isRequest() || (utf8.ValidString(m.Method) && g.Method != m.Method) || idKey(m.ID) != sdkIDKey(g.ID) {
					t.Fatalf("%q: message %d read as request %q id %v; the front door read method %q id %s", b, i, g.Method, g.ID.Raw(), m.Method, m.ID)
				}
			case *jsonrpc.Response:
				if m.isRequest() || idKey(m.ID) != sdkIDKey(g.ID) {
					t.Fatalf("%q: message %d read as a response with id %v; the front door read method %q id %s", b, i, g.ID.Raw(), m.Method, m.ID)
				}
			}
		}
	})
}

// sdkIDKey is idKey of an id as the go-sdk holds it.
func sdkIDKey(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case int64:
		return fmt.Sprintf("n%d", v)
	case string:
		return "s" + v
	}
	return ""
}

// TestNumberDigits: a number's digits written out in full, and whether
// it is an integer, read off its literal.
func TestNumberDigits(t *testing.T) {
	for _, c := range []struct {
		lit     string
		digits  int
		integer bool
	}{
		{"0", 1, true}, {"-0", 1, true}, {"10", 2, true}, {"1.5", 2, false}, {"0.001", 4, false},
		{"1e3", 4, true}, {"1E+3", 4, true}, {"-1e3", 4, true}, {"5e-324", 325, false}, {"1.5e1", 2, true},
		{"1.25e1", 3, false}, {"123e-1", 3, false}, {"120e-1", 3, true}, {"0e0", 1, true}, {"0.0", 2, true},
		{"1e0000000000000000000003", 4, true}, {"1e-1", 2, false}, {"1.7976931348623157e308", 309, true},
		{"1e3000000", 3000001, true},
	} {
		digits, integer := numberDigits([]byte(c.lit))
		if digits != c.digits || integer != c.integer {
			t.Errorf("%s: %d digits, integer %v; want %d, %v", c.lit, digits, integer, c.digits, c.integer)
		}
	}
	if digits, _ := numberDigits([]byte("1e99999999999999999999999999")); digits < 1<<40 {
		t.Errorf("1e99999999999999999999999999: %d digits", digits)
	}
}

// plainEnvelopeSeeds are messages plainEnvelope reads and messages it
// leaves to the full read.
var plainEnvelopeSeeds = []string{
	`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"t"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	` { "jsonrpc" : "2.0" , "id" : "a" , "result" : { } } `,
	`{"jsonrpc":"2.0","id":null,"method":null,"params":null,"result":null}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"error":null}`,
	`{"JSONRPC":"2.0","ID":1,"Method":"x","-":1,"method":"ping"}`,
	`{"json\u0072pc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`,
	`{"jsonrpc":2,"id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping"}xyz`,
	`{"jsonrpc":"2.0","id":1,"method":"ping"}{}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping"`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"p\xffing\"}",
	`{"jsonrpc":"2.0","id":[1,{"a":2}],"method":{"x":"y"},"params":[1,2]}`,
}

// TestPlainEnvelopeIsUnmarshal: what plainEnvelope reads, it reads as
// jsonv2.Unmarshal does; the typical call is one it reads.
func TestPlainEnvelopeIsUnmarshal(t *testing.T) {
	for _, s := range plainEnvelopeSeeds {
		checkPlainEnvelope(t, []byte(s))
	}
	var m envelope
	if !plainEnvelope([]byte(plainEnvelopeSeeds[0]), &m) {
		t.Errorf("a tools/call is left to the full read")
	}
}

func FuzzPlainEnvelope(f *testing.F) {
	for _, s := range plainEnvelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkPlainEnvelope)
}

// checkPlainEnvelope fails t when plainEnvelope reads b otherwise than
// jsonv2.Unmarshal.
func checkPlainEnvelope(t *testing.T, b []byte) {
	var fast, full envelope
	if !plainEnvelope(b, &fast) {
		return
	}
	if err := jsonv2.Unmarshal(b, &full, jsontext.AllowInvalidUTF8(true)); err != nil {
		t.Fatalf("%q: plainEnvelope read it, jsonv2.Unmarshal refuses it: %v", b, err)
	}
	if fast.Version != full.Version || !bytes.Equal(fast.ID, full.ID) || !bytes.Equal(fast.RawMethod, full.RawMethod) ||
		!bytes.Equal(fast.Params, full.Params) || !bytes.Equal(fast.Result, full.Result) || full.Error != nil ||
		(fast.ID == nil) != (full.ID == nil) || (fast.RawMethod == nil) != (full.RawMethod == nil) {
		t.Fatalf("%q: plainEnvelope read %+v, jsonv2.Unmarshal %+v", b, fast, full)
	}
}
