package server_test

// Hostile input over HTTP: what the front door refuses before the go-sdk
// reads a message, and what the tools' argument decoding makes of
// ambiguous JSON.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/internal/cmdline"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

// rpcAnswer is one JSON-RPC answer as it came over the wire.
type rpcAnswer struct {
	status int
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// post POSTs body on session (empty: none) with token and returns the
// JSON-RPC answer (from a JSON or an event-stream body).
func (e *env) post(token, session string, body []byte) rpcAnswer {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(mcpPost(e.url(), token, session, body))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	a := rpcAnswer{status: resp.StatusCode}
	for _, m := range jsonMessages(resp.Header.Get("Content-Type"), b.Bytes()) {
		if json.Unmarshal(m, &a) == nil && (a.Result != nil || a.Error != nil) {
			break
		}
	}
	return a
}

// mcpPost is a POST of body to url as a streamable-HTTP client sends it,
// with token, on session (2025-11-25) unless it is empty.
func mcpPost(url, token, session string, body []byte) *http.Request {
	req := httptest.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.RequestURI = "" // a client request
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", protoTS)
	}
	return req
}

// session opens a 2025-11-25 session by hand and returns its id.
func (e *env) session(token string) string {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(mcpPost(e.url(), token, "", initializeBody))
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		e.t.Fatalf("initialize: %s, session %q", resp.Status, id)
	}
	if a := e.post(token, id, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); a.status != http.StatusAccepted {
		e.t.Fatalf("initialized: %d", a.status)
	}
	return id
}

// callBody is a tools/call of tool with the raw JSON args.
func callBody(id int, tool api.ToolName, args string) []byte {
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
}

// toolResult reads a tools/call result: the refusal code (empty for a
// success) and the text content.
func toolResult(t *testing.T, a rpcAnswer) (code, text string) {
	t.Helper()
	if a.status != http.StatusOK || a.Result == nil {
		t.Fatalf("want a tools/call result, got %d %+v", a.status, a.Error)
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Meta struct {
			Code string `json:"code"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(a.Result, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("result %s: %v", a.Result, err)
	}
	if r.IsError && r.Meta.Code == "" {
		t.Fatalf("a refusal without a code: %s", a.Result)
	}
	return r.Meta.Code, r.Content[0].Text
}

// TestMalformedBodyNeverExecuted: a valid claim followed by anything but
// white space, two concatenated messages, and a message naming a member
// twice are a JSON-RPC parse error with HTTP 400, with or without a
// session, and the database is not touched.
func TestMalformedBodyNeverExecuted(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	runner := e.token(store.KindRunner, seed.BuilderAgent)
	claim := string(callBody(7, api.ToolClaimTask, `{"task_id":"example-task-id","idempotency_key":"k"}`))
	session := e.session(runner)
	for _, body := range []string{
		claim + "xyz",
		claim + claim,
		claim + "\n" + claim,
		claim + "]",
		claim + "\x00",
		`[` + claim + `]]`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"claim_task","name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k","idempotency_key":"j"}}}`,
	} {
		for _, s := range []string{session, ""} {
			a := e.post(runner, s, []byte(body))
			if a.status != http.StatusBadRequest || a.Error == nil || a.Error.Code != -32700 {
				t.Errorf("%.100q (session %q): %d %+v, want 400 with JSON-RPC -32700", body, s, a.status, a.Error)
			}
		}
	}
	if n := e.count("attempts"); n != 0 {
		t.Fatalf("malformed bodies created %d attempts", n)
	}
	if code, _ := toolResult(t, e.post(runner, session, []byte(claim))); code != "" {
		t.Fatalf("the session no longer works: %s", code)
	}
}

// TestBeforeInitializeGuardReadsExactNames: the guard reads the method as
// the go-sdk does, by its exact name, so "Method":"initialize" beside a
// tools/call is no way around it.
func TestBeforeInitializeGuardReadsExactNames(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	runner := e.token(store.KindRunner, seed.BuilderAgent)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","Method":"initialize","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}`,
		`{"jsonrpc":"2.0","id":7,"METHOD":"initialize","method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}`,
	} {
		a := e.post(runner, "", []byte(body))
		if a.status != http.StatusBadRequest || a.Error == nil || a.Error.Code != -32600 || string(a.ID) != "7" {
			t.Errorf("%s: %d id %s %+v, want 400 with JSON-RPC -32600 and id 7", body, a.status, a.ID, a.Error)
		}
	}
	if n := e.count("attempts"); n != 0 {
		t.Fatalf("a call before initialize claimed: %d attempts", n)
	}
}

