// Package explore is stateful exploration. Hand-written scripts test the rules one call or a few calls at a time;
// bugs that need several calls (a cache keyed by the wrong thing, a check
// forgotten once state has built up, a replay of a claim made long ago)
// slip between them. Exploration searches for them, as QuickCheck's and
// Hypothesis' state machines do: it generates a world (genWorld) and a
// random sequence of calls by many principals (agents, runners, the
// execution and discussion credentials the sequence obtains, no token, a
// token nobody issued), mixing fresh idempotency keys with replays, runs
// the sequence against a server holding the world (sequences share
// servers, each in a part of one world: shared.go), and compares every
// answer with the model (model.go). A failing sequence shrinks to a minimal one
// (fewer calls, then a smaller world) and is printed as a ready testscript
// file with its fixture. Sequences are reproducible from the seed.
package explore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/conformance/report"
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

type principal struct {
	kind string // agent, runner, cred, none, bogus
	id   string // agent or runner id
	step int    // cred: the step whose answer carried it
}

type command struct {
	p    principal
	tool string
	args map[string]any
	// group, if not 0, makes the command one of a concurrent group: the
	// consecutive commands of one group are sent at once (concurrent.go).
	group int
	// class is the race class of a group's command.
	class RaceClass
	// slot places the call on a replica of a deployment: replica slot
	// modulo the replicas (spread).
	slot int
}

// stepRun is one step of a sequence as it ran.
type stepRun struct {
	cmd     *command
	cred    *mCred
	skipped bool
	exp     *expectation
	ans     *answer
	// place is 1 + the call's place in an order of its concurrent group
	// that the model accepted (0 if it has none): the order a shrink
	// makes the group's calls in when it sends them one at a time.
	place int
}

// exploreRun is one run of a sequence.
type exploreRun struct {
	steps   []*stepRun
	failAt  int // the failing step, -1 if none
	fails   []failure
	calls   int
	startEr error // the server did not start
	// outcomes are the answers, as outcomeKey names them; provoked the
	// page refusals provoked alone, by Rule.Key.
	outcomes, provoked []string
	tokens             []world.Token
	// groups and groupCalls count the concurrent groups sent and their
	// calls; unknown the groups whose check ran out of budget.
	groups, groupCalls, unknown int
	// races counts the groups by race class, and those that overlapped.
	races raceTally
	// shared names the batch whose server the sequence shared ("" for a
	// server of its own).
	shared string
	// replicaCalls counts, against two replicas or more, the calls each
	// answered.
	replicaCalls []int
}

// answered counts a call that replica r of n answered (a is its answer,
// err a failure of the transport), when there are two replicas or more.
func (x *exploreRun) answered(r, n int, err error) {
	if n < 2 || err != nil {
		return
	}
	if x.replicaCalls == nil {
		x.replicaCalls = make([]int, n)
	}
	x.replicaCalls[r]++
}

// outcomeKey names an answer for the report's tally: "TOOL ok", "TOOL
// refused CODE", "TOOL HTTP 401", "TOOL JSON-RPC error -32602"; an answer
// to a call of a concurrent group has inARace after it.
func outcomeKey(tool string, a *answer) string {
	var he *wire.HTTPError
	var re *wire.RPCError
	switch {
	case errors.As(a.protoErr, &he):
		return fmt.Sprintf("%s HTTP %d", tool, he.Status)
	case errors.As(a.protoErr, &re):
		return fmt.Sprintf("%s JSON-RPC error %d", tool, re.Code)
	case a.protoErr != nil:
		return tool + " protocol error"
	case a.refused:
		return tool + " refused " + a.code
	}
	return tool + " ok"
}

// inARace ends the outcome of a call sent in a concurrent group, whose
// answer depends on the schedule: which call of a race wins.
const inARace = " in a race"

