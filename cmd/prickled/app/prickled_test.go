package app

// Process tests: the real binary, built once in TestMain, driven by real
// MCP clients over HTTP and stdio, stopped with SIGTERM and killed with
// SIGKILL.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/internal/cmdline"
	"github.com/prickle-dev/prickle/internal/pgtest"
	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

// binary is the prickled binary under test.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "prickled-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary, err = testkit.GoBuild(dir, "github.com/prickle-dev/prickle/cmd/prickled", raceEnabled)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	pgtest.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// hangGuard bounds every wait on the process, so a bug fails the test
// instead of hanging it. It is not a timing assertion.
const hangGuard = 60 * time.Second

// proc is a running prickled.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout *testkit.Buffer
	stderr *testkit.Buffer
	addr   string
	done   chan struct{}
	err    error // Wait's error, once done is closed

	linesMu sync.Mutex
	lines   []string      // stderr lines so far
	notify  chan struct{} // closed and replaced on each new stderr line
}

// start runs prickled with args (plus --log-json) and waits until it
// listens.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, stdout: &testkit.Buffer{}, stderr: &testkit.Buffer{}, done: make(chan struct{}), notify: make(chan struct{})}
	p.cmd = exec.Command(binary, append([]string{"--log-json"}, args...)...)
	p.cmd.Stdout = p.stdout
	pr, pw := io.Pipe()
	p.cmd.Stderr = io.MultiWriter(p.stderr, pw)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			p.linesMu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.notify)
			p.notify = make(chan struct{})
			p.linesMu.Unlock()
		}
	}()
	go func() {
		p.err = p.cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	line := p.waitLog("listening")
	var l struct {
		Addr string `json:"addr"`
	}
	if err := json.Unmarshal([]byte(line), &l); err != nil || l.Addr == "" {
		t.Fatalf("listening line %q: %v", line, err)
	}
	p.addr = l.Addr
	return p
}

// waitLog waits for a JSON log line whose msg starts with msg and returns
// it.
func (p *proc) waitLog(msg string) string {
	p.t.Helper()
	deadline := time.After(hangGuard)
	seen := 0
	for {
		p.linesMu.Lock()
		lines, notify := p.lines, p.notify
		p.linesMu.Unlock()
		for ; seen < len(lines); seen++ {
			var l struct {
				Msg string `json:"msg"`
			}
			if json.Unmarshal([]byte(lines[seen]), &l) == nil && strings.HasPrefix(l.Msg, msg) {
				return lines[seen]
			}
		}
		select {
		case <-notify:
		case <-p.done:
			p.t.Fatalf("prickled exited (%v) before logging %q; stderr:\n%s", p.err, msg, p.stderr.String())
		case <-deadline:
			p.t.Fatalf("prickled did not log %q; stderr:\n%s", msg, p.stderr.String())
		}
	}
}

