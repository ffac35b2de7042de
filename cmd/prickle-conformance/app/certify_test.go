package app

import (
	"bytes"
	"context"
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

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/internal/pgtest"
	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/spec"
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
	code := pgtest.Main(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

var summaryRe = regexp.MustCompile(`(?m)\A[\s\S]*\n(CERTIFIED|FAILED|INCOMPLETE): (\d+) passed, (\d+) failed, (\d+) skipped\n\z`)

// summary reads the last line: the verdict and the counts.
func summary(t *testing.T, out string) (verdict string, passed, failed, skipped int) {
	t.Helper()
	m := summaryRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the output does not end with the summary line:\n%s", out)
	}
	verdict = m[1]
	fmt.Sscan(m[2], &passed)
	fmt.Sscan(m[3], &failed)
	fmt.Sscan(m[4], &skipped)
	return
}

// serverCmd is how the suite starts prickled for a script.
func serverCmd(bin string, extra ...string) string {
	return strings.Join(append([]string{bin, "--addr", "$PRICKLE_ADDR", "--db", ":memory:", "--fixture", "$PRICKLE_FIXTURE"}, extra...), " ")
}

// TestServerCmd certifies the real prickled binary, a fresh process per
// script and per explored sequence, in both profiles, exploration at its
// default budget, with reports that say what certified what.
func TestServerCmd(t *testing.T) {
	bin := prickled(t)
	for _, profile := range []string{"reference", "core"} {
		t.Run(profile, func(t *testing.T) {
			dir := t.TempDir()
			jsonFile, junitFile := filepath.Join(dir, "report.json"), filepath.Join(dir, "report.xml")
			start := time.Now()
			code, out, errOut := runCLI(t, "--server-cmd", serverCmd(bin), "--profile", profile, "--seed", "7",
				"--json", jsonFile, "--junit", junitFile)
			want := wantVerdict(t, out)
			if (code == 0) != (want == "CERTIFIED") {
				t.Fatalf("exit %d, want the verdict %s\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
			}
			verdict, p, f, sk := summary(t, out)
			if verdict != want || p < 50 || f != 0 || sk != 0 {
				t.Errorf("summary %s %d/%d/%d, want %s:\n%s", verdict, p, f, sk, want, out)
			}
			t.Logf("%s profile, full run with exploration: %s", profile, time.Since(start).Round(100*time.Millisecond))
			for _, name := range []string{"claim_task_replay", "claim_discussion_roles", "spec.tools", "explore"} {
				if !regexp.MustCompile(`(?m)^PASS  ` + regexp.QuoteMeta(name) + ` \(`).MatchString(out) {
					t.Errorf("no progress line for %s:\n%s", name, out)
				}
			}
			for _, class := range []string{"task-same-key", "task-different-keys", "task-mixed-keys", "discussion", "credential-replay"} {
				if !regexp.MustCompile(`(?m)^  ` + class + `: \d+ of \d+ groups overlapped \(66 needed\), miss bound `).MatchString(out) {
					t.Errorf("no race evidence line for %s:\n%s", class, out)
				}
			}
			var rep struct {
				Suite, Profile, Verdict string
				SpecHash                string `json:"spec_hash"`
				Seed                    int64
				Passed, Checks          int
				Explore                 struct {
					Sequences, Calls int
					Outcomes         map[string]int
				}
				Scripts []struct{ Name, Status string }
			}
			b, err := os.ReadFile(jsonFile)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Profile != profile || rep.Verdict != strings.ToLower(want) || rep.Seed != 7 || !strings.HasPrefix(rep.SpecHash, "sha256:") ||
				rep.Suite == "" || rep.Suite == "(devel)" || rep.Checks < 1000 || rep.Explore.Sequences != conformance.DefaultExplore || rep.Explore.Calls < 10*conformance.DefaultExplore {
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
					Props    []struct {
						Name  string `xml:"name,attr"`
						Value string `xml:"value,attr"`
					} `xml:"properties>property"`
				} `xml:"testsuite"`
			}
			if err := xml.Unmarshal(xb, &ju); err != nil || len(ju.Suites) != 1 || ju.Suites[0].Tests != len(rep.Scripts) || ju.Suites[0].Failures != 0 {
				t.Errorf("junit report (%v): %s", err, xb)
			}
			props := map[string]string{}
			for _, p := range ju.Suites[0].Props {
				props[p.Name] = p.Value
			}
			if props["seed"] != "7" || props["verdict"] != strings.ToLower(want) || props["suite"] != rep.Suite || props["spec_hash"] != rep.SpecHash {
				t.Errorf("junit properties %v", props)
			}
		})
	}
}

// TestServerCmdPartial: a run of some scripts never certifies: it ends
// INCOMPLETE, exits 1 and says what did not run.
func TestServerCmdPartial(t *testing.T) {
	bin := prickled(t)
	code, out, _ := runCLI(t, "--server-cmd", serverCmd(bin), "--profile", "reference",
		"--run", `^(claim_task_replay|spec\.tools)$`, "--parallel", "3")
	verdict, p, f, _ := summary(t, out)
	if code != 1 || verdict != "INCOMPLETE" || p != 2 || f != 0 {
		t.Errorf("exit %d, %s %d passed %d failed:\n%s", code, verdict, p, f, out)
	}
	// One line says so; the report keeps the whole list.
	want := regexp.MustCompile(`(?m)^not a certification: --run '\^\(claim_task_replay\|spec\\\.tools\)\$' selected 2 of the suite's [0-9]+ scripts`)
	if !want.MatchString(out) || strings.Contains(out, "missing for a certification") {
		t.Errorf("the output does not say in one line that a selection cannot certify:\n%s", out)
	}
}

// TestServerCmdFailuresAndBaseline: a server that breaks a reference rule
// fails the run, and the failure cites the embedded script and line; listed
// as an expected failure it no longer fails the run; an expected failure
// that passes fails the run.
func TestServerCmdFailuresAndBaseline(t *testing.T) {
	bin := prickled(t)
	dir := t.TempDir()
	keep := filepath.Join(dir, "kept")
	// A two-hour launch timeout breaks the reference profile's 15 minutes.
	cmd := serverCmd(bin, "--launch-timeout", "2h")
	sel := `^(claim_task_credential|spec\.tools)$`
	code, out, _ := runCLI(t, "--server-cmd", cmd, "--profile", "reference", "--run", sel, "--keep", keep)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	if verdict, p, f, _ := summary(t, out); verdict != "FAILED" || p != 1 || f != 1 {
		t.Errorf("want 1 passed, 1 failed:\n%s", out)
	}
	if !strings.Contains(out, "FAIL  claim_task_credential") || !strings.Contains(out, "expected about 15m0s after the call") {
		t.Errorf("the failure is not explained:\n%s", out)
	}
	// The failure cites the embedded script and the line of the check.
	m := regexp.MustCompile(`FAIL: scripts/claim_task_credential\.txtar:(\d+): `).FindStringSubmatch(out)
	if m == nil || regexp.MustCompile(`(^|\s)/\S*\.txtar:\d+`).MatchString(out) {
		t.Fatalf("the failure does not cite scripts/claim_task_credential.txtar:LINE (or names a temporary file):\n%s", out)
	}
	src, err := os.ReadFile("../../../conformance/scripts/claim_task_credential.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var line int
	fmt.Sscan(m[1], &line)
	if lines := strings.Split(string(src), "\n"); line < 1 || line > len(lines) || !strings.Contains(lines[line-1], "expires_at ~ 15m") {
		t.Errorf("line %d of the script is not the failing check", line)
	}
	// --keep kept the materialized script with its world: fresh tokens.
	kept, err := os.ReadFile(filepath.Join(keep, "claim_task_credential", "claim_task_credential.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(kept, []byte("-- fixture.json --")) || bytes.Contains(kept, []byte("conformance-runner-maya-laptop")) || !bytes.Contains(kept, []byte("prk_conformance_")) {
		t.Errorf("the kept script does not carry its materialized world:\n%s", kept)
	}

	baseline := filepath.Join(dir, "baseline.txt")
	os.WriteFile(baseline, []byte("# known\nclaim_task_credential\n"), 0o644)
	code, out, _ = runCLI(t, "--server-cmd", cmd, "--profile", "reference", "--run", sel, "--expected-failures", baseline)
	if verdict, p, f, s := summary(t, out); code != 1 || verdict != "INCOMPLETE" || p != 1 || f != 0 || s != 0 || !strings.Contains(out, "XFAIL claim_task_credential") {
		t.Errorf("exit %d; want 1 passed and an expected failure, no failure:\n%s", code, out)
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
// startPrickled starts the prickled binary on a free port with the
// extra flags and returns its address and its tokens file.
func startPrickled(t *testing.T, extra ...string) (addr, tokens string) {
	t.Helper()
	bin := prickled(t)
	dir := t.TempDir()
	addr = freePort(t)
	tokens = filepath.Join(dir, "tokens.json")
	srv := exec.Command(bin, append([]string{"--addr", addr, "--db", filepath.Join(dir, "world.db"), "--tokens-out", tokens}, extra...)...)
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
				return addr, tokens
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prickled did not start:\n%s", srvOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestURLMode(t *testing.T) {
	addr, tokens := startPrickled(t)

	// Scripts that need their own world cannot run: the run is incomplete.
	code, out, errOut := runCLI(t, "--url", "http://"+addr, "--tokens", tokens, "--profile", "reference")
	if code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	verdict, passed, failed, skipped := summary(t, out)
	if verdict != "INCOMPLETE" || failed != 0 || passed < 30 || skipped < 10 {
		t.Errorf("%s: %d passed, %d failed, %d skipped:\n%s", verdict, passed, failed, skipped, out)
	}
	if !strings.Contains(out, "SKIP  explore: stateful exploration needs its own world") {
		t.Errorf("exploration is not skipped with its reason:\n%s", out)
	}
	if !strings.Contains(out, "  - races were not checked: exploration did not race") {
		t.Errorf("the run does not say races were not checked:\n%s", out)
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
	if _, _, failed, _ := summary(t, out); code != 1 || failed != 0 {
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
		{[]string{"--race-budget", "0s", "--server-cmd", "y"}, "--race-budget: 0s is not positive"},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
	if code, out, _ := runCLI(t, "--version"); code != 0 || !strings.HasPrefix(out, "prickle-conformance ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	code, out, _ := runCLI(t, "--list", "--run", `^spec\.claim_task\.`)
	if code != 0 || !strings.Contains(out, "spec.claim_task.task_id.pattern") || strings.Contains(out, "discover") {
		t.Errorf("--list: exit %d\n%s", code, out)
	}
}

// wantVerdict is the verdict a full run against prickled must reach:
// CERTIFIED when prickled implements every documented tool; INCOMPLETE
// when it leaves some to api.UnimplementedHandler (a page added before its
// implementation), every gap the run names being one of those tools.
func wantVerdict(t *testing.T, out string) string {
	t.Helper()
	if len(server.Unimplemented()) == 0 {
		return "CERTIFIED"
	}
	var gaps []string
	in := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "missing for a certification:"):
			in = true
		case in && strings.HasPrefix(line, "  - "):
			gaps = append(gaps, line)
		default:
			in = false
		}
	}
	onlyUnimplemented(t, "", strings.Join(gaps, "\n"))
	return "INCOMPLETE"
}

// onlyUnimplemented checks that every line of text holding marker names
// a tool prickled does not implement, and that each such tool is named;
// it returns how many lines hold marker.
func onlyUnimplemented(t *testing.T, marker, text string) int {
	t.Helper()
	missing := server.Unimplemented()
	named := map[api.ToolName]bool{}
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, marker) || strings.TrimSpace(line) == "" {
			continue
		}
		n++
		found := false
		for _, tool := range missing {
			if testkit.NamesTool(line, string(tool)) {
				named[tool], found = true, true
			}
		}
		if !found {
			t.Errorf("a gap of a tool prickled implements: %s", line)
		}
	}
	if n > 0 || marker == "" {
		for _, tool := range missing {
			if !named[tool] {
				t.Errorf("%s, which prickled does not implement, is not named among the gaps:\n%s", tool, text)
			}
		}
	}
	return n
}

// TestPages: --pages certifies against given pages (a folder or a spec
// file) instead of the embedded ones, and the report names their hash.
func TestPages(t *testing.T) {
	bin := prickled(t)
	dir := t.TempDir()
	pages := filepath.Join(dir, "pages")
	os.Mkdir(pages, 0o755)
	matches, _ := filepath.Glob("../../../spec/reference/*.md")
	if len(matches) == 0 {
		t.Fatal("no bundled pages")
	}
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.Replace(b, []byte("A mention is never a run's cause."), []byte("A mention is never the cause of a run."), 1)
		os.WriteFile(filepath.Join(pages, filepath.Base(m)), b, 0o644)
	}
	code, out, errOut := runCLI(t, "trace", "--pages", pages)
	if code != 1 || !strings.Contains(out+errOut, "A mention is never the cause of a run.") {
		t.Errorf("trace --pages of an edited page: exit %d\n%s\n%s", code, out, errOut)
	}
	srcs, err := spec.ReadPaths([]string{pages})
	if err != nil {
		t.Fatal(err)
	}
	sp, _, err := spec.LoadLinted(srcs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sp.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	specFile := filepath.Join(dir, "spec.json")
	os.WriteFile(specFile, b, 0o644)
	bundled, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	for _, given := range []string{pages, specFile} {
		jsonFile := filepath.Join(dir, "report.json")
		code, out, errOut := runCLI(t, "--server-cmd", serverCmd(bin), "--pages", given, "--run", `^(claim_task_cause|spec\.tools)$`, "--json", jsonFile)
		var rep struct {
			SpecHash   string `json:"spec_hash"`
			SpecSource string `json:"spec_source"`
			Verdict    string
			Missing    []string
		}
		rb, _ := os.ReadFile(jsonFile)
		if err := json.Unmarshal(rb, &rep); err != nil {
			t.Fatalf("%s: %v\n%s\n%s", given, err, out, errOut)
		}
		if code != 1 || rep.SpecHash != sp.Hash() || rep.SpecHash == bundled.Hash() || !strings.Contains(rep.SpecSource, given) {
			t.Errorf("--pages %s: exit %d, report %+v, want spec %s", given, code, rep, sp.Hash())
		}
		if !strings.Contains(strings.Join(rep.Missing, "\n"), "A mention is never the cause of a run.") {
			t.Errorf("--pages %s: the edited sentence is not said to be missing: %v", given, rep.Missing)
		}
		if !strings.Contains(out, shortHash(sp.Hash())) {
			t.Errorf("--pages %s: the output does not name the spec's hash:\n%s", given, out)
		}
	}
	code, _, errOut = runCLI(t, "--server-cmd", "true", "--pages", filepath.Join(dir, "nope"))
	if code != 2 || !strings.Contains(errOut, "nope") {
		t.Errorf("missing pages: exit %d, %s", code, errOut)
	}
}

func shortHash(h string) string { return strings.TrimPrefix(h, "sha256:")[:12] }

// A server that answers nothing is one clear error (exit 1), not a failure
// per script.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	toks := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(toks, []byte(`[{"kind":"agent","agent":"maya/builder","token":"prk_a"},{"kind":"runner","agent":"maya/builder","runner":"maya-laptop","token":"prk_b"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "--url", "http://"+addr, "--tokens", toks)
	var errs int // lines other than the spec's warnings, which pages may add
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if !strings.HasPrefix(l, "prickle-conformance: warning: ") {
			errs++
		}
	}
	if code != 1 || errs != 1 || !strings.Contains(errOut, "http://"+addr+"/mcp is unreachable") || strings.Contains(out, "FAIL") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// -v shows the whole log of a passing script too.
func TestVerbose(t *testing.T) {
	bin := prickled(t)
	for _, verbose := range []bool{false, true} {
		args := []string{"--server-cmd", serverCmd(bin), "--run", `^claim_task_replay$`}
		if verbose {
			args = append(args, "-v")
		}
		_, out, _ := runCLI(t, args...)
		if !strings.Contains(out, "PASS  claim_task_replay") {
			t.Fatalf("no pass line:\n%s", out)
		}
		if got := strings.Contains(out, "> call -as runner:"); got != verbose {
			t.Errorf("-v=%v: the script's log shown: %v\n%s", verbose, got, out)
		}
	}
}

// TestToolsFlagNamesDocumentedTools: --tools takes documented tools only,
// refused as a usage error naming the documented ones.
func TestToolsFlagNamesDocumentedTools(t *testing.T) {
	code, _, errOut := runCLI(t, "--server-cmd", "true", "--tools", "discover_team_agents,no_such_tool")
	if code != 2 || !strings.Contains(errOut, `--tools: "no_such_tool" is not a documented tool (the pages document `) || !strings.Contains(errOut, "discover_team_agents)") && !strings.Contains(errOut, "discover_team_agents,") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}