// TestRequestIDs: an id the go-sdk would answer with another value (a
// fraction, an integer beyond 2^53, a string with invalid UTF-8 or a lone
// surrogate) or that is no string or integer is
// refused as an invalid request, echoing the id as sent; the others are
// answered with their own id.
func TestRequestIDs(t *testing.T) {
	e := newEnv(t, envOpts{})
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	session := e.session(agent)
	for _, c := range []struct{ id, echo string }{
		{"123456789012345678901234567890", "123456789012345678901234567890"},
		{"1.5", "1.5"}, {"-0.5", "-0.5"}, {"9007199254740992", "9007199254740992"}, {"1e300", "1e300"},
		{"null", "null"}, {"true", "null"}, {`{"a":1}`, "null"}, {"[1]", "null"},
		{`"\ud800"`, "null"}, {"\"a\xffb\"", "null"}, // the go-sdk reads them as U+FFFD; not echoed as invalid text
	} {
		a := e.post(agent, session, []byte(`{"jsonrpc":"2.0","id":`+c.id+`,"method":"ping"}`))
		if a.status != http.StatusBadRequest || a.Error == nil || a.Error.Code != -32600 || string(a.ID) != c.echo {
			t.Errorf("id %s: %d id %s %+v, want 400, -32600, id %s", c.id, a.status, a.ID, a.Error, c.echo)
		}
	}
	for _, c := range []struct{ id, answer string }{
		{"9007199254740991", "9007199254740991"}, {"-9007199254740991", "-9007199254740991"},
		{"1e2", "100"}, {"2.0", "2"}, {`"x"`, `"x"`}, {`"12345678901234567890123"`, `"12345678901234567890123"`},
	} {
		a := e.post(agent, session, []byte(`{"jsonrpc":"2.0","id":`+c.id+`,"method":"ping"}`))
		if a.status != http.StatusOK || a.Error != nil || string(a.ID) != c.answer {
			t.Errorf("id %s: %d id %s %+v, want an answer with id %s", c.id, a.status, a.ID, a.Error, c.answer)
		}
	}
}

// TestArgumentsDecodedAsValidated: over the wire, a member whose name
// differs from a property's only in case neither replaces nor adds to the
// validated value, and a number written 2.0, 2e0 or 1e2 is the integer it
// equals.
func TestArgumentsDecodedAsValidated(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	runner := e.token(store.KindRunner, seed.BuilderAgent)
	session := e.session(runner)
	long := strings.Repeat("x", 1000)
	code, text := toolResult(t, e.post(runner, session, callBody(1, api.ToolClaimTask,
		`{"task_id":"example-task-id","idempotency_key":"k","TASK_ID":"`+long+`","Wake":{"message_id":"`+long+`"}}`)))
	if code != "" || !strings.Contains(text, `"task_id":"example-task-id"`) {
		t.Fatalf("claim with a TASK_ID beside task_id: %s %s", code, text)
	}
	for _, c := range []struct{ args, code string }{
		{`{"message_id":"example-message-id","idempotency_key":"d","harness":2,"HARNESS":99999999999}`, ""},
		{`{"message_id":"example-message-id","idempotency_key":"d","harness":2.0}`, ""},
		{`{"message_id":"example-message-id","idempotency_key":"d","harness":2e0}`, ""},
		{`{"message_id":"example-message-id","idempotency_key":"d","harness":0.2e1}`, ""},
		{`{"message_id":"example-message-id","idempotency_key":"d2","HARNESS":2}`, store.CodeHarnessOutdated},
		{`{"message_id":"example-message-id","idempotency_key":"d2","harness":1e2}`, store.CodeHarnessUnsupported},
		{`{"message_id":"example-message-id","idempotency_key":"d2","harness":2.5}`, "invalid_arguments"},
		{`{"message_id":"example-message-id","idempotency_key":"d2","harness":99999999999}`, "invalid_arguments"},
	} {
		code, text := toolResult(t, e.post(runner, session, callBody(2, api.ToolClaimDiscussion, c.args)))
		if code != c.code {
			t.Errorf("%s: %q %s, want %q", c.args, code, text, c.code)
		}
		if strings.Contains(text, "Go ") || strings.Contains(text, "int64") || strings.Contains(text, "struct") {
			t.Errorf("%s: the answer names Go internals: %s", c.args, text)
		}
	}
	if n := e.count("discussion_claims"); n != 1 {
		t.Fatalf("%d discussion claims, want the one replayed claim", n)
	}
}

