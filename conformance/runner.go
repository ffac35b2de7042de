package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/explore"
	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/internal/cmdline"
)

// Report is a run's outcome: its verdict and what it misses, each tool's
// verdict, and the detail (package report) of every script, requirement,
// exploration and the evidence gathered.
type Report struct {
	// Suite is the version of the suite (the prickle module, or the VCS
	// revision it was built from) that ran.
	Suite    string  `json:"suite"`
	Target   string  `json:"target"`
	Profile  Profile `json:"profile"`
	SpecHash string  `json:"spec_hash"`
	// SpecSource says which pages the run certified against.
	SpecSource string `json:"spec_source"`
	// Seed seeds exploration: with it a run explores the same sequences.
	Seed int64 `json:"seed"`
	// Verdict is certified only when nothing failed and coverage is
	// complete; Missing says what is missing.
	Verdict Verdict             `json:"verdict"`
	Missing []string            `json:"missing,omitempty"`
	Explore *report.Exploration `json:"explore,omitempty"`
	// Races is the race evidence per class (evidence.go); nil if no
	// race was run.
	Races []report.RaceEvidence `json:"race_evidence"`
	// Refusals are the refusals the pages state, each with how often
	// exploration provoked it alone (refusals.go).
	Refusals []report.RefusalEvidence `json:"refusals,omitempty"`
	Started  time.Time                `json:"started"`
	Duration time.Duration            `json:"-"`
	Millis   int64                    `json:"duration_ms"`
	Passed   int                      `json:"passed"`
	Failed   int                      `json:"failed"`
	Skipped  int                      `json:"skipped"`
	XFailed  int                      `json:"expected_failures"`
	Checks   int                      `json:"checks"`
	Results  []*report.Result         `json:"scripts"`
	// Requirements are the pages' normative sentences, each with what the
	// run found of it.
	Requirements []report.Requirement `json:"requirements"`
	// RerunArgs are Options.RerunArgs.
	RerunArgs []string `json:"rerun_args,omitempty"`
	// Starts counts the servers the run started (none for an already
	// running server).
	Starts int64 `json:"server_starts"`
	// Tools is the verdict on each documented tool.
	Tools []ToolVerdict `json:"tools"`
	// Scope is Options.Tools: the tools the run certifies when it is set.
	Scope []string `json:"scope,omitempty"`
	// Replicas is, against a deployment of two replicas or more, how
	// many it has (0 for one server); ReplicaCalls the tool calls each
	// replica answered, by replica number.
	Replicas     int   `json:"replicas,omitempty"`
	ReplicaCalls []int `json:"replica_calls,omitempty"`
	// Power is the suite's power in the run's profile, as its self-test
	// measured it (power.go).
	Power *report.Power `json:"power,omitempty"`
}

// Clean reports whether the run certifies the server: nothing failed and
// the coverage is complete; with a scope, of the tools in it.
func (r *Report) Clean() bool { return r.ScopeVerdict() == Certified }

// ScopeVerdict is the verdict on what the run was asked to certify: the
// whole server (Verdict), or with a scope, its tools: certified when each
// is, failed when one failed, otherwise incomplete.
func (r *Report) ScopeVerdict() Verdict {
	if len(r.Scope) == 0 {
		return r.Verdict
	}
	v := Certified
	for _, t := range r.Tools {
		switch {
		case !slices.Contains(r.Scope, t.Name) || t.Verdict == Certified:
		case t.Verdict == Failed:
			return Failed
		default:
			v = Incomplete
		}
	}
	return v
}

// Summary is the last line of a run: "VERDICT: N passed, N failed, N
// skipped".
// With a scope: "VERDICT for TOOLS (the whole run: VERDICT): ...".
func (r *Report) Summary() string {
	v := strings.ToUpper(string(r.Verdict))
	if len(r.Scope) > 0 {
		v = fmt.Sprintf("%s for %s (the whole run: %s)", strings.ToUpper(string(r.ScopeVerdict())), strings.Join(r.Scope, ", "), v)
	}
	return fmt.Sprintf("%s: %d passed, %d failed, %d skipped", v, r.Passed, r.Failed, r.Skipped)
}

