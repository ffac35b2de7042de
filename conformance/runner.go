package conformance

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/prickle-dev/prickle/spec"
)

// Status is a script's outcome.
type Status string

// Outcomes. An expected failure that fails is XFail (clean); one that
// passes is Fail (the baseline is stale and must be updated).
const (
	Pass  Status = "pass"
	Fail  Status = "fail"
	Skip  Status = "skip"
	XFail Status = "xfail"
)

// Options configures a run.
type Options struct {
	// Target is the server under test.
	Target Target
	// Profile is Core (default) or Reference.
	Profile Profile
	// Spec is the spec to check against; default the bundled one.
	Spec *spec.Spec
	// Parallel is how many scripts run at once; default GOMAXPROCS.
	Parallel int
	// Run, if not nil, selects the scripts whose names match.
	Run *regexp.Regexp
	// ExpectedFailures names scripts known to fail: their failure keeps
	// the run clean, and their passing fails it.
	ExpectedFailures map[string]bool
	// Progress, if not nil, gets a line per finished script.
	Progress io.Writer
	// Verbose keeps the whole log of passing scripts.
	Verbose bool
	// ScriptTimeout bounds one script; default 2 minutes.
	ScriptTimeout time.Duration
}

// Result is one script's outcome.
type Result struct {
	Name     string        `json:"name"`
	Status   Status        `json:"status"`
	Duration time.Duration `json:"-"`
	Millis   int64         `json:"duration_ms"`
	Checks   int           `json:"checks"`
	Covers   []string      `json:"covers,omitempty"`
	Derived  bool          `json:"derived,omitempty"`
	// Reason says why a script was skipped, or why an expected failure
	// failed the run.
	Reason string `json:"reason,omitempty"`
	// Log is the script's log (on failure, the failing phase).
	Log string `json:"log,omitempty"`
}

