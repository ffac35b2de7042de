// Package benchcompare runs a suite of benchmarks on a base commit and on
// the work tree, side by side in one run, and prints the comparison:
// benchstat's tables, then each row's ratio (base ÷ work) and each
// benchmark's growth from its smallest size to its largest.
//
//	go run ./tools/bench-compare [-base main] [-count 6] [-benchtime 1s] [-bench REGEXP] [-out DIR]
//	go run ./tools/bench-compare -instructions [-sub '=100$'] [-base main] [-bench REGEXP] [-fail-below 0.9]
//
// The base is checked out in a temporary git worktree. Both trees' test
// binaries are built first; then, round after round, each benchmark runs
// once in each tree, the tree that goes first alternating, so that the
// machine's load falls on both alike. On a machine too loaded for timings
// to mean much, -instructions counts each tree's instructions per
// iteration with valgrind instead (see instructions.go). It is a tool, not
// a test: nothing fails on a number, unless -fail-below asks it to (CI's
// gate: an instruction count's ratio below it fails the run).
//
// It runs the benchmarks as test binaries built by go test -c, so it
// imports nothing of this module but internal/cmdline.
package benchcompare

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/prickle-dev/prickle/internal/cmdline"
)

// benchstat is the pinned benchstat that prints the tables.
const benchstat = "golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

// Exit statuses.
const (
	ExitOK    = cmdline.ExitOK
	ExitFail  = 1 // a build, a benchmark or benchstat failed
	ExitUsage = cmdline.ExitUsage
)

// Main runs bench-compare with args (flags only) from the module's work
// tree, the current directory or one of its parents.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench-compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("base", "main", "the `commit` to compare the work tree with")
	count := fs.Int("count", 6, "rounds: runs of each benchmark in each tree")
	benchtime := fs.String("benchtime", "1s", "each run's -test.benchtime")
	filter := fs.String("bench", "", "run only the suite's benchmarks whose name matches `regexp`")
	out := fs.String("out", "", "keep the raw results (base.txt, work.txt) in `dir`")
	instr := fs.Bool("instructions", false, "count instructions with valgrind's callgrind instead of timing (one run per tree)")
	sub := fs.String("sub", "=100$", "with -instructions, the sub-benchmarks to count, a `regexp` (1,000 pages take many minutes under valgrind)")
	failBelow := fs.Float64("fail-below", 0, "with -instructions, fail when a benchmark's `ratio` (base ÷ work) is below it")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: bench-compare [flags]\n\nRuns the generator's benchmarks on a base commit and on the work tree, interleaved, and compares them.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if code, ok := cmdline.Parse(fs, args, false); !ok {
		return code
	}
	if *count < 1 {
		fmt.Fprintln(stderr, "bench-compare: -count must be at least 1")
		return ExitUsage
	}
	suite := Suite
	if *filter != "" {
		re, err := regexp.Compile(*filter)
		if err != nil {
			fmt.Fprintf(stderr, "bench-compare: -bench: %v\n", err)
			return ExitUsage
		}
		suite = slices.DeleteFunc(slices.Clone(Suite), func(b Bench) bool { return !re.MatchString(b.Func) })
		if len(suite) == 0 {
			fmt.Fprintf(stderr, "bench-compare: -bench %q matches no benchmark of the suite\n", *filter)
			return ExitUsage
		}
	}
	if *failBelow != 0 && !*instr {
		fmt.Fprintln(stderr, "bench-compare: -fail-below needs -instructions: timings on a shared machine are too noisy to fail on")
		return ExitUsage
	}
	if _, err := regexp.Compile(*sub); err != nil {
		fmt.Fprintf(stderr, "bench-compare: -sub: %v\n", err)
		return ExitUsage
	}
	cfg := config{base: *base, count: *count, benchtime: *benchtime, suite: suite, out: *out, instructions: *instr, sub: *sub,
		failBelow: *failBelow, stdout: stdout, log: stderr, benchstat: runBenchstat}
	if err := cfg.run(ctx); err != nil {
		fmt.Fprintf(stderr, "bench-compare: %v\n", err)
		return ExitFail
	}
	return ExitOK
}