// Result returns the named script's result, or nil.
func (r *Report) Result(name string) *report.Result {
	for _, res := range r.Results {
		if res.Name == name {
			return res
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Run runs a certification against o.Target, in two phases: scripts
// (after o.Run's selection), o.Parallel at a time; then exploration,
// which o.Run selects as "explore", with all the parallelism. It
// judges the run: certified only when nothing failed and the coverage of
// the whole suite, scripts being every script of it, is complete (see
// Verdict). o.Progress gets a header, then a line per script and one for
// exploration.
func Run(ctx context.Context, scripts []*Script, o Options) (*Report, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	if o.Progress != nil {
		writeHeader(o.Progress, &o)
	}
	// A server that answers nothing fails once, not once per script.
	if r, ok := o.Target.(interface{ Reachable(context.Context) error }); ok {
		if err := r.Reachable(ctx); err != nil {
			return nil, err
		}
	}
	ix := wire.NewIndex(o.Spec)
	for _, t := range o.Spec.Tools {
		if _, err := ix.OutputSchema(t.Name); err != nil {
			return nil, fmt.Errorf("conformance: %w", err)
		}
	}
	root, cleanup, err := o.workDir()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	replicas := replicasOf(o.Target)
	starts := &startCounter{Target: o.Target, replicas: int64(replicas)}
	share := shares(o.Target, &o)
	o.Target = starts
	if len(o.Tools) > 0 {
		o.Target = &scopedTarget{Target: starts, scope: o.Tools}
	}
	rep := &Report{Suite: suiteVersion(), Target: o.Target.String(), Profile: o.Profile, SpecHash: o.Spec.Hash(),
		SpecSource: o.SpecSource, Seed: o.Seed, Started: time.Now(), RerunArgs: o.RerunArgs, Scope: o.Tools}
	if replicas >= 2 {
		rep.Replicas = replicas
	}
	var progressMu sync.Mutex
	progress := func(res *report.Result) {
		if o.Progress != nil {
			progressMu.Lock()
			writeProgress(o.Progress, res)
			progressMu.Unlock()
		}
	}
	rep.Results = runScripts(ctx, o.Select(scripts), &o, share, ix, root, progress)
	if o.Explores() {
		res := runExploration(ctx, &o, share, ix, root, rep)
		progress(res)
		// Results are in the order of the names: exploration's among them.
		i := slices.IndexFunc(rep.Results, func(r *report.Result) bool { return r.Name > res.Name })
		if i < 0 {
			i = len(rep.Results)
		}
		rep.Results = slices.Insert(rep.Results, i, res)
	}
	rep.Starts = starts.n.Load()
	rep.Duration = time.Since(rep.Started)
	rep.Millis = rep.Duration.Milliseconds()
	rep.tally()
	if r := rep.Result(report.ExploreScript); rep.Explore != nil && r != nil && r.Status != report.Skip {
		if rep.Refusals, err = refusalEvidence(o.Profile, rep.Explore); err != nil {
			return nil, err
		}
	}
	gaps, err := coverage(o.Spec, scripts, rep.Results, o.Tools, rep.Refusals)
	if err != nil {
		return nil, err
	}
	if o.Explores() {
		rep.Races = raceEvidence(rep.Explore, rep.Replicas)
	}
	gaps = append(gaps, raceGaps(rep.Races, o.RaceBudget.String(), o.Tools)...)
	rep.Missing = texts(gaps)
	rep.Tools = toolVerdicts(o.Spec, gaps, rep.Failed > 0)
	if rep.Requirements, err = requirements(o.Spec, scripts, rep.Results, rep.Explore); err != nil {
		return nil, err
	}
	if rep.Power, err = runPower(rep, &o); err != nil {
		return nil, err
	}
	switch {
	case rep.Failed > 0:
		rep.Verdict = Failed
	case len(gaps) > 0:
		rep.Verdict = Incomplete
	default:
		rep.Verdict = Certified
	}
	return rep, nil
}

// runScripts runs the scripts, o.Parallel at a time, each in a folder of
// its own under root, and returns their results in their order. With
// share, the scripts that may share one seed-world server do, taking one
// of the o.Parallel places.
func runScripts(ctx context.Context, scripts []*Script, o *Options, share bool, ix *wire.Index, root string, progress func(*report.Result)) []*report.Result {
	runner := &script.Runner{Target: o.Target, Index: ix, Profile: o.Profile, Timeout: o.ScriptTimeout,
		Keep: o.KeepDir != "", Verbose: o.Verbose}
	results := make([]*report.Result, len(scripts))
	done := func(i int, res *report.Result) {
		if o.ExpectedFailures[scripts[i].Name] {
			expectFailure(res)
		}
		results[i] = res
		progress(res)
	}
	var shared []int
	if share {
		shared = sharedScripts(scripts, o)
	}
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	if len(shared) > 0 {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			runShared(ctx, runner, scripts, shared, o, root, done)
		})
	}
	for i, s := range scripts {
		if slices.Contains(shared, i) {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			done(i, runner.Run(ctx, s, filepath.Join(root, script.SafeName(s.Name))))
		})
	}
	wg.Wait()
	return results
}

