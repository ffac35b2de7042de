package rt

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// decodeIn is a tool input shaped like claim_task's and claim_discussion's.
type decodeIn struct {
	TaskID  string                `json:"task_id"`
	Harness *int64                `json:"harness,omitempty"`
	Big     *int64                `json:"big,omitempty"`
	Level   decodeLevel           `json:"level,omitempty"`
	Wake    *decodeWake           `json:"wake,omitempty"`
	Note    Nullable[*decodeWake] `json:"note,omitzero"`
}

type decodeLevel int32

type decodeWake struct {
	MessageID string `json:"message_id"`
}

var decodeTool = &Tool{
	Name: "decode",
	Input: schemaValidator("decode/input", `{
		"type": "object",
		"properties": {
			"task_id": {"type": "string", "maxLength": 64, "pattern": "^[a-z0-9-]+$"},
			"harness": {"type": "integer", "minimum": 1, "maximum": 1000},
			"big": {"type": "integer"},
			"level": {"type": "integer"},
			"wake": {"type": "object", "properties": {"message_id": {"type": "string", "pattern": "^[a-z]+$"}}, "required": ["message_id"]},
			"note": {"type": ["object", "null"], "properties": {"message_id": {"type": "string", "pattern": "^[a-z]+$"}}}
		},
		"required": ["task_id"]
	}`),
	Output: schemaValidator("decode/output", `{"type":"object"}`),
}

// callDecode runs args through Handle and returns what the handler got
// (nil when it was not called) and the result.
func callDecode(t *testing.T, args string) (*decodeIn, *mcp.CallToolResult) {
	t.Helper()
	var got *decodeIn
	h := Handle(decodeTool, func(_ context.Context, in *decodeIn) (*struct{}, error) {
		got = in
		return &struct{}{}, nil
	}, nil)
	res, err := h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Arguments: json.RawMessage(args)}})
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return got, res
}

