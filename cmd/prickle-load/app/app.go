// Package app is the prickle-load command as a function: cmd/prickle-load
// calls [Main], and tests run it in-process. The load engine, the bare
// baseline and the comparison are cmd/prickle-load/load's.
//
// It may import its load library, the reference server, the world format
// and the ground floor of internal/; only cmd/prickle-load's main and tests
// import it, and it must not import the generator or another command.
package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prickle-dev/prickle/cmd/prickle-load/load"
	"github.com/prickle-dev/prickle/internal/cmdline"
	"github.com/prickle-dev/prickle/internal/fsx"
	"github.com/prickle-dev/prickle/internal/pprofx"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/spec/world"
)

// Exit statuses of prickle-load.
const (
	ExitOK     = cmdline.ExitOK
	ExitFailed = 1 // calls failed, or the run could not be made
	ExitUsage  = cmdline.ExitUsage
)

const usage = `usage: prickle-load COMMAND [flags]

Commands:
  run      load a Prickle server and report latency and throughput per tool
  fixture  write a world with N tasks for fresh claims (and its tokens)
  bare     serve the documented tools with fixed outputs: the baseline
  compare  start a server and the bare baseline, load both in alternating
           rounds, and print the ratios
  replicas start prickled on SQLite and as replicas on PostgreSQL, measure
           claims on each in alternating rounds, and print the table

"prickle-load COMMAND -h" lists a command's flags.
`

// Main runs prickle-load with args (without the program name) until it is
// done or ctx ends, and returns the exit status. It reads no input.
func Main(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	switch args[0] {
	case "run":
		return mainRun(ctx, args[1:], stdout, stderr)
	case "fixture":
		return mainFixture(args[1:], stdout, stderr)
	case "bare":
		return mainBare(ctx, args[1:], stdout, stderr)
	case "compare":
		return mainCompare(ctx, args[1:], stdout, stderr)
	case "replicas":
		return mainReplicas(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return ExitOK
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, "prickle-load", cmdline.Version())
		return ExitOK
	}
	fmt.Fprintf(stderr, "prickle-load: unknown command %q\n\n%s", args[0], usage)
	return ExitUsage
}

func newFlags(name, summary string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("prickle-load "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: prickle-load %s [flags]\n\n%s\n\nFlags:\n", name, summary)
		fs.PrintDefaults()
	}
	return fs
}

func failf(stderr io.Writer, code int, format string, args ...any) int {
	fmt.Fprintf(stderr, "prickle-load: "+format+"\n", args...)
	return code
}

// runFlags are the flags of run, parsed into a load.Config.
type runFlags struct {
	urls                       []string
	tokens, runner, agent, mix string
	world                      load.World
	cfg                        load.Config
	jsonOut                    bool
}

