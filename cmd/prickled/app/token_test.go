package app

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

var tokenRe = regexp.MustCompile(store.TokenPrefix + `[A-Za-z0-9_-]+`)

// seedDB creates a database file holding the seed world and returns its
// path and tokens.
func seedDB(t *testing.T) (string, []store.IssuedToken) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "p.db")
	st, err := store.Open(context.Background(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	issued, err := st.SeedDefault(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return db, issued
}

// principal authenticates tok on db, as a fresh process would.
func principal(t *testing.T, db, tok string) (*store.Principal, error) {
	t.Helper()
	st, err := store.Open(context.Background(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return st.Authenticate(context.Background(), tok)
}

// tokenRun runs "prickled token ARGS..." in-process.
func tokenRun(args ...string) (code int, stdout, stderr string) {
	var out, errb testkit.Buffer
	code = Main(context.Background(), append([]string{"token"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestTokenCommand: "prickled token issue|rotate" on a database that
// holds a world: each new token is shown once and works; issue keeps the
// earlier tokens, rotate revokes them; bad command lines and bad targets
// are refused without touching anything.
func TestTokenCommand(t *testing.T) {
	db, seeded := seedDB(t)
	agentTok := tokenOf(t, seeded, store.KindAgent, seed.BuilderAgent)
	runnerTok := tokenOf(t, seeded, store.KindRunner, seed.BuilderAgent)
	mustWork := func(tok string, kind store.TokenKind, runner string) {
		t.Helper()
		p, err := principal(t, db, tok)
		if err != nil || p.Kind != kind || p.Agent != seed.BuilderAgent || p.RunnerID != runner {
			t.Fatalf("token of kind %s: %+v, %v", kind, p, err)
		}
	}
	mustBeRevoked := func(tok string) {
		t.Helper()
		if _, err := principal(t, db, tok); !errors.Is(err, store.ErrRevokedToken) {
			t.Fatalf("earlier token: %v, want revoked", err)
		}
	}
	newToken := func(args ...string) string {
		t.Helper()
		code, out, errs := tokenRun(args...)
		toks := tokenRe.FindAllString(out, -1)
		if code != 0 || len(toks) != 1 || errs != "" {
			t.Fatalf("token %v: exit %d, %d tokens\nstdout:\n%s\nstderr:\n%s", args, code, len(toks), out, errs)
		}
		return toks[0]
	}

	// issue: one more agent token; the earlier one still works.
	issued := newToken("issue", "--db", db, "--agent", seed.BuilderAgent)
	mustWork(issued, store.KindAgent, "")
	mustWork(agentTok, store.KindAgent, "")

	// rotate: a new agent token; every earlier one is revoked.
	rotated := newToken("rotate", "--db", db, "--agent", seed.BuilderAgent)
	mustWork(rotated, store.KindAgent, "")
	mustBeRevoked(agentTok)
	mustBeRevoked(issued)
	// The runner's token is not the agent's: untouched.
	mustWork(runnerTok, store.KindRunner, seed.RunnerID)

	// issue --runner pairs a new runner; rotate --runner replaces its token.
	box := newToken("issue", "--db", db, "--agent", seed.BuilderAgent, "--runner", "maya-box")
	mustWork(box, store.KindRunner, "maya-box")
	laptop := newToken("rotate", "--db", db, "--agent", seed.BuilderAgent, "--runner", seed.RunnerID)
	mustWork(laptop, store.KindRunner, seed.RunnerID)
	mustBeRevoked(runnerTok)
	mustWork(box, store.KindRunner, "maya-box")

	missing := filepath.Join(t.TempDir(), "missing.db")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{}, 2, "usage: prickled token"},
		{[]string{"renew", "--agent", "maya/builder"}, 2, "usage: prickled token"},
		{[]string{"issue", "--db", db}, 2, "--agent is required"},
		{[]string{"issue", "--db", db, "--agent", "maya/builder", "extra"}, 2, "unexpected argument"},
		{[]string{"issue", "--db", ":memory:", "--agent", "maya/builder"}, 1, "holds no world"},
		{[]string{"issue", "--db", missing, "--agent", "maya/builder"}, 1, "no database"},
		{[]string{"issue", "--db", db, "--agent", "maya/ghost"}, 1, `no such agent: "maya/ghost"`},
		{[]string{"issue", "--db", db, "--agent", "maya/builder", "--runner", "maya-box"}, 1, "prickled token rotate --db " + db + " --agent maya/builder --runner maya-box"},
		{[]string{"issue", "--db", db, "--agent", "maya/builder", "--runner", "bad id!"}, 1, `invalid runner id "bad id!"`},
		{[]string{"rotate", "--db", db, "--agent", "theo/reviewer", "--runner", seed.RunnerID}, 1, "paired to maya/builder"},
		{[]string{"rotate", "--db", db, "--agent", "maya/builder", "--runner", "nope"}, 1, `no such runner: "nope"`},
	} {
		code, out, errs := tokenRun(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) || tokenRe.MatchString(out+errs) {
			t.Errorf("token %v: exit %d, stderr %q, stdout %q; want exit %d naming %q and no token", c.args, code, errs, out, c.code, c.want)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a token for a missing database created it: %v", err)
	}
	// The refused commands changed nothing.
	mustWork(laptop, store.KindRunner, seed.RunnerID)
	mustWork(rotated, store.KindAgent, "")
}

// TestTokenCommandTokensFile: --tokens-out keeps the tokens file the
// current list (mode 0600): issue adds, rotate replaces the holder's
// revoked entries; nothing is printed. A file that is not a tokens file is
// refused before anything is issued.
func TestTokenCommandTokensFile(t *testing.T) {
	db, seeded := seedDB(t)
	file := filepath.Join(t.TempDir(), "tokens.json")
	if err := writeTokens(file, seeded); err != nil {
		t.Fatal(err)
	}
	step := func(args ...string) {
		t.Helper()
		code, out, errs := tokenRun(append(args, "--db", db, "--tokens-out", file)...)
		if code != 0 || tokenRe.MatchString(out+errs) || !strings.Contains(out, file) {
			t.Fatalf("token %v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	step("issue", "--agent", seed.ReviewerAgent)
	step("rotate", "--agent", seed.BuilderAgent)
	step("rotate", "--agent", seed.BuilderAgent, "--runner", seed.RunnerID)
	got := readTokens(t, file)
	count := map[store.TokenKind]map[string]int{store.KindAgent: {}, store.KindRunner: {}}
	for _, it := range got {
		count[it.Kind][it.Agent]++
		if p, err := principal(t, db, it.Token); err != nil || p.Agent != it.Agent || p.Kind != it.Kind {
			t.Errorf("tokens file entry %s %s does not work: %v", it.Kind, it.Agent, err)
		}
	}
	if count[store.KindAgent][seed.ReviewerAgent] != 2 || count[store.KindAgent][seed.BuilderAgent] != 1 ||
		count[store.KindRunner][seed.BuilderAgent] != 1 || len(got) != len(seeded)+1 {
		t.Errorf("tokens file after issue, rotate, rotate: %v", count)
	}

	notTokens := filepath.Join(t.TempDir(), "notes.json")
	if err := os.WriteFile(notTokens, []byte(`{"hello": "world"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := tokenRun("rotate", "--db", db, "--agent", seed.BuilderAgent, "--tokens-out", notTokens)
	if code != 1 || !strings.Contains(errs, "is not a tokens file") {
		t.Fatalf("rotate into a file that is not a tokens file: exit %d, %s", code, errs)
	}
	for _, it := range readTokens(t, file) {
		if _, err := principal(t, db, it.Token); err != nil {
			t.Errorf("a refused rotate revoked %s %s: %v", it.Kind, it.Agent, err)
		}
	}
}

// TestTokenRotateWhileServing: rotating with the command while prickled
// serves the same database: the server refuses the old token (401) within
// a second or so and accepts the new one.
func TestTokenRotateWhileServing(t *testing.T) {
	dir := t.TempDir()
	db, tokFile := filepath.Join(dir, "p.db"), filepath.Join(dir, "tokens.json")
	p := start(t, "--addr", "127.0.0.1:0", "--db", db, "--tokens-out", tokFile)
	old := tokenOf(t, readTokens(t, tokFile), store.KindAgent, seed.BuilderAgent)
	rawInitialize(t, p.url(), old)

	out, errs, code := execBinary("", "token", "rotate", "--db", db, "--agent", seed.BuilderAgent)
	fresh := tokenRe.FindString(out)
	if code != 0 || fresh == "" {
		t.Fatalf("token rotate: exit %d\n%s%s", code, out, errs)
	}
	status := func(tok string) int {
		req, _ := http.NewRequest(http.MethodPost, p.url(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(hangGuard)
	for status(old) != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts the rotated-out token")
		}
		time.Sleep(50 * time.Millisecond)
	}
	rawInitialize(t, p.url(), fresh)
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if strings.Contains(p.stderr.String(), fresh) {
		t.Error("the new token appears in the server's log")
	}
}

// execBinary runs the prickled binary in dir ("" for this folder) to its
// end and returns its output and exit code.
func execBinary(dir string, args ...string) (stdout, stderr string, code int) {
	var out, errb testkit.Buffer
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &errb
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		return "", err.Error(), -1
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// TestVersion: --version prints "prickled VERSION" and exits 0 without
// opening a database; the start-up line names the same version.
func TestVersion(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := execBinary(dir, "--version")
	if code != 0 || stderr != "" {
		t.Fatalf("--version: exit %d, stderr %q", code, stderr)
	}
	version, ok := strings.CutPrefix(strings.TrimSuffix(stdout, "\n"), "prickled ")
	if !ok || version == "" || strings.ContainsAny(version, " \n") {
		t.Fatalf("--version printed %q, want \"prickled VERSION\"", stdout)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("--version created %v", entries)
	}
	p := start(t, "--addr", "127.0.0.1:0", "--db", ":memory:")
	var line struct{ Version string }
	if err := json.Unmarshal([]byte(p.waitLog("listening")), &line); err != nil || line.Version != version {
		t.Errorf("start-up line's version %q (%v), want %q", line.Version, err, version)
	}
}

// TestReadmeStdioExample: the README's stdio command works as written,
// from the repository's root: the world it names exists, and its token
// is the world's runner's.
func TestReadmeStdioExample(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.Contains(l, "go run ./cmd/prickled --stdio") {
			line = strings.TrimSpace(l)
		}
	}
	env, command, ok := strings.Cut(line, " go run ./cmd/prickled ")
	if !ok || !strings.HasPrefix(env, "PRICKLE_TOKEN=") {
		t.Fatalf("README has no stdio example of the form PRICKLE_TOKEN=... go run ./cmd/prickled --stdio ...: %q", line)
	}
	cmd := exec.Command(binary, strings.Fields(command)...)
	cmd.Dir = "../../.."
	cmd.Env = append(os.Environ(), env)
	stderr := &testkit.Buffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "readme", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr:\n%s", err, stderr.String())
	}
	defer cs.Close()
	out, err := api.NewClient(cs).ClaimTask(ctx, &api.ClaimTaskInput{TaskID: "example-task-id", IdempotencyKey: "readme"})
	if err != nil || out.Attempt.TaskID != "example-task-id" {
		t.Fatalf("claim_task over the README's stdio command: %+v, %v; stderr:\n%s", out, err, stderr.String())
	}
}
