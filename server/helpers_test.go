package server_test

// Test helpers: a fake clock, a server behind httptest, and a real go-sdk MCP
// client over streamable HTTP whose transport records every tools/call
// answer as it came over the wire, so that each success can be checked
// byte for byte against the tool's output schema.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

// Protocol versions a client may negotiate: the go-sdk's own default (the
// draft, stateless discover) and the TypeScript SDK's (initialize and a
// session).
const (
	protoDraft = "" // the go-sdk default
	protoTS    = "2025-11-25"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// envOpts configures newEnv.
type envOpts struct {
	world   string        // a file in testdata; empty means the seed world
	fileDB  bool          // a database file in t.TempDir() instead of :memory:
	launch  time.Duration // Config.LaunchTimeout
	maxBody int64         // Config.MaxBodyBytes
	wrap    func(api.Handler) api.Handler
	config  func(*server.Config) // changes the config before the server starts
}

// env is one server under test.
type env struct {
	t      *testing.T
	srv    *server.Server
	ts     *httptest.Server
	clock  *testkit.Clock // the injected clock (Config.Now)
	logs   *testkit.Buffer
	tokens []store.IssuedToken
	dbPath string
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	e := &env{t: t, clock: testkit.NewClock(t0), logs: &testkit.Buffer{}}
	cfg := server.Config{
		DB:            ":memory:",
		LaunchTimeout: o.launch,
		Now:           e.clock.Now,
		Logger:        slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		MaxBodyBytes:  o.maxBody,
		WrapHandler:   o.wrap,
	}
	if o.config != nil {
		o.config(&cfg)
	}
	if o.fileDB {
		e.dbPath = filepath.Join(t.TempDir(), "prickle.db")
		cfg.DB = e.dbPath
	}
	if o.world != "" {
		f, err := os.Open(filepath.Join("testdata", o.world))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cfg.World = f
	}
	srv, issued, err := server.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	e.srv, e.tokens = srv, issued
	e.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		e.ts.Close()
		srv.Close()
	})
	return e
}

// url is the MCP endpoint.
func (e *env) url() string { return e.ts.URL + server.PathMCP }

// token returns the issued token of kind for agent.
func (e *env) token(kind store.TokenKind, agent string) string {
	e.t.Helper()
	for _, it := range e.tokens {
		if it.Kind == kind && it.Agent == agent {
			return it.Token
		}
	}
	e.t.Fatalf("no %s token for %s", kind, agent)
	return ""
}

// count returns the number of rows of table in the file database (read
// through a second connection, as an outside observer would).
func (e *env) count(table string) int {
	e.t.Helper()
	if e.dbPath == "" {
		e.t.Fatal("count needs a file database")
	}
	return countRows(e.t, e.dbPath, table)
}