func parseRun(args []string, stderr io.Writer) (*runFlags, int, bool) {
	fs := newFlags("run", "Load the Prickle server at -url with the tokens of -tokens and report\nlatency (p50, p90, p99) and throughput per operation.", stderr)
	f := &runFlags{world: load.DefaultWorld()}
	fs.Func("url", "the server's MCP `URL` (a URL without a path gets /mcp); repeat it for replicas: client i connects to the i-th URL, round robin", func(v string) error {
		f.urls = append(f.urls, v)
		return nil
	})
	fs.StringVar(&f.tokens, "tokens", "", "tokens `FILE` in the format of prickled --tokens-out")
	fs.StringVar(&f.runner, "runner", "", "the runner whose token makes the claims, by runner `ID` or paired agent (default: the first runner)")
	fs.StringVar(&f.agent, "agent", "", "the agent `OWNER/NAME` whose token calls discover_team_agents (default: the runner's agent)")
	fs.StringVar(&f.mix, "mix", load.OpClaimReplay+","+load.OpDiscussion+","+load.OpDiscover, "operations and weights, `OP[:W],...`; OP one of "+strings.Join(load.Ops, ", "))
	fs.IntVar(&f.cfg.Clients, "c", 1, "concurrent clients, each with its own sessions and connections")
	fs.DurationVar(&f.cfg.Duration, "d", 0, "measure for `DURATION` (default 10s unless -n is given)")
	fs.IntVar(&f.cfg.Calls, "n", 0, "measure `N` calls instead of a duration")
	fs.DurationVar(&f.cfg.WarmupDuration, "warmup", 2*time.Second, "warm up (not recorded) for `DURATION`")
	fs.IntVar(&f.cfg.WarmupCalls, "warmup-calls", 0, "warm up with at most `N` calls (with -warmup: whichever ends first)")
	fs.StringVar(&f.cfg.Protocol, "protocol", "", "MCP protocol `VERSION` to ask for (default: the go-sdk client's own, e.g. 2025-11-25 is the TypeScript SDK's)")
	fs.DurationVar(&f.cfg.CallTimeout, "timeout", 30*time.Second, "bound on one call")
	fs.Func("pid", "sample the memory and CPU of this local server process and its descendants (Linux); repeat it for replicas, summed", pidFlag(&f.cfg.PIDs))
	fs.Func("db-pid", "sample this local database server's process tree alike, reported apart (PostgreSQL: the postmaster; repeatable)", pidFlag(&f.cfg.DBPIDs))
	fs.DurationVar(&f.cfg.SampleEvery, "sample", time.Second, "with -pid or -db-pid: sampling interval")
	fs.BoolVar(&f.jsonOut, "json", false, "write the report as JSON")
	fs.StringVar(&f.world.Project, "project", f.world.Project, "discover_team_agents: the `PROJECT`")
	fs.StringVar(&f.world.Task, "task", f.world.Task, "claim_task replays: the task `ID`")
	fs.StringVar(&f.world.ReplayKey, "key", f.world.ReplayKey, "claim_task replays: the idempotency `KEY`")
	fs.StringVar(&f.world.Message, "message", f.world.Message, "claim_discussion: the message `ID`")
	fs.StringVar(&f.world.DiscussionKey, "discussion-key", f.world.DiscussionKey, "claim_discussion: the idempotency `KEY`")
	fs.StringVar(&f.world.FreshPrefix, "fresh-prefix", f.world.FreshPrefix, "claim_task_fresh: tasks are `PREFIX`N")
	fs.IntVar(&f.world.FreshFirst, "fresh-first", 0, "claim_task_fresh: the first task number `N` (skip tasks an earlier run claimed)")
	fs.IntVar(&f.world.FreshCount, "fresh-count", 0, "claim_task_fresh: how many tasks there are to claim from -fresh-first")
	if code, ok := cmdline.Parse(fs, args, false); !ok {
		return nil, code, false
	}
	switch {
	case len(f.urls) == 0:
		return nil, failf(stderr, ExitUsage, "run: -url is required"), false
	case f.tokens == "":
		return nil, failf(stderr, ExitUsage, "run: -tokens is required (the server's tokens file, prickled --tokens-out format)"), false
	case f.cfg.Calls > 0 && f.cfg.Duration > 0:
		return nil, failf(stderr, ExitUsage, "run: -n and -d exclude each other"), false
	case f.cfg.Calls < 0 || f.cfg.Duration < 0 || f.cfg.WarmupCalls < 0 || f.cfg.WarmupDuration < 0:
		return nil, failf(stderr, ExitUsage, "run: -n, -d, -warmup and -warmup-calls must not be negative"), false
	case f.cfg.Clients < 1:
		return nil, failf(stderr, ExitUsage, "run: -c must be at least 1"), false
	case f.world.FreshFirst < 0 || f.world.FreshCount < 0:
		return nil, failf(stderr, ExitUsage, "run: -fresh-first and -fresh-count must not be negative"), false
	}
	if f.cfg.Calls == 0 && f.cfg.Duration == 0 {
		f.cfg.Duration = 10 * time.Second
	}
	for _, u := range f.urls {
		endpoint, err := cmdline.MCPEndpoint(u)
		if err != nil {
			return nil, failf(stderr, ExitUsage, "run: -url: %v", err), false
		}
		f.cfg.Endpoints = append(f.cfg.Endpoints, endpoint)
	}
	var err error
	if f.cfg.Mix, err = load.ParseMix(f.mix); err != nil {
		return nil, failf(stderr, ExitUsage, "run: -mix: %v", err), false
	}
	for _, w := range f.cfg.Mix {
		if w.Op == load.OpClaimFresh && f.world.FreshCount == 0 {
			return nil, failf(stderr, ExitUsage, "run: -mix %s needs -fresh-count (the tasks of prickle-load fixture -tasks N)", load.OpClaimFresh), false
		}
	}
	f.cfg.World = f.world
	return f, ExitOK, true
}

// pidFlag appends each value, a process id, to pids.
func pidFlag(pids *[]int) func(string) error {
	return func(v string) error {
		pid, err := strconv.Atoi(v)
		if err != nil || pid <= 0 {
			return fmt.Errorf("%q is not a process id", v)
		}
		*pids = append(*pids, pid)
		return nil
	}
}

func mainRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseRun(args, stderr)
	if !ok {
		return code
	}
	toks, err := load.ReadTokensFile(f.tokens)
	if err != nil {
		return failf(stderr, ExitUsage, "run: -tokens: %v", err)
	}
	if f.cfg.RunnerToken, f.cfg.AgentToken, err = load.SelectTokens(toks, f.runner, f.agent); err != nil {
		return failf(stderr, ExitUsage, "run: -tokens: %v", err)
	}
	rep, err := load.Run(ctx, f.cfg)
	if rep == nil {
		return failf(stderr, ExitFailed, "run: %v", err)
	}
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return failf(stderr, ExitFailed, "run: %v", err)
		}
	} else {
		rep.WriteText(stdout)
	}
	if err != nil {
		return failf(stderr, ExitFailed, "run: %v", err)
	}
	if rep.Total.Failed > 0 {
		return failf(stderr, ExitFailed, "run: %d of %d calls failed", rep.Total.Failed, rep.Total.Calls)
	}
	return ExitOK
}

func mainFixture(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("fixture", "Write a world (spec/world/FIXTURE.md) for load runs: the standard seed world\nwith fresh random tokens, plus tasks "+load.FreshTaskPrefix+"0 ... "+load.FreshTaskPrefix+"(N-1) for claim_task_fresh.", stderr)
	tasks := fs.Int("tasks", 10000, "add `N` tasks to claim")
	out := fs.String("o", "", "write the world to `FILE` (mode 0600) instead of standard output")
	tokensOut := fs.String("tokens-out", "", "write its tokens to `FILE` (mode 0600, prickled --tokens-out format)")
	if code, ok := cmdline.Parse(fs, args, false); !ok {
		return code
	}
	fixture, tokens, err := load.Fixture(*tasks)
	if err != nil {
		return failf(stderr, ExitUsage, "fixture: %v", err)
	}
	if *tokensOut != "" {
		var b bytes.Buffer
		if err := world.WriteTokens(&b, tokens); err != nil {
			return failf(stderr, ExitFailed, "fixture: %v", err)
		}
		if err := fsx.WriteFileAtomic(*tokensOut, b.Bytes(), 0o600); err != nil {
			return failf(stderr, ExitFailed, "fixture: %v", err)
		}
	}
	if *out != "" {
		if err := fsx.WriteFileAtomic(*out, fixture, 0o600); err != nil {
			return failf(stderr, ExitFailed, "fixture: %v", err)
		}
		return ExitOK
	}
	if _, err := stdout.Write(fixture); err != nil {
		return failf(stderr, ExitFailed, "fixture: %v", err)
	}
	return ExitOK
}

// shutdownGrace bounds the bare server's shutdown.
const shutdownGrace = 5 * time.Second

