package server_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

// claimCallBody is a complete JSON-RPC tools/call of claim_task that
// would create an attempt if it were served.
func claimCallBody(key string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"` + key + `"}}}`)
}

// TestBadHTTPInput: malformed JSON-RPC, bodies over the limit, wrong
// content types and bad tokens are answered with the right HTTP status;
// after each the server still answers and no attempt was created.
func TestBadHTTPInput(t *testing.T) {
	const limit = 4096
	e := newEnv(t, envOpts{fileDB: true, maxBody: limit})
	runnerTok := e.token(store.KindRunner, seed.BuilderAgent)
	agentTok := e.token(store.KindAgent, seed.BuilderAgent)
	url := e.url()
	after := func(what string) {
		t.Helper()
		e.healthy(agentTok)
		if n := e.count("attempts"); n != 0 {
			t.Fatalf("after %s: %d attempts, want 0", what, n)
		}
	}

	// Malformed JSON-RPC: 400, never a crash.
	truncated := claimCallBody("truncated")
	truncated = truncated[:len(truncated)-3]
	for _, body := range []string{
		`{not json`, ``, `null`, `42`, `"tools/call"`, `{"foo":1}`, `[]`, `[{"jsonrpc":"2.0"}]`,
		`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{}}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"tools/call"}`,
		string(truncated),
		"\x00\xff\xfe",
	} {
		resp, got := rawPost(t, url, runnerTok, "application/json", []byte(body))
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("body %q: %s %q, want 400", body, resp.Status, got)
		}
		after("malformed " + body)
	}

	// Over the size limit: 413, even though the call itself is valid.
	padded := claimCallBody("padded")
	padded = append(padded[:len(padded)-1], []byte(`,"pad":"`+strings.Repeat("x", limit)+`"}`)...)
	if !json.Valid(padded) {
		t.Fatal("padded body is not JSON")
	}
	resp, got := rawPost(t, url, runnerTok, "application/json", padded)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %s %q, want 413", resp.Status, got)
	}
	after("oversized body")
	// The same through a real client: the call fails, nothing is claimed.
	c := e.connect(runnerTok)
	args := claimTaskArgs(seed.TaskID, "padded")
	args["pad"] = strings.Repeat("x", limit)
	if _, _, err := c.call(api.ToolClaimTask, args); err == nil {
		t.Error("oversized call answered")
	}
	if !c.wire.sawStatus(http.StatusRequestEntityTooLarge) {
		t.Error("client did not see 413")
	}
	after("oversized call")

	// Wrong content type: 415.
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "application/jsonx", "text/event-stream"} {
		resp, got := rawPost(t, url, runnerTok, ct, claimCallBody("ctype"))
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("content type %q: %s %q, want 415", ct, resp.Status, got)
		}
	}
	after("wrong content type")

	// Missing, malformed, unknown tokens: 401 with a Bearer challenge.
	for _, h := range []string{"", "Bearer", "Bearer ", "Basic " + runnerTok, "bearer  " + runnerTok + " extra", "Token " + runnerTok} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(claimCallBody("auth"))))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if h != "" {
			req.Header.Set("Authorization", h)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
			t.Errorf("Authorization %q: %s, WWW-Authenticate %q", h, resp.Status, resp.Header.Get("WWW-Authenticate"))
		}
	}
	for _, tok := range []string{"", "nonsense", store.TokenPrefix, runnerTok + "x", strings.ToUpper(runnerTok), agentTok[:len(agentTok)-1]} {
		e.want401(tok)
	}
	after("bad tokens")

	// Expired and revoked credentials: 401.
	claimer := e.connect(runnerTok)
	first := claimer.claimTask(seed.TaskID, "k")
	second := claimer.claimTask(seed.TaskID, "k")
	e.want401(first.ExecutionCredential.Token) // revoked by the replay
	e.clock.Advance(store.DefaultLaunchTimeout)
	e.want401(second.ExecutionCredential.Token) // expired
	e.healthy(agentTok)
	if n := e.count("attempts"); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
}

// TestSessionSurvivesGarbage: garbage posted on a client's session does not
// break it.
func TestSessionSurvivesGarbage(t *testing.T) {
	e := newEnv(t, envOpts{})
	tok := e.token(store.KindAgent, seed.BuilderAgent)
	c, err := e.dial(tok, protoTS)
	if err != nil {
		t.Fatal(err)
	}
	c.discover(seed.Project)
	for _, body := range []string{`{not json`, `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"claim_task","arguments":"x"}}`} {
		req, _ := http.NewRequest(http.MethodPost, e.url(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Mcp-Session-Id", c.cs.ID())
		req.Header.Set("Mcp-Protocol-Version", protoTS)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Errorf("%q on a session: %s", body, resp.Status)
		}
	}
	c.discover(seed.Project)
}

// TestSchemaInvalidArguments: arguments that fail the input schema are an
// isError result (invalid_arguments) naming each JSON pointer, in the text
// and in _meta.violations; nothing is claimed.
func TestSchemaInvalidArguments(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	c := e.connect(e.token(store.KindRunner, seed.BuilderAgent))
	long := strings.Repeat("a", 65)
	cases := []struct {
		tool    api.ToolName
		args    string
		pointer string
	}{
		{api.ToolClaimTask, `{"idempotency_key":"k"}`, "/"},
		{api.ToolClaimTask, `{"task_id":5,"idempotency_key":"k"}`, "/task_id"},
		{api.ToolClaimTask, `{"task_id":"","idempotency_key":"k"}`, "/task_id"},
		{api.ToolClaimTask, `{"task_id":"a b","idempotency_key":"k"}`, "/task_id"},
		{api.ToolClaimTask, `{"task_id":"` + long + `","idempotency_key":"k"}`, "/task_id"},
		{api.ToolClaimTask, `{"task_id":"example-task-id","idempotency_key":""}`, "/idempotency_key"},
		{api.ToolClaimTask, `{"task_id":"example-task-id","idempotency_key":"` + strings.Repeat("k", 101) + `"}`, "/idempotency_key"},
		{api.ToolClaimTask, `{"task_id":"example-task-id","idempotency_key":null}`, "/idempotency_key"},
		{api.ToolClaimTask, `{"task_id":"example-task-id","idempotency_key":"k","wake":"example-task-request-id"}`, "/wake"},
		{api.ToolClaimTask, `{"task_id":"example-task-id","idempotency_key":"k","wake":{}}`, "/wake"},
		{api.ToolClaimTask, `{"task_id":"example-task-id","idempotency_key":"k","wake":{"message_id":"a/b"}}`, "/wake/message_id"},
		{api.ToolClaimTask, `[]`, "/"},
		{api.ToolClaimTask, `"example-task-id"`, "/"},
		{api.ToolClaimDiscussion, `{"message_id":"../etc","idempotency_key":"k","harness":2}`, "/message_id"},
		{api.ToolClaimDiscussion, `{"message_id":"example-message-id","idempotency_key":"k","harness":9007199254740993}`, "/harness"},
		{api.ToolDiscoverTeamAgents, `{}`, "/"},
		{api.ToolDiscoverTeamAgents, `{"project":""}`, "/project"},
		{api.ToolDiscoverTeamAgents, `{"project":"-website"}`, "/project"},
		{api.ToolDiscoverTeamAgents, `{"project":"website--v2"}`, "/project"}, // the lookahead
		{api.ToolDiscoverTeamAgents, `{"project":"website-"}`, "/project"},
		{api.ToolDiscoverTeamAgents, `{"project":"` + strings.Repeat("a", 40) + `"}`, "/project"},
		{api.ToolDiscoverTeamAgents, `{"project":["website-v2"]}`, "/project"},
	}
	for _, tc := range cases {
		res, w, err := c.call(tc.tool, tc.args)
		if err != nil {
			t.Errorf("%s %s: error %v, want an isError result", tc.tool, tc.args, err)
			continue
		}
		te := checkWireRefusal(t, tc.tool, w, "invalid_arguments")
		if !strings.Contains(te.Message, tc.pointer+":") {
			t.Errorf("%s %s: message %q does not name %s", tc.tool, tc.args, te.Message, tc.pointer)
		}
		var pointers []string
		for _, v := range res.Meta["violations"].([]any) {
			p := v.(map[string]any)["pointer"].(string)
			if p == "" {
				p = "/"
			}
			pointers = append(pointers, p)
		}
		if !containsString(pointers, tc.pointer) {
			t.Errorf("%s %s: _meta.violations pointers %v, want %s", tc.tool, tc.args, pointers, tc.pointer)
		}
	}
	if n := e.count("attempts") + e.count("discussion_claims"); n != 0 {
		t.Fatalf("invalid arguments left %d claims", n)
	}
	e.healthy(e.token(store.KindAgent, seed.BuilderAgent))
	c.claimTask(seed.TaskID, "k")
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestUnknownTool: a tool that is not served (not a name at all, or a
// catalog name without a page) is a JSON-RPC error (invalid params), never
// code 0; the server goes on answering.
func TestUnknownTool(t *testing.T) {
	e := newEnv(t, envOpts{})
	c := e.connect(e.token(store.KindAgent, seed.BuilderAgent))
	names := []api.ToolName{"no_such_tool", ""}
	for _, entry := range api.Catalog {
		if !entry.Documented {
			names = append(names, entry.Name)
		}
	}
	for _, name := range names {
		_, w, err := c.call(name, `{}`)
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			t.Fatalf("%q: error %v (wire %s), want a JSON-RPC error", name, err, w.error)
		}
		if je.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%q: JSON-RPC code %d, want %d", name, je.Code, jsonrpc.CodeInvalidParams)
		}
	}
	c.discover(seed.Project)
}

// TestHealthz: GET /healthz answers without a token; POST is not served.
func TestHealthz(t *testing.T) {
	e := newEnv(t, envOpts{})
	resp, err := http.Get(e.ts.URL + server.PathHealth)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %s", resp.Status)
	}
	resp, err = http.Post(e.ts.URL+server.PathHealth, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz: %s", resp.Status)
	}
}

// TestCallBeforeInitialize: a request that opens no session and is not an
// initialize gets JSON-RPC error -32600 with its id and HTTP 400, never
// code 0; initialize and ping still pass, and nothing is claimed.
func TestCallBeforeInitialize(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	runner := e.token(store.KindRunner, seed.BuilderAgent)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/list"}`,
	} {
		resp, b := rawPost(t, e.url(), runner, "application/json", []byte(body))
		var msg struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(b, &msg) != nil || msg.Error == nil || msg.Error.Code != -32600 {
			t.Fatalf("%s: %s %s, want 400 with JSON-RPC error -32600", body, resp.Status, b)
		}
		var want struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal([]byte(body), &want)
		if string(msg.ID) != string(want.ID) {
			t.Errorf("%s: id %s, want %s", body, msg.ID, want.ID)
		}
	}
	for _, body := range []string{string(initializeBody), `{"jsonrpc":"2.0","id":2,"method":"ping"}`} {
		resp, b := rawPost(t, e.url(), runner, "application/json", []byte(body))
		if resp.StatusCode != http.StatusOK || bytes.Contains(b, []byte(`"error"`)) {
			t.Fatalf("%s: %s %s, want an answer", body, resp.Status, b)
		}
	}
	if n := e.count("attempts"); n != 0 {
		t.Fatalf("a call before initialize claimed: %d attempts", n)
	}
}