func countRows(t *testing.T, path, table string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// healthy checks that the server still answers: /healthz and a real call.
func (e *env) healthy(agentToken string) {
	e.t.Helper()
	resp, err := http.Get(e.ts.URL + server.PathHealth)
	if err != nil {
		e.t.Fatalf("healthz: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("healthz: %s", resp.Status)
	}
	c := e.connect(agentToken)
	defer c.close()
	callOK[api.DiscoverTeamAgentsOutput](c, api.ToolDiscoverTeamAgents, map[string]any{"project": seed.Project})
}

// wireCall is one tools/call as it went over the wire.
type wireCall struct {
	tool   api.ToolName
	status int
	result json.RawMessage // the JSON-RPC "result" object, nil for a JSON-RPC error
	error  json.RawMessage // the JSON-RPC "error" object
}

// wire is the client's RoundTripper: it adds the bearer token, records
// every HTTP status, and reads each tools/call answer off the wire.
type wire struct {
	token string
	base  http.RoundTripper

	mu       sync.Mutex
	statuses []int
	calls    []wireCall
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	if w.token != "" {
		req.Header.Set("Authorization", "Bearer "+w.token)
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		_ = json.Unmarshal(body, &msg)
	}
	resp, err := w.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.statuses = append(w.statuses, resp.StatusCode)
	w.mu.Unlock()
	if msg.Method != "tools/call" || len(msg.ID) == 0 {
		return resp, nil
	}
	// The answer to one POSTed request ends the response (JSON or an SSE
	// stream that closes after it): read it all here.
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	call := wireCall{tool: api.ToolName(msg.Params.Name), status: resp.StatusCode}
	for _, m := range jsonMessages(resp.Header.Get("Content-Type"), body) {
		var r struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(m, &r) == nil && bytes.Equal(r.ID, msg.ID) {
			call.result, call.error = r.Result, r.Error
		}
	}
	w.mu.Lock()
	w.calls = append(w.calls, call)
	w.mu.Unlock()
	return resp, nil
}

// jsonMessages splits an HTTP body into JSON-RPC messages: one JSON value,
// or the data of each server-sent event.
func jsonMessages(contentType string, body []byte) [][]byte {
	if !strings.HasPrefix(contentType, "text/event-stream") {
		return [][]byte{body}
	}
	var out [][]byte
	var data []string
	flush := func() {
		if len(data) > 0 {
			out = append(out, []byte(strings.Join(data, "\n")))
			data = nil
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	flush()
	return out
}

func (w *wire) last() wireCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.calls) == 0 {
		return wireCall{}
	}
	return w.calls[len(w.calls)-1]
}

func (w *wire) sawStatus(code int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Contains(w.statuses, code)
}

// conn is a real MCP client session over streamable HTTP.
type conn struct {
	t    *testing.T
	cs   *mcp.ClientSession
	api  *api.Client
	wire *wire
}

// connect connects with token (empty: no Authorization header) and the
// go-sdk's default protocol version.
func (e *env) connect(token string) *conn {
	e.t.Helper()
	c, err := e.dial(token, protoDraft)
	if err != nil {
		e.t.Fatalf("connect: %v", err)
	}
	return c
}

// dial connects with token, negotiating proto; it returns the connection
// error instead of failing.
func (e *env) dial(token, proto string) (*conn, error) {
	return dial(e.t, e.url(), token, proto)
}

func dial(t *testing.T, endpoint, token, proto string) (*conn, error) {
	w := &wire{token: token, base: http.DefaultTransport}
	client := mcp.NewClient(&mcp.Implementation{Name: "prickle-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: w},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: proto})
	if err != nil {
		return nil, err
	}
	c := &conn{t: t, cs: cs, api: api.NewClient(cs), wire: w}
	t.Cleanup(func() { cs.Close() })
	return c, nil
}

func (c *conn) close() { c.cs.Close() }

// call calls tool with args (a Go value, or a JSON string / json.RawMessage
// sent as it is) and returns the SDK's result and the wire record.
func (c *conn) call(tool api.ToolName, args any) (*mcp.CallToolResult, wireCall, error) {
	c.t.Helper()
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	case json.RawMessage:
		raw = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			c.t.Fatal(err)
		}
		raw = b
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: string(tool), Arguments: raw})
	return res, c.wire.last(), err
}

// outputValidators validate structuredContent against the output schemas.
var outputValidators = map[api.ToolName]func([]byte) error{
	api.ToolClaimTask:          api.ValidateClaimTaskOutput,
	api.ToolClaimDiscussion:    api.ValidateClaimDiscussionOutput,
	api.ToolDiscoverTeamAgents: api.ValidateDiscoverTeamAgentsOutput,
}

// callOK calls tool and requires a success. It checks the answer as it came
// over the wire: structuredContent present and valid against the tool's
// output schema, the text content the same JSON, no _meta code. It returns
// the decoded output and the raw structuredContent bytes.
func callOK[Out any](c *conn, tool api.ToolName, args any) (*Out, []byte) {
	c.t.Helper()
	res, w, err := c.call(tool, args)
	if err != nil {
		c.t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		c.t.Fatalf("%s: refused: %v", tool, rt.ToolErrorFromResult(res))
	}
	raw := checkWireSuccess(c.t, tool, w)
	out := new(Out)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		c.t.Fatalf("%s: decode structuredContent: %v", tool, err)
	}
	// The SDK's own view of the same result decodes to the same value.
	if _, err := rt.DecodeResult[Out](toolFor(tool), res); err != nil {
		c.t.Fatalf("%s: rt.DecodeResult: %v", tool, err)
	}
	return out, raw
}

// checkWireSuccess checks a successful tools/call answer on the wire and
// returns its raw structuredContent.
func checkWireSuccess(t *testing.T, tool api.ToolName, w wireCall) []byte {
	t.Helper()
	if w.tool != tool || w.result == nil {
		t.Fatalf("%s: no result on the wire (status %d, error %s)", tool, w.status, w.error)
	}
	var r struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(w.result, &r); err != nil {
		t.Fatalf("%s: result: %v", tool, err)
	}
	if r.IsError || len(r.StructuredContent) == 0 {
		t.Fatalf("%s: wire result is not a success with structuredContent: %s", tool, w.result)
	}
	if err := outputValidators[tool](r.StructuredContent); err != nil {
		t.Fatalf("%s: structuredContent fails the output schema: %v\n%s", tool, err, r.StructuredContent)
	}
	if _, ok := r.Meta["code"]; ok {
		t.Fatalf("%s: a success carries _meta.code: %s", tool, w.result)
	}
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("%s: want one text content, got %s", tool, w.result)
	}
	var a, b any
	if json.Unmarshal([]byte(r.Content[0].Text), &a) != nil || json.Unmarshal(r.StructuredContent, &b) != nil ||
		!reflect.DeepEqual(a, b) {
		t.Fatalf("%s: text content is not the structuredContent JSON: %s", tool, w.result)
	}
	return r.StructuredContent
}

func toolFor(name api.ToolName) *rt.Tool {
	// The documented tool: rt.DecodeResult needs its name and its output
	// validator.
	return api.Tool(name)
}