// racing reports whether x failed in a concurrent group: a race, which
// may need several runs to show again.
func (x *exploreRun) racing() bool {
	return x.failAt >= 0 && x.failAt < len(x.steps) && x.steps[x.failAt].cmd.group != 0
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
	// run. Of the sequences that failed meanwhile (batches run side by
	// side), only the first by index is reported.
	FailFast bool
	// SaveDir, if set, receives every shrunk failing sequence as a script.
	SaveDir string
	// Alone runs every sequence on a server of its own, instead of in
	// batches sharing one (shared.go).
	Alone bool
	// RaceBudget bounds the race phase: after the sequences, the races of
	// every class short of RaceK overlapping groups, until each has them
	// (evidence.go). 0 runs none.
	RaceBudget time.Duration
	// Tools, if not empty, are the only tools the sequences call (the
	// certification's scope): the generated calls of other tools are
	// dropped, with the calls that use their credentials, and the race
	// phase races only the classes of these tools.
	Tools []string
	// Replicas is how many replicas each server the target starts has
	// (default 1). With two or more, a sequence's calls alternate between
	// them, a group's calls go each to another (spread), and a race class
	// counts only the overlapping groups whose calls reached two replicas
	// or more.
	Replicas int
}

// explorer runs sequences for one certification run.
type explorer struct {
	c   *Config
	dir string
	mu  sync.Mutex
	n   int // runs, for folder names
	// mode is how groups are sent: its zero value but in the overlap
	// measurements.
	mode sendMode
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
	inst, now, err := e.start(ctx, name, w)
	if err != nil {
		return &exploreRun{failAt: -1, startEr: err}
	}
	if inst.Stop != nil {
		defer inst.Stop()
	}
	return e.play(ctx, inst, now, w, cmds)
}

// start starts a fresh server holding w, materialized at now.
func (e *explorer) start(ctx context.Context, name string, w *world.World) (*suite.Instance, time.Time, error) {
	inst, _, now, _, err := suite.StartWorld(ctx, e.c.Target, &suite.Script{Name: name, OwnFixture: true}, w.Marshal(), e.runDir())
	return inst, now, err
}