func mainBare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("bare", "Serve the documented tools (same names and schemas) over MCP streamable HTTP\nat /mcp, answering every call with a fixed valid output: no state, no\nvalidation, any bearer token accepted. The baseline for ratios.", stderr)
	addr := fs.String("addr", "127.0.0.1:8090", "listen on `HOST:PORT`")
	outputsFile := fs.String("outputs", "", "answer the outputs in `FILE` (written by compare); default: what prickled answers on the seed world")
	like := fs.String("like", "", "answer what the server at `URL` answers (one call of each tool, with -tokens)")
	tokensFile := fs.String("tokens", "", "with -like: that server's tokens `FILE`")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on `HOST:PORT`, a listener of its own (to profile the baseline)")
	if code, ok := cmdline.Parse(fs, args, false); !ok {
		return code
	}
	if *pprofAddr != "" {
		at, err := pprofx.Serve(*pprofAddr)
		if err != nil {
			return failf(stderr, ExitFailed, "bare: %v", err)
		}
		fmt.Fprintf(stderr, "prickle-load bare: pprof on http://%s/debug/pprof/\n", at)
	}
	var outputs load.Outputs
	var err error
	switch {
	case *outputsFile != "" && *like != "":
		return failf(stderr, ExitUsage, "bare: -outputs and -like exclude each other")
	case *outputsFile != "":
		outputs, err = load.ReadOutputs(*outputsFile)
	case *like != "":
		if *tokensFile == "" {
			return failf(stderr, ExitUsage, "bare: -like needs -tokens")
		}
		outputs, err = recordLike(ctx, *like, *tokensFile)
	default:
		outputs, err = load.RecordReference(ctx)
	}
	if err != nil {
		return failf(stderr, ExitFailed, "bare: %v", err)
	}
	h, err := load.Bare(outputs, nil)
	if err != nil {
		return failf(stderr, ExitFailed, "bare: %v", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return failf(stderr, ExitFailed, "bare: %v", err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "prickle-load bare: listening on http://%s%s\n", ln.Addr(), server.PathMCP)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return failf(stderr, ExitFailed, "bare: %v", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close() // standing event streams of open sessions
	}
	return ExitOK
}

// recordLike records the answers of the server at rawURL.
func recordLike(ctx context.Context, rawURL, tokensFile string) (load.Outputs, error) {
	endpoint, err := cmdline.MCPEndpoint(rawURL)
	if err != nil {
		return nil, err
	}
	toks, err := load.ReadTokensFile(tokensFile)
	if err != nil {
		return nil, err
	}
	runner, agent, err := load.SelectTokens(toks, "", "")
	if err != nil {
		return nil, err
	}
	return load.Record(ctx, endpoint, runner, agent, "", load.DefaultWorld())
}

func mainCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("compare", "Start the server of -server-cmd and a baseline (by default this program's bare\nserver, answering what the server answered), both as processes in the\nconventions of prickle-conformance --server-cmd ($PRICKLE_ADDR,\n$PRICKLE_FIXTURE, $PRICKLE_STATE_DIR, GET /healthz), on a world written for\nthe run; run each scenario -runs times on each, alternating which goes\nfirst; print the server/baseline ratios.", stderr)
	var cfg load.CompareConfig
	fs.StringVar(&cfg.ServerCmd, "server-cmd", "", "start the server under test with sh -c `CMD` (use exec)")
	fs.StringVar(&cfg.BaselineCmd, "baseline-cmd", "", "start the baseline with sh -c `CMD` ($PRICKLE_LOAD_OUTPUTS: the server's recorded outputs; default this program's bare)")
	fs.IntVar(&cfg.Runs, "runs", 3, "runs of each scenario on each server")
	fs.IntVar(&cfg.Calls, "calls", 2000, "measured calls of a one-client scenario")
	fs.IntVar(&cfg.TputCalls, "tput-calls", 8000, "measured calls of a throughput scenario")
	fs.IntVar(&cfg.WarmupCalls, "warmup-calls", 300, "warm-up calls before each measurement")
	fs.IntVar(&cfg.Clients, "clients", 16, "clients of the throughput scenarios and the sustained load")
	fs.DurationVar(&cfg.Sustain, "sustain", 60*time.Second, "sustained mixed load on each server, for memory (0: skip)")
	fs.IntVar(&cfg.SustainTasks, "sustain-tasks", 60000, "fresh tasks the sustained load may claim")
	fs.StringVar(&cfg.Protocol, "protocol", "", "MCP protocol `VERSION` the clients ask for (default: the go-sdk client's own)")
	fs.DurationVar(&cfg.StartTimeout, "start-timeout", 120*time.Second, "how long a server may take to answer GET /healthz")
	runRe := fs.String("run", "", "only the scenarios whose names match `REGEX` (e.g. 'discover|, 1 client')")
	jsonOut := fs.String("json", "", "also write every measurement as JSON to `FILE`")
	quiet := fs.Bool("q", false, "no progress lines")
	fs.StringVar(&cfg.Profile, "profile", "", "CPU-profile both servers over every measured phase, write the profiles to `DIR` and account for the CPU per call by cause (the server needs net/http/pprof at $PRICKLE_PPROF_ADDR: prickled built with -tags pprof)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the work folder (world, outputs, each server's state folder and what it wrote there) and name it")
	if code, ok := cmdline.Parse(fs, args, false); !ok {
		return code
	}
	if cfg.ServerCmd == "" {
		return failf(stderr, ExitUsage, "compare: -server-cmd is required")
	}
	if *runRe != "" {
		re, err := regexp.Compile(*runRe)
		if err != nil {
			return failf(stderr, ExitUsage, "compare: -run: %v", err)
		}
		cfg.Run = re
		if len(cfg.Scenarios()) == 0 {
			return failf(stderr, ExitUsage, "compare: -run %q matches no scenario", *runRe)
		}
	}
	if cfg.Runs < 1 || cfg.Calls < 1 || cfg.TputCalls < 1 || cfg.WarmupCalls < 0 || cfg.Clients < 1 || cfg.Sustain < 0 {
		return failf(stderr, ExitUsage, "compare: -runs, -calls, -tput-calls and -clients must be positive; -warmup-calls and -sustain not negative")
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	if cfg.BaselineCmd == "" {
		self, err := os.Executable()
		if err != nil {
			return failf(stderr, ExitFailed, "compare: cannot find this program for the bare baseline: %v", err)
		}
		cfg.Self = self
	}
	cmp, err := load.Compare(ctx, cfg)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return failf(stderr, ExitFailed, "compare: interrupted")
		}
		return failf(stderr, ExitFailed, "compare: %v", err)
	}
	cmp.WriteText(stdout)
	if *jsonOut != "" {
		if err := fsx.WriteJSON(*jsonOut, cmp, 0o644); err != nil {
			return failf(stderr, ExitFailed, "compare: %v", err)
		}
	}
	if f := cmp.Failures(); len(f) > 0 {
		return failf(stderr, ExitFailed, "compare: %d kinds of failed calls (listed above)", len(f))
	}
	return ExitOK
}

