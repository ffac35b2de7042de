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
	c := &comparing{cfg: cfg, tasks: cfg.freshTasks(scenarios)}
	var err error
	if c.dir, err = os.MkdirTemp("", "prickle-load-"); err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(c.dir)
	}
	if err := c.writeWorld(); err != nil {
		return nil, err
	}

	c.cmp = &Comparison{ServerCmd: cfg.ServerCmd, Runs: cfg.Runs}
	if cfg.Keep {
		c.cmp.WorkDir = c.dir
	}
	c.cmp.LoadStart, _ = loadAverage()
	if cfg.Profile != "" {
		if err := c.profile(); err != nil {
			return nil, err
		}
	}
	if c.srv, err = c.start(ctx, "server", cfg.ServerCmd, pprofEnv(c.srvPprof)...); err != nil {
		return nil, err
	}
	defer c.srv.Stop()
	if err := c.record(ctx); err != nil {
		return nil, err
	}
	if c.base, err = c.startBaseline(ctx); err != nil {
		return nil, err
	}
	defer c.base.Stop()

	for _, s := range scenarios {
		res, err := c.scenario(ctx, s)
		if err != nil {
			return nil, err
		}
		c.cmp.Scenarios = append(c.cmp.Scenarios, res)
	}
	if cfg.Sustain > 0 {
		if err := c.sustain(ctx); err != nil {
			return nil, err
		}
	}
	c.cmp.LoadEnd, _ = loadAverage()
	if c.profs != nil {
		if c.cmp.Accounts, err = c.profs.accounts(scenarios, cfg.Profile); err != nil {
			return nil, err
		}
	}
	return c.cmp, nil
}

// comparing is the state of one Compare.
type comparing struct {
	cfg   CompareConfig
	tasks int    // fresh tasks in the world
	dir   string // the work folder
	// fixtureFile is the world both servers load; runner and agent, the
	// tokens the calls are made with.
	fixtureFile   string
	runner, agent string
	cmp           *Comparison
	// srvPprof and basePprof are the servers' pprof addresses, and profs
	// what their profiles measured, when profiled (CompareConfig.Profile).
	srvPprof, basePprof string
	profs               *profiles
	srv, base           *conformance.Instance
	// fresh is the next fresh task of the server under test. Both servers
	// of a round claim from the same first task (the baseline's claims
	// land on its own state), so the one that goes second is not left
	// with what the first one used.
	fresh int
}

// freshTasks is how many fresh tasks the world needs: every fresh claim
// of the scenarios' runs and warm-ups, and the sustained load's.
func (c *CompareConfig) freshTasks(scenarios []Scenario) int {
	tasks := 0
	for _, s := range scenarios {
		if s.Op == OpClaimFresh {
			tasks += c.Runs * (s.Calls + c.WarmupCalls)
		}
	}
	if c.Sustain > 0 {
		tasks += c.SustainTasks
	}
	return tasks
}

// writeWorld writes the world both servers load, with c.tasks fresh
// tasks, into the work folder, and picks the tokens from it.
func (c *comparing) writeWorld() error {
	world, tokens, err := Fixture(c.tasks)
	if err != nil {
		return err
	}
	c.fixtureFile = filepath.Join(c.dir, "world.json")
	if err := fsx.WriteFileAtomic(c.fixtureFile, world, 0o600); err != nil {
		return err
	}
	c.runner, c.agent, err = SelectTokens(tokens, "", "")
	return err
}

// profile prepares the profiles: their folder, and a pprof address for
// each server.
func (c *comparing) profile() error {
	if err := os.MkdirAll(c.cfg.Profile, 0o755); err != nil {
		return err
	}
	var err error
	if c.srvPprof, err = freeAddr(); err != nil {
		return err
	}
	if c.basePprof, err = freeAddr(); err != nil {
		return err
	}
	c.profs = &profiles{parts: map[string][]*profile.Profile{}, calls: map[string]int64{}}
	c.cmp.ProfileDir = c.cfg.Profile
	return nil
}

// pprofEnv is the environment that has a server serve pprof on addr, if
// any.
func pprofEnv(addr string) []string {
	if addr == "" {
		return nil
	}
	return []string{"PRICKLE_PPROF_ADDR=" + addr, "PRICKLED_PPROF=" + addr}
}

