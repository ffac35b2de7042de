// Package explore is stateful exploration. Hand-written scripts test the rules one call or a few calls at a time;
// bugs that need several calls (a cache keyed by the wrong thing, a check
// forgotten once state has built up, a replay of a claim made long ago)
// slip between them. Exploration searches for them, as QuickCheck's and
// Hypothesis' state machines do: it generates a world (genWorld) and a
// random sequence of calls by many principals (agents, runners, the
// execution and discussion credentials the sequence obtains, no token, a
// token nobody issued), mixing fresh idempotency keys with replays, runs
// the sequence against a fresh server, and compares every answer with the
// model (model.go). A failing sequence shrinks to a minimal one
// (fewer calls, then a smaller world) and is printed as a ready testscript
// file with its fixture. Sequences are reproducible from the seed.
package explore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/internal/fsx"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/world"
)

// Calls is the length of a generated sequence.
const Calls = 24

// shrinkRuns bounds the runs one shrink may make.
const shrinkRuns = 250

// maxFailures is how many distinct failures (by the rule broken)
// are shrunk and reported.
const maxFailures = 3

// Report says what exploration did.
type Report struct {
	// Seed is the seed the sequences were generated from.
	Seed int64 `json:"seed"`
	// Sequences counts the sequences run, Calls the calls they made.
	Sequences int `json:"sequences"`
	Calls     int `json:"calls"`
	// Outcomes counts the answers by tool and outcome ("claim_task ok",
	// "claim_task refused not_routed"): what exploration exercised.
	Outcomes map[string]int `json:"outcomes"`
	Failures []*Failure     `json:"failures,omitempty"`
}

// Failure is one shrunk failing sequence.
type Failure struct {
	// Sequence is the index of the sequence that failed (with the seed, it
	// reproduces it).
	Sequence int `json:"sequence"`
	// Source is the rule broken: a sentence ID of the pages or a decision
	// of server/README.md.
	Source string `json:"source"`
	// Message says what was wrong.
	Message string `json:"message"`
	// Calls is the length of the shrunk sequence; Original the length of
	// the sequence as generated.
	Calls    int `json:"calls"`
	Original int `json:"original_calls"`
	// Script is the shrunk sequence as a testscript file with its fixture.
	Script string `json:"script"`
	// Saved is where --save wrote it.
	Saved string `json:"saved,omitempty"`
}

type principal struct {
	kind string // agent, runner, cred, none, bogus
	id   string // agent or runner id
	step int    // cred: the step whose answer carried it
}

type command struct {
	p    principal
	tool string
	args map[string]any
}

// stepRun is one step of a sequence as it ran.
type stepRun struct {
	cmd     *command
	cred    *mCred
	skipped bool
	exp     *expectation
	ans     *answer
}