// play runs cmds against inst, a server holding w (or a world w is a
// disjoint part of) materialized at now, and judges every answer.
func (e *explorer) play(ctx context.Context, inst *suite.Instance, now time.Time, w *world.World, cmds []*command) *exploreRun {
	x := &exploreRun{failAt: -1, races: raceTally{}}
	cls := replicaClients(inst)
	defer closeAll(cls)
	x.tokens = inst.Tokens
	m := newModel(w, e.c.Profile, now, inst.Tokens)
	for i, cmd := range cmds {
		if cmd.group != 0 {
			e.runGroups(ctx, inst, x, m, cmds, i)
			return x
		}
		st := &stepRun{cmd: cmd}
		x.steps = append(x.steps, st)
		c, ok := m.resolve(cmd.p, x.steps)
		token := ""
		if ok {
			token, ok = principalToken(inst.Tokens, c, cmd.p)
		}
		if !ok {
			st.skipped = true
			continue
		}
		st.exp = m.expect(cmd, c)
		a, wireFails, err := e.callTool(ctx, cls[cmd.slot%len(cls)], token, cmd, i)
		x.answered(cmd.slot%len(cls), len(cls), err)
		x.calls++
		st.ans = a
		if err != nil {
			x.failAt, x.fails = i, []failure{{src: srcWire, msg: fmt.Sprintf("%s: %v", cmd.tool, err)}}
			return x
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
		if r, ok := m.provoked(st.exp, a, c); ok {
			x.provoked = append(x.provoked, r.Key())
		}
		st.cred = issuedCred(m, a)
	}
	return x
}

// replicaClients are clients of inst, one per replica.
func replicaClients(inst *suite.Instance) []*wire.Client {
	var cls []*wire.Client
	for _, e := range inst.Endpoints() {
		cls = append(cls, wire.NewClient(e, nil))
	}
	return cls
}

func closeAll(cls []*wire.Client) {
	for _, c := range cls {
		c.Close()
	}
}

// spread gives each command its replica slot: a call alone its place in
// the sequence, so that calls one at a time alternate between replicas
// and what one writes another reads; a concurrent group's call its place
// in the group, so that a group reaches as many replicas as it has calls,
// round robin.
func spread(cmds []*command) {
	for i, c := range cmds {
		switch {
		case c.group == 0:
			c.slot = i
		case i > 0 && cmds[i-1].group == c.group:
			c.slot = cmds[i-1].slot + 1
		default:
			c.slot = 0
		}
	}
}

// issuedCred is the credential answer a gave, as state m holds it (nil if
// it gave none).
func issuedCred(m *model, a *answer) *mCred {
	for _, path := range []string{"execution_credential", "discussion_credential"} {
		if v, ok := a.structured[path].(map[string]any); ok {
			return m.creds[fmt.Sprint(v["token"])]
		}
	}
	return nil
}

// principalToken is the bearer token p calls with, as c resolved it.
func principalToken(tokens []world.Token, c caller, p principal) (string, bool) {
	switch p.kind {
	case "agent", "runner":
		token, err := script.ResolvePrincipal(tokens, p.kind+":"+p.id)
		return token, err == nil
	case "cred":
		return c.cred.token, true
	case "bogus":
		return "not-a-token-anyone-issued", true
	}
	return "", true
}

// callTool makes cmd's call, step of its run, with token and checks the
// answer on the wire; err is a failure of the transport that is neither
// an HTTP nor a JSON-RPC error.
func (e *explorer) callTool(ctx context.Context, cl *wire.Client, token string, cmd *command, step int) (*answer, []failure, error) {
	args := cmd.argsJSON()
	a := &answer{step: step, start: time.Now()}
	resp, err := cl.CallTool(ctx, token, cmd.tool, args)
	a.end = time.Now()
	return e.judgeWire(a, cmd, args, resp, err)
}

// argsJSON is the arguments of cmd's call.
func (cmd *command) argsJSON() json.RawMessage {
	args, _ := json.Marshal(cmd.args)
	return args
}

// judgeWire completes a, the answer to cmd (called with args), from the
// response: its refusal or result, and what on the wire broke the
// documented schemas. An error other than an HTTP or JSON-RPC one is
// returned: the call did not complete.
func (e *explorer) judgeWire(a *answer, cmd *command, args json.RawMessage, resp *wire.Response, err error) (*answer, []failure, error) {
	var wireFails []failure
	var he *wire.HTTPError
	var re *wire.RPCError
	switch {
	case err != nil && (errors.As(err, &he) || errors.As(err, &re)):
		a.protoErr = err
	case err != nil:
		return a, nil, err
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
	return a, wireFails, nil
}

// exploreSequence is one generated sequence.
type exploreSequence struct {
	index int
	world *world.World
	cmds  []*command
	// probes are the probes its calls drew, by their place in the
	// generator's list (refusals.go).
	probes []int
}

func genSequence(seed int64, index int) *exploreSequence {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(index)))
	w := genWorld(r)
	cmds, probes := genCommands(r, w, Calls, index)
	seq := &exploreSequence{index: index, world: w, cmds: cmds, probes: probes}
	addRaces(seed, seq, "", Tries, 0)
	spread(seq.cmds)
	return seq
}

// Run runs the exploration of one certification run, named name among
// the run's results, in dir: c.Sequences sequences from c.Seed,
// c.Parallel at a time; then, if none failed, the race phase
// (gatherRaces), within c.RaceBudget.
func Run(ctx context.Context, name string, c Config, dir string) (*report.Result, *report.Exploration) {
	res := &report.Result{Name: name}
	rep := &report.Exploration{Seed: c.Seed, Sequences: c.Sequences, Outcomes: map[string]int{}, Provoked: map[string]int{}}
	if reason := c.Target.Skip(&suite.Script{Name: name, OwnFixture: true}); reason != "" {
		res.Status, res.Reason = report.Skip, "stateful exploration "+reason
		return res, rep
	}
	if stale := StaleCitations(c.Index.Spec); len(stale) > 0 {
		res.Status, res.Reason = report.Skip, "the exploration model cites sentences the pages do not have, so it no longer follows them: "+strings.Join(stale, ", ")
		return res, rep
	}
	e := &explorer{c: &c, dir: dir}
	seqs, runs, tally, budgetOut := e.runSequences(ctx, name, rep)
	rep.Races = tally.counts()
	rep.RaceK, rep.RaceP, rep.RaceBudget = RaceK, RaceP, c.RaceBudget.String()
	var log strings.Builder
	failedSeqs := e.sumUp(ctx, name, seqs, runs, res, rep, &log)
	e.judge(res, rep, failedSeqs, &log)
	if budgetOut {
		fmt.Fprintf(&log, "the race budget (%s) ran out with %d race classes short of %d overlapping groups\n", c.RaceBudget, len(tally.short(RaceK, e.across())), RaceK)
	}
	res.Log = log.String()
	return res, rep
}

