// Package load is an out-of-process load generator for any Prickle server,
// a bare go-sdk server to compare a server with, and the comparison of the
// two (cmd/prickle-load).
//
// The generator talks to the server as a user's client does: the go-sdk
// client over MCP streamable HTTP, each worker with its own HTTP
// connections and its own MCP session per identity (the runner's token for
// the claims, the agent's for discover_team_agents), calling tools one at a
// time and back to back. It reports, per operation, the calls, errors,
// throughput and latency percentiles of the measured phase, after a warm-up
// that is not recorded; and, for a server process on this machine, its
// resident memory and CPU time over the run.
//
// It is prickle-load's library, beside the command that uses it. It may
// import the reference server, the generated API and runtime, the
// conformance suite's targets (to start the servers it compares), the
// world format and the ground floor of internal/; only prickle-load's app
// and the server's load tests import it, and it must not import the
// generator or a command's app.
package load

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/prickle-dev/prickle/internal/cmdline"
	"github.com/prickle-dev/prickle/spec/world"
)

// Config is one load run.
type Config struct {
	// Endpoints are the server's MCP URLs, e.g. http://127.0.0.1:8080/mcp:
	// one, or one per replica of a deployment, which the clients are
	// spread over round robin (client i connects to Endpoints[i mod n]),
	// directly, as clients would be by a load balancer.
	Endpoints []string
	// RunnerToken authenticates the claims, AgentToken
	// discover_team_agents; only those the mix needs are required.
	RunnerToken, AgentToken string
	// World names the project, tasks and message the calls use.
	World World
	// Mix is what the workers call, in these proportions.
	Mix []Weighted
	// Clients is the number of concurrent workers (at least 1).
	Clients int
	// The measured phase ends after Calls calls or after Duration; exactly
	// one is set.
	Calls    int
	Duration time.Duration
	// WarmupCalls and WarmupDuration bound the warm-up before the measured
	// phase (calls not recorded); both zero means none, both set means
	// whichever comes first.
	WarmupCalls    int
	WarmupDuration time.Duration
	// Protocol is the MCP protocol version the client asks for; "" is the
	// go-sdk client's default.
	Protocol string
	// CallTimeout bounds one call (default 30s).
	CallTimeout time.Duration
	// PIDs, if any, are the server's processes on this machine (its
	// replicas): the resident memory and CPU time of them and their
	// descendants, summed, are sampled every SampleEvery (default 1s).
	// DBPIDs are its database server's (PostgreSQL's postmaster, whose
	// descendants are its backends), sampled alike and reported apart.
	PIDs, DBPIDs []int
	SampleEvery  time.Duration
	// Measure, if set, is called as the measured phase starts; what it
	// returns is called with the calls made when the phase ends (a
	// profiler, say, brackets the measured calls with them).
	Measure func() (end func(calls int64))
}

// ErrFreshExhausted reports that the measured phase had no fresh task left
// for a fresh claim: give the world more tasks (prickle-load fixture
// -tasks) or fewer calls.
var ErrFreshExhausted = errors.New("no fresh task left to claim")

func (c *Config) check() error {
	switch {
	case len(c.Endpoints) == 0 || slices.Contains(c.Endpoints, ""):
		return errors.New("no server URL")
	case len(c.Mix) == 0:
		return errors.New("empty mix")
	case c.Clients < 1:
		return fmt.Errorf("clients must be at least 1, got %d", c.Clients)
	case (c.Calls > 0) == (c.Duration > 0):
		return errors.New("give either a number of calls or a duration")
	case c.Calls < 0 || c.Duration < 0 || c.WarmupCalls < 0 || c.WarmupDuration < 0:
		return errors.New("negative calls or duration")
	}
	for _, w := range c.Mix {
		if asRunner(w.Op) && c.RunnerToken == "" {
			return fmt.Errorf("%s needs a runner token", w.Op)
		}
		if !asRunner(w.Op) && c.AgentToken == "" {
			return fmt.Errorf("%s needs an agent token", w.Op)
		}
		if w.Op == OpClaimFresh && c.World.FreshCount < 1 {
			return fmt.Errorf("%s needs fresh tasks (World.FreshCount)", w.Op)
		}
	}
	return nil
}