// genCommands generates n calls for world w.
func genCommands(r *rand.Rand, w *world.World, n int) []*command {
	var runners, agents []string
	runnersOf := map[string][]string{}
	for _, x := range w.Runners {
		runners = append(runners, x.ID)
		runnersOf[x.Agent] = append(runnersOf[x.Agent], x.ID)
	}
	for _, a := range w.Agents {
		agents = append(agents, a.ID)
	}
	var requests, others, mentions []string
	for _, m := range w.Messages {
		switch {
		case m.Kind == "task_request":
			requests = append(requests, m.ID)
		case m.Kind == "mention":
			mentions = append(mentions, m.ID)
		default:
			others = append(others, m.ID)
		}
	}
	pick := func(xs []string) string {
		if len(xs) == 0 {
			return "none-such"
		}
		return xs[r.IntN(len(xs))]
	}
	// Keys used per (runner, task) and (runner, message), the world's first.
	taskKeys := map[[2]string][]string{}
	for _, a := range w.Attempts {
		k := [2]string{a.Runner, a.Task}
		taskKeys[k] = append(taskKeys[k], a.IdempotencyKey)
	}
	discKeys := map[[2]string][]string{}
	for _, c := range w.DiscussionClaims {
		k := [2]string{c.Runner, c.Message}
		discKeys[k] = append(discKeys[k], c.IdempotencyKey)
	}
	var claimSteps []int
	var out []*command
	credOrElse := func(fallback principal) principal {
		if len(claimSteps) == 0 {
			return fallback
		}
		return principal{kind: "cred", step: claimSteps[r.IntN(len(claimSteps))]}
	}
	nobody := func() principal {
		if r.IntN(2) == 0 {
			return principal{kind: "none"}
		}
		return principal{kind: "bogus"}
	}
	// Claims of the world that a new key would supersede: expired and
	// unreplied.
	var stale []world.DiscussionClaim
	for _, c := range w.DiscussionClaims {
		if !isTrue(c.ReplyPosted) && c.ReplyMessage == nil && strings.HasPrefix(string(c.LiveUntil), "now-") {
			stale = append(stale, c)
		}
	}
	for i := 0; len(out) < n; i++ {
		var c *command
		switch x := r.IntN(100); {
		case x < 10 && len(out) > 0: // the same call again
			prev := out[r.IntN(len(out))]
			c = &command{p: prev.p, tool: prev.tool, args: prev.args}
		case x < 14 && len(stale) > 0 && len(out) < n-1:
			// A new key for an agent whose earlier claim expired, then the
			// earlier key again.
			old := stale[r.IntN(len(stale))]
			p := principal{kind: "runner", id: old.Runner}
			claimSteps = append(claimSteps, len(out))
			out = append(out, &command{p: p, tool: "claim_discussion", args: map[string]any{"message_id": old.Message, "idempotency_key": fmt.Sprintf("key-%d", i), "harness": 2}})
			c = &command{p: p, tool: "claim_discussion", args: map[string]any{"message_id": old.Message, "idempotency_key": old.IdempotencyKey, "harness": 2}}
		case x < 45:
			t := w.Tasks[r.IntN(len(w.Tasks))]
			c = &command{tool: "claim_task", args: map[string]any{"task_id": t.ID}}
			switch y := r.IntN(100); {
			case y < 75 && len(runnersOf[t.Agent]) > 0:
				c.p = principal{kind: "runner", id: pick(runnersOf[t.Agent])}
			case y < 85:
				c.p = principal{kind: "runner", id: pick(runners)}
			case y < 91:
				c.p = principal{kind: "agent", id: pick(agents)}
			case y < 97:
				c.p = credOrElse(principal{kind: "agent", id: t.Agent})
			default:
				c.p = nobody()
			}
			if r.IntN(20) == 0 {
				c.args["task_id"] = "no-such-task"
			}
			k := [2]string{c.p.id, t.ID}
			switch y := r.IntN(100); {
			case y < 40 && len(taskKeys[k]) > 0:
				c.args["idempotency_key"] = pick(taskKeys[k])
			case y < 50:
				var all []string
				for kk, v := range taskKeys {
					if kk[1] == t.ID {
						all = append(all, v...)
					}
				}
				c.args["idempotency_key"] = pick(all)
			default:
				key := fmt.Sprintf("key-%d", i)
				c.args["idempotency_key"] = key
				taskKeys[k] = append(taskKeys[k], key)
			}
			switch y := r.IntN(100); {
			case y < 65:
			case y < 88 && t.RequestMessage != nil:
				c.args["wake"] = map[string]any{"message_id": *t.RequestMessage}
			case y < 91:
				c.args["wake"] = map[string]any{"message_id": pick(requests)}
			case y < 94:
				c.args["wake"] = map[string]any{"message_id": pick(others)}
			case y < 99:
				c.args["wake"] = map[string]any{"message_id": pick(mentions)}
			default:
				c.args["wake"] = map[string]any{"message_id": "no-such-message"}
			}
		case x < 80:
			msg := pick(others)
			woken := []string(nil)
			if len(w.Turns) > 0 && r.IntN(10) > 0 {
				t := w.Turns[r.IntN(len(w.Turns))]
				msg = t.Message
				for _, a := range t.Agents {
					woken = append(woken, runnersOf[a.Agent]...)
				}
			}
			c = &command{tool: "claim_discussion", args: map[string]any{"message_id": msg}}
			switch y := r.IntN(100); {
			case y < 88 && len(woken) > 0:
				c.p = principal{kind: "runner", id: pick(woken)}
			case y < 91:
				c.p = principal{kind: "runner", id: pick(runners)}
			case y < 93:
				c.p = principal{kind: "agent", id: pick(agents)}
			case y < 98:
				c.p = credOrElse(principal{kind: "agent", id: pick(agents)})
			default:
				c.p = nobody()
			}
			if r.IntN(30) == 0 {
				c.args["message_id"] = "no-such-message"
			}
			k := [2]string{c.p.id, msg}
			if y := r.IntN(100); y < 40 && len(discKeys[k]) > 0 {
				c.args["idempotency_key"] = pick(discKeys[k])
			} else {
				key := fmt.Sprintf("key-%d", i)
				c.args["idempotency_key"] = key
				discKeys[k] = append(discKeys[k], key)
			}
			switch y := r.IntN(100); {
			case y < 88:
				c.args["harness"] = 2
			case y < 92:
			case y < 96:
				c.args["harness"] = 1
			default:
				c.args["harness"] = 3
			}
		default:
			c = &command{tool: "discover_team_agents", args: map[string]any{"project": w.Projects[r.IntN(len(w.Projects))].Slug}}
			switch y := r.IntN(100); {
			case y < 40:
				c.p = principal{kind: "agent", id: pick(agents)}
			case y < 60:
				c.p = principal{kind: "runner", id: pick(runners)}
			case y < 90:
				c.p = credOrElse(principal{kind: "agent", id: pick(agents)})
			default:
				c.p = nobody()
			}
			if r.IntN(8) == 0 {
				c.args["project"] = "no-such-project"
			}
			if r.IntN(3) == 0 && len(out) < n-1 && len(w.Projects) > 1 {
				// The same caller asks about every project, one after
				// the other: what one answer says must not leak into the
				// next.
				for _, p := range w.Projects {
					if len(out) < n-1 && p.Slug != c.args["project"] {
						out = append(out, &command{p: c.p, tool: c.tool, args: map[string]any{"project": p.Slug}})
					}
				}
			}
		}
		if c.p.kind == "runner" && c.p.id == "none-such" {
			c.p = principal{kind: "agent", id: pick(agents)}
		}
		if strings.HasPrefix(c.tool, "claim_") {
			claimSteps = append(claimSteps, len(out))
		}
		out = append(out, c)
	}
	return out
}