// runSequences generates the run's sequences (those of its scope's
// tools) and runs them; then, if none failed, the race phase, whose
// sequences and runs follow theirs, its rounds in rep. tally counts the
// concurrent groups of both; budgetOut is true when the race budget ran
// out before every class had its groups.
func (e *explorer) runSequences(ctx context.Context, name string, rep *report.Exploration) (seqs []*exploreSequence, runs []*exploreRun, tally raceTally, budgetOut bool) {
	c := e.c
	seqs = make([]*exploreSequence, c.Sequences)
	for i := range seqs {
		seqs[i] = genSequence(c.Seed, i)
		seqs[i].cmds = inScope(seqs[i].cmds, c.Tools)
	}
	runs, failed := e.runAll(ctx, name, seqs, c.Parallel)
	tally = raceTally{}
	for _, x := range runs {
		if x != nil {
			tally.merge(x.races)
		}
	}
	if !failed {
		var more []*exploreSequence
		var moreRuns []*exploreRun
		more, moreRuns, rep.RaceRounds, budgetOut = e.gatherRaces(ctx, name, tally)
		seqs, runs = append(seqs, more...), append(runs, moreRuns...)
	}
	return seqs, runs, tally, budgetOut
}

// sumUp adds up into res and rep what each of runs (of seqs) did: the
// sequences, calls and groups, the refusals provoked and the outcomes;
// it writes a server that did not start to log and shrinks the first
// failures, one per rule broken. It returns how many sequences failed.
func (e *explorer) sumUp(ctx context.Context, name string, seqs []*exploreSequence, runs []*exploreRun, res *report.Result, rep *report.Exploration, log io.Writer) (failedSeqs int) {
	seen := map[string]bool{}
	rep.Sequences = 0
	for i, x := range runs {
		if x == nil {
			continue // not run: an earlier sequence failed (ExploreFailFast)
		}
		if i < e.c.Sequences {
			rep.Sequences++
		} else {
			rep.RaceSequences++
		}
		x.count(res, rep)
		if x.startEr != nil {
			res.Status = report.Fail
			fmt.Fprintf(log, "sequence %d: starting the server: %v\n", i, x.startEr)
			continue
		}
		if x.failAt < 0 {
			continue
		}
		failedSeqs++
		if seen[x.source()] || len(rep.Failures) >= maxFailures || e.c.FailFast && len(rep.Failures) > 0 {
			continue
		}
		seen[x.source()] = true
		rep.Failures = append(rep.Failures, e.failure(ctx, fmt.Sprintf("%s.%d", name, i), seqs[i], x, log))
	}
	return failedSeqs
}

// count adds x's calls (each replica's), groups, refusals provoked and
// outcomes to res and rep, and its successes to res's, by tool.
func (x *exploreRun) count(res *report.Result, rep *report.Exploration) {
	rep.Calls += x.calls
	res.Checks += x.calls
	for r, n := range x.replicaCalls {
		if res.ReplicaCalls == nil {
			res.ReplicaCalls = make([]int, len(x.replicaCalls))
		}
		res.ReplicaCalls[r] += n
	}
	rep.Groups += x.groups
	rep.GroupCalls += x.groupCalls
	rep.Unknown += x.unknown
	for _, k := range x.provoked {
		rep.Provoked[k]++
	}
	for _, k := range x.outcomes {
		rep.Outcomes[k]++
		if tool, ok := strings.CutSuffix(k, " ok"); ok {
			if res.Succeeded == nil {
				res.Succeeded = map[string]int{}
			}
			res.Succeeded[tool]++
		}
	}
}