// SelectTokens picks the tokens of a tokens file (the format of prickled
// --tokens-out): the runner's, by runner id or by the agent it is paired
// to ("" for the first runner), and the agent's ("" for the runner's
// agent, or the first agent without a runner). A token the caller did not
// ask for and the file lacks is returned empty.
func SelectTokens(tokens []world.Token, runner, agent string) (runnerToken, agentToken string, err error) {
	var pairedTo string
	for _, t := range tokens {
		if t.Kind == world.KindRunner && (runner == "" || t.Runner == runner || t.Agent == runner) {
			runnerToken, pairedTo = t.Token, t.Agent
			break
		}
	}
	if runner != "" && runnerToken == "" {
		return "", "", fmt.Errorf("tokens: no runner %q (by runner id or paired agent)", runner)
	}
	want := agent
	if want == "" {
		want = pairedTo
	}
	for _, t := range tokens {
		if t.Kind == world.KindAgent && (want == "" || t.Agent == want) {
			agentToken = t.Token
			break
		}
	}
	if agent != "" && agentToken == "" {
		return "", "", fmt.Errorf("tokens: no agent %q", agent)
	}
	return runnerToken, agentToken, nil
}

// worker is one client: its sessions and what it measured.
type worker struct {
	sessions map[bool]*mcp.ClientSession // by asRunner
	sched    []string
	next     int
	stats    map[string]*opStats
}

// opStats is what one worker measured for one operation.
type opStats struct {
	hist   Histogram
	bytes  int64
	errors map[errorKey]*ErrorCount
}

type errorKey struct{ kind, code string }

// Error kinds.
const (
	// ErrorCall: the call failed (transport, HTTP or JSON-RPC error).
	ErrorCall = "error"
	// ErrorRefused: the tool answered isError.
	ErrorRefused = "refused"
	// ErrorNoStructured: a success without structuredContent.
	ErrorNoStructured = "no_structured_content"
)

// maxExample bounds the example message kept for each kind of error.
const maxExample = 300

func (s *opStats) fail(kind, code, msg string) {
	k := errorKey{kind, code}
	if e, ok := s.errors[k]; ok {
		e.Count++
		return
	}
	if len(msg) > maxExample {
		msg = msg[:maxExample] + "..."
	}
	s.errors[k] = &ErrorCount{Kind: kind, Code: code, Count: 1, Example: msg}
}

// connect opens one MCP session with token as the bearer token, on its own
// HTTP transport (as a separate client would have).
func connect(ctx context.Context, endpoint, token, protocol string) (*mcp.ClientSession, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	c := mcp.NewClient(&mcp.Implementation{Name: "prickle-load", Version: cmdline.Version()}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}), Base: tr}},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		tr.CloseIdleConnections()
		return nil, fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	return cs, nil
}

// run is the state of one Run.
type run struct {
	cfg   Config
	id    string // random, in fresh claims' idempotency keys
	args  map[string]json.RawMessage
	fresh atomic.Int64 // fresh tasks handed out, over both phases
	// freshOut is set once a fresh claim found no task left.
	freshOut atomic.Bool
}

// Run makes the calls cfg describes and reports what it measured. Calls
// that fail are counted, not fatal; Run fails only when it cannot start
// (bad configuration, a session that cannot connect) or ctx ends. A
// measured phase cut short because fresh tasks ran out returns the report
// and ErrFreshExhausted.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 30 * time.Second
	}
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = time.Second
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	args, err := cfg.World.fixedArgs()
	if err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, args: args, id: rand.Text()[:10]}

	rep := &Report{
		Endpoints: cfg.Endpoints, Mix: FormatMix(cfg.Mix), Clients: cfg.Clients,
		Started: time.Now().UTC().Truncate(time.Millisecond),
	}
	rep.LoadStart, _ = loadAverage()

	workers, err := r.connectWorkers(ctx, rep)
	defer closeWorkers(workers)
	if err != nil {
		return nil, err
	}
	samplers, err := r.startSamplers()
	defer stopSamplers(samplers)
	if err != nil {
		return nil, err
	}

	r.warmup(ctx, workers, rep)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := r.measure(ctx, workers, samplers, rep); err != nil {
		return nil, err
	}
	rep.freshUsed = min(r.fresh.Load(), int64(cfg.World.FreshCount))
	if r.freshOut.Load() {
		rep.FreshExhausted = true
		return rep, ErrFreshExhausted
	}
	return rep, nil
}