// exploreRun is one run of a sequence against a fresh server.
type exploreRun struct {
	steps   []*stepRun
	failAt  int // the failing step, -1 if none
	fails   []failure
	calls   int
	startEr error // the server did not start
	// outcomes are the answers, as outcomeKey names them.
	outcomes []string
	tokens   []world.Token
}

// outcomeKey names an answer for the report's tally: "TOOL ok", "TOOL
// refused CODE", "TOOL protocol error".
func outcomeKey(tool string, a *answer) string {
	switch {
	case a.protoErr != nil:
		return tool + " protocol error"
	case a.refused:
		return tool + " refused " + a.code
	}
	return tool + " ok"
}

func (x *exploreRun) source() string {
	if len(x.fails) == 0 {
		return ""
	}
	return x.fails[0].src
}

// Config configures the exploration of one run.
type Config struct {
	// Target starts a fresh server for each run of a sequence.
	Target suite.Target
	// Index is the spec the checks follow.
	Index   *wire.Index
	Profile suite.Profile
	// Sequences is how many sequences to run, from Seed, Parallel at a
	// time.
	Sequences int
	Seed      int64
	Parallel  int
	// Timeout bounds one run of a sequence.
	Timeout time.Duration
	// FailFast stops at the first failing sequence; the others are not
	// run.
	FailFast bool
	// SaveDir, if set, receives every shrunk failing sequence as a script.
	SaveDir string
}

// explorer runs sequences for one certification run.
type explorer struct {
	c   *Config
	dir string
	mu  sync.Mutex
	n   int // runs, for folder names
}

func (e *explorer) runDir() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	return filepath.Join(e.dir, fmt.Sprintf("run-%04d", e.n))
}