// wait waits for the process to exit and returns its exit code (-1 when
// killed by a signal).
func (p *proc) wait() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(hangGuard):
		p.t.Fatalf("prickled did not exit; stderr:\n%s", p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) signal(sig os.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

func (p *proc) url() string { return "http://" + p.addr + "/mcp" }

// connect connects a go-sdk client over streamable HTTP with token. The
// typed api.Client checks every answer against the output schema.
func connect(t *testing.T, endpoint, token string) (*api.Client, *mcp.ClientSession) {
	t.Helper()
	cs, err := dialMCP(endpoint, token)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return api.NewClient(cs), cs
}

func dialMCP(endpoint, token string) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	return mcp.NewClient(&mcp.Implementation{Name: "prickled-test", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{
			Endpoint:             endpoint,
			HTTPClient:           &http.Client{Transport: testkit.Bearer{Token: token, Base: &http.Transport{}}},
			MaxRetries:           -1,
			DisableStandaloneSSE: true,
		}, nil)
}

// initializeStatus sends an MCP initialize with token, on a connection of
// its own that it closes, and returns the HTTP status: 200 when the token
// authenticates, 401 when it does not.
func initializeStatus(t *testing.T, endpoint, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: hangGuard, Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// issued reads a --tokens-out file.
func readTokens(t *testing.T, path string) []store.IssuedToken {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("%s has mode %o, want 600", path, mode)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The documented shape: an array of objects with at least kind, agent
	// and token.
	var raw []map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("tokens file is not a JSON array of objects: %v\n%s", err, b)
	}
	agentRe := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*/[a-z0-9]+(-[a-z0-9]+)*$`)
	for i, o := range raw {
		kind, _ := o["kind"].(string)
		agent, _ := o["agent"].(string)
		tok, _ := o["token"].(string)
		if (kind != "agent" && kind != "runner") || !agentRe.MatchString(agent) || len(tok) < 16 {
			t.Errorf("tokens[%d] = %v", i, o)
		}
		if _, ok := o["runner"]; ok != (kind == "runner") {
			t.Errorf("tokens[%d]: runner field present=%v for kind %s", i, ok, kind)
		}
	}
	var out []store.IssuedToken
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func tokenOf(t *testing.T, toks []store.IssuedToken, kind store.TokenKind, agent string) string {
	t.Helper()
	for _, it := range toks {
		if it.Kind == kind && it.Agent == agent {
			return it.Token
		}
	}
	t.Fatalf("no %s token for %s in %v", kind, agent, toks)
	return ""
}

// TestServeHTTPThenSIGTERM: prickled on a free port with --tokens-out (mode
// 0600, the documented JSON shape, the same tokens it prints); a real
// client calls the tools; SIGTERM arrives while a call is in flight (the
// server is reading its body), the call still gets its full answer, then
// the process exits 0.
func TestServeHTTPThenSIGTERM(t *testing.T) {
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "tokens.json")
	p := start(t, "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "p.db"), "--tokens-out", tokFile)
	toks := readTokens(t, tokFile)
	kinds := map[store.TokenKind]int{}
	for _, it := range toks {
		kinds[it.Kind]++
	}
	if kinds[store.KindAgent] < 2 || kinds[store.KindRunner] != 1 {
		t.Errorf("seed tokens by kind: %v", kinds)
	}
	runnerTok := tokenOf(t, toks, store.KindRunner, seed.BuilderAgent)

	resp, err := http.Get("http://" + p.addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %s", resp.Status)
	}

	ctx := context.Background()
	client, cs := connect(t, p.url(), runnerTok)
	first, err := client.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: seed.TaskID, IdempotencyKey: "sigterm"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: seed.Project}); err != nil {
		t.Fatal(err)
	}
	cs.Close()

	session := rawInitialize(t, p.url(), runnerTok)
	streamEnded := openEventStream(t, p.url(), runnerTok, session)
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"sigterm"}}}`
	call := startCall(t, p.addr, runnerTok, session, len(body))

	p.signal(syscall.SIGTERM)
	p.waitLog("shutting down")
	select {
	case <-p.done:
		t.Fatal("prickled exited with a call in flight")
	default:
	}
	if got := call.finish(t, body); got.Attempt != first.Attempt {
		t.Errorf("in-flight replay: attempt %+v, want %+v", got.Attempt, first.Attempt)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, p.stderr.String())
	}
	if strings.Contains(p.stderr.String(), "shutdown grace exceeded") {
		t.Errorf("shutdown waited out its grace instead of closing the event stream:\n%s", p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), `"msg":"stopped"`) {
		t.Errorf("no log line says the shutdown finished:\n%s", p.stderr.String())
	}
	select {
	case <-streamEnded:
	case <-time.After(hangGuard):
		t.Error("the event stream is still open after prickled exited")
	}
	// With --tokens-out the tokens go to the file alone: stdout (complete
	// now) says where they went and shows none of them.
	for _, it := range toks {
		if strings.Contains(p.stdout.String(), it.Token) {
			t.Errorf("token for %s %s printed on stdout despite --tokens-out", it.Kind, it.Agent)
		}
	}
	if !strings.Contains(p.stdout.String(), tokFile) {
		t.Errorf("stdout does not say where the tokens went:\n%s", p.stdout.String())
	}
}

// openEventStream opens a standing event stream (GET) on session, as
// 2025-11-25 clients keep open: a shutdown must end it, not wait out its
// grace. The channel receives when the stream ends.
func openEventStream(t *testing.T, url, token, session string) <-chan error {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Authorization": "Bearer " + token, "Accept": "text/event-stream",
		"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"} {
		req.Header.Set(k, v)
	}
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stream.Body.Close() })
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("event stream: %s", stream.Status)
	}
	ended := make(chan error, 1)
	go func() { _, err := io.Copy(io.Discard, stream.Body); ended <- err }()
	return ended
}

// inFlightCall is a tools/call whose headers are sent and whose body is
// not: the server's handler runs, reading the body.
type inFlightCall struct {
	conn net.Conn
	br   *bufio.Reader
}

// startCall sends a tools/call's headers on session by hand, with
// "Expect: 100-continue", and waits for "100 Continue".
func startCall(t *testing.T, addr, token, session string, bodyLen int) *inFlightCall {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(hangGuard))
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\n"+
		"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n", addr, token, session, bodyLen)
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, " 100 ") {
		t.Fatalf("want 100 Continue, got %q (%v)", status, err)
	}
	if _, err := br.ReadString('\n'); err != nil { // the blank line after 100 Continue
		t.Fatal(err)
	}
	return &inFlightCall{conn: conn, br: br}
}