// connectWorkers makes cfg.Clients workers, each with a session per
// identity the mix needs, each worker's on its endpoint in turn; rep
// takes the protocol the server agreed. On an error it returns the
// workers made so far with it, for closeWorkers.
func (r *run) connectWorkers(ctx context.Context, rep *Report) ([]*worker, error) {
	cfg := r.cfg
	sched := schedule(cfg.Mix)
	needs := map[bool]bool{}
	for _, w := range cfg.Mix {
		needs[asRunner(w.Op)] = true
	}
	workers := make([]*worker, cfg.Clients)
	for i := range workers {
		w := &worker{sessions: map[bool]*mcp.ClientSession{}, sched: sched, next: i % len(sched), stats: map[string]*opStats{}}
		workers[i] = w
		for runner := range needs {
			tok, whose := cfg.AgentToken, "the agent token"
			if runner {
				tok, whose = cfg.RunnerToken, "the runner token"
			}
			cs, err := connect(ctx, cfg.Endpoints[i%len(cfg.Endpoints)], tok, cfg.Protocol)
			if err != nil {
				return workers, fmt.Errorf("%s: %w", whose, err)
			}
			w.sessions[runner] = cs
			if ir := cs.InitializeResult(); ir != nil {
				rep.Protocol = ir.ProtocolVersion
			}
		}
		for _, m := range cfg.Mix {
			w.stats[m.Op] = &opStats{errors: map[errorKey]*ErrorCount{}}
		}
	}
	return workers, nil
}

// closeWorkers closes every session of workers (nil entries are skipped).
func closeWorkers(workers []*worker) {
	for _, w := range workers {
		if w != nil {
			for _, cs := range w.sessions {
				cs.Close()
			}
		}
	}
}

// startSamplers starts the samplers of the server's processes and of the
// database's, where cfg names them. On an error it returns those started
// so far with it, for stopSamplers.
func (r *run) startSamplers() ([2]*sampler, error) {
	var samplers [2]*sampler // the server's, the database's
	for i, pids := range [][]int{r.cfg.PIDs, r.cfg.DBPIDs} {
		if len(pids) > 0 {
			var err error
			if samplers[i], err = startSampler(pids, r.cfg.SampleEvery); err != nil {
				return samplers, err
			}
		}
	}
	return samplers, nil
}

// stopSamplers stops the samplers started, the last first.
func stopSamplers(samplers [2]*sampler) {
	for i := len(samplers) - 1; i >= 0; i-- {
		if samplers[i] != nil {
			samplers[i].stop()
		}
	}
}

// warmup runs the warm-up phase cfg asks for, if any, and forgets what it
// measured: warm-up calls are not reported, only its duration.
func (r *run) warmup(ctx context.Context, workers []*worker, rep *Report) {
	if r.cfg.WarmupCalls <= 0 && r.cfg.WarmupDuration <= 0 {
		return
	}
	start := time.Now()
	r.phase(ctx, workers, false, r.cfg.WarmupCalls, r.cfg.WarmupDuration)
	rep.Warmup = time.Since(start).Seconds()
	for _, w := range workers {
		for op := range w.stats {
			w.stats[op] = &opStats{errors: map[errorKey]*ErrorCount{}}
		}
	}
}

