package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/pprof/profile"
	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/internal/fsx"
)

// CompareConfig configures Compare: the server under test and a baseline,
// both started as processes the way prickle-conformance starts a server
// (conformance.CmdTarget: $PRICKLE_ADDR, $PRICKLE_FIXTURE,
// $PRICKLE_STATE_DIR; ready when /healthz answers 200).
type CompareConfig struct {
	// ServerCmd starts the server under test (sh -c; use exec so that its
	// memory is the server's, not the shell's).
	ServerCmd string
	// BaselineCmd starts the baseline; it gets $PRICKLE_LOAD_OUTPUTS, the
	// file of what the server under test answered (see Record). Empty:
	// Self's bare server answering those outputs.
	BaselineCmd string
	// Self is the prickle-load executable, for the default baseline.
	Self string
	// Runs is how many times each scenario runs on each server (default 3),
	// the order alternating from run to run.
	Runs int
	// Calls is the measured calls of a single-client scenario, TputCalls of
	// a multi-client one, WarmupCalls the warm-up of each (defaults 2000,
	// 8000, 300).
	Calls, TputCalls, WarmupCalls int
	// Clients is the concurrency of the throughput scenarios (default 16).
	Clients int
	// Sustain is the duration of the sustained mixed load on each server,
	// for memory (0: skipped); SustainTasks the fresh tasks it may claim
	// (default 60000).
	Sustain      time.Duration
	SustainTasks int
	// Protocol is the MCP protocol version the clients ask for.
	Protocol string
	// StartTimeout bounds a server's start (default 120s: a large world
	// takes a while to load).
	StartTimeout time.Duration
	// Keep keeps the work folder (the world, the recorded outputs, each
	// server's $PRICKLE_STATE_DIR with what it wrote there, such as its
	// log) instead of removing it; Progress names it.
	Keep bool
	// Run, if set, keeps only the scenarios whose names (Scenario.Name)
	// it matches.
	Run *regexp.Regexp
	// Progress receives a line per round (nil: none).
	Progress io.Writer
	// Profile, if set, is a folder: both servers are CPU-profiled over
	// every measured phase, each scenario's profiles are merged and
	// written there, and the comparison accounts for the CPU per call by
	// cause (Comparison.Accounts). Each server gets a pprof address of its
	// own in $PRICKLE_PPROF_ADDR (also $PRICKLED_PPROF, which a prickled
	// built with -tags pprof serves); the default baseline serves it.
	Profile string
}

// Scenario is one measured comparison.
type Scenario struct {
	Op      string `json:"op"`
	Clients int    `json:"clients"`
	Calls   int    `json:"calls"`
	// Metric is "p50" (latency, lower is better) or "calls/s"
	// (throughput, higher is better).
	Metric string `json:"metric"`
}

// Name describes the scenario.
func (s Scenario) Name() string {
	return fmt.Sprintf("%s, %d client%s, %s", s.Op, s.Clients, plural(s.Clients), s.Metric)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (s Scenario) value(r *Report) float64 {
	if len(r.Ops) == 0 {
		return 0
	}
	if s.Metric == "p50" {
		return r.Ops[0].P50
	}
	return r.Ops[0].CallsPerSec
}

// ratio is server over baseline for one run; ok is false when either side
// measured nothing (no successful call), which has no ratio (and none JSON
// could hold).
func (s Scenario) ratio(server, baseline *Report) (r float64, ok bool) {
	r = s.value(server) / s.value(baseline)
	return r, r > 0 && !math.IsInf(r, 0)
}

// ScenarioResult is one scenario's runs on both servers.
type ScenarioResult struct {
	Scenario
	Server   []*Report `json:"server"`
	Baseline []*Report `json:"baseline"`
	// Ratio is server over baseline, per run (a run in which either side
	// had no successful call has none): for p50 above 1 means the
	// server is slower, for calls/s below 1 does.
	Ratio []float64 `json:"ratio"`
}

// Spread is a median with its range.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func spreadOf(v []float64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Median: m, Min: s[0], Max: s[len(s)-1]}
}