// finish sends the call's body and returns its answer, which must be
// whole and valid.
func (c *inFlightCall) finish(t *testing.T, body string) api.ClaimTaskOutput {
	t.Helper()
	if _, err := io.WriteString(c.conn, body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatalf("in-flight call: %v", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("in-flight call: %s %s", resp.Status, answer)
	}
	out := structuredContent(t, answer)
	if err := api.ValidateClaimTaskOutput(out); err != nil {
		t.Fatalf("in-flight answer fails the output schema: %v\n%s", err, out)
	}
	var got api.ClaimTaskOutput
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// rawInitialize opens a 2025-11-25 session by hand and returns its id.
func rawInitialize(t *testing.T, url, token string) string {
	t.Helper()
	post := func(body, session string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, "")
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, session)
	}
	if resp := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session); resp.StatusCode/100 != 2 {
		t.Fatalf("initialized: %s", resp.Status)
	}
	return session
}

// structuredContent extracts result.structuredContent from an SSE or JSON
// answer.
func structuredContent(t *testing.T, body []byte) json.RawMessage {
	t.Helper()
	for _, line := range strings.Split(string(body), "\n") {
		data := strings.TrimPrefix(line, "data: ")
		if data == line && !strings.HasPrefix(line, "{") {
			continue
		}
		var m struct {
			Result struct {
				IsError           bool            `json:"isError"`
				StructuredContent json.RawMessage `json:"structuredContent"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(data), &m) == nil && len(m.Result.StructuredContent) > 0 && !m.Result.IsError {
			return m.Result.StructuredContent
		}
	}
	t.Fatalf("no structuredContent in %s", body)
	return nil
}

// TestBinaryLogsNoTokens: a whole session against the binary (seed tokens,
// claims minting credentials, replays, refusals, bad arguments, 401s); its
// stderr (the log) has one JSON line per call and holds none of the tokens.
func TestBinaryLogsNoTokens(t *testing.T) {
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "tokens.json")
	p := start(t, "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "p.db"), "--tokens-out", tokFile, "--launch-timeout", "1m")
	toks := readTokens(t, tokFile)
	var secrets []string
	for _, it := range toks {
		secrets = append(secrets, it.Token)
	}
	ctx := context.Background()
	runner, _ := connect(t, p.url(), tokenOf(t, toks, store.KindRunner, seed.BuilderAgent))
	agent, _ := connect(t, p.url(), tokenOf(t, toks, store.KindAgent, seed.BuilderAgent))
	calls := 0
	wantCode := func(err error, code string) {
		t.Helper()
		calls++
		if te, ok := rt.AsToolError(err); !ok || te.Code != code {
			t.Fatalf("want %s, got %v", code, err)
		}
	}
	ok := func(err error) {
		t.Helper()
		calls++
		if err != nil {
			t.Fatal(err)
		}
	}
	two := int64(2)
	a1, err := runner.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: seed.TaskID, IdempotencyKey: "k"})
	ok(err)
	a2, err := runner.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: seed.TaskID, IdempotencyKey: "k"})
	ok(err)
	d1, err := runner.ClaimDiscussion(ctx, &api.ClaimDiscussionInput{MessageID: seed.MessageID, IdempotencyKey: "k", Harness: &two})
	ok(err)
	d2, err := runner.ClaimDiscussion(ctx, &api.ClaimDiscussionInput{MessageID: seed.MessageID, IdempotencyKey: "k", Harness: &two})
	ok(err)
	secrets = append(secrets, a1.ExecutionCredential.Token, a2.ExecutionCredential.Token,
		d1.DiscussionCredential.Token, d2.DiscussionCredential.Token)
	_, err = runner.ClaimDiscussion(ctx, &api.ClaimDiscussionInput{MessageID: seed.MessageID, IdempotencyKey: "k"})
	wantCode(err, store.CodeHarnessOutdated)
	_, err = runner.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: seed.TaskID, IdempotencyKey: a2.ExecutionCredential.Token})
	wantCode(err, store.CodeAttemptInProgress)
	_, err = runner.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: seed.TaskID, IdempotencyKey: "k",
		Wake: &api.ClaimTaskInputWake{MessageID: seed.MentionID}})
	wantCode(err, store.CodeMentionNotCause)
	_, err = runner.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: a2.ExecutionCredential.Token + "!", IdempotencyKey: "k"})
	wantCode(err, rt.CodeInvalidArguments)
	_, err = agent.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: seed.TaskID, IdempotencyKey: "k"})
	wantCode(err, store.CodeNotRunner)
	_, err = agent.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "billing-api"})
	wantCode(err, store.CodeProjectNotVisible)
	_, err = agent.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: seed.Project})
	ok(err)
	cred, _ := connect(t, p.url(), a2.ExecutionCredential.Token)
	_, err = cred.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: seed.Project})
	ok(err)
	dcred, _ := connect(t, p.url(), d2.DiscussionCredential.Token)
	_, err = dcred.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: seed.Project})
	wantCode(err, store.CodeToolNotAllowed)
	// 401s: revoked credentials and unknown tokens.
	for _, tok := range []string{a1.ExecutionCredential.Token, d1.DiscussionCredential.Token, "prk_unknown", toks[0].Token + "x"} {
		if cs, err := dialMCP(p.url(), tok); err == nil {
			cs.Close()
			t.Fatalf("a refused token connected")
		}
	}

	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	logs := p.stderr.String()
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("stderr line is not JSON: %q", line)
		}
		if l["msg"] == "call" {
			n++
			for _, k := range []string{"tool", "outcome", "latency", "caller"} {
				if _, ok := l[k]; !ok {
					t.Errorf("call line without %s: %s", k, line)
				}
			}
		}
	}
	if n != calls {
		t.Errorf("%d call lines for %d calls:\n%s", n, calls, logs)
	}
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("a token (%s...) appears on stderr", s[:8])
		}
	}
	if strings.Contains(logs, store.TokenPrefix) {
		t.Errorf("%q appears on stderr:\n%s", store.TokenPrefix, logs)
	}
}

// crashWorld is a world with n tasks routed to one runner's agent.
func crashWorld(t *testing.T, path string, n int) {
	t.Helper()
	type obj = map[string]any
	var tasks []obj
	for i := range n {
		tasks = append(tasks, obj{"id": fmt.Sprintf("task-%02d", i), "project": "crash", "agent": "maya/builder"})
	}
	w := obj{
		"version":     1,
		"projects":    []obj{{"slug": "crash"}},
		"people":      []obj{{"handle": "maya", "display_name": "Maya"}},
		"memberships": []obj{{"project": "crash", "person": "maya"}},
		"agents":      []obj{{"id": "maya/builder", "model": "m", "client": "c", "availability": "online", "trust_level": "owner_verified"}},
		"runners":     []obj{{"id": "maya-laptop", "agent": "maya/builder"}},
		"tasks":       tasks,
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCrashRecovery: a stream of claims, each replayed once, on a file
// database, from clients enough that the store commits claims in batches
// (group commit); SIGKILL in the middle; a restart on the same database
// prints no new tokens, every claim that was answered is still there and
// replays to the same attempt (none lost), and the credential of every
// answered replay (the last call for its task) still authenticates.
func TestCrashRecovery(t *testing.T) {
	const tasks, workers, killAfter = 320, 16, 80
	dir := t.TempDir()
	db := filepath.Join(dir, "crash.db")
	worldFile := filepath.Join(dir, "crash.json")
	crashWorld(t, worldFile, tasks)
	tokFile := filepath.Join(dir, "tokens.json")
	p := start(t, "--addr", "127.0.0.1:0", "--db", db, "--world", worldFile, "--tokens-out", tokFile)
	runnerTok := tokenOf(t, readTokens(t, tokFile), store.KindRunner, "maya/builder")

	l := &crashLoad{answered: map[string]crashAnswer{}, killAfter: killAfter, kill: make(chan struct{})}
	wg := l.start(t, p.url(), runnerTok, tasks, workers)
	select {
	case <-l.kill:
	case <-time.After(hangGuard):
		t.Fatal("the claims did not get going")
	}
	p.signal(syscall.SIGKILL)
	wg.Wait()
	if code := p.wait(); code != -1 {
		t.Fatalf("exit code %d after SIGKILL", code)
	}
	got := len(l.answered)
	if got >= tasks {
		t.Fatalf("all %d claims were answered before the kill landed; nothing was interrupted", got)
	}

	// Restart on the same database: no seed, no new tokens.
	tok2 := filepath.Join(dir, "tokens2.json")
	q := start(t, "--addr", "127.0.0.1:0", "--db", db, "--tokens-out", tok2)
	if _, err := os.Stat(tok2); !os.IsNotExist(err) {
		t.Errorf("restart wrote a tokens file: %v", err)
	}
	checkCredentialsSurvive(t, q.url(), l.answered)
	client, _ := connect(t, q.url(), runnerTok)
	lost := replayAnswered(t, client, l.answered)
	t.Logf("claims answered before SIGKILL: %d of %d; lost after the restart: %d", got, tasks, lost)
	claimCutOff(t, client, tasks, l.answered)
	q.signal(syscall.SIGTERM)
	if code := q.wait(); code != 0 {
		t.Fatalf("restarted prickled exit %d", code)
	}
	if out := q.stdout.String(); strings.Contains(out, store.TokenPrefix) || !strings.Contains(out, "already holds a world") {
		t.Errorf("restart printed: %q", out)
	}
	// The database is sound and holds exactly one attempt per task.
	checkDB(t, db, tasks)
}

// crashAnswer is a claim answered before TestCrashRecovery's kill.
type crashAnswer struct {
	key        string
	attempt    api.ClaimTaskOutputAttempt
	credential string // of the answered replay, the task's last call
}

// crashLoad is TestCrashRecovery's load: each task claimed, then the claim
// replayed, by many clients at once. Once killAfter tasks have an
// answered replay, kill is closed.
type crashLoad struct {
	mu        sync.Mutex
	answered  map[string]crashAnswer // by task
	killAfter int
	kill      chan struct{}
	killOnce  sync.Once
}

// start starts the load's workers; they stop when the tasks run out or
// the server is gone.
func (l *crashLoad) start(t *testing.T, url, token string, tasks, workers int) *sync.WaitGroup {
	next := make(chan int, tasks)
	for i := range tasks {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		client, _ := connect(t, url, token)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				task, key := fmt.Sprintf("task-%02d", i), fmt.Sprintf("key-%02d", i)
				out, err := client.ClaimTask(context.Background(), &api.ClaimTaskInput{TaskID: task, IdempotencyKey: key})
				if err != nil {
					return // the server is gone (or the call was cut off)
				}
				l.mu.Lock()
				l.answered[task] = crashAnswer{key: key, attempt: out.Attempt}
				l.mu.Unlock()
				again, err := client.ClaimTask(context.Background(), &api.ClaimTaskInput{TaskID: task, IdempotencyKey: key})
				if err != nil {
					return
				}
				l.mu.Lock()
				l.answered[task] = crashAnswer{key: key, attempt: out.Attempt, credential: again.ExecutionCredential.Token}
				if len(l.answered) >= l.killAfter {
					l.killOnce.Do(func() { close(l.kill) })
				}
				l.mu.Unlock()
			}
		}()
	}
	return &wg
}

// checkCredentialsSurvive: the credential of every replay answered before
// the crash still authenticates on the restarted server at url.
func checkCredentialsSurvive(t *testing.T, url string, answered map[string]crashAnswer) {
	t.Helper()
	creds := 0
	for task, a := range answered {
		if a.credential == "" {
			continue // its replay was cut off: it may or may not have replaced the first credential
		}
		creds++
		if code := initializeStatus(t, url, a.credential); code != http.StatusOK {
			t.Errorf("%s: the credential answered before the crash: initialize answered %d", task, code)
		}
	}
	if creds == 0 {
		t.Error("no replay was answered before the kill: no credential to check")
	}
}

// replayAnswered replays every claim answered before the crash: each
// gives its attempt again. It counts the claims lost.
func replayAnswered(t *testing.T, client *api.Client, answered map[string]crashAnswer) (lost int) {
	t.Helper()
	for task, a := range answered {
		out, err := client.ClaimTask(context.Background(), &api.ClaimTaskInput{TaskID: task, IdempotencyKey: a.key})
		switch {
		case err != nil:
			t.Errorf("%s: replay after the crash: %v", task, err)
		case out.Attempt != a.attempt:
			t.Errorf("%s: replay after the crash gives %+v, want %+v", task, out.Attempt, a.attempt)
		default:
			continue
		}
		lost++
	}
	return lost
}

// claimCutOff claims the tasks whose claim the kill cut off: committed or
// not, their key now gives one attempt, and again the same one.
func claimCutOff(t *testing.T, client *api.Client, tasks int, answered map[string]crashAnswer) {
	t.Helper()
	ctx := context.Background()
	for i := range tasks {
		task, key := fmt.Sprintf("task-%02d", i), fmt.Sprintf("key-%02d", i)
		if _, ok := answered[task]; ok {
			continue
		}
		one, err := client.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: task, IdempotencyKey: key})
		if err != nil {
			t.Fatalf("%s: %v", task, err)
		}
		two, err := client.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: task, IdempotencyKey: key})
		if err != nil || two.Attempt != one.Attempt {
			t.Fatalf("%s: %+v then %+v (%v)", task, one.Attempt, two, err)
		}
	}
}

// TestStdio: --stdio with PRICKLE_TOKEN, driven by the go-sdk's
// CommandTransport, calling all three tools.
func TestStdio(t *testing.T) {
	worldFile, err := filepath.Abs("../../../server/testdata/world.json")
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testkit.Buffer{}
	cmd := exec.Command(binary, "--stdio", "--db", ":memory:", "--world", worldFile)
	cmd.Env = append(os.Environ(), "PRICKLE_TOKEN=prk_fixture-runner-maya-laptop-0001")
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr:\n%s", err, stderr.String())
	}
	client := api.NewClient(cs)
	if _, err := client.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "website-v2"}); err != nil {
		t.Fatal(err)
	}
	task, err := client.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: "example-task-id", IdempotencyKey: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	two := int64(2)
	disc, err := client.ClaimDiscussion(ctx, &api.ClaimDiscussionInput{MessageID: "wake-solo", IdempotencyKey: "stdio", Harness: &two})
	if err != nil {
		t.Fatal(err)
	}
	if disc.Role != "draft" || task.Attempt.TaskID != "example-task-id" {
		t.Errorf("task %+v, discussion %+v", task, disc)
	}
	_, err = client.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: "task-theo", IdempotencyKey: "stdio"})
	if te, ok := rt.AsToolError(err); !ok || te.Code != store.CodeNotRouted {
		t.Errorf("theo's task over stdio: %v", err)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d after stdin closed; stderr:\n%s", code, stderr.String())
	}
	// Credentials minted over stdio are not logged either.
	if s := stderr.String(); strings.Contains(s, task.ExecutionCredential.Token) || strings.Contains(s, disc.DiscussionCredential.Token) {
		t.Error("a credential appears on stderr")
	}

	// Without a usable token it refuses to start, with a one-line reason.
	for _, env := range []string{"PRICKLE_TOKEN=", "PRICKLE_TOKEN=prk_unknown-token-0000"} {
		var out, errb bytes.Buffer
		cmd := exec.Command(binary, "--stdio", "--db", ":memory:", "--world", worldFile)
		cmd.Env = append(os.Environ(), env)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &out, &errb
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 1 {
			t.Errorf("%s: exit %d (%v), want 1", env, code, err)
		}
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "prickled: ") {
			t.Errorf("%s: last stderr line %q", env, last)
		}
		if out.Len() != 0 {
			t.Errorf("%s: stdout (the protocol) got %q", env, out.String())
		}
	}
}

// TestRunExitCodes: run itself, in-process: bad flags exit 2, a missing or
// bad world exits 1 with a one-line reason (--fixture is --world).
func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":1,"projects":[{"slug":"Not A Slug"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	dbFile := filepath.Join(dir, "world.db")
	cases := []struct {
		args   []string
		code   int
		reason string // for exit 1: the one line must contain it
	}{
		{[]string{"--no-such-flag"}, 2, ""},
		{[]string{"--launch-timeout", "soon"}, 2, ""},
		{[]string{"--stdio=maybe"}, 2, ""},
		{[]string{"--addr", "8080"}, 2, ""},
		{[]string{"--db", ":memory:", "extra-argument"}, 2, ""},
		{[]string{"-h"}, 0, ""},
		// Port 0: a busy 8080 (a prickled of the user's own) must not decide.
		{[]string{"--addr", "127.0.0.1:0", "--db", ":memory:", "--world", filepath.Join(dir, "missing.json")}, 1, "missing.json"},
		{[]string{"--addr", "127.0.0.1:0", "--db", ":memory:", "--world", bad}, 1, "$.projects[0].slug"},
		{[]string{"--addr", "127.0.0.1:0", "--db", ":memory:", "--fixture", bad}, 1, "$.projects[0].slug"},
		{[]string{"--db", ":memory:", "--addr", "127.0.0.1:-1"}, 1, "listen"},
		// Checked before the world is seeded: no tokens created unseen.
		{[]string{"--addr", "127.0.0.1:0", "--db", dbFile, "--tokens-out", filepath.Join(dir, "no", "such", "dir", "t.json")}, 1, "tokens"},
		{[]string{"--stdio", "--db", dbFile}, 1, "PRICKLE_TOKEN"}, // the environment has none (below)
	}
	t.Setenv("PRICKLE_TOKEN", "")
	for _, tc := range cases {
		var stdout, stderr testkit.Buffer
		code := serve(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d; stderr:\n%s", tc.args, code, tc.code, stderr.String())
			continue
		}
		if tc.code == 1 {
			lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "prickled: ") || !strings.Contains(lines[0], tc.reason) {
				t.Errorf("%v: stderr is not one line naming %q:\n%s", tc.args, tc.reason, stderr.String())
			}
		}
		if tc.code == 2 && stderr.String() == "" {
			t.Errorf("%v: exit 2 without a word", tc.args)
		}
	}
	if _, err := os.Stat("prickled.db"); err == nil {
		t.Error("a test run left prickled.db in the package folder")
	}
	if _, err := os.Stat(dbFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused start (--tokens-out, --stdio) created the database anyway (%v)", err)
	}
}

// TestRunStopsOnCancel: run serves until its context is done, then exits 0.
func TestRunStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testkit.Buffer
	done := make(chan int, 1)
	go func() {
		done <- serve(ctx, []string{"--addr", "127.0.0.1:0", "--db", ":memory:", "--log-json"}, strings.NewReader(""), &stdout, &stderr)
	}()
	deadline := time.After(hangGuard)
	var addr string
	for addr == "" {
		for _, line := range strings.Split(stderr.String(), "\n") {
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "listening" {
				addr = l.Addr
			}
		}
		select {
		case code := <-done:
			t.Fatalf("run exited %d early: %s", code, stderr.String())
		case <-deadline:
			t.Fatal("run did not listen")
		case <-time.After(10 * time.Millisecond):
		}
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after cancel", code)
		}
	case <-time.After(hangGuard):
		t.Fatal("run did not stop")
	}
}

// checkDB opens the database file after the server has exited: the SQLite
// integrity check passes and every task has at most one attempt.
func checkDB(t *testing.T, path string, tasks int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var integrity string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity check: %q %v", integrity, err)
	}
	var n, dup int
	if err := db.QueryRow(`SELECT count(*) FROM attempts`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM (SELECT task FROM attempts GROUP BY task HAVING count(*) > 1)`).Scan(&dup); err != nil {
		t.Fatal(err)
	}
	if n != tasks || dup != 0 {
		t.Fatalf("%d attempts for %d tasks, %d tasks with several", n, tasks, dup)
	}
}

// TestWorldOnAWorld: --world on a database that already holds a world is
// never skipped. A world whose ids are new is added (its tokens are
// printed and work, next to the first world's); the same world again
// (under --fixture, its older name, the same flag) is not loaded again;
// a copy of it collides, exit 1 with one line naming the place in the
// file and the ways forward; without --world the restart keeps the world,
// its claims and tokens, and says how to get a new token.
func TestWorldOnAWorld(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "p.db")
	worldFile, err := filepath.Abs(filepath.Join("..", "..", "..", "server", "testdata", "world.json"))
	if err != nil {
		t.Fatal(err)
	}
	const runnerTok = "prk_fixture-runner-maya-laptop-0001"
	p := start(t, "--addr", "127.0.0.1:0", "--db", db, "--world", worldFile)
	first := claimUnbound(t, p, runnerTok)
	p.stop(t)

	// A world with new ids is added to the world.
	extra := writeExtraWorld(t, dir)
	p = start(t, "--addr", "127.0.0.1:0", "--db", db, "--world", extra)
	zoe, cs := connect(t, p.url(), "prk_fixture-agent-zoe-helper-0001")
	team, err := zoe.DiscoverTeamAgents(context.Background(), &api.DiscoverTeamAgentsInput{Project: "website-v2"})
	if err != nil {
		t.Fatalf("the added agent: %v", err)
	}
	cs.Close()
	if len(team.People) != 3 {
		t.Errorf("website-v2 after the world was added: %d people, want maya, theo and zoe", len(team.People))
	}
	if again := claimUnbound(t, p, runnerTok); again != first {
		t.Errorf("the world's claim replays to %s, want %s", again, first)
	}
	p.stop(t) // stdout is all in once the process is gone
	if out := p.stdout.String(); !strings.Contains(out, "prk_fixture-agent-zoe-helper-0001") {
		t.Errorf("the added world's token was not shown:\n%s", out)
	}

	// The same world again (a restart, or another replica), given with
	// --fixture: the world is there already; it serves it, and shows no
	// tokens.
	p = start(t, "--addr", "127.0.0.1:0", "--db", db, "--fixture", worldFile)
	if again := claimUnbound(t, p, runnerTok); again != first {
		t.Errorf("the same world again: the claim replays to %s, want %s", again, first)
	}
	p.stop(t)
	if out := p.stdout.String(); !strings.Contains(out, "holds the world of "+worldFile+" already") ||
		!strings.Contains(out, "not loaded again, no new tokens") || strings.Contains(out, store.TokenPrefix) {
		t.Errorf("the same world again printed:\n%s", out)
	}

	checkWorldCollides(t, dir, db, worldFile)

	// Without --world: the world as it is, no new tokens, and the way to one.
	p = start(t, "--addr", "127.0.0.1:0", "--db", db)
	if again := claimUnbound(t, p, runnerTok); again != first {
		t.Errorf("after restart the claim replays to %s, want %s", again, first)
	}
	p.stop(t)
	out := p.stdout.String()
	for _, want := range []string{"already holds a world", "prickled token issue --db " + db, "prickled token rotate --db " + db} {
		if !strings.Contains(out, want) {
			t.Errorf("restart printed %q, without %q", out, want)
		}
	}
	if strings.Contains(out, store.TokenPrefix) {
		t.Errorf("restart printed a token:\n%s", out)
	}
}

// claimUnbound claims task-unbound on p as tok, always with the key
// "restart", and returns the attempt's id: a replay after the first.
func claimUnbound(t *testing.T, p *proc, tok string) string {
	t.Helper()
	client, cs := connect(t, p.url(), tok)
	defer cs.Close()
	out, err := client.ClaimTask(context.Background(), &api.ClaimTaskInput{TaskID: "task-unbound", IdempotencyKey: "restart"})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return out.Attempt.AttemptID
}

// stop sends prickled SIGTERM; it must exit 0.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.stderr.String())
	}
}

