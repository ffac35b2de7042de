package script

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/tools/txtar"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec/seed"
	"github.com/prickle-dev/prickle/spec/world"
)

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

// Runner runs scripts, each against a fresh server its Target starts.
type Runner struct {
	Target suite.Target
	// Index is the spec the wire checks follow.
	Index   *wire.Index
	Profile suite.Profile
	// Timeout bounds one script.
	Timeout time.Duration
	// Keep keeps the materialized script and its fixture in its folder
	// (Result.Kept names it).
	Keep bool
	// Verbose keeps the whole log of a passing script.
	Verbose bool
}

// Run runs script s in dir, a folder of its own.
func (rn *Runner) Run(ctx context.Context, s *suite.Script, dir string) *report.Result {
	return rn.run(ctx, s, dir, nil)
}

// run runs script s in dir against a server of its own, or sh's.
func (rn *Runner) run(ctx context.Context, s *suite.Script, dir string, sh *Shared) (res *report.Result) {
	start := time.Now()
	res = &report.Result{Name: s.Name, Path: s.Path, Covers: s.Covers, Derived: s.Derived}
	defer func() {
		res.Duration = time.Since(start)
		res.Millis = res.Duration.Milliseconds()
	}()
	if reason := rn.Target.Skip(s); reason != "" {
		res.Status, res.Reason = report.Skip, reason
		return res
	}
	file, now, tokens, err := rn.materialize(s, dir, sh)
	if err != nil {
		res.Status, res.Reason = report.Fail, err.Error()
		return res
	}
	if rn.Keep {
		res.Kept = file
	}
	ctx, cancel := context.WithTimeout(ctx, rn.Timeout)
	defer cancel()
	st := &scriptState{ix: rn.Index, profile: rn.Profile, ctx: ctx, fixtureNow: now, succeeded: map[string]int{}}
	for _, t := range tokens {
		st.secrets = append(st.secrets, t.Token)
	}
	t, inst, setupErr := rn.exec(s, dir, file, st, sh)
	res.Checks, res.Calls, res.Served, res.ReplicaCalls = st.checks, st.calls, st.served, st.replicaCalls
	if len(st.succeeded) > 0 {
		res.Succeeded = st.succeeded
	}
	// Failures cite the script where it lives, not the temporary copy.
	log := strings.ReplaceAll(t.log.String(), file, s.Cite())
	switch {
	case t.skipped != "":
		res.Status, res.Reason = report.Skip, t.skipped
	case t.failed:
		res.Status = report.Fail
		if setupErr != nil {
			res.Reason = "the server did not start"
		}
		res.Log = log
		if inst != nil && inst.Output != nil {
			res.Log += "server output (last lines):\n" + suite.Indent(st.redact(lastLines(inst.Output(), 40))) + "\n"
		}
	case len(st.short) > 0:
		res.Status, res.Reason = report.Skip, strings.Join(st.short, "; ")
		if rn.Verbose {
			res.Log = log
		}
	default:
		res.Status = report.Pass
		if rn.Verbose {
			res.Log = log
		}
	}
	return res
}

// materialize writes s into dir with its world, its own or the standard
// seed world, materialized at now (fresh tokens, relative times
// resolved), and returns the file, now and the world's tokens. With Keep,
// the world is written beside it too. With sh, the world is sh's, as
// its server loaded it.
func (rn *Runner) materialize(s *suite.Script, dir string, sh *Shared) (file string, now time.Time, tokens []world.Token, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", now, nil, err
	}
	a := txtar.Parse(s.Archive)
	src := seed.JSON()
	at := -1
	for i, f := range a.Files {
		if f.Name == suite.FixtureFile {
			src, at = f.Data, i
		}
	}
	var fx []byte
	if sh != nil {
		fx, now, tokens = sh.Fixture, sh.Now, sh.Tokens
	} else {
		now = suite.Now()
		fx, tokens, err = suite.Materialize(src, now)
		if err != nil {
			return "", now, nil, fmt.Errorf("%s: %w", s.Cite(), err)
		}
	}
	if at >= 0 {
		a.Files[at].Data = fx
	} else {
		a.Files = append(a.Files, txtar.File{Name: suite.FixtureFile, Data: fx})
	}
	file = filepath.Join(dir, SafeName(s.Name)+".txtar")
	if err := os.WriteFile(file, txtar.Format(a), 0o600); err != nil {
		return "", now, nil, err
	}
	if rn.Keep {
		if err := os.WriteFile(filepath.Join(dir, suite.FixtureFile), fx, 0o600); err != nil {
			return "", now, nil, err
		}
	}
	return file, now, tokens, nil
}

// exec runs the materialized script file against a server the target
// starts for it, with the commands sharing st; it returns the run's log
// and outcome, the server, and why it did not start.
func (rn *Runner) exec(s *suite.Script, dir, file string, st *scriptState, sh *Shared) (t *scriptT, inst *suite.Instance, setupErr error) {
	p := testscript.Params{
		Files: []string{file},
		Cmds:  commands(),
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "reference":
				return rn.Profile == suite.Reference, nil
			case "core":
				return rn.Profile == suite.Core, nil
			}
			return false, fmt.Errorf("unknown condition %q (the suite knows [reference] and [core])", cond)
		},
		Setup: func(env *testscript.Env) error {
			var err error
			if sh != nil {
				shared := *sh.Inst
				shared.Stop = nil // the server outlives the script
				inst = &shared
			} else {
				inst, err = rn.Target.Start(st.ctx, s, filepath.Join(env.WorkDir, suite.FixtureFile), filepath.Join(dir, "server"))
			}
			if err != nil {
				setupErr = err
				return fmt.Errorf("starting the server: %w", err)
			}
			if inst.Stop != nil {
				env.Defer(inst.Stop)
			}
			st.endpoints = inst.Endpoints()
			for _, e := range st.endpoints {
				cl := wire.NewClient(e, nil)
				env.Defer(cl.Close)
				st.clients = append(st.clients, cl)
			}
			st.tokens = inst.Tokens
			for _, t := range inst.Tokens {
				st.secrets = append(st.secrets, t.Token)
			}
			env.Values[stateKey{}] = st
			env.Setenv("PRICKLE_ENDPOINT", inst.Endpoint)
			return nil
		},
	}
	t = &scriptT{verbose: rn.Verbose}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(tPanicky); !ok {
				panic(r)
			}
		}
	}()
	testscript.RunT(t, p)
	return t, inst, setupErr
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// SafeName is name as a file name: every character but letters, digits,
// '.', '_' and '-' is '_'.
func SafeName(name string) string { return unsafeChars.ReplaceAllString(name, "_") }
