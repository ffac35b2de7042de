package benchcompare

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A benchmark renamed and moved since the base is run under its old name
// in the base tree and reported under its new one from both trees, in
// rounds that alternate which tree goes first.
func TestRenamedBenchmark(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two test binaries")
	}
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	repo := renamedBenchmarkRepo(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(repo); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	out := filepath.Join(t.TempDir(), "raw")
	var calls [][]string
	var stdout, log bytes.Buffer
	c := config{
		base: "HEAD", count: 2, benchtime: "1x", out: out, stdout: &stdout, log: &log,
		suite: []Bench{{Loc: Loc{"now", "BenchmarkNow"}, Was: []Loc{{"old", "BenchmarkOld"}}}},
		benchstat: func(_ context.Context, _ string, args ...string) ([]byte, error) {
			calls = append(calls, args)
			return nil, nil
		},
	}
	if err := c.run(context.Background()); err != nil {
		t.Fatalf("%v\n%s", err, log.Bytes())
	}
	for _, label := range []string{"base", "work"} {
		raw, err := os.ReadFile(filepath.Join(out, label+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(raw), "BenchmarkNow/pages=100-"); got != 2 {
			t.Errorf("%s: %d results of BenchmarkNow/pages=100, want one a round:\n%s", label, got, raw)
		}
		if strings.Contains(string(raw), "BenchmarkOld") || strings.Contains(string(raw), "example.com/m/") {
			t.Errorf("%s: the old name or the import path is left:\n%s", label, raw)
		}
	}
	if want := "round 1/2: base ./old.BenchmarkOld\nround 1/2: work ./now.BenchmarkNow\nround 2/2: work ./now.BenchmarkNow\nround 2/2: base ./old.BenchmarkOld\n"; !strings.Contains(log.String(), want) {
		t.Errorf("the rounds do not alternate:\n%s", log.Bytes())
	}
	if len(calls) != 2 || calls[0][0] != "base="+filepath.Join(out, "base.txt") {
		t.Errorf("benchstat called with %q", calls)
	}
	wt, err := exec.Command("git", "-C", repo, "worktree", "list").Output()
	if err != nil || bytes.Count(wt, []byte("\n")) != 1 {
		t.Errorf("the base's worktree is left: %s %v", wt, err)
	}

	if _, err := exec.LookPath("valgrind"); err == nil {
		checkRenamedInstructions(t, c, &stdout, &log)
	}

	// A base with neither name is an error that says what to do.
	c.suite[0].Was = nil
	if err := c.run(context.Background()); err == nil || !strings.Contains(err.Error(), "Was") {
		t.Errorf("a base without the benchmark: %v", err)
	}
}

// renamedBenchmarkRepo makes a module in a git repository whose commit
// has BenchmarkOld in package old, and whose work tree has it as
// BenchmarkNow in package now instead (uncommitted: the work tree counts).
func renamedBenchmarkRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	write := func(path, src string) {
		t.Helper()
		p := filepath.Join(repo, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.24\n")
	write("old/old_test.go", loopBenchmark("old", "BenchmarkOld"))
	run("git", "init", "-q")
	run("git", "add", ".")
	run("git", "commit", "-q", "-m", "base")
	run("git", "rm", "-q", "-r", "old")
	write("now/now_test.go", loopBenchmark("now", "BenchmarkNow"))
	return repo
}

// loopBenchmark is the source of a benchmark, name in package pkg, whose
// work is a loop that neither allocates nor waits: millions of
// instructions an iteration, far above what the runtime's own threads add
// to a run under valgrind.
func loopBenchmark(pkg, name string) string {
	return "package " + pkg + `

import (
	"strconv"
	"testing"
)

var sink int

func ` + name + `(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run("pages="+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				for i := range 50000 * n {
					sink += i ^ i>>3
				}
			}
		})
	}
}
`
}

// checkRenamedInstructions runs c with -instructions, where valgrind is
// installed: one row, both trees counted under the benchmark's names in
// each; and with -fail-below, which fails on the ratio of the same
// benchmark in both trees (about 1.00×) below a gate of 100×, not below
// one of 0.5×.
func checkRenamedInstructions(t *testing.T, c config, stdout, log *bytes.Buffer) {
	t.Helper()
	stdout.Reset()
	ic := c
	ic.instructions, ic.sub = true, "=10$"
	if err := ic.run(context.Background()); err != nil {
		t.Fatalf("-instructions: %v\n%s", err, log.Bytes())
	}
	row := regexp.MustCompile(`(?m)^\s*Now/=10\$\s+[0-9.]+M\s+[0-9.]+M\s+[0-9.]+×\s*$`)
	if !row.Match(stdout.Bytes()) {
		t.Errorf("-instructions printed:\n%s", stdout.Bytes())
	}

	stdout.Reset()
	ic.failBelow = 100
	err := ic.run(context.Background())
	var re *RatioError
	if !errors.As(err, &re) || re.Bench != "Now/=10$" || re.Ratio < 0.5 || re.Ratio > 2 {
		t.Errorf("-fail-below 100: %v", err)
	}
	if !row.Match(stdout.Bytes()) {
		t.Errorf("-fail-below: the table is not printed first:\n%s", stdout.Bytes())
	}
	ic.failBelow = 0.5
	if err := ic.run(context.Background()); err != nil {
		t.Errorf("-fail-below 0.5: %v", err)
	}
}

func TestRatios(t *testing.T) {
	// benchstat -format csv of two inputs, cut short.
	csv := `goos: linux
pkg: ./spec
,base,,work,,,
,sec/op,CI,sec/op,CI,vs base,P
Spec/pages=100-2,0.05,1%,0.025,2%,-50.00%,p=0.002 n=6
Spec/pages=1000-2,0.6,1%,0.25,2%,-58.33%,p=0.002 n=6
geomean,0.17,,0.08,,-54.00%,

,base,,work,,,
,B/op,CI,B/op,CI,vs base,P
Spec/pages=100-2,1000,0%,1000,0%,~,p=1.000 n=6
Spec/pages=1000-2,10000,0%,8000,0%,-20.00%,p=0.002 n=6
geomean,3162,,2828,,-10.00%,
`
	rows, err := parseCSV([]byte(csv))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[1] != (row{unit: "sec/op", name: "Spec/pages=1000-2", base: 0.6, work: 0.25, delta: "-58.33%"}) {
		t.Fatalf("rows: %+v", rows)
	}
	var b bytes.Buffer
	writeRatios(&b, rows)
	lines := map[string]bool{}
	for _, l := range strings.Split(b.String(), "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, want := range []string{
		"Spec/pages=100-2 2.00× 1.00× ~ -",
		"Spec/pages=1000-2 2.40× 1.25× -",
		"Spec/pages 100 → 1000 12.00× 10.00×",
	} {
		if !lines[want] {
			t.Errorf("no line %q in:\n%s", want, b.Bytes())
		}
	}
}

// -fail-below gates on instruction counts only: timings on a shared
// machine are too noisy to fail a run on.
func TestFailBelowNeedsInstructions(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"-fail-below", "0.9"}, &stdout, &stderr); code != ExitUsage || !strings.Contains(stderr.String(), "-instructions") {
		t.Errorf("exit %d: %s", code, stderr.Bytes())
	}
}