// TestInvalidUTF8Refused: invalid UTF-8 and lone surrogates in an argument
// are invalid arguments naming the pointer, never folded into U+FFFD (where
// "k\xff" would replay the attempt of "k\ufffd").
func TestInvalidUTF8Refused(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	runner := e.token(store.KindRunner, seed.BuilderAgent)
	session := e.session(runner)
	code, text := toolResult(t, e.post(runner, session, callBody(1, api.ToolClaimTask, `{"task_id":"example-task-id","idempotency_key":"k\ufffd"}`)))
	if code != "" {
		t.Fatalf("k\\ufffd: %s %s", code, text)
	}
	for _, key := range []string{"k\xff", "k\xfe", `k\ud800`, `k\udfff`, "k\xed\xa0\x80", `k\ud800\u0041`} {
		code, text := toolResult(t, e.post(runner, session, callBody(2, api.ToolClaimTask, `{"task_id":"example-task-id","idempotency_key":"`+key+`"}`)))
		if code != "invalid_arguments" || !strings.HasPrefix(text, "invalid_arguments: /idempotency_key: ") {
			t.Errorf("key %q: %s %s, want invalid_arguments at /idempotency_key", key, code, text)
		}
	}
	if n := e.count("attempts"); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
}

// TestKeyLengthInCharacters: the input schema's maxLength counts
// characters, and nothing else counts bytes: 60 × "é" (120 bytes) is a
// key, 101 characters are not.
func TestKeyLengthInCharacters(t *testing.T) {
	e := newEnv(t, envOpts{})
	runner := e.token(store.KindRunner, seed.BuilderAgent)
	session := e.session(runner)
	for _, c := range []struct{ key, code string }{
		{strings.Repeat("é", 101), "invalid_arguments"},
		{strings.Repeat("é", 60), ""},
		{strings.Repeat("é", 100), store.CodeAttemptInProgress}, // valid, and the first attempt is live
	} {
		code, text := toolResult(t, e.post(runner, session, callBody(1, api.ToolClaimTask, `{"task_id":"example-task-id","idempotency_key":"`+c.key+`"}`)))
		if code != c.code {
			t.Errorf("%d × é: %q %s, want %q", len([]rune(c.key)), code, text, c.code)
		}
	}
}

// TestOrigin: a request with an Origin header other than the server's own
// or an allowed one is refused 403, whatever its method; requests without
// Origin (every non-browser client) and same-origin ones pass.
func TestOrigin(t *testing.T) {
	const allowed = "https://app.example.com"
	e := newEnv(t, envOpts{config: func(c *server.Config) { c.AllowedOrigins = []string{allowed} }})
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	host := strings.TrimPrefix(e.ts.URL, "http://")
	do := func(method, origin string) int {
		t.Helper()
		var body *bytes.Reader
		if method == http.MethodPost {
			body = bytes.NewReader(initializeBody)
		} else {
			body = bytes.NewReader(nil)
		}
		req, _ := http.NewRequest(method, e.url(), body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+agent)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, o := range []string{"http://evil.example.com", "null", "http://" + host + ".evil.com", "https://" + host,
		"http://" + host + "/path", "http://user@" + host, "file://", "http://127.0.0.1:1"} {
		for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			if got := do(m, o); got != http.StatusForbidden {
				t.Errorf("%s with Origin %q: %d, want 403", m, o, got)
			}
		}
	}
	for _, o := range []string{"", "http://" + host, "HTTP://" + strings.ToUpper(host), allowed} {
		if got := do(http.MethodPost, o); got != http.StatusOK {
			t.Errorf("POST with Origin %q: %d, want 200", o, got)
		}
	}
}

// TestServerInfoVersion: initialize names the build that answers, the one
// prickled --version prints, not a number kept by hand.
func TestServerInfoVersion(t *testing.T) {
	e := newEnv(t, envOpts{})
	a := e.post(e.token(store.KindAgent, seed.BuilderAgent), "", initializeBody)
	var r struct {
		ServerInfo struct {
			Name, Version string
		} `json:"serverInfo"`
	}
	if err := json.Unmarshal(a.Result, &r); err != nil || r.ServerInfo.Name != "prickled" || r.ServerInfo.Version != cmdline.Version() {
		t.Errorf("serverInfo %+v (%v), want prickled %s", r.ServerInfo, err, cmdline.Version())
	}
}