type config struct {
	base      string
	count     int
	benchtime string
	suite     []Bench
	out       string
	// instructions counts the instructions of the sub-benchmarks that
	// match sub, instead of timing the benchmarks.
	instructions bool
	sub          string
	// failBelow, when not 0, is the lowest ratio of instructions (base ÷
	// work) that passes.
	failBelow float64
	stdout    io.Writer
	log       io.Writer
	// benchstat runs benchstat in dir with args and returns what it printed.
	benchstat func(ctx context.Context, dir string, args ...string) ([]byte, error)
}

// tree is one of the two trees compared, with its test binaries.
type tree struct {
	label string // "base" or "work"
	root  string
	bins  map[string]string // package directory → test binary
	locs  []Loc             // per suite entry, where this tree has it
}

func (c *config) run(ctx context.Context) error {
	root, err := git(ctx, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	sha, err := git(ctx, root, "rev-parse", "--verify", "--quiet", c.base+"^{commit}")
	if err != nil {
		return fmt.Errorf("base %q is not a commit", c.base)
	}
	subject, _ := git(ctx, root, "log", "-1", "--format=%h %s", sha)
	tmp, err := os.MkdirTemp("", "bench-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	baseRoot := filepath.Join(tmp, "base")
	if _, err := git(ctx, root, "worktree", "add", "--detach", "--quiet", baseRoot, sha); err != nil {
		return err
	}
	defer func() {
		// The context may be done (an interrupt): the worktree goes anyway.
		if _, err := git(context.WithoutCancel(ctx), root, "worktree", "remove", "--force", baseRoot); err != nil {
			fmt.Fprintf(c.log, "bench-compare: %v\n", err)
		}
	}()

	trees := []*tree{{label: "base", root: baseRoot}, {label: "work", root: root}}
	for _, t := range trees {
		if err := c.build(ctx, t, filepath.Join(tmp, "bin", t.label)); err != nil {
			return err
		}
	}

	if c.instructions {
		fmt.Fprintf(c.stdout, "base: %s\nwork: %s (the work tree, as it is)\n", subject, root)
		return c.countInstructions(ctx, trees, c.stdout)
	}
	loadStart := loadAverage()
	results := map[*tree]*bytes.Buffer{trees[0]: {}, trees[1]: {}}
	for r := range c.count {
		order := trees
		if r%2 == 1 {
			order = []*tree{trees[1], trees[0]}
		}
		for i, b := range c.suite {
			for _, t := range order {
				fmt.Fprintf(c.log, "round %d/%d: %s %s\n", r+1, c.count, t.label, t.locs[i])
				res, err := c.bench(ctx, t, t.locs[i], b.Loc)
				if err != nil {
					return err
				}
				results[t].Write(res)
			}
		}
	}
	loadEnd := loadAverage()

	dir := c.out
	if dir == "" {
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := make([]string, len(trees))
	for i, t := range trees {
		files[i] = filepath.Join(dir, t.label+".txt")
		if err := os.WriteFile(files[i], results[t].Bytes(), 0o644); err != nil {
			return err
		}
	}

	w := c.stdout
	fmt.Fprintf(w, "base: %s\nwork: %s (the work tree, as it is)\n", subject, root)
	fmt.Fprintf(w, "%d rounds, -benchtime %s, interleaved; load average (1, 5, 15 min) at start %s, at end %s\n\n", c.count, c.benchtime, loadStart, loadEnd)
	args := []string{"base=" + files[0], "work=" + files[1]}
	table, err := c.benchstat(ctx, tmp, args...)
	if err != nil {
		return err
	}
	w.Write(table)
	csv, err := c.benchstat(ctx, tmp, append([]string{"-format", "csv"}, args...)...)
	if err != nil {
		return err
	}
	rows, err := parseCSV(csv)
	if err != nil {
		return fmt.Errorf("reading benchstat's csv: %w", err)
	}
	fmt.Fprintln(w)
	writeRatios(w, rows)
	if c.out != "" {
		fmt.Fprintf(w, "\nraw results: %s %s\n", files[0], files[1])
	}
	return nil
}

// build builds t's test binaries of the suite's packages into dir and
// finds each benchmark in t.
func (c *config) build(ctx context.Context, t *tree, dir string) error {
	t.bins = map[string]string{}
	listed := map[string][]string{} // package → its benchmarks
	binary := func(pkg string) error {
		if _, ok := t.bins[pkg]; ok {
			return nil
		}
		if _, err := os.Stat(filepath.Join(t.root, filepath.FromSlash(pkg))); err != nil {
			t.bins[pkg] = ""
			return nil // not in this tree
		}
		bin := filepath.Join(dir, strings.ReplaceAll(pkg, "/", "_")+".test")
		fmt.Fprintf(c.log, "building %s ./%s\n", t.label, pkg)
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, "./"+pkg)
		cmd.Dir = t.root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: go test -c ./%s: %w\n%s", t.label, pkg, err, out)
		}
		out, err := testBinary(ctx, t.root, pkg, bin, "-test.list", "^Benchmark")
		if err != nil {
			return fmt.Errorf("%s: listing ./%s's benchmarks: %w", t.label, pkg, err)
		}
		t.bins[pkg] = bin
		listed[pkg] = strings.Fields(string(out))
		return nil
	}
	t.locs = make([]Loc, len(c.suite))
	for i, b := range c.suite {
		for _, l := range append([]Loc{b.Loc}, b.Was...) {
			if err := binary(l.Pkg); err != nil {
				return err
			}
			if slices.Contains(listed[l.Pkg], l.Func) {
				t.locs[i] = l
				break
			}
		}
		if t.locs[i] == (Loc{}) {
			return fmt.Errorf("%s has no %s (nor any of its earlier names): add the name it had to the suite's Was", t.label, b.Loc)
		}
	}
	return nil
}

// bench runs the benchmark at l once in t and returns its results, named
// as the suite names them (as).
func (c *config) bench(ctx context.Context, t *tree, l, as Loc) ([]byte, error) {
	out, err := testBinary(ctx, t.root, l.Pkg, t.bins[l.Pkg],
		"-test.run", "^$", "-test.bench", "^"+regexp.QuoteMeta(l.Func)+"$", "-test.benchmem",
		"-test.count", "1", "-test.benchtime", c.benchtime)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w\n%s", t.label, l, err, out)
	}
	res, n := rename(out, l.Func, as)
	if n == 0 {
		return nil, fmt.Errorf("%s: %s printed no result:\n%s", t.label, l, out)
	}
	return res, nil
}