// parseReplicas parses the flags of replicas.
func parseReplicas(args []string, stderr io.Writer) (load.ReplicasConfig, string, int, bool) {
	fs := newFlags("replicas", "Start prickled on a SQLite file and, on a durable PostgreSQL cluster of this\nmachine's binaries, as one replica, two replicas and one replica with\nsessions (--stateless=false); measure each operation at each number of\nclients on every deployment, the deployments taking turns round after\nround; print calls/s, latency, the CPU per call of prickled and of\nPostgreSQL, and the ratios (server/README.md, \"Replicas on PostgreSQL\").", stderr)
	var cfg load.ReplicasConfig
	fs.StringVar(&cfg.Prickled, "prickled", "prickled", "the prickled `EXECUTABLE`")
	serverFlags := fs.String("server-flags", "", "more `FLAGS` for every prickled, e.g. '--db-conns 32'")
	deployments := fs.String("deployments", strings.Join(load.Deployments, ","), "the `DEPLOYMENTS` to measure")
	ops := fs.String("ops", load.OpClaimFresh+","+load.OpClaimReplay, "the `OPS` to measure, one at a time")
	clients := fs.String("clients", "1,16,64", "the numbers of concurrent clients, `N,...`")
	fs.IntVar(&cfg.Rounds, "rounds", 3, "measure each this many times")
	fs.DurationVar(&cfg.Duration, "d", 5*time.Second, "each measurement's `DURATION`")
	fs.DurationVar(&cfg.Warmup, "warmup", time.Second, "warm up (not recorded) for `DURATION` before each")
	fs.IntVar(&cfg.Tasks, "tasks", 300000, "fresh tasks in each world (SQLite's, PostgreSQL's)")
	fs.BoolVar(&cfg.PGBench, "pgbench", true, "also measure PostgreSQL alone, each round, with pgbench")
	fs.StringVar(&cfg.Protocol, "protocol", "", "MCP protocol `VERSION` the clients ask for")
	jsonOut := fs.String("json", "", "also write every measurement as JSON to `FILE`")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the work folder (each prickled's log and database)")
	quiet := fs.Bool("q", false, "no progress lines")
	if code, ok := cmdline.Parse(fs, args, false); !ok {
		return cfg, "", code, false
	}
	cfg.ServerFlags = strings.Fields(*serverFlags)
	cfg.Deployments = strings.Split(*deployments, ",")
	for _, d := range cfg.Deployments {
		if !slices.Contains(load.Deployments, d) {
			return cfg, "", failf(stderr, ExitUsage, "replicas: -deployments: unknown %q (known: %s)", d, strings.Join(load.Deployments, ", ")), false
		}
	}
	cfg.Ops = strings.Split(*ops, ",")
	for _, op := range cfg.Ops {
		if !slices.Contains(load.Ops, op) {
			return cfg, "", failf(stderr, ExitUsage, "replicas: -ops: unknown %q (known: %s)", op, strings.Join(load.Ops, ", ")), false
		}
	}
	for _, c := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return cfg, "", failf(stderr, ExitUsage, "replicas: -clients: %q is not a number of clients", c), false
		}
		cfg.Clients = append(cfg.Clients, n)
	}
	if cfg.Rounds < 1 || cfg.Duration <= 0 || cfg.Warmup < 0 || cfg.Tasks < 1 {
		return cfg, "", failf(stderr, ExitUsage, "replicas: -rounds, -d and -tasks must be positive, -warmup not negative"), false
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	return cfg, *jsonOut, ExitOK, true
}

func mainReplicas(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, jsonOut, code, ok := parseReplicas(args, stderr)
	if !ok {
		return code
	}
	res, err := load.Replicas(ctx, cfg)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return failf(stderr, ExitFailed, "replicas: interrupted")
		}
		return failf(stderr, ExitFailed, "replicas: %v", err)
	}
	res.WriteText(stdout)
	if jsonOut != "" {
		if err := fsx.WriteJSON(jsonOut, res, 0o644); err != nil {
			return failf(stderr, ExitFailed, "replicas: %v", err)
		}
	}
	if n := res.Failed(); n > 0 {
		return failf(stderr, ExitFailed, "replicas: %d calls failed (the errors column)", n)
	}
	return ExitOK
}