// TestHandleUsesWhatValidated: a member whose name differs from a field's
// only in case, or that comes twice, can neither replace nor add to what
// the schema checked; the decoded value is the validated one at every
// depth.
func TestHandleUsesWhatValidated(t *testing.T) {
	long := strings.Repeat("X", 1000)
	for _, c := range []struct {
		args string
		want decodeIn
	}{
		{`{"task_id":"ok","TASK_ID":"` + long + `"}`, decodeIn{TaskID: "ok"}},
		{`{"TASK_ID":"` + long + `","task_id":"ok"}`, decodeIn{TaskID: "ok"}},
		{`{"task_id":"ok","harness":2,"HARNESS":99999999999}`, decodeIn{TaskID: "ok", Harness: ptr[int64](2)}},
		{`{"task_id":"ok","Harness":99999999999}`, decodeIn{TaskID: "ok"}},
		{`{"task_id":"ok","WAKE":{"message_id":"../x"}}`, decodeIn{TaskID: "ok"}},
		{`{"task_id":"ok","wake":{"message_id":"x","Message_ID":"../x"}}`, decodeIn{TaskID: "ok", Wake: &decodeWake{"x"}}},
		{`{"task_id":"ok","note":{"message_id":"x","MESSAGE_ID":"../x"}}`, decodeIn{TaskID: "ok", Note: Some(&decodeWake{"x"})}},
		{`{"task_id":"ok","ta\u0073k_id":"ok"}`, decodeIn{}}, // a duplicate once unescaped: refused
	} {
		got, res := callDecode(t, c.args)
		if c.want.TaskID == "" {
			if got != nil || !res.IsError {
				t.Errorf("%s: handler got %+v, want a refusal", c.args, got)
			}
			continue
		}
		if res.IsError || got == nil {
			t.Errorf("%s: refused: %v", c.args, res.Content[0].(*mcp.TextContent).Text)
			continue
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(&c.want)
		if string(gb) != string(wb) {
			t.Errorf("%s: handler got %s, want %s", c.args, gb, wb)
		}
	}
}

// TestHandleRefusesAmbiguousJSON: a duplicate member name, invalid UTF-8
// and a lone surrogate are invalid arguments naming the pointer; the
// handler never runs.
func TestHandleRefusesAmbiguousJSON(t *testing.T) {
	for _, c := range []struct{ args, pointer string }{
		{`{"task_id":"ok","task_id":"not ok"}`, "/task_id"},
		{`{"task_id":"ok","wake":{"message_id":"a","message_id":"b"}}`, "/wake/message_id"},
		{"{\"task_id\":\"k\xff\"}", "/task_id"},
		{"{\"task_id\":\"k\xfe\"}", "/task_id"},
		{`{"task_id":"k\ud800"}`, "/task_id"},
		{`{"task_id":"k\udfff"}`, "/task_id"},
		{"{\"task_id\":\"ok\",\"wake\":{\"message_id\":\"a\",\"x\xff\":1}}", "/wake"},
	} {
		got, res := callDecode(t, c.args)
		if got != nil {
			t.Errorf("%q reached the handler: %+v", c.args, got)
		}
		te := ToolErrorFromResult(res)
		if te == nil || te.Code != CodeInvalidArguments || !strings.HasPrefix(te.Message, c.pointer) {
			t.Errorf("%q: %+v, want invalid_arguments at %s", c.args, te, c.pointer)
		}
	}
}

// TestHandleIntegers: a number whose value is an integer is one, however
// it is written; one the server cannot hold is refused naming its pointer
// and range, never a Go type.
func TestHandleIntegers(t *testing.T) {
	for _, c := range []struct {
		args string
		want int64
	}{
		{`{"task_id":"ok","harness":2}`, 2},
		{`{"task_id":"ok","harness":2.0}`, 2},
		{`{"task_id":"ok","harness":2e0}`, 2},
		{`{"task_id":"ok","harness":2.000E+0}`, 2},
		{`{"task_id":"ok","harness":20e-1}`, 2},
		{`{"task_id":"ok","harness":1e2}`, 100},
		{`{"task_id":"ok","harness":0.1e4}`, 1000},
	} {
		got, res := callDecode(t, c.args)
		if got == nil || got.Harness == nil || *got.Harness != c.want {
			t.Errorf("%s: handler got %+v (%+v), want harness %d", c.args, got, res, c.want)
		}
	}
	got, _ := callDecode(t, `{"task_id":"ok","level":-2147483648.0,"big":-9.223372036854775808e18}`)
	if got == nil || got.Level != -2147483648 || *got.Big != -9223372036854775808 {
		t.Errorf("extremes: %+v", got)
	}
	for _, c := range []struct{ args, pointer, says string }{
		{`{"task_id":"ok","big":9223372036854775808}`, "/big", "-9223372036854775808 to 9223372036854775807"},
		{`{"task_id":"ok","big":1e30}`, "/big", "1e30 is outside"},
		{`{"task_id":"ok","big":-1.5e40}`, "/big", "-1.5e40 is outside"},
		{`{"task_id":"ok","level":2147483648}`, "/level", "-2147483648 to 2147483647"},
	} {
		got, res := callDecode(t, c.args)
		te := ToolErrorFromResult(res)
		if got != nil || te == nil || te.Code != CodeInvalidArguments {
			t.Errorf("%s: handler got %+v, result %+v", c.args, got, te)
			continue
		}
		if !strings.HasPrefix(te.Message, c.pointer+": ") || !strings.Contains(te.Message, c.says) {
			t.Errorf("%s: %q, want %s and %q", c.args, te.Message, c.pointer, c.says)
		}
		for _, leak := range []string{"Go ", "int64", "int32", "struct", "decodeIn"} {
			if strings.Contains(te.Message, leak) {
				t.Errorf("%s: %q names Go internals (%q)", c.args, te.Message, leak)
			}
		}
	}
}

func TestIntegerDigits(t *testing.T) {
	for _, c := range []struct {
		lit, want string
		ok        bool
	}{
		{"0", "0", true}, {"-0", "0", true}, {"0.0", "0", true}, {"0e-5", "0", true}, {"-0.0e99", "0", true},
		{"7", "7", true}, {"-7", "-7", true}, {"70", "70", true}, {"7.0", "7", true}, {"7e1", "70", true},
		{"7E+1", "70", true}, {"700e-2", "7", true}, {"0.7e1", "7", true}, {"1.5e1", "15", true},
		{"12.50e1", "125", true}, {"100e-2", "1", true},
		{"1.5", "", false}, {"7e-1", "", false}, {"0.07e1", "", false}, {"1e-999999999999", "", false},
		{"1e20", "100000000000000000000", true},
		{"1e22", "9999999999999999999999", true}, // too long for any Go integer
		{"1e999999999999", "9999999999999999999999", true},
	} {
		got, ok := integerDigits(c.lit)
		if got != c.want || ok != c.ok {
			t.Errorf("integerDigits(%q) = %q, %v; want %q, %v", c.lit, got, ok, c.want, c.ok)
		}
	}
}