// writeExtraWorld writes, into dir, a world whose ids are not those of
// server/testdata/world.json: a project, a person and an agent with its
// token.
func writeExtraWorld(t *testing.T, dir string) string {
	t.Helper()
	extra := filepath.Join(dir, "extra.json")
	if err := os.WriteFile(extra, []byte(`{"version": 1,
  "projects": [{"slug": "extra"}],
  "people": [{"handle": "zoe", "display_name": "Zoe"}],
  "memberships": [{"project": "extra", "person": "zoe"}, {"project": "website-v2", "person": "zoe"}],
  "agents": [{"id": "zoe/helper", "model": "m", "client": "c", "availability": "online", "trust_level": "unverified",
              "token": "prk_fixture-agent-zoe-helper-0001"}]
}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return extra
}

// checkWorldCollides: another world with the ids of worldFile's, on db
// that holds that world, collides: nothing starts, exit 1, with one line
// naming the place in the file and the ways forward.
func checkWorldCollides(t *testing.T, dir, db, worldFile string) {
	t.Helper()
	b, err := os.ReadFile(worldFile)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "world.json")
	if err := os.WriteFile(other, append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := execBinary("", "--addr", "127.0.0.1:0", "--db", db, "--world", other)
	if code != 1 {
		t.Fatalf("a world of the same ids: exit %d, want 1; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	want := "prickled: " + other + ":4:14: fixture: $.projects[0].slug: project website-v2 already exists"
	if len(lines) != 1 || !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "start without the fixture") {
		t.Errorf("a world of the same ids: stderr\n%s\nwant one line starting %q and saying how to go on", stderr, want)
	}
}

// TestStdioBadLine: a malformed line is answered with a parse error and
// prickled goes on: the calls before and after it are answered, and it
// exits 0 when its input ends.
func TestStdioBadLine(t *testing.T) {
	worldFile, err := filepath.Abs("../../../server/testdata/world.json")
	if err != nil {
		t.Fatal(err)
	}
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"discover_team_agents","arguments":{"project":"website-v2"}}}`, id)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		call(2), `{"jsonrpc":"2.0","id":3,`, call(4) + "xyz", call(5),
	}, "\n") + "\n"
	var out, errb bytes.Buffer
	cmd := exec.Command(binary, "--stdio", "--db", ":memory:", "--world", worldFile)
	cmd.Env = append(os.Environ(), "PRICKLE_TOKEN=prk_fixture-agent-maya-builder-0001")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(in), &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("prickled --stdio: %v; stderr:\n%s", err, errb.String())
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("stdout line %q: %v", l, err)
		}
		if a.Error != nil {
			got[string(a.ID)] += fmt.Sprint(a.Error.Code, " ")
		} else {
			got[string(a.ID)] += "ok "
		}
	}
	want := map[string]string{"1": "ok ", "2": "ok ", "5": "ok ", "null": "-32700 -32700 "}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("answers by id: %v, want %v", got, want)
	}
}