// TestContentEncodingRefused: a body with a Content-Encoding the server
// does not decode (it decodes none) is answered 415, naming identity in
// Accept-Encoding, and never read as JSON; a gzip body was read as plain
// JSON. identity passes.
func TestContentEncodingRefused(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	runner := e.token(store.KindRunner, seed.BuilderAgent)
	session := e.session(runner)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(claimCallBody("gz"))
	zw.Close()
	for _, c := range []struct {
		encoding string
		body     []byte
	}{
		{"gzip", gz.Bytes()}, {"GZIP", gz.Bytes()}, {"gzip", claimCallBody("plain")}, {"br", claimCallBody("br")},
		{"identity, gzip", claimCallBody("both")}, {"x-unknown", claimCallBody("unknown")},
	} {
		req := mcpPost(e.url(), runner, session, c.body)
		req.Header.Set("Content-Encoding", c.encoding)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType || resp.Header.Get("Accept-Encoding") != "identity" {
			t.Errorf("Content-Encoding %s: %s, Accept-Encoding %q; want 415 naming identity", c.encoding, resp.Status, resp.Header.Get("Accept-Encoding"))
		}
	}
	if n := e.count("attempts"); n != 0 {
		t.Errorf("an encoded body was run: %d attempts", n)
	}
	req := mcpPost(e.url(), runner, session, claimCallBody("identity"))
	req.Header.Set("Content-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("Content-Encoding identity: %s, want 200", resp.Status)
	}
}