// measure runs the measured phase and puts in rep what it measured: the
// calls per operation, the load average, the server's and the database's
// processes, the CPU time per call.
func (r *run) measure(ctx context.Context, workers []*worker, samplers [2]*sampler, rep *Report) error {
	cfg := r.cfg
	cpu0 := selfCPU()
	for _, s := range samplers {
		if s != nil {
			s.mark()
		}
	}
	var endMeasure func(int64)
	if cfg.Measure != nil {
		endMeasure = cfg.Measure()
	}
	start := time.Now()
	r.phase(ctx, workers, true, cfg.Calls, cfg.Duration)
	elapsed := time.Since(start)
	cpu1 := selfCPU()
	if samplers[0] != nil {
		rep.Server = samplers[0].finish()
	}
	if samplers[1] != nil {
		rep.Database = samplers[1].finish()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rep.LoadEnd, _ = loadAverage()
	rep.Measured = elapsed.Seconds()
	rep.summarize(cfg.Mix, workers, elapsed)
	if endMeasure != nil {
		endMeasure(int64(rep.Total.Calls))
	}
	if rep.Total.Calls > 0 {
		rep.ClientCPUPerCallUS = us(time.Duration(int64(cpu1-cpu0) / int64(rep.Total.Calls)))
		for _, s := range []*ServerStats{rep.Server, rep.Database} {
			if s != nil {
				s.CPUPerCallUS = s.cpu / float64(rep.Total.Calls) * 1e6
			}
		}
	}
	return nil
}

// phase runs every worker until calls calls were made (when calls > 0), d
// has passed (when d > 0), ctx ends, or no operation is left to make.
func (r *run) phase(ctx context.Context, workers []*worker, record bool, calls int, d time.Duration) {
	var deadline time.Time
	if d > 0 {
		deadline = time.Now().Add(d)
	}
	var tickets atomic.Int64
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				if !deadline.IsZero() && !time.Now().Before(deadline) {
					return
				}
				op, ok := r.pick(w)
				if !ok {
					return
				}
				if calls > 0 && tickets.Add(1) > int64(calls) {
					return
				}
				r.call(ctx, w, op, record)
			}
		})
	}
	wg.Wait()
}

// pick returns the worker's next operation with its arguments ready; a
// fresh claim with no task left is dropped from the worker's cycle.
func (r *run) pick(w *worker) (string, bool) {
	for len(w.sched) > 0 {
		op := w.sched[w.next%len(w.sched)]
		if op == OpClaimFresh && r.freshOut.Load() {
			w.sched = dropOp(w.sched, OpClaimFresh)
			continue
		}
		w.next++
		return op, true
	}
	return "", false
}

func dropOp(sched []string, op string) []string {
	out := make([]string, 0, len(sched))
	for _, s := range sched {
		if s != op {
			out = append(out, s)
		}
	}
	return out
}

// call makes one call of op and, when record is set, records it.
func (r *run) call(ctx context.Context, w *worker, op string, record bool) {
	args := r.args[op]
	if op == OpClaimFresh {
		n := int(r.fresh.Add(1) - 1)
		if n >= r.cfg.World.FreshCount {
			r.freshOut.Store(true)
			return
		}
		args = r.cfg.World.freshArgs(r.cfg.World.FreshFirst+n, r.id)
	}
	cctx, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
	defer cancel()
	start := time.Now()
	res, err := w.sessions[asRunner(op)].CallTool(cctx, &mcp.CallToolParams{Name: string(opTool[op]), Arguments: args})
	lat := time.Since(start)
	if !record || ctx.Err() != nil {
		return
	}
	s := w.stats[op]
	switch {
	case err != nil:
		code := ""
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			code = strconv.FormatInt(je.Code, 10)
		}
		s.fail(ErrorCall, code, err.Error())
	case res.IsError:
		text := resultText(res)
		code, _ := res.Meta["code"].(string)
		if code == "" {
			code, _, _ = strings.Cut(text, ":")
		}
		s.fail(ErrorRefused, code, text)
	case res.StructuredContent == nil:
		s.fail(ErrorNoStructured, "", resultText(res))
	default:
		s.hist.Record(lat)
		s.bytes += int64(len(resultText(res)))
	}
}

// resultText is the first text content of a result.
func resultText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}