// run runs cmds against a fresh server holding w.
func (e *explorer) run(ctx context.Context, name string, w *world.World, cmds []*command) *exploreRun {
	ctx, cancel := context.WithTimeout(ctx, e.c.Timeout)
	defer cancel()
	x := &exploreRun{failAt: -1}
	dir := e.runDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		x.startEr = err
		return x
	}
	now := suite.Now()
	fx, _, err := suite.Materialize(w.Marshal(), now)
	if err != nil {
		x.startEr = err
		return x
	}
	file := filepath.Join(dir, suite.FixtureFile)
	if err := os.WriteFile(file, fx, 0o600); err != nil {
		x.startEr = err
		return x
	}
	inst, err := e.c.Target.Start(ctx, &suite.Script{Name: name, OwnFixture: true}, file, filepath.Join(dir, "server"))
	if err != nil {
		x.startEr = err
		return x
	}
	if inst.Stop != nil {
		defer inst.Stop()
	}
	cl := wire.NewClient(inst.Endpoint, nil)
	defer cl.Close()
	x.tokens = inst.Tokens
	m := newModel(w, e.c.Profile, now, inst.Tokens)
	for i, cmd := range cmds {
		st := &stepRun{cmd: cmd}
		x.steps = append(x.steps, st)
		c, ok := m.resolve(cmd.p, x.steps)
		token := ""
		switch {
		case !ok:
		case cmd.p.kind == "agent" || cmd.p.kind == "runner":
			kind := cmd.p.kind
			token, err = script.ResolvePrincipal(inst.Tokens, kind+":"+cmd.p.id)
			ok = err == nil
		case cmd.p.kind == "cred":
			token = c.cred.token
		case cmd.p.kind == "bogus":
			token = "not-a-token-anyone-issued"
		}
		if !ok {
			st.skipped = true
			continue
		}
		st.exp = m.expect(cmd, c)
		args, _ := json.Marshal(cmd.args)
		a := &answer{step: i, start: time.Now()}
		resp, err := cl.Request(ctx, token, "tools/call", map[string]any{"name": cmd.tool, "arguments": json.RawMessage(args)})
		a.end = time.Now()
		x.calls++
		st.ans = a
		var wireFails []failure
		var he *wire.HTTPError
		var re *wire.RPCError
		switch {
		case err != nil && (errors.As(err, &he) || errors.As(err, &re)):
			a.protoErr = err
		case err != nil:
			x.failAt, x.fails = i, []failure{{src: srcWire, msg: fmt.Sprintf("%s: %v", cmd.tool, err)}}
			return x
		case resp.Error != nil:
			a.protoErr = resp.Error
		default:
			r := &wire.Call{Tool: cmd.tool, Args: string(args)}
			for _, ch := range wire.CheckResult(e.c.Index, e.c.Profile, r, resp.Result) {
				if !ch.OK {
					wireFails = append(wireFails, failure{src: "the documented output schema of " + cmd.tool + " (MCP tool result)", msg: ch.What})
				}
			}
			a.refused, a.code, a.text = r.IsError, r.Code, r.Text
			if r.Structured != nil && !r.IsError {
				_ = json.Unmarshal(r.Structured, &a.structured)
			}
		}
		x.outcomes = append(x.outcomes, outcomeKey(cmd.tool, a))
		fs := wireFails
		if len(fs) == 0 {
			fs = m.judge(st.exp, a)
		}
		if len(fs) > 0 {
			x.failAt, x.fails = i, fs
			return x
		}
		if a.structured != nil {
			for _, path := range []string{"execution_credential", "discussion_credential"} {
				if _, ok := a.structured[path]; ok {
					st.cred = m.creds[fmt.Sprint(a.structured[path].(map[string]any)["token"])]
				}
			}
		}
	}
	return x
}

// exploreSequence is one generated sequence.
type exploreSequence struct {
	index int
	world *world.World
	cmds  []*command
}

func genSequence(seed int64, index int) *exploreSequence {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(index)))
	w := genWorld(r)
	return &exploreSequence{index: index, world: w, cmds: genCommands(r, w, Calls)}
}