// refused calls tool and requires a refusal with code: an isError result
// (never a JSON-RPC error) whose text is "code: message", whose _meta.code
// is code, without structuredContent, and quoting no token the caller did
// not send itself. It returns the refusal.
func (c *conn) refused(tool api.ToolName, args any, code string) *rt.ToolError {
	c.t.Helper()
	res, w, err := c.call(tool, args)
	if err != nil {
		c.t.Fatalf("%s: want refusal %s, got error %v", tool, code, err)
	}
	te := checkWireRefusal(c.t, tool, w, code)
	// A refusal may quote the caller's own arguments, never anything else
	// that looks like a token.
	if b, _ := json.Marshal(args); !strings.Contains(string(b), store.TokenPrefix) && strings.Contains(te.Message, store.TokenPrefix) {
		c.t.Fatalf("%s: refusal message holds a token: %q", tool, te.Message)
	}
	if got := rt.ToolErrorFromResult(res); got == nil || got.Code != te.Code || got.Message != te.Message {
		c.t.Fatalf("%s: SDK result %v differs from the wire %v", tool, got, te)
	}
	return te
}

func checkWireRefusal(t *testing.T, tool api.ToolName, w wireCall, code string) *rt.ToolError {
	t.Helper()
	if w.tool != tool || w.result == nil {
		t.Fatalf("%s: want refusal %s, no result on the wire (status %d, error %s)", tool, code, w.status, w.error)
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal(w.result, &r); err != nil {
		t.Fatal(err)
	}
	if string(r["isError"]) != "true" {
		t.Fatalf("%s: want refusal %s, got success %s", tool, code, w.result)
	}
	if _, ok := r["structuredContent"]; ok {
		t.Fatalf("%s: a refusal carries structuredContent: %s", tool, w.result)
	}
	var meta struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(r["_meta"], &meta)
	var content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(r["content"], &content)
	if meta.Code != code {
		t.Fatalf("%s: want refusal %s, got _meta.code %q: %s", tool, code, meta.Code, w.result)
	}
	if len(content) != 1 || content[0].Type != "text" || !strings.HasPrefix(content[0].Text, code+": ") {
		t.Fatalf("%s: refusal text is not %q: %s", tool, code+": ...", w.result)
	}
	msg := strings.TrimPrefix(content[0].Text, code+": ")
	if msg == "" {
		t.Fatalf("%s: empty refusal message", tool)
	}
	return &rt.ToolError{Code: code, Message: msg}
}

// Argument builders.

func claimTaskArgs(task, key string) map[string]any {
	return map[string]any{"task_id": task, "idempotency_key": key}
}

func claimTaskWake(task, key, wake string) map[string]any {
	a := claimTaskArgs(task, key)
	a["wake"] = map[string]any{"message_id": wake}
	return a
}

func discussionArgs(message, key string, harness any) map[string]any {
	a := map[string]any{"message_id": message, "idempotency_key": key}
	if harness != nil {
		a["harness"] = harness
	}
	return a
}

func discoverArgs(project string) map[string]any { return map[string]any{"project": project} }

// Typed shorthands.

func (c *conn) claimTask(task, key string) *api.ClaimTaskOutput {
	c.t.Helper()
	out, _ := callOK[api.ClaimTaskOutput](c, api.ToolClaimTask, claimTaskArgs(task, key))
	return out
}

func (c *conn) claimDiscussion(message, key string) (*api.ClaimDiscussionOutput, []byte) {
	c.t.Helper()
	return callOK[api.ClaimDiscussionOutput](c, api.ToolClaimDiscussion, discussionArgs(message, key, 2))
}

func (c *conn) discover(project string) (*api.DiscoverTeamAgentsOutput, []byte) {
	c.t.Helper()
	return callOK[api.DiscoverTeamAgentsOutput](c, api.ToolDiscoverTeamAgents, discoverArgs(project))
}

// rawPost POSTs body to the MCP endpoint with the given token and content
// type and the Accept header the transport requires.
func rawPost(t *testing.T, url, token, contentType string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// initializeBody is a valid JSON-RPC initialize request.
var initializeBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)

// want401 checks that token is refused at the HTTP layer: 401 with a
// WWW-Authenticate Bearer challenge, for a raw request and for a real
// client's connection.
func (e *env) want401(token string) {
	e.t.Helper()
	resp, body := rawPost(e.t, e.url(), token, "application/json", initializeBody)
	if resp.StatusCode != http.StatusUnauthorized {
		e.t.Fatalf("want 401, got %s: %s", resp.Status, body)
	}
	if h := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer ") || !strings.Contains(h, "resource_metadata=") {
		e.t.Fatalf("401 without a Bearer WWW-Authenticate challenge: %q", h)
	}
	if token != "" && bytes.Contains(body, []byte(token)) {
		e.t.Fatalf("401 body echoes the token")
	}
	for _, proto := range []string{protoDraft, protoTS} {
		c, err := e.dial(token, proto)
		if err == nil {
			c.close()
			e.t.Fatalf("client with a refused token connected (protocol %q)", proto)
		}
	}
}