// judge sets exploration's outcome: failed when failedSeqs sequences
// broke the model (each failure reported to log with its shrunk script),
// skipped when a concurrent group could not be checked, else passed
// (unless a server did not start).
func (e *explorer) judge(res *report.Result, rep *report.Exploration, failedSeqs int, log io.Writer) {
	if failedSeqs > 0 {
		res.Status = report.Fail
		res.Reason = fmt.Sprintf("%d of %d sequences broke the model (seed %d)", failedSeqs, rep.Sequences, e.c.Seed)
		for _, f := range rep.Failures {
			if f.Script == "" { // not reproduced alone: nothing shrank
				fmt.Fprintf(log, "sequence %d: %s [%s]\n", f.Sequence, suite.OneLine(f.Message), f.Source)
				continue
			}
			fmt.Fprintf(log, "sequence %d: %s [%s]\nshrunk from %d to %d calls", f.Sequence, suite.OneLine(f.Message), f.Source, f.Original, f.Calls)
			if f.Saved != "" {
				fmt.Fprintf(log, ", saved as %s", f.Saved)
			}
			fmt.Fprintf(log, ":\n%s\n", suite.Indent(f.Script))
		}
	}
	if res.Status == "" && rep.Unknown > 0 {
		// Unknown is never a pass: the run cannot certify.
		res.Status = report.Skip
		res.Reason = fmt.Sprintf("%d of %d concurrent groups could not be checked for linearizability within the search budget (unknown, not a pass)", rep.Unknown, rep.Groups)
	}
	if res.Status == "" {
		res.Status = report.Pass
	}
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

// failure is the failure x of sequence seq, as reported: one found beside
// other sequences runs alone first, and what it does alone is reported;
// it shrinks to a script, saved to the SaveDir if there is one (an error
// saving goes to log).
func (e *explorer) failure(ctx context.Context, name string, seq *exploreSequence, x *exploreRun, log io.Writer) *report.ExploreFailure {
	i := seq.index
	var w *world.World
	var cmds []*command
	var best *exploreRun
	if x.shared != "" {
		// Found beside other sequences: what it does alone is what
		// shrinks and what is reported. A race may need several runs
		// to show again, as in a shrink.
		var alone *exploreRun
		for range 2 * retriesOf(seq.cmds) {
			if alone = e.run(ctx, name, seq.world, seq.cmds); alone.failAt >= 0 {
				break
			}
		}
		switch {
		case alone.failAt >= 0:
			x = alone
		case x.racing():
			// A race that did not show again alone: it is kept as found,
			// its part of the batch's world for its fixture, unshrunk;
			// the script's tries give it its chances.
			w, cmds = renamed(seq.world, seq.cmds, partPrefix(seq.index))
			cmds, best = cmds[:x.failAt+1], x
		default:
			return interference(i, x)
		}
	}
	done := "shrunk from"
	if best == nil {
		w, cmds, best = e.shrink(ctx, name, seq.world, seq.cmds, x)
	} else {
		done = "a race found beside other sequences, not shown again alone, so not shrunk from"
	}
	header := []string{
		fmt.Sprintf("Stateful exploration (profile %s, seed %d, sequence %d): %d calls, %s %d.", e.c.Profile, e.c.Seed, i, len(cmds), done, x.failAt+1),
		fmt.Sprintf("Run it again: with this file in DIR, prickle-conformance --profile %s --scripts DIR --run '^%s$' --server-cmd ...", e.c.Profile, regexp.QuoteMeta(fmt.Sprintf("explore-%d-%d", e.c.Seed, i))),
		"Fails: " + suite.OneLine(best.fails[0].msg) + " [" + best.source() + "]",
	}
	f := &report.ExploreFailure{Sequence: i, Source: best.source(), Message: best.fails[0].msg, Calls: len(cmds), Original: x.failAt + 1,
		Script: renderScript(header, withTries(w, ScriptTries), best, e.c.Profile, e.c.Replicas)}
	if e.c.SaveDir != "" {
		file := filepath.Join(e.c.SaveDir, fmt.Sprintf("explore-%d-%d.txtar", e.c.Seed, i))
		err := os.MkdirAll(e.c.SaveDir, 0o755)
		if err == nil {
			err = fsx.WriteFileAtomic(file, []byte(f.Script), 0o644)
		}
		if err == nil {
			f.Saved = file
		} else {
			fmt.Fprintf(log, "--save: %v\n", err)
		}
	}
	return f
}

// inScope drops the calls of tools outside scope (none without one), and
// the calls that use their credentials.
func inScope(cmds []*command, scope []string) []*command {
	if len(scope) == 0 {
		return cmds
	}
	del := map[int]bool{}
	for i, c := range cmds {
		if !slices.Contains(scope, c.tool) {
			del[i] = true
		}
	}
	return removeSteps(cmds, del)
}