// start starts command, the server called name, on the world, in a folder
// of its own.
func (c *comparing) start(ctx context.Context, name, command string, env ...string) (*conformance.Instance, error) {
	fmt.Fprintf(c.cfg.Progress, "starting %s: %s\n", name, command)
	sdir := filepath.Join(c.dir, name)
	if err := os.Mkdir(sdir, 0o700); err != nil {
		return nil, err
	}
	t := &conformance.CmdTarget{Command: command, StartTimeout: c.cfg.StartTimeout, Env: env}
	inst, err := t.Start(ctx, nil, c.fixtureFile, sdir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return inst, nil
}

// record records the server under test's answers into the work folder,
// for the bare baseline to give.
func (c *comparing) record(ctx context.Context) error {
	outputs, err := Record(ctx, c.srv.Endpoint, c.runner, c.agent, c.cfg.Protocol, DefaultWorld())
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return WriteOutputs(filepath.Join(c.dir, "outputs.json"), outputs)
}

// startBaseline starts the baseline: CompareConfig.BaselineCmd, or the
// bare server giving the server's recorded answers.
func (c *comparing) startBaseline(ctx context.Context) (*conformance.Instance, error) {
	c.cmp.BaselineCmd = c.cfg.BaselineCmd
	if c.cmp.BaselineCmd == "" {
		// The bare server runs from a copy of this program: run from the
		// generator's own file it would share the generator's code pages
		// (and so its CPU caches), an advantage the server under test does
		// not have.
		bare := filepath.Join(c.dir, "prickle-load-bare")
		if err := copyFile(c.cfg.Self, bare, 0o700); err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		c.cmp.BaselineCmd = "exec " + shellQuote(bare) + ` bare -addr "$PRICKLE_ADDR" -outputs "$PRICKLE_LOAD_OUTPUTS"`
		if c.basePprof != "" {
			c.cmp.BaselineCmd += ` -pprof "$PRICKLE_PPROF_ADDR"`
		}
	}
	outputsFile := filepath.Join(c.dir, "outputs.json")
	return c.start(ctx, "baseline", c.cmp.BaselineCmd, append(pprofEnv(c.basePprof), "PRICKLE_LOAD_OUTPUTS="+outputsFile)...)
}

// runOn runs rc on inst, its fresh claims from task first on; the server
// under test's runs advance c.fresh. A run cut short by the fresh tasks
// running out is reported, not failed.
func (c *comparing) runOn(ctx context.Context, inst *conformance.Instance, rc Config, isServer bool, first int) (*Report, error) {
	rc.Endpoints, rc.PIDs = []string{inst.Endpoint}, []int{inst.PID}
	rc.RunnerToken, rc.AgentToken = c.runner, c.agent
	rc.Protocol = c.cfg.Protocol
	rc.World = DefaultWorld()
	rc.World.FreshFirst, rc.World.FreshCount = first, c.tasks-first
	rep, err := Run(ctx, rc)
	if isServer && rep != nil {
		c.fresh += int(rep.freshUsed)
	}
	if err != nil && !(errors.Is(err, ErrFreshExhausted) && rep != nil) {
		return nil, err
	}
	return rep, nil
}

// scenario runs s Runs times on both servers, alternating which goes
// first, and reports each round as it ends.
func (c *comparing) scenario(ctx context.Context, s Scenario) (ScenarioResult, error) {
	res := ScenarioResult{Scenario: s}
	for round := range c.cfg.Runs {
		rs, rb, err := c.round(ctx, s, round)
		if err != nil {
			return res, fmt.Errorf("%s, run %d: %w", s.Name(), round+1, err)
		}
		res.Server = append(res.Server, rs)
		res.Baseline = append(res.Baseline, rb)
		ratioText := "n/a"
		if ratio, ok := s.ratio(rs, rb); ok {
			res.Ratio = append(res.Ratio, ratio)
			ratioText = fmt.Sprintf("%.2f", ratio)
		}
		fmt.Fprintf(c.cfg.Progress, "%-45s run %d: server %.0f, baseline %.0f, ratio %s (load %.2f)%s\n",
			s.Name(), round+1, s.value(rs), s.value(rb), ratioText, rs.LoadEnd[0], failedNote(rs, rb))
	}
	return res, nil
}

// round runs s once on each server, the server under test first in even
// rounds, the baseline first in odd ones, both from the same fresh task,
// profiling each when asked.
func (c *comparing) round(ctx context.Context, s Scenario, round int) (server, baseline *Report, err error) {
	order := []bool{true, false}
	if round%2 == 1 {
		order = []bool{false, true}
	}
	first := c.fresh
	for _, isServer := range order {
		rc := Config{Mix: []Weighted{{s.Op, 1}}, Clients: s.Clients, Calls: s.Calls, WarmupCalls: c.cfg.WarmupCalls}
		inst, side, addr := c.base, "baseline", c.basePprof
		if isServer {
			inst, side, addr = c.srv, "server", c.srvPprof
		}
		var perr error
		if c.profs != nil {
			rc.Measure = func() func(int64) {
				p := startProfiler(ctx, addr)
				return func(calls int64) {
					prof, err := p.finish()
					if err != nil {
						perr = fmt.Errorf("%s: %w", side, err)
						return
					}
					c.profs.add(s.Name()+"/"+side, prof, calls)
				}
			}
		}
		rep, err := c.runOn(ctx, inst, rc, isServer, first)
		if err == nil {
			err = perr
		}
		if err != nil {
			return nil, nil, err
		}
		if isServer {
			server = rep
		} else {
			baseline = rep
		}
	}
	return server, baseline, nil
}

// sustain runs the sustained mixed load on the server under test, then on
// the baseline, for memory.
func (c *comparing) sustain(ctx context.Context) error {
	first := c.fresh
	for _, isServer := range []bool{true, false} {
		inst := c.base
		if isServer {
			inst = c.srv
		}
		rc := Config{Mix: sustainMix, Clients: c.cfg.Clients, Duration: c.cfg.Sustain, WarmupCalls: c.cfg.WarmupCalls, SampleEvery: 2 * time.Second}
		rep, err := c.runOn(ctx, inst, rc, isServer, first)
		if err != nil {
			return fmt.Errorf("sustained load: %w", err)
		}
		c.cmp.Sustained = append(c.cmp.Sustained, rep)
		fmt.Fprintf(c.cfg.Progress, "sustained %s: %.0f calls/s, RSS %s -> %s\n", sustainedName(len(c.cmp.Sustained)-1),
			rep.Total.CallsPerSec, MiB(rep.Server.RSSStart), MiB(rep.Server.RSSEnd))
	}
	return nil
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