// runExploration runs the exploration phase, its report going to rep.
func runExploration(ctx context.Context, o *Options, share bool, ix *wire.Index, root string, rep *Report) *report.Result {
	start := time.Now()
	var res *report.Result
	if o.Explore <= 0 {
		res = &report.Result{Name: report.ExploreScript, Status: report.Skip, Reason: "stateful exploration is off (--explore 0)"}
	} else {
		res, rep.Explore = explore.Run(ctx, report.ExploreScript, explore.Config{Target: o.Target, Index: ix, Profile: o.Profile,
			Sequences: o.Explore, Seed: o.Seed, Parallel: o.Parallel, Timeout: o.ScriptTimeout, FailFast: o.ExploreFailFast,
			SaveDir: o.SaveDir, Alone: !share, RaceBudget: o.RaceBudget, Tools: o.Tools, Replicas: rep.Replicas}, filepath.Join(root, report.ExploreScript))
		res.Calls = rep.Explore.Calls
	}
	res.Duration = time.Since(start)
	res.Millis = res.Duration.Milliseconds()
	if o.ExpectedFailures[res.Name] {
		expectFailure(res)
	}
	return res
}

// tally counts the results by status, their checks, and the calls each
// replica answered.
func (r *Report) tally() {
	for _, res := range r.Results {
		r.Checks += res.Checks
		for i, n := range res.ReplicaCalls {
			if r.ReplicaCalls == nil {
				r.ReplicaCalls = make([]int, len(res.ReplicaCalls))
			}
			r.ReplicaCalls[i] += n
		}
		switch res.Status {
		case report.Pass:
			r.Passed++
		case report.Fail:
			r.Failed++
		case report.Skip:
			r.Skipped++
		case report.XFail:
			r.XFailed++
		}
	}
}

// expectFailure applies an expected-failures entry to res: a failure is
// expected (XFail), a pass means the baseline is stale (Fail).
func expectFailure(res *report.Result) {
	switch res.Status {
	case report.Fail:
		res.Status = report.XFail
	case report.Pass:
		res.Status = report.Fail
		res.Reason = "listed as an expected failure but passes: remove it from the expected-failures file"
	}
}

// suiteVersion names the suite's build (cmdline.Version); a build without
// a module version or VCS revision ("devel") is named by its binary's hash.
var suiteVersion = sync.OnceValue(func() string {
	v := cmdline.Version()
	if v == "devel" {
		v += binaryHash()
	}
	return v
})

// binaryHash is ", binary sha256:..." of the running executable, or "".
func binaryHash() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return ", binary sha256:" + hex.EncodeToString(h.Sum(nil))[:16]
}

// scopedTarget skips, besides what its Target skips, a script that calls
// a tool outside scope (Options.Tools): the server does not claim it.
type scopedTarget struct {
	Target
	scope []string
}

func (t *scopedTarget) Skip(s *Script) string {
	if reason := t.Target.Skip(s); reason != "" {
		return reason
	}
	if out := outside(s, t.scope); len(out) > 0 {
		return fmt.Sprintf("it calls %s, which --tools leaves out", strings.Join(out, ", "))
	}
	return ""
}

// outside lists the tools script s calls that scope leaves out; none
// without a scope.
func outside(s *Script, scope []string) []string {
	if len(scope) == 0 {
		return nil
	}
	var out []string
	for _, tool := range script.CalledTools(s) {
		if !slices.Contains(scope, tool) {
			out = append(out, tool)
		}
	}
	return out
}