// Comparison is what Compare measured.
type Comparison struct {
	ServerCmd   string           `json:"server_cmd"`
	BaselineCmd string           `json:"baseline_cmd"`
	Runs        int              `json:"runs"`
	Scenarios   []ScenarioResult `json:"scenarios"`
	// Sustained is the mixed load on the server and the baseline, for
	// memory.
	Sustained []*Report `json:"sustained,omitempty"`
	// LoadStart and LoadEnd are the machine's load averages around the run.
	LoadStart [3]float64 `json:"loadavg_start"`
	LoadEnd   [3]float64 `json:"loadavg_end"`
	// WorkDir is the work folder, when kept (CompareConfig.Keep).
	WorkDir string `json:"work_dir,omitempty"`
	// Accounts is the CPU per call by cause of each scenario, when
	// profiled (CompareConfig.Profile).
	Accounts []AccountRow `json:"accounts,omitempty"`
	// ProfileDir is where the profiles were written.
	ProfileDir string `json:"profile_dir,omitempty"`
}

func (c *CompareConfig) defaults() {
	if c.Runs <= 0 {
		c.Runs = 3
	}
	if c.Calls <= 0 {
		c.Calls = 2000
	}
	if c.TputCalls <= 0 {
		c.TputCalls = 8000
	}
	if c.WarmupCalls <= 0 {
		c.WarmupCalls = 300
	}
	if c.Clients <= 0 {
		c.Clients = 16
	}
	if c.SustainTasks <= 0 {
		c.SustainTasks = 60000
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = 120 * time.Second
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Scenarios are the comparisons Compare makes, in order.
func (c *CompareConfig) Scenarios() []Scenario {
	var all []Scenario
	for _, op := range []string{OpClaimReplay, OpClaimFresh, OpDiscover, OpDiscussion} {
		all = append(all, Scenario{Op: op, Clients: 1, Calls: c.Calls, Metric: "p50"})
	}
	for _, op := range []string{OpClaimReplay, OpClaimFresh, OpDiscover} {
		all = append(all, Scenario{Op: op, Clients: c.Clients, Calls: c.TputCalls, Metric: "calls/s"})
	}
	var out []Scenario
	for _, s := range all {
		if c.Run == nil || c.Run.MatchString(s.Name()) {
			out = append(out, s)
		}
	}
	return out
}

// sustainMix is the mixed load of the memory measurement.
var sustainMix = []Weighted{{OpClaimReplay, 1}, {OpClaimFresh, 1}, {OpDiscussion, 1}, {OpDiscover, 1}}

// Compare starts the server under test and the baseline, runs every
// scenario Runs times on each, alternating which goes first, then the
// sustained load on each, and returns the measurements.
func Compare(ctx context.Context, cfg CompareConfig) (*Comparison, error) {
	cfg.defaults()
	if cfg.ServerCmd == "" {
		return nil, errors.New("no server command")
	}
	scenarios := cfg.Scenarios()
	tasks := 0
	for _, s := range scenarios {
		if s.Op == OpClaimFresh {
			tasks += cfg.Runs * (s.Calls + cfg.WarmupCalls)
		}
	}
	if cfg.Sustain > 0 {
		tasks += cfg.SustainTasks
	}
	dir, err := os.MkdirTemp("", "prickle-load-")
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	world, tokens, err := Fixture(tasks)
	if err != nil {
		return nil, err
	}
	fixtureFile := filepath.Join(dir, "world.json")
	if err := fsx.WriteFileAtomic(fixtureFile, world, 0o600); err != nil {
		return nil, err
	}
	runner, agent, err := SelectTokens(tokens, "", "")
	if err != nil {
		return nil, err
	}

	cmp := &Comparison{ServerCmd: cfg.ServerCmd, Runs: cfg.Runs}
	if cfg.Keep {
		cmp.WorkDir = dir
	}
	cmp.LoadStart, _ = loadAverage()
	start := func(name, command string, env ...string) (*conformance.Instance, error) {
		fmt.Fprintf(cfg.Progress, "starting %s: %s\n", name, command)
		sdir := filepath.Join(dir, name)
		if err := os.Mkdir(sdir, 0o700); err != nil {
			return nil, err
		}
		t := &conformance.CmdTarget{Command: command, StartTimeout: cfg.StartTimeout, Env: env}
		inst, err := t.Start(ctx, nil, fixtureFile, sdir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return inst, nil
	}
	var srvPprof, basePprof string
	var profs *profiles
	if cfg.Profile != "" {
		if err := os.MkdirAll(cfg.Profile, 0o755); err != nil {
			return nil, err
		}
		if srvPprof, err = freeAddr(); err != nil {
			return nil, err
		}
		if basePprof, err = freeAddr(); err != nil {
			return nil, err
		}
		profs = &profiles{parts: map[string][]*profile.Profile{}, calls: map[string]int64{}}
		cmp.ProfileDir = cfg.Profile
	}
	pprofEnv := func(addr string) []string {
		if addr == "" {
			return nil
		}
		return []string{"PRICKLE_PPROF_ADDR=" + addr, "PRICKLED_PPROF=" + addr}
	}
	srv, err := start("server", cfg.ServerCmd, pprofEnv(srvPprof)...)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	outputs, err := Record(ctx, srv.Endpoint, runner, agent, cfg.Protocol, DefaultWorld())
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	outputsFile := filepath.Join(dir, "outputs.json")
	if err := WriteOutputs(outputsFile, outputs); err != nil {
		return nil, err
	}
	cmp.BaselineCmd = cfg.BaselineCmd
	if cmp.BaselineCmd == "" {
		// The bare server runs from a copy of this program: run from the
		// generator's own file it would share the generator's code pages
		// (and so its CPU caches), an advantage the server under test does
		// not have.
		bare := filepath.Join(dir, "prickle-load-bare")
		if err := copyFile(cfg.Self, bare, 0o700); err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		cmp.BaselineCmd = "exec " + shellQuote(bare) + ` bare -addr "$PRICKLE_ADDR" -outputs "$PRICKLE_LOAD_OUTPUTS"`
		if basePprof != "" {
			cmp.BaselineCmd += ` -pprof "$PRICKLE_PPROF_ADDR"`
		}
	}
	base, err := start("baseline", cmp.BaselineCmd, append(pprofEnv(basePprof), "PRICKLE_LOAD_OUTPUTS="+outputsFile)...)
	if err != nil {
		return nil, err
	}
	defer base.Stop()

	// fresh is the next fresh task of the server under test. Both servers
	// of a round claim from the same first task (the baseline's claims
	// land on its own state), so the one that goes second is not left
	// with what the first one used.
	fresh := 0
	runOn := func(inst *conformance.Instance, rc Config, isServer bool, first int) (*Report, error) {
		rc.Endpoints, rc.PIDs = []string{inst.Endpoint}, []int{inst.PID}
		rc.RunnerToken, rc.AgentToken = runner, agent
		rc.Protocol = cfg.Protocol
		rc.World = DefaultWorld()
		rc.World.FreshFirst, rc.World.FreshCount = first, tasks-first
		rep, err := Run(ctx, rc)
		if isServer && rep != nil {
			fresh += int(rep.freshUsed)
		}
		if err != nil && !(errors.Is(err, ErrFreshExhausted) && rep != nil) {
			return nil, err
		}
		return rep, nil
	}
	for _, s := range scenarios {
		res := ScenarioResult{Scenario: s}
		for run := range cfg.Runs {
			order := []bool{true, false}
			if run%2 == 1 {
				order = []bool{false, true}
			}
			var rs, rb *Report
			first := fresh
			for _, isServer := range order {
				rc := Config{Mix: []Weighted{{s.Op, 1}}, Clients: s.Clients, Calls: s.Calls, WarmupCalls: cfg.WarmupCalls}
				inst, side, addr := base, "baseline", basePprof
				if isServer {
					inst, side, addr = srv, "server", srvPprof
				}
				var perr error
				if profs != nil {
					rc.Measure = func() func(int64) {
						p := startProfiler(ctx, addr)
						return func(calls int64) {
							prof, err := p.finish()
							if err != nil {
								perr = fmt.Errorf("%s: %w", side, err)
								return
							}
							profs.add(s.Name()+"/"+side, prof, calls)
						}
					}
				}
				rep, err := runOn(inst, rc, isServer, first)
				if err == nil {
					err = perr
				}
				if err != nil {
					return nil, fmt.Errorf("%s, run %d: %w", s.Name(), run+1, err)
				}
				if isServer {
					rs = rep
				} else {
					rb = rep
				}
			}
			res.Server = append(res.Server, rs)
			res.Baseline = append(res.Baseline, rb)
			ratioText := "n/a"
			if ratio, ok := s.ratio(rs, rb); ok {
				res.Ratio = append(res.Ratio, ratio)
				ratioText = fmt.Sprintf("%.2f", ratio)
			}
			fmt.Fprintf(cfg.Progress, "%-45s run %d: server %.0f, baseline %.0f, ratio %s (load %.2f)%s\n",
				s.Name(), run+1, s.value(rs), s.value(rb), ratioText, rs.LoadEnd[0], failedNote(rs, rb))
		}
		cmp.Scenarios = append(cmp.Scenarios, res)
	}
	if cfg.Sustain > 0 {
		first := fresh
		for _, isServer := range []bool{true, false} {
			inst := base
			if isServer {
				inst = srv
			}
			rc := Config{Mix: sustainMix, Clients: cfg.Clients, Duration: cfg.Sustain, WarmupCalls: cfg.WarmupCalls, SampleEvery: 2 * time.Second}
			rep, err := runOn(inst, rc, isServer, first)
			if err != nil {
				return nil, fmt.Errorf("sustained load: %w", err)
			}
			cmp.Sustained = append(cmp.Sustained, rep)
			fmt.Fprintf(cfg.Progress, "sustained %s: %.0f calls/s, RSS %s -> %s\n", sustainedName(len(cmp.Sustained)-1),
				rep.Total.CallsPerSec, MiB(rep.Server.RSSStart), MiB(rep.Server.RSSEnd))
		}
	}
	cmp.LoadEnd, _ = loadAverage()
	if profs != nil {
		if cmp.Accounts, err = profs.accounts(scenarios, cfg.Profile); err != nil {
			return nil, err
		}
	}
	return cmp, nil
}

// failedNote says how many calls failed in a pair of runs, if any did.
func failedNote(server, baseline *Report) string {
	if server.Total.Failed+baseline.Total.Failed == 0 {
		return ""
	}
	return fmt.Sprintf("; FAILED calls: server %d, baseline %d", server.Total.Failed, baseline.Total.Failed)
}

// Failures lists every kind of failed call of the comparison, by where it
// happened; empty when every call succeeded.
func (cmp *Comparison) Failures() []string {
	var out []string
	add := func(where string, r *Report) {
		for _, op := range r.Ops {
			for _, e := range op.Errors {
				out = append(out, fmt.Sprintf("%s: %s: %d × %s %s: %s", where, op.Op, e.Count, e.Kind, e.Code, e.Example))
			}
		}
	}
	for _, s := range cmp.Scenarios {
		for i := range s.Server {
			add(fmt.Sprintf("%s, run %d, server", s.Name(), i+1), s.Server[i])
			add(fmt.Sprintf("%s, run %d, baseline", s.Name(), i+1), s.Baseline[i])
		}
	}
	for i, r := range cmp.Sustained {
		add(fmt.Sprintf("sustained, %s", sustainedName(i)), r)
	}
	return out
}

func sustainedName(i int) string {
	if i == 0 {
		return "server"
	}
	return "baseline"
}

// copyFile copies the file src to a new file dst.
func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// WriteText writes the comparison for people.
func (cmp *Comparison) WriteText(w io.Writer) {
	fmt.Fprintf(w, "server:   %s\nbaseline: %s\n", cmp.ServerCmd, cmp.BaselineCmd)
	fmt.Fprintf(w, "load average %.2f %.2f %.2f before, %.2f %.2f %.2f after; %d runs each, alternating\n",
		cmp.LoadStart[0], cmp.LoadStart[1], cmp.LoadStart[2], cmp.LoadEnd[0], cmp.LoadEnd[1], cmp.LoadEnd[2], cmp.Runs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tserver (median [min-max])\tbaseline\tratio server/baseline\tserver CPU µs/call\tbaseline CPU µs/call")
	for _, r := range cmp.Scenarios {
		var sv, bv, sc, bc []float64
		for i := range r.Server {
			sv = append(sv, r.Scenario.value(r.Server[i]))
			bv = append(bv, r.Scenario.value(r.Baseline[i]))
			sc = append(sc, cpuPerCall(r.Server[i]))
			bc = append(bc, cpuPerCall(r.Baseline[i]))
		}
		unit := " µs"
		if r.Metric != "p50" {
			unit = "/s"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name(), fmtSpread(spreadOf(sv), "%.0f", unit),
			fmtSpread(spreadOf(bv), "%.0f", unit), fmtSpread(spreadOf(r.Ratio), "%.2f", "×"),
			fmtSpread(spreadOf(sc), "%.0f", ""), fmtSpread(spreadOf(bc), "%.0f", ""))
	}
	tw.Flush()
	if len(cmp.Sustained) > 0 {
		fmt.Fprintln(w, "sustained mixed load (memory):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "\tcalls/s\terrors\tRSS start\tRSS end\tRSS max\tslope/min\tCPU µs/call")
		for i, rep := range cmp.Sustained {
			name := sustainedName(i)
			s := rep.Server
			fmt.Fprintf(tw, "%s\t%.0f\t%d\t%s\t%s\t%s\t%s\t%.0f\n", name, rep.Total.CallsPerSec, rep.Total.Failed,
				MiB(s.RSSStart), MiB(s.RSSEnd), MiB(s.RSSMax), MiB(int64(s.RSSSlope)), s.CPUPerCallUS)
		}
		tw.Flush()
		if len(cmp.Sustained) == 2 && cmp.Sustained[1].Server.RSSEnd > 0 {
			s, b := cmp.Sustained[0].Server, cmp.Sustained[1].Server
			fmt.Fprintf(w, "RSS end/start: server %.2f, baseline %.2f; server/baseline at end %.2f\n",
				float64(s.RSSEnd)/float64(s.RSSStart), float64(b.RSSEnd)/float64(b.RSSStart), float64(s.RSSEnd)/float64(b.RSSEnd))
		}
	}
	if f := cmp.Failures(); len(f) > 0 {
		fmt.Fprintln(w, "FAILED calls (their latencies are not in the figures above):")
		for _, line := range f {
			fmt.Fprintln(w, "  "+line)
		}
	}
	writeAccounts(w, cmp.Accounts, cmp.ProfileDir)
	if cmp.WorkDir != "" {
		fmt.Fprintf(w, "work folder kept: %s\n", cmp.WorkDir)
	}
}

func cpuPerCall(r *Report) float64 {
	if r.Server == nil {
		return 0
	}
	return r.Server.CPUPerCallUS
}

func fmtSpread(s Spread, format, unit string) string {
	return fmt.Sprintf(format+"%s ["+format+"-"+format+"]", s.Median, unit, s.Min, s.Max)
}
