package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
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

	"github.com/prickle-dev/prickle/internal/testkit"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// prickled builds the reference server once per test binary.
func prickled(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "prickle-conformance-test-")
		if buildErr != nil {
			return
		}
		binPath, buildErr = testkit.GoBuild(binDir, "github.com/prickle-dev/prickle/cmd/prickled", false)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

var summaryRe = regexp.MustCompile(`(?m)\A[\s\S]*\n(\d+) passed, (\d+) failed, (\d+) skipped\n\z`)

func summary(t *testing.T, out string) (passed, failed, skipped int) {
	t.Helper()
	m := summaryRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the output does not end with the summary line:\n%s", out)
	}
	fmt.Sscan(m[1], &passed)
	fmt.Sscan(m[2], &failed)
	fmt.Sscan(m[3], &skipped)
	return
}

// serverCmd is how the suite starts prickled for a script.
func serverCmd(bin string, extra ...string) string {
	return strings.Join(append([]string{bin, "--addr", "$PRICKLE_ADDR", "--db", ":memory:", "--fixture", "$PRICKLE_FIXTURE"}, extra...), " ")
}

// TestServerCmd certifies the real prickled binary, a fresh process per
// script, with reports.
func TestServerCmd(t *testing.T) {
	bin := prickled(t)
	dir := t.TempDir()
	jsonFile, junitFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "report.xml")
	code, out, errOut := runCLI(t, "--server-cmd", serverCmd(bin), "--profile", "reference",
		"--run", `^(claim_task_replay|claim_discussion_roles|discover_team_agents_seed|spec\.tools|spec\.claim_task\.task_id\.pattern)$`,
		"--parallel", "3", "--json", jsonFile, "--junit", junitFile)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if p, f, s := summary(t, out); p != 5 || f != 0 || s != 0 {
		t.Errorf("summary %d/%d/%d, want 5 passed:\n%s", p, f, s, out)
	}
	for _, name := range []string{"claim_task_replay", "claim_discussion_roles", "spec.tools"} {
		if !regexp.MustCompile(`(?m)^PASS  ` + regexp.QuoteMeta(name) + ` \(`).MatchString(out) {
			t.Errorf("no progress line for %s:\n%s", name, out)
		}
	}
	var rep struct {
		Profile string `json:"profile"`
		Passed  int    `json:"passed"`
		Checks  int    `json:"checks"`
		Scripts []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"scripts"`
	}
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Profile != "reference" || rep.Passed != 5 || len(rep.Scripts) != 5 || rep.Checks < 100 {
		t.Errorf("json report: %+v", rep)
	}
	if bytes.Contains(b, []byte("prk_")) {
		t.Errorf("the json report shows a token")
	}
	xb, err := os.ReadFile(junitFile)
	if err != nil {
		t.Fatal(err)
	}
	var ju struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(xb, &ju); err != nil || len(ju.Suites) != 1 || ju.Suites[0].Tests != 5 || ju.Suites[0].Failures != 0 {
		t.Errorf("junit report (%v): %s", err, xb)
	}
}

// TestServerCmdFailuresAndBaseline: a server that breaks a reference rule
// fails the run; listed as an expected failure it keeps the run clean; an
// expected failure that passes fails the run.
func TestServerCmdFailuresAndBaseline(t *testing.T) {
	bin := prickled(t)
	dir := t.TempDir()
	// A two-hour launch timeout breaks the reference profile's 15 minutes.
	cmd := serverCmd(bin, "--launch-timeout", "2h")
	sel := `^(claim_task_credential|spec\.tools)$`
	code, out, _ := runCLI(t, "--server-cmd", cmd, "--profile", "reference", "--run", sel)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	if p, f, _ := summary(t, out); p != 1 || f != 1 {
		t.Errorf("want 1 passed, 1 failed:\n%s", out)
	}
	if !strings.Contains(out, "FAIL  claim_task_credential") || !strings.Contains(out, "expected about 15m0s after the call") {
		t.Errorf("the failure is not explained:\n%s", out)
	}

	baseline := filepath.Join(dir, "baseline.txt")
	os.WriteFile(baseline, []byte("# known\nclaim_task_credential\n"), 0o644)
	code, out, _ = runCLI(t, "--server-cmd", cmd, "--profile", "reference", "--run", sel, "--expected-failures", baseline)
	if code != 0 {
		t.Fatalf("exit %d with the failure expected:\n%s", code, out)
	}
	if p, f, s := summary(t, out); p != 1 || f != 0 || s != 0 || !strings.Contains(out, "XFAIL claim_task_credential") {
		t.Errorf("want 1 passed and an expected failure:\n%s", out)
	}

	os.WriteFile(baseline, []byte("claim_task_credential\n- spec.tools\n"), 0o644)
	code, out, _ = runCLI(t, "--server-cmd", cmd, "--profile", "reference", "--run", sel, "--expected-failures", baseline)
	if code != 1 || !strings.Contains(out, "listed as an expected failure but passes") {
		t.Errorf("exit %d; an expected failure that passes must fail the run:\n%s", code, out)
	}

	os.WriteFile(baseline, []byte("no_such_script\n"), 0o644)
	code, _, errOut := runCLI(t, "--server-cmd", cmd, "--expected-failures", baseline)
	if code != 2 || !strings.Contains(errOut, `no script is named "no_such_script"`) {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
}

// TestServerCmdNotStarting: a server that never becomes healthy fails every
// script with its output shown.
func TestServerCmdNotStarting(t *testing.T) {
	code, out, _ := runCLI(t, "--server-cmd", "echo cannot start >&2; exit 3", "--run", `^spec\.tools$`)
	if code != 1 || !strings.Contains(out, "cannot start") || !strings.Contains(out, "exited before it was ready") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestURLMode: against an already running prickled with its own seed
// world, the seed-world scripts run and pass, and every script that needs
// its own world is skipped with the reason, never passed.
func TestURLMode(t *testing.T) {
	bin := prickled(t)
	dir := t.TempDir()
	addr := freePort(t)
	tokens := filepath.Join(dir, "tokens.json")
	srv := exec.Command(bin, "--addr", addr, "--db", filepath.Join(dir, "world.db"), "--tokens-out", tokens)
	var srvOut bytes.Buffer
	srv.Stdout, srv.Stderr = &srvOut, &srvOut
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			srv.Process.Kill()
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prickled did not start:\n%s", srvOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	code, out, errOut := runCLI(t, "--url", "http://"+addr, "--tokens", tokens, "--profile", "reference")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	passed, failed, skipped := summary(t, out)
	if failed != 0 || passed < 30 || skipped < 10 {
		t.Errorf("%d passed, %d failed, %d skipped:\n%s", passed, failed, skipped, out)
	}
	for _, name := range []string{"claim_task_replay", "claim_discussion_roles", "discover_team_agents_empty_lists"} {
		if !strings.Contains(out, "SKIP  "+name+": needs its own world") {
			t.Errorf("%s is not skipped with its reason:\n%s", name, out)
		}
	}
	for _, name := range []string{"discover_team_agents_seed", "discover_team_agents_invisible", "claim_discussion_harness", "spec.claim_task.example"} {
		if !strings.Contains(out, "PASS  "+name+" (") {
			t.Errorf("%s did not run and pass:\n%s", name, out)
		}
	}
	// Run it again: the seed-world scripts are safe to repeat on one server.
	code, out, _ = runCLI(t, "--url", "http://"+addr+"/mcp", "--tokens", tokens, "--run", `^(spec\.|discover_|claim_discussion_harness)`)
	if code != 0 {
		t.Errorf("second run: exit %d\n%s", code, out)
	}
}

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "say which server to test"},
		{[]string{"--url", "http://127.0.0.1:1"}, "--url needs --tokens"},
		{[]string{"--url", "x", "--server-cmd", "y"}, "exclude each other"},
		{[]string{"--profile", "strict", "--server-cmd", "y"}, `unknown profile "strict"`},
		{[]string{"--run", "(", "--server-cmd", "y"}, "--run"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
	code, out, _ := runCLI(t, "--list", "--run", `^spec\.claim_task\.`)
	if code != 0 || !strings.Contains(out, "spec.claim_task.task_id.pattern") || strings.Contains(out, "discover") {
		t.Errorf("--list: exit %d\n%s", code, out)
	}
}

func TestTrace(t *testing.T) {
	code, out, errOut := runCLI(t, "trace")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"claim_task#fa24cf09  A mention is never a run's cause.\n    tested by: claim_task_cause",
		"discover_team_agents#33fcd84b",
		"not testable from outside:",
		"0 problems",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("trace lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, "trace", "--json")
	var m struct {
		Sentences []struct {
			ID      string   `json:"id"`
			Scripts []string `json:"scripts"`
		} `json:"sentences"`
		Problems []string `json:"problems"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || len(m.Sentences) < 20 || len(m.Problems) != 0 {
		t.Errorf("trace --json: exit %d\n%s", code, out)
	}
}