// Run runs the exploration of one certification run, named name among
// the run's results, in dir: c.Sequences sequences from c.Seed,
// c.Parallel at a time.
func Run(ctx context.Context, name string, c Config, dir string) (*suite.Result, *Report) {
	res := &suite.Result{Name: name}
	rep := &Report{Seed: c.Seed, Sequences: c.Sequences, Outcomes: map[string]int{}}
	if reason := c.Target.Skip(&suite.Script{Name: name, OwnFixture: true}); reason != "" {
		res.Status, res.Reason = suite.Skip, "stateful exploration "+reason
		return res, rep
	}
	if stale := StaleCitations(c.Index.Spec); len(stale) > 0 {
		res.Status, res.Reason = suite.Skip, "the exploration model cites sentences the pages do not have, so it no longer follows them: "+strings.Join(stale, ", ")
		return res, rep
	}
	e := &explorer{c: &c, dir: dir}
	runs := make([]*exploreRun, c.Sequences)
	seqs := make([]*exploreSequence, c.Sequences)
	var stop atomic.Bool
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range c.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if stop.Load() {
					continue
				}
				seqs[i] = genSequence(c.Seed, i)
				runs[i] = e.run(ctx, fmt.Sprintf("%s.%d", name, i), seqs[i].world, seqs[i].cmds)
				if runs[i].failAt >= 0 && c.FailFast {
					stop.Store(true)
				}
			}
		}()
	}
	for i := range c.Sequences {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	var log strings.Builder
	seen := map[string]bool{}
	failedSeqs := 0
	rep.Sequences = 0
	for i, x := range runs {
		if x == nil {
			continue // not run: an earlier sequence failed (ExploreFailFast)
		}
		rep.Sequences++
		rep.Calls += x.calls
		res.Checks += x.calls
		for _, k := range x.outcomes {
			rep.Outcomes[k]++
			if tool, ok := strings.CutSuffix(k, " ok"); ok {
				if res.Succeeded == nil {
					res.Succeeded = map[string]int{}
				}
				res.Succeeded[tool]++
			}
		}
		if x.startEr != nil {
			res.Status = suite.Fail
			fmt.Fprintf(&log, "sequence %d: starting the server: %v\n", i, x.startEr)
			continue
		}
		if x.failAt < 0 {
			continue
		}
		failedSeqs++
		if seen[x.source()] || len(rep.Failures) >= maxFailures {
			continue
		}
		seen[x.source()] = true
		name := fmt.Sprintf("%s.%d", name, i)
		w, cmds, best := e.shrink(ctx, name, seqs[i].world, seqs[i].cmds, x)
		header := []string{
			fmt.Sprintf("Stateful exploration (profile %s, seed %d, sequence %d): %d calls, shrunk from %d.", c.Profile, c.Seed, i, len(cmds), x.failAt+1),
			fmt.Sprintf("Run it again: with this file in DIR, prickle-conformance --profile %s --scripts DIR --run '^%s$' --server-cmd ...", c.Profile, regexp.QuoteMeta(fmt.Sprintf("explore-%d-%d", c.Seed, i))),
			"Fails: " + suite.OneLine(best.fails[0].msg) + " [" + best.source() + "]",
		}
		f := &Failure{Sequence: i, Source: best.source(), Message: best.fails[0].msg, Calls: len(cmds), Original: x.failAt + 1,
			Script: renderScript(header, w, best, c.Profile)}
		if c.SaveDir != "" {
			file := filepath.Join(c.SaveDir, fmt.Sprintf("explore-%d-%d.txtar", c.Seed, i))
			err := os.MkdirAll(c.SaveDir, 0o755)
			if err == nil {
				err = fsx.WriteFileAtomic(file, []byte(f.Script), 0o644)
			}
			if err == nil {
				f.Saved = file
			} else {
				fmt.Fprintf(&log, "--save: %v\n", err)
			}
		}
		rep.Failures = append(rep.Failures, f)
	}
	if failedSeqs > 0 {
		res.Status = suite.Fail
		res.Reason = fmt.Sprintf("%d of %d sequences broke the model (seed %d)", failedSeqs, rep.Sequences, c.Seed)
		for _, f := range rep.Failures {
			fmt.Fprintf(&log, "sequence %d: %s [%s]\nshrunk from %d to %d calls", f.Sequence, suite.OneLine(f.Message), f.Source, f.Original, f.Calls)
			if f.Saved != "" {
				fmt.Fprintf(&log, ", saved as %s", f.Saved)
			}
			fmt.Fprintf(&log, ":\n%s\n", suite.Indent(f.Script))
		}
	}
	if res.Status == "" {
		res.Status = suite.Pass
	}
	res.Log = log.String()
	return res, rep
}

// StaleCitations lists, sorted, the sentence IDs the model cites that sp
// does not have: a page was edited and the model no longer follows it.
func StaleCitations(sp *spec.Spec) []string {
	ids := map[string]bool{}
	for _, t := range sp.Tools {
		for _, se := range t.Sentences {
			ids[se.ID] = true
		}
	}
	var out []string
	for _, id := range citedSentences {
		if !ids[id] && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