// TestHTTPMessagesTheGoSDKRefuses: a body the go-sdk cannot read (the
// lines of TestStdioLinesTheGoSDKRefuses) is answered by the front door
// as JSON-RPC, HTTP 400 with -32600, never the go-sdk's plain-text 400;
// the messages the go-sdk reads are answered (200) or accepted (202).
func TestHTTPMessagesTheGoSDKRefuses(t *testing.T) {
	e := newEnv(t, envOpts{})
	runner := e.token(store.KindRunner, "maya/builder")
	for _, c := range sdkLines {
		t.Run(c.name, func(t *testing.T) {
			init := bytes.Replace(initializeBody, []byte(protoTS), []byte(c.proto), 1)
			resp, err := http.DefaultClient.Do(mcpPost(e.url(), runner, "", init))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			session := resp.Header.Get("Mcp-Session-Id")
			req := mcpPost(e.url(), runner, session, []byte(c.line))
			req.Header.Set("Mcp-Protocol-Version", c.proto)
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			var status int
			var code int64
			switch {
			case c.code != 0:
				status, code = http.StatusBadRequest, c.code
			case c.id == "":
				status = http.StatusAccepted
			default:
				status = http.StatusOK
			}
			if resp.StatusCode != status {
				t.Fatalf("HTTP %d %s, want %d", resp.StatusCode, b.Bytes(), status)
			}
			if code == 0 {
				return
			}
			var a rpcAnswer
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" || json.Unmarshal(b.Bytes(), &a) != nil || a.Error == nil || a.Error.Code != code {
				t.Errorf("%s %s, want JSON-RPC error %d", resp.Header.Get("Content-Type"), b.Bytes(), code)
			}
		})
	}
}

// TestHugeNumbers: a number is bounded before anything parses it. One of
// more digits than --max-number-digits (written out in full, so 1e3000000
// has 3000001) is refused at the front door, -32602 naming its pointer
// and quoting a few dozen characters of it, as an integer when it is one;
// a number within the bound that breaks the schema is refused
// invalid_arguments, quoting as few. (A 600,000-digit harness was parsed
// as a big.Rat, quadratic in its digits, and echoed whole in the refusal;
// 1e3000000 was "got number, want integer".)
func TestHugeNumbers(t *testing.T) {
	e := newEnv(t, envOpts{maxBody: 4 << 20})
	runner := e.token(store.KindRunner, "maya/builder")
	s := e.session(runner)
	claim := func(harness string) []byte {
		return callBody(1, api.ToolClaimDiscussion, `{"message_id":"example-message-id","idempotency_key":"k","harness":`+harness+`}`)
	}
	for _, c := range []struct{ harness, class string }{
		{"1" + strings.Repeat("0", 600000), "integer"},
		{"1e3000000", "integer"},
		{"1e1000000", "integer"},
		{"-1.5E+0000000000000000000000000000000000000000003000000", "integer"},
		{"1e-3000000", "number"},
		{"0." + strings.Repeat("0", 600000) + "1", "number"},
		{"1" + strings.Repeat("0", 600000) + "e-600000", "number"},
		{"1e401", "integer"},
	} {
		a := e.post(runner, s, claim(c.harness))
		if a.status != http.StatusBadRequest || a.Error == nil || a.Error.Code != -32602 {
			t.Errorf("harness %.40s…: %d %+v, want 400 with -32602", c.harness, a.status, a.Error)
			continue
		}
		if m := a.Error.Message; !strings.Contains(m, "/params/arguments/harness") || !strings.Contains(m, " "+c.class+" ") || len(m) > 300 {
			t.Errorf("harness %.40s…: %q, want the pointer, the class %q and at most a few dozen of its characters", c.harness, m, c.class)
		}
	}
	for _, harness := range []string{"1" + strings.Repeat("0", 399), "1e399", "-1e399", "1e-398", "0.1e-397"} {
		code, text := toolResult(t, e.post(runner, s, claim(harness)))
		if code != "invalid_arguments" || !strings.Contains(text, "/harness") || len(text) > 200 {
			t.Errorf("harness %.40s…: %s %q, want invalid_arguments quoting a few dozen characters", harness, code, text)
		}
	}
	if code, _ := toolResult(t, e.post(runner, s, claim("2.0e0"))); code != "" {
		t.Errorf("harness 2.0e0: refused %s", code)
	}
}