// TestShowTokensWriteFails: tokens already created whose file cannot be
// written are printed, and the failure reported, rather than lost.
func TestShowTokensWriteFails(t *testing.T) {
	issued := []store.IssuedToken{{Kind: store.KindAgent, Agent: "acme/builder", Token: "prk_secret"}}
	var out bytes.Buffer
	err := showTokens(&out, filepath.Join(t.TempDir(), "gone", "t.json"), "w.db", false, issued)
	if err == nil {
		t.Error("a failed write reported no error")
	}
	if !strings.Contains(out.String(), "prk_secret") {
		t.Errorf("the token was not printed:\n%s", out.String())
	}
}

// TestPublicURL: behind a load balancer every replica names the one URL
// clients use as the protected resource, in its metadata and in the 401
// answers' challenge, not its own listen address; a --public-url that is
// not scheme://host[:port] is a usage error.
func TestPublicURL(t *testing.T) {
	const public = "https://prickle.example:8443"
	p := start(t, "--addr", "127.0.0.1:0", "--db", ":memory:", "--public-url", public+"/")
	resp, err := http.Get("http://" + p.addr + server.PathMetadata)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Resource string `json:"resource"`
	}
	err = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if err != nil || meta.Resource != public+server.PathMCP {
		t.Errorf("metadata resource %q, %v; want %s", meta.Resource, err, public+server.PathMCP)
	}
	resp, err = http.Post(p.url(), "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(got, public+server.PathMetadata) {
		t.Errorf("401 challenge %q (%s), want resource_metadata at %s", got, resp.Status, public+server.PathMetadata)
	}
	for _, bad := range []string{"prickle.example", "ftp://h", "https://h/mcp", "https://u@h"} {
		if _, stderr, code := execBinary("", "--addr", "127.0.0.1:0", "--public-url", bad); code != cmdline.ExitUsage || !strings.Contains(stderr, "--public-url") {
			t.Errorf("--public-url %q: exit %d, stderr %q", bad, code, stderr)
		}
	}
}