// Report is a run's outcome.
type Report struct {
	// Suite is the version of the suite (the prickle module) that ran.
	Suite    string        `json:"suite"`
	Target   string        `json:"target"`
	Profile  Profile       `json:"profile"`
	SpecHash string        `json:"spec_hash"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"-"`
	Millis   int64         `json:"duration_ms"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
	Skipped  int           `json:"skipped"`
	XFailed  int           `json:"expected_failures"`
	Checks   int           `json:"checks"`
	Results  []*Result     `json:"scripts"`
}

// Clean reports whether the run passed: no failures.
func (r *Report) Clean() bool { return r.Failed == 0 }

// Summary is the last line of a run: "N passed, N failed, N skipped".
func (r *Report) Summary() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", r.Passed, r.Failed, r.Skipped)
}

// Result returns the named script's result, or nil.
func (r *Report) Result(name string) *Result {
	for _, res := range r.Results {
		if res.Name == name {
			return res
		}
	}
	return nil
}

// Select returns the scripts o.Run selects.
func (o *Options) Select(scripts []*Script) []*Script {
	if o.Run == nil {
		return scripts
	}
	var out []*Script
	for _, s := range scripts {
		if o.Run.MatchString(s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// Run runs scripts (after o.Run's selection) against o.Target.
func Run(ctx context.Context, scripts []*Script, o Options) (*Report, error) {
	if o.Target == nil {
		return nil, fmt.Errorf("conformance: no target")
	}
	if o.Profile == "" {
		o.Profile = Core
	}
	if o.Spec == nil {
		sp, err := spec.LoadBundled()
		if err != nil {
			return nil, err
		}
		o.Spec = sp
	}
	if o.Parallel <= 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
	if o.ScriptTimeout <= 0 {
		o.ScriptTimeout = 2 * time.Minute
	}
	ix := newSpecIndex(o.Spec)
	for _, t := range o.Spec.Tools {
		if _, err := ix.outputSchema(t.Name); err != nil {
			return nil, fmt.Errorf("conformance: %w", err)
		}
	}
	root, err := os.MkdirTemp("", "prickle-conformance-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)

	selected := o.Select(scripts)
	rep := &Report{Suite: suiteVersion(), Target: o.Target.String(), Profile: o.Profile, SpecHash: specHash(o.Spec), Started: time.Now()}
	results := make([]*Result, len(selected))
	var progressMu sync.Mutex
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, s := range selected {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res := runOne(ctx, s, &o, ix, filepath.Join(root, fmt.Sprintf("%04d", i)))
			results[i] = res
			if o.Progress != nil {
				progressMu.Lock()
				writeProgress(o.Progress, res)
				progressMu.Unlock()
			}
		}()
	}
	wg.Wait()
	rep.Results = results
	rep.Duration = time.Since(rep.Started)
	rep.Millis = rep.Duration.Milliseconds()
	for _, r := range results {
		rep.Checks += r.Checks
		switch r.Status {
		case Pass:
			rep.Passed++
		case Fail:
			rep.Failed++
		case Skip:
			rep.Skipped++
		case XFail:
			rep.XFailed++
		}
	}
	return rep, nil
}

// suiteVersion is the prickle module's version in this binary.
func suiteVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	const mod = "github.com/prickle-dev/prickle"
	if bi.Main.Path == mod {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == mod {
			return d.Version
		}
	}
	return "unknown"
}

// specHash is the canonical spec's hash, computed on a copy when the spec
// has none yet (the spec may be shared).
func specHash(sp *spec.Spec) string {
	if sp.Hash != "" {
		return sp.Hash
	}
	c := *sp
	if _, err := c.Marshal(); err != nil {
		return ""
	}
	return c.Hash
}

func writeProgress(w io.Writer, r *Result) {
	switch r.Status {
	case Skip:
		fmt.Fprintf(w, "SKIP  %s: %s\n", r.Name, r.Reason)
	case XFail:
		fmt.Fprintf(w, "XFAIL %s (%.2fs, expected failure)\n", r.Name, r.Duration.Seconds())
	case Pass:
		fmt.Fprintf(w, "PASS  %s (%.2fs, %d checks)\n", r.Name, r.Duration.Seconds(), r.Checks)
	default:
		fmt.Fprintf(w, "FAIL  %s (%.2fs)\n", r.Name, r.Duration.Seconds())
		if r.Reason != "" {
			fmt.Fprintf(w, "      %s\n", r.Reason)
		}
		if r.Log != "" {
			fmt.Fprintln(w, indent(strings.TrimRight(r.Log, "\n")))
		}
	}
}

// scriptT is a testscript.T for one script outside `go test`: failures
// and skips panic, and the panics are recovered in Run, as go-internal's
// own cmd/testscript does.
type scriptT struct {
	verbose bool
	mu      sync.Mutex
	log     strings.Builder
	failed  bool
	skipped string
}

type (
	failNow  struct{}
	skipNow  struct{}
	tPanicky interface{ isTPanic() }
)

func (failNow) isTPanic() {}
func (skipNow) isTPanic() {}

func (t *scriptT) Skip(args ...any) {
	t.mu.Lock()
	t.skipped = fmt.Sprint(args...)
	t.mu.Unlock()
	panic(skipNow{})
}

func (t *scriptT) Fatal(args ...any) {
	t.Log(args...)
	t.FailNow()
}

func (t *scriptT) Parallel() {}

func (t *scriptT) Log(args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	msg := fmt.Sprint(args...)
	t.log.WriteString(msg)
	if !strings.HasSuffix(msg, "\n") {
		t.log.WriteByte('\n')
	}
}

func (t *scriptT) FailNow() {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	panic(failNow{})
}

func (t *scriptT) Run(_ string, f func(testscript.T)) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(tPanicky); !ok {
				panic(r)
			}
		}
	}()
	f(t)
}

func (t *scriptT) Verbose() bool { return t.verbose }

// runOne runs one script in its own folder.
func runOne(ctx context.Context, s *Script, o *Options, ix *specIndex, dir string) (res *Result) {
	start := time.Now()
	res = &Result{Name: s.Name, Covers: s.Covers, Derived: s.Derived}
	defer func() {
		res.Duration = time.Since(start)
		res.Millis = res.Duration.Milliseconds()
		if o.ExpectedFailures[s.Name] {
			switch res.Status {
			case Fail:
				res.Status = XFail
			case Pass:
				res.Status = Fail
				res.Reason = "listed as an expected failure but passes: remove it from the expected-failures file"
			}
		}
	}()
	if reason := o.Target.Skip(s); reason != "" {
		res.Status, res.Reason = Skip, reason
		return res
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.Status, res.Reason = Fail, err.Error()
		return res
	}
	// Every script gets a world: its own, or the standard seed world.
	a := txtar.Parse(s.Archive)
	if !s.OwnFixture {
		a.Files = append(a.Files, txtar.File{Name: FixtureFile, Data: SeedFixture()})
	}
	file := filepath.Join(dir, safeName(s.Name)+".txtar")
	if err := os.WriteFile(file, txtar.Format(a), 0o644); err != nil {
		res.Status, res.Reason = Fail, err.Error()
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, o.ScriptTimeout)
	defer cancel()
	st := &scriptState{ix: ix, profile: o.Profile, ctx: ctx}
	var setupErr error
	var inst *Instance
	p := testscript.Params{
		Files: []string{file},
		Cmds:  Commands(),
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "reference":
				return o.Profile == Reference, nil
			case "core":
				return o.Profile == Core, nil
			}
			return false, fmt.Errorf("unknown condition %q (the suite knows [reference] and [core])", cond)
		},
		Setup: func(env *testscript.Env) error {
			var err error
			inst, err = o.Target.Start(ctx, s, filepath.Join(env.WorkDir, FixtureFile), filepath.Join(dir, "server"))
			if err != nil {
				setupErr = err
				return fmt.Errorf("starting the server: %w", err)
			}
			if inst.Stop != nil {
				env.Defer(inst.Stop)
			}
			st.client = newClient(inst.Endpoint, nil)
			env.Defer(st.client.close)
			st.tokens = inst.Tokens
			env.Values[stateKey{}] = st
			env.Setenv("PRICKLE_ENDPOINT", inst.Endpoint)
			return nil
		},
	}
	t := &scriptT{verbose: o.Verbose}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(tPanicky); !ok {
					panic(r)
				}
			}
		}()
		testscript.RunT(t, p)
	}()
	res.Checks = st.checks
	switch {
	case t.skipped != "":
		res.Status, res.Reason = Skip, t.skipped
	case t.failed:
		res.Status = Fail
		if setupErr != nil {
			res.Reason = "the server did not start"
		}
		res.Log = t.log.String()
		if inst != nil && inst.Output != nil {
			res.Log += "server output (last lines):\n" + indent(st.redact(lastLines(inst.Output(), 40))) + "\n"
		}
	default:
		res.Status = Pass
		if o.Verbose {
			res.Log = t.log.String()
		}
	}
	return res
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

func safeName(s string) string { return unsafeChars.ReplaceAllString(s, "_") }

// SortResults sorts results by name.
func SortResults(rs []*Result) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
}