// TestBatchDuplicateIDs: a batch in which two calls have one id (by
// value: 5 and 5.0, "x" and "\u0078") is refused whole, -32600, and none
// of it runs, over HTTP as over stdio; the go-sdk answered one of them
// and dropped the other, unanswered.
func TestBatchDuplicateIDs(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	runner := e.token(store.KindRunner, "maya/builder")
	init := bytes.Replace(initializeBody, []byte(protoTS), []byte("2025-03-26"), 1)
	resp, err := http.DefaultClient.Do(mcpPost(e.url(), runner, "", init))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	claim := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}`
	}
	for _, ids := range [][2]string{{"5", "5"}, {"5", "5.0"}, {"6", "6e0"}, {`"x"`, `"x"`}, {`"x"`, `"\u0078"`}} {
		batch := "[" + claim(ids[0]) + "," + claim(ids[1]) + "]"
		req := mcpPost(e.url(), runner, session, []byte(batch))
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var a rpcAnswer
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(b, &a) != nil || a.Error == nil || a.Error.Code != -32600 {
			t.Errorf("a batch with ids %s and %s: %d %s, want 400 with -32600", ids[0], ids[1], resp.StatusCode, b)
		}
	}
	lines := []string{string(init), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "[" + claim("5") + "," + claim("5.0") + "]"}
	var out bytes.Buffer
	if err := e.srv.ServeStdio(context.Background(), runner, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	if got := stdioAnswers(t, out.String()); len(got) != 2 || got[1] != (stdioAnswer{"null", -32600}) {
		t.Errorf("stdio: answers %v, want the initialize's and -32600", got)
	}
	if n := e.count("attempts"); n != 0 {
		t.Errorf("a refused batch claimed: %d attempts", n)
	}
}

// TestErrorsAreJSONRPC: every error answer is a JSON-RPC error with the
// code JSON-RPC gives it, over HTTP as over stdio, and a notification is
// never answered. The go-sdk answered some bodies over HTTP with 400
// text/plain (an unknown or odd-case method, a notification method with
// an id, a method without its params), an initialize with capabilities
// "x" with code 0, and the front door a notification with params null.
func TestErrorsAreJSONRPC(t *testing.T) {
	e := newEnv(t, envOpts{})
	runner := e.token(store.KindRunner, "maya/builder")
	session := e.session(runner)
	badInit := `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":"x","clientInfo":{"name":"t","version":"0"}}}`
	for _, c := range []struct {
		body, session string
		status        int
		code          int64 // 0: no answer (202)
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"Tools/Call","params":{}}`, session, 400, -32601},
		{`{"jsonrpc":"2.0","id":2,"method":"rpc.discover"}`, session, 400, -32601},
		{`{"jsonrpc":"2.0","id":3,"method":"notifications/initialized"}`, session, 400, -32600},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call"}`, session, 400, -32602},
		{badInit, "", 400, -32602},
		{`{"jsonrpc":"2.0","method":"tools/list"}`, session, 202, 0},
		{`{"jsonrpc":"2.0","method":"notifications/nope"}`, session, 202, 0},
		{`{"jsonrpc":"2.0","method":"notifications/initialized","params":null}`, session, 202, 0},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}`, session, 202, 0},
	} {
		resp, err := http.DefaultClient.Do(mcpPost(e.url(), runner, c.session, []byte(c.body)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d %s, want %d", c.body, resp.StatusCode, b, c.status)
			continue
		}
		if c.code == 0 {
			if len(b) != 0 {
				t.Errorf("%s: a notification answered: %s", c.body, b)
			}
			continue
		}
		var a rpcAnswer
		var want struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal([]byte(c.body), &want)
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" || json.Unmarshal(b, &a) != nil || a.Error == nil || a.Error.Code != c.code || string(a.ID) != string(want.ID) {
			t.Errorf("%s: %s %s, want JSON-RPC error %d with id %s", c.body, ct, b, c.code, want.ID)
		}
	}

	lines := []string{badInit, strings.Replace(badInit, `"capabilities":"x"`, `"capabilities":{}`, 1),
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":null}`,
		`{"jsonrpc":"2.0","id":10,"method":"Tools/Call","params":{}}`, `{"jsonrpc":"2.0","method":"tools/list"}`}
	var out bytes.Buffer
	if err := e.srv.ServeStdio(context.Background(), runner, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	if got, want := stdioAnswers(t, out.String()), []stdioAnswer{{"9", -32602}, {"9", 0}, {"10", -32601}}; !slices.Equal(got, want) {
		t.Errorf("stdio answers %v, want %v", got, want)
	}
}