// rename keeps the configuration and result lines of a benchmark run's
// output, with the benchmark named as and its package as.Pkg, and counts
// the results.
func rename(out []byte, from string, as Loc) (res []byte, n int) {
	var b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, from) && len(line) > len(from) && strings.ContainsRune("/- \t", rune(line[len(from)])):
			b.WriteString(as.Func + line[len(from):] + "\n")
			n++
		case strings.HasPrefix(line, "pkg: "):
			// The package as the work tree has it: benchstat compares rows
			// of the same configuration only.
			fmt.Fprintf(&b, "pkg: ./%s\n", as.Pkg)
		case configLine.MatchString(line):
			b.WriteString(line + "\n")
		}
	}
	return b.Bytes(), n
}

// configLine is a benchmark output's configuration line ("goos: linux").
var configLine = regexp.MustCompile(`^[a-z][^\s:]*: `)

// testBinary runs a package's test binary in the package's directory, as
// go test does.
func testBinary(ctx context.Context, root, pkg, bin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = filepath.Join(root, filepath.FromSlash(pkg))
	return cmd.CombinedOutput()
}

func runBenchstat(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"run", benchstat}, args...)...)
	cmd.Dir = dir // outside the module: benchstat is not one of its dependencies
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("benchstat: %w\n%s", err, stderr.Bytes())
	}
	return out, nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && stderr.Len() > 0 {
			return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// loadAverage is the machine's load average as /proc/loadavg says it, or
// "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
