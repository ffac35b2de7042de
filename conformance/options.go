package conformance

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec"
)

// Profile selects which rules the suite checks: Core or Reference.
type Profile = suite.Profile

// The profiles.
const (
	Core      = suite.Core
	Reference = suite.Reference
)

// ParseProfile parses "core" or "reference".
func ParseProfile(s string) (Profile, error) { return suite.ParseProfile(s) }

// Defaults of a certification run. DefaultExplore is the number of
// sequences it explores (Options.Explore, where 0 explores none: the
// command line's default is this). DefaultRaceBudget is Options.RaceBudget's
// default, the bound on the race phase: after the explored sequences, the
// races of each class short of its K overlapping groups, until it has them
// (see conformance/README.md for the measurements behind it).
const (
	DefaultExplore    = 100
	DefaultRaceBudget = 60 * time.Second
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
	// Explore is how many sequences stateful exploration runs (the
	// "explore" script); 0 runs none, which leaves the run incomplete.
	// The command line's default is DefaultExplore.
	Explore int
	// Seed seeds exploration; 0 picks one. The report names it: the same
	// seed, budget and server explore the same sequences.
	Seed int64
	// SaveDir, if set, receives every shrunk failing sequence as a script.
	SaveDir string
	// ExploreFailFast stops exploring at the first failing sequence; the
	// others are not run, and of those that failed meanwhile only the
	// first is reported.
	ExploreFailFast bool
	// KeepDir, if set, keeps the materialized scripts, fixtures and server
	// folders there; otherwise they go to a temporary folder removed after
	// the run.
	KeepDir string
	// SpecSource says where the spec came from, for reports (default
	// "bundled pages").
	SpecSource string
	// RerunArgs are the command-line flags that name the server and the
	// pages (--server-cmd 'CMD', --pages DIR, ...): reports repeat them in
	// the command that reruns a failure (Report.Rerun).
	RerunArgs []string
	// RaceBudget bounds the race phase of exploration: after its
	// sequences, it races each class short of its K overlapping groups
	// until it has them; a class still short leaves the run incomplete.
	// Default DefaultRaceBudget.
	RaceBudget time.Duration
	// FreshStarts gives every script and every explored sequence a server
	// of its own, instead of sharing servers where that is provably as if
	// alone (share.go).
	FreshStarts bool
	// Tools, if not empty, is the scope of the certification: the
	// documented tools the server claims to implement. The whole suite
	// still runs and Report.Verdict still judges every tool; Report.Clean
	// asks only that these tools be certified (Report.Tools).
	Tools []string
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

// Explores reports whether o.Run selects exploration (the script
// "explore", report.ExploreScript).
func (o *Options) Explores() bool { return o.Run == nil || o.Run.MatchString(report.ExploreScript) }

// setDefaults fills in what o leaves out.
func (o *Options) setDefaults() error {
	if o.Target == nil {
		return fmt.Errorf("conformance: no target")
	}
	if o.Profile == "" {
		o.Profile = Core
	}
	if o.Spec == nil {
		sp, err := spec.LoadBundled()
		if err != nil {
			return err
		}
		o.Spec = sp
	}
	if o.SpecSource == "" {
		o.SpecSource = "bundled pages"
	}
	if err := checkScope(o.Spec, o.Tools); err != nil {
		return fmt.Errorf("conformance: %w", err)
	}
	if o.Parallel <= 0 {
		o.Parallel = runtime.GOMAXPROCS(0)
	}
	if o.ScriptTimeout <= 0 {
		o.ScriptTimeout = 2 * time.Minute
	}
	if o.RaceBudget <= 0 {
		o.RaceBudget = DefaultRaceBudget
	}
	if o.Seed == 0 {
		o.Seed = 1 + rand.Int64N(1<<40) // positive, never 0
	}
	return nil
}

// workDir returns the folder the run keeps its scripts, fixtures and
// servers in: o.KeepDir, or a temporary one that cleanup removes.
func (o *Options) workDir() (root string, cleanup func(), err error) {
	if o.KeepDir == "" {
		tmp, err := os.MkdirTemp("", "prickle-conformance-")
		if err != nil {
			return "", nil, err
		}
		return tmp, func() { os.RemoveAll(tmp) }, nil
	}
	if err := os.MkdirAll(o.KeepDir, 0o755); err != nil {
		return "", nil, fmt.Errorf("conformance: --keep: %w", err)
	}
	return o.KeepDir, func() {}, nil
}

// CheckScope refuses a scope (o.Tools) that names a tool the spec does not
// document (o.Spec; nil: the bundled pages), or none. Run checks it too;
// a command line checks it before it starts anything.
func (o *Options) CheckScope() error {
	sp := o.Spec
	if sp == nil {
		var err error
		if sp, err = spec.LoadBundled(); err != nil {
			return err
		}
	}
	return checkScope(sp, o.Tools)
}

// checkScope is CheckScope against sp.
func checkScope(sp *spec.Spec, scope []string) error {
	for _, name := range scope {
		if name == "" || sp.Tool(name) == nil {
			names := make([]string, len(sp.Tools))
			for i, t := range sp.Tools {
				names[i] = t.Name
			}
			return fmt.Errorf("--tools: %q is not a documented tool (the pages document %s)", name, strings.Join(names, ", "))
		}
	}
	return nil
}
