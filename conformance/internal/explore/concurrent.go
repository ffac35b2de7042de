package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/spec/world"
)

// Concurrent exploration: after its calls one at a time, a sequence races
// calls on a part of the world of its own (tasks and turns no earlier
// call touched), sent at once from separate sessions and connections:
//
//   - claims of one task: same-key retries (a replay racing the first
//     claim), different keys, the runners of one agent against each other;
//   - claims of one message's discussion, the same way;
//   - an execution credential's use racing the replay that replaces it,
//     and its use after.
//
// Each race runs Tries times, on a fresh copy of its part of the world
// each time (schedules vary; a race may need several tries to show). The
// answers are checked for linearizability (linearize.go).

// Tries is how many times a race runs in a sequence.
const Tries = 3

// ScriptTries is how many times a saved race runs: a saved script is
// run on its own, so it can afford more tries than a sequence, and a
// race shrunk to two or three calls may need them to show again.
const ScriptTries = 50

// raceSalt separates the races' random stream from the sequence's, so
// that the calls one at a time, and what they find, are what they were
// before races were added.
const raceSalt = 0x7261636573

// racePrefix leads every id and key of a race's world part: the shrinker
// keeps these entities, and a saved race's tries name theirs by try.
const racePrefix = "race-"

// tryVar is what a saved race writes in place of its try number.
const tryVar = "${TRY}"

// raceID is the part of race r's ids and keys that names try t.
func raceID(r, t int) string { return fmt.Sprintf("%s%d-%d-", racePrefix, r, t) }

// addRaces appends one race to seq, tries times: its world part and its
// calls, drawn from a stream of their own. The race is of class, or of
// the class of seq's index if class is "". Its groups have size calls each, or a
// size drawn if size is 0 (only the overlap measurements set one).
func addRaces(seed int64, seq *exploreSequence, class RaceClass, tries, size int) {
	g := newRaceGen(seed, seq, class, size)
	if g == nil {
		return
	}
	for t := 1; t <= tries; t++ {
		switch g.class {
		case TaskSameKey, TaskDifferentKeys, TaskMixedKeys:
			g.claimTask(t)
		case Discussion:
			g.claimDiscussion(t)
		case CredentialReplay:
			g.credentialReplay(t)
		}
		g.group++
	}
}

// theRace is the number of a sequence's one race, in its ids and keys
// (raceID).
const theRace = 1

// raceGen generates a sequence's race (addRaces): who races, on what,
// with which keys, and the calls of each try.
type raceGen struct {
	seq   *exploreSequence
	class RaceClass
	// agent, of owner, races with its runners, the callers of a group's
	// calls in order, in project.
	agent, owner, project string
	runners               []string
	callers               []principal
	// n is the calls of a group; keyMode how their keys go (0 all one, 1
	// all different, 2 a mix); group the group number of the next try.
	n, keyMode, group int
}

// newRaceGen draws the race of class (the class of seq's index if "")
// from the race stream of seed and seq, in a fixed order so that a seed
// gives the same race; nil if no agent of seq's world can race (no
// runner, or no project).
func newRaceGen(seed int64, seq *exploreSequence, class RaceClass, size int) *raceGen {
	r := rand.New(rand.NewPCG(uint64(seed)^raceSalt, uint64(seq.index)))
	w := seq.world
	runnersOf := map[string][]string{}
	for _, x := range w.Runners {
		runnersOf[x.Agent] = append(runnersOf[x.Agent], x.ID)
	}
	var agents []string
	for _, a := range w.Agents {
		if len(runnersOf[a.ID]) > 0 && len(projectsOf(w, ownerOf(a.ID))) > 0 {
			agents = append(agents, a.ID)
		}
	}
	if len(agents) == 0 {
		return nil
	}
	g := &raceGen{seq: seq, class: class}
	g.agent = agents[r.IntN(len(agents))]
	g.owner = ownerOf(g.agent)
	projects := projectsOf(w, g.owner)
	g.project = projects[r.IntN(len(projects))]
	g.runners = runnersOf[g.agent]
	g.group = 1 + slices.MaxFunc(append([]*command{{}}, seq.cmds...), func(a, b *command) int { return a.group - b.group }).group
	// A sequence races the class of its index, in turn: a run of S
	// sequences races each class in S/len(RaceClasses) of them whatever
	// its seed, so no class's evidence is left to the draws (the race
	// phase only makes up for groups that did not overlap).
	_ = r.IntN(len(RaceClasses)) // the class once drawn: the stream stays as it was
	if g.class == "" {
		g.class = RaceClasses[seq.index%len(RaceClasses)]
	}
	// Larger groups show a race more often: the larger of two draws.
	g.n = 2 + max(r.IntN(maxGroup-1), r.IntN(maxGroup-1))
	if size > 0 {
		g.n = size
	}
	// keys: all one (same-key retries), all different, or a mix, which
	// races both a key's replays and the other keys; a discussion's
	// claims most often mix them.
	g.keyMode = [5]int{0, 1, 2, 2, 2}[r.IntN(5)]
	switch g.class {
	case TaskSameKey:
		g.keyMode = 0
	case TaskDifferentKeys:
		g.keyMode = 1
	case TaskMixedKeys:
		g.keyMode = 2
	}
	g.callers = make([]principal, g.n)
	for i := range g.callers {
		if i == 0 || r.IntN(3) > 0 {
			g.callers[i] = principal{kind: "runner", id: g.runners[0]}
		} else {
			g.callers[i] = principal{kind: "runner", id: g.runners[r.IntN(len(g.runners))]}
		}
	}
	return g
}

// key is the idempotency key of call i of try t.
func (g *raceGen) key(t, i int) string {
	switch g.keyMode {
	case 0:
		return raceID(theRace, t) + "k"
	case 1:
		return fmt.Sprintf("%sk%d", raceID(theRace, t), i)
	}
	return fmt.Sprintf("%sk%d", raceID(theRace, t), i%2)
}

// add appends c to the sequence, of the race's class if it is of a group.
func (g *raceGen) add(c *command) {
	if c.group != 0 {
		c.class = g.class
	}
	g.seq.cmds = append(g.seq.cmds, c)
}

// claimTask is try t of a race of claims of one task: a task of its own,
// claimed by the group's calls.
func (g *raceGen) claimTask(t int) {
	task := raceID(theRace, t) + "task"
	g.seq.world.Tasks = append(g.seq.world.Tasks, world.Task{ID: task, Project: g.project, Agent: g.agent})
	for i := range g.n {
		g.add(&command{p: g.callers[i], tool: "claim_task", group: g.group,
			args: map[string]any{"task_id": task, "idempotency_key": g.key(t, i)}})
	}
}

// claimDiscussion is try t of a race of claims of one message's
// discussion: a message of its own in the owner's private room, and its
// turn, claimed by the group's calls.
func (g *raceGen) claimDiscussion(t int) {
	w := g.seq.world
	room := privateRoom(w, g.owner, g.project)
	msg := raceID(theRace, t) + "message"
	w.Messages = append(w.Messages, world.Message{ID: msg, Room: room, Kind: "room_message", Author: g.owner, Body: "race"})
	w.Turns = append(w.Turns, world.Turn{Message: msg, Agents: []world.TurnAgent{{Agent: g.agent}}})
	for i := range g.n {
		g.add(&command{p: g.callers[i], tool: "claim_discussion", group: g.group,
			args: map[string]any{"message_id": msg, "idempotency_key": g.key(t, i), "harness": 2}})
	}
}

// credentialReplay is try t of a race of an execution credential's use
// with the replay of its claim that replaces it, and its use after.
func (g *raceGen) credentialReplay(t int) {
	id := raceID(theRace, t)
	task := id + "task"
	g.seq.world.Tasks = append(g.seq.world.Tasks, world.Task{ID: task, Project: g.project, Agent: g.agent})
	claim := &command{p: g.callers[0], tool: "claim_task", args: map[string]any{"task_id": task, "idempotency_key": id + "k"}}
	g.add(claim)
	cred := principal{kind: "cred", step: len(g.seq.cmds) - 1}
	use := func() *command {
		return &command{p: cred, tool: "discover_team_agents", args: map[string]any{"project": g.project}}
	}
	for i := range g.n {
		c := use()
		if i%2 == 1 || i == g.n-1 {
			c = &command{p: claim.p, tool: "claim_task", args: claim.args}
		}
		c.group = g.group
		g.add(c)
	}
	g.add(use())
}

// projectsOf are the projects person belongs to, in the world's order.
func projectsOf(w *world.World, person string) []string {
	var out []string
	for _, m := range w.Memberships {
		if m.Person == person {
			out = append(out, m.Project)
		}
	}
	return out
}

// privateRoom is a private room of owner in project, added if there is
// none.
func privateRoom(w *world.World, owner, project string) string {
	for _, r := range w.Rooms {
		if r.Kind == "private" && r.Owner != nil && *r.Owner == owner && r.Project == project {
			return r.ID
		}
	}
	id := racePrefix + owner + "-" + project
	w.Rooms = append(w.Rooms, world.Room{ID: id, Project: project, Kind: "private", Owner: ptr(owner)})
	return id
}

// groupEnd is the end of the group that starts at xs[i], where group
// numbers each x's group: one past its last (an x outside any group, 0,
// is a group of one).
func groupEnd[T any](xs []T, i int, group func(T) int) int {
	j := i + 1
	for group(xs[i]) != 0 && j < len(xs) && group(xs[j]) == group(xs[i]) {
		j++
	}
	return j
}

func cmdGroup(c *command) int { return c.group }

// resolveIn resolves p in model state m: a credential by its token, since
// every state has its own copy.
func resolveIn(m *model, p principal, steps []*stepRun) (caller, bool) {
	c, ok := m.resolve(p, steps)
	if !ok || c.cred == nil {
		return c, ok
	}
	cred := m.creds[c.cred.token]
	if cred == nil {
		return caller{}, false
	}
	return caller{kind: cred.kind, agent: cred.agent, owner: cred.owner, cred: cred}, true
}

// partsOf are the parts of the model cmd's call reads or writes: its
// task or message, and those of the claim that gave its credential; ""
// for a call that reads only the world.
func partsOf(cmd *command, steps []*stepRun) []string {
	var out []string
	switch cmd.tool {
	case "claim_task":
		out = append(out, "task "+fmt.Sprint(cmd.args["task_id"]))
	case "claim_discussion":
		out = append(out, "message "+fmt.Sprint(cmd.args["message_id"]))
	}
	if cmd.p.kind == "cred" && cmd.p.step < len(steps) {
		out = append(out, partsOf(steps[cmd.p.step].cmd, steps)...)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// history checks groups of calls for linearizability, part by part: the
// model's state is a product of parts (a task's attempts, a message's
// claims, the credentials they gave), a call reads and writes only its
// parts, so each part's calls are checked on their own from the state
// before the groups, as porcupine's Partition does. A group whose calls
// span two parts that diverged apart (each left by a group of its own) is
// unknown.
type history struct {
	base  *model
	parts map[string][]*model
}

func newHistory(m *model) *history { return &history{base: m, parts: map[string][]*model{}} }

// check judges ops, one group, and reports the search.
func (h *history) check(ops []*op, steps []*stepRun) *searchResult {
	var ps []string
	for _, o := range ops {
		ps = append(ps, partsOf(o.st.cmd, steps)...)
	}
	slices.Sort(ps)
	ps = slices.Compact(ps)
	states := []*model{h.base}
	touched := 0
	for _, p := range ps {
		if s, ok := h.parts[p]; ok {
			// Parts one group left share its states: one part.
			if touched == 0 || !sameStates(s, states) {
				touched++
			}
			states = s
		}
	}
	if touched > 1 {
		return &searchResult{unknown: true}
	}
	sc := scope{}
	for _, p := range ps {
		sc[p] = true
	}
	if sc[""] {
		sc = nil // a call outside the parts: the whole model
	}
	scoped := make([]*model, len(states))
	for i, s := range states {
		c := *s
		c.scope = sc
		scoped[i] = &c
	}
	res := linearize(scoped, ops)
	if len(res.states) > 0 && !res.unknown {
		for _, p := range ps {
			h.parts[p] = res.states
		}
		for _, o := range ops {
			o.st.cred = issuedCred(res.states[0], o.st.ans)
		}
	}
	return res
}

// sameStates reports whether a and b are the states one check left.
func sameStates(a, b []*model) bool { return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0] }

// judgeIn judges st's answer in state m.
func judgeIn(m *model, st *stepRun, steps []*stepRun) []failure {
	c, ok := resolveIn(m, st.cmd.p, steps)
	if !ok {
		return nil
	}
	st.exp = m.expect(st.cmd, c)
	return m.judge(st.exp, st.ans)
}

// runGroups runs cmds[from:] on inst, group after group, checking each
// group's answers for linearizability from every state the earlier ones
// can have left (m, after the calls one at a time).
func (e *explorer) runGroups(ctx context.Context, inst *suite.Instance, x *exploreRun, m *model, cmds []*command, from int) {
	h := newHistory(m)
	seq := replicaClients(inst)
	defer closeAll(seq)
	// The clients of concurrent calls, one per place in a group (its
	// slot), each with connections of its own to its replica; their
	// sessions serve every try.
	pool := map[int]*wire.Client{}
	defer func() {
		for _, c := range pool {
			c.Close()
		}
	}()
	for i := from; i < len(cmds); {
		j := groupEnd(cmds, i, cmdGroup)
		var ops []*op
		var tokens []string
		for k := i; k < j; k++ {
			st := &stepRun{cmd: cmds[k]}
			x.steps = append(x.steps, st)
			c, ok := m.resolve(cmds[k].p, x.steps)
			token := ""
			if ok {
				token, ok = principalToken(inst.Tokens, c, cmds[k].p)
			}
			if !ok {
				st.skipped = true
				continue
			}
			ops = append(ops, &op{st: st, step: k})
			tokens = append(tokens, token)
		}
		if len(ops) == 0 {
			i = j
			continue
		}
		overlapped, cross, err := e.send(ctx, inst, x, seq, pool, ops, tokens)
		if cmds[i].group != 0 {
			x.groups++
			x.groupCalls += len(ops)
			x.races.add(cmds[i].class, 1, b2i(overlapped && err == nil), b2i(overlapped && cross && err == nil))
		}
		x.calls += len(ops)
		if err != nil {
			x.failAt, x.fails = j-1, []failure{{src: srcWire, msg: err.Error()}}
			return
		}
		for _, o := range ops {
			x.outcomes = append(x.outcomes, outcomeKey(o.st.cmd.tool, o.st.ans)+inARace)
			if o.wire != nil {
				x.failAt, x.fails = j-1, o.wire
				return
			}
			o.judge = func(mm *model) []failure { return judgeIn(mm, o.st, x.steps) }
		}
		if e.mode.noCheck {
			i = j
			continue
		}
		res := h.check(ops, x.steps)
		switch {
		case res.unknown:
			x.unknown++
			return // the states after it are not known: nothing more can be judged
		case len(res.states) == 0:
			x.failAt, x.fails = j-1, groupFailure(ops, res)
			return
		}
		for n, k := range res.order {
			ops[k].st.place = n + 1
		}
		i = j
	}
}

// groupFailure says how a group's answers broke the model: what the call
// after the longest order the model accepted broke.
func groupFailure(ops []*op, res *searchResult) []failure {
	if len(ops) == 1 {
		return res.fails
	}
	var steps []string
	for _, i := range res.deepest {
		steps = append(steps, fmt.Sprint(ops[i].st.ans.step))
	}
	fs := slices.Clone(res.fails)
	fs[0].msg = fmt.Sprintf("no order of the %d calls sent at once explains their answers (the longest order the model accepts a part of: steps %s): %s",
		len(ops), strings.Join(steps, ", "), fs[0].msg)
	return fs
}

// send makes the calls of ops, one group: a lone call on its replica's
// client of seq; two or more at once (wire.SendAtOnce), each from a
// session of its own (the clients of pool, by slot) on its replica.
// overlapped says whether the calls were all on the wire at once
// (wire.Overlapped): a lone call never is; cross whether they went to two
// replicas or more.
func (e *explorer) send(ctx context.Context, inst *suite.Instance, x *exploreRun, seq []*wire.Client, pool map[int]*wire.Client, ops []*op, tokens []string) (overlapped, cross bool, err error) {
	endpoints := inst.Endpoints()
	replica := func(o *op) int { return o.st.cmd.slot % len(endpoints) }
	if len(ops) == 1 {
		r := replica(ops[0])
		a, wf, err := e.callTool(ctx, seq[r], tokens[0], ops[0].st.cmd, ops[0].step)
		x.answered(r, len(endpoints), err)
		ops[0].st.ans, ops[0].wire = a, wf
		return false, false, err
	}
	calls := make([]*wire.AtOnce, len(ops))
	reached := map[int]bool{}
	for i, o := range ops {
		r := replica(o)
		reached[r] = true
		cl := pool[o.st.cmd.slot]
		if cl == nil {
			cl = wire.NewClient(endpoints[r], &http.Client{Transport: &http.Transport{DisableKeepAlives: e.mode.noKeepAlive}, Timeout: e.c.Timeout})
			pool[o.st.cmd.slot] = cl
		}
		calls[i] = &wire.AtOnce{Client: cl, Token: tokens[i], Tool: o.st.cmd.tool, Args: o.st.cmd.argsJSON()}
		if e.mode.cold {
			calls[i].Client = wire.NewClient(endpoints[r], &http.Client{Transport: &http.Transport{}, Timeout: e.c.Timeout})
			defer calls[i].Client.Close()
		}
	}
	if e.mode.cold {
		wire.SendCold(ctx, calls)
	} else {
		wire.SendAtOnce(ctx, calls)
	}
	var first error
	for i, o := range ops {
		a := &answer{step: o.step, start: calls[i].Start, end: calls[i].End}
		var err error
		o.st.ans, o.wire, err = e.judgeWire(a, o.st.cmd, calls[i].Args, calls[i].Resp, calls[i].Err)
		x.answered(replica(o), len(endpoints), err)
		if err != nil && first == nil {
			first = fmt.Errorf("%s: %w", o.st.cmd.tool, err)
		}
	}
	return wire.Overlapped(calls), len(reached) >= 2, first
}

// sendMode varies how groups are sent, for the overlap measurements of
// conformance/README.md (overlap_test.go); its zero value is exploration's
// way.
type sendMode struct {
	noKeepAlive bool // a connection of its own for every request
	cold        bool // a client of its own per call, its session opened after the barrier
	noCheck     bool // count overlap only, no linearizability check (groups past maxGroup)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func init() { script.Linearize = checkHistory }

// checkHistory is script.Linearize: a script's calls, judged group after
// group as exploration judges its own.
func checkHistory(h *script.History) (unknown bool, err error) {
	m := newModel(h.World, h.Profile, h.Now, h.Tokens)
	hist := newHistory(m)
	var steps []*stepRun
	grouped := false // a group has been checked: the model may have diverged
	for i := 0; i < len(h.Calls); {
		j := groupEnd(h.Calls, i, func(c *script.HistoryCall) int { return c.Group })
		grouped = grouped || h.Calls[i].Group != 0
		var ops []*op
		for k := i; k < j; k++ {
			hc := h.Calls[k]
			st := &stepRun{cmd: &command{p: principalOf(h.Tokens, steps, hc.Token), tool: hc.Tool, args: hc.Args, group: hc.Group}, ans: answerOf(hc, k)}
			steps = append(steps, st)
			if _, ok := m.resolve(st.cmd.p, steps); !ok {
				st.skipped = true
				continue
			}
			if !grouped {
				// Before the first group, one model judges the calls in
				// turn, as exploration did: parts matter only once
				// states diverge.
				if fs := judgeIn(m, st, steps); len(fs) > 0 {
					return false, fmt.Errorf("call %d (%s): %s [%s]", k+1, hc.Tool, fs[0].msg, fs[0].src)
				}
				st.cred = issuedCred(m, st.ans)
				continue
			}
			o := &op{st: st, step: k}
			o.judge = func(mm *model) []failure { return judgeIn(mm, o.st, steps) }
			ops = append(ops, o)
		}
		if len(ops) > 0 {
			res := hist.check(ops, steps)
			switch {
			case res.unknown:
				return true, nil
			case len(res.states) == 0:
				f := groupFailure(ops, res)[0]
				return false, fmt.Errorf("call %d (%s): %s [%s]", j, h.Calls[j-1].Tool, f.msg, f.src)
			}
		}
		i = j
	}
	return false, nil
}

// principalOf is who called with token: an agent or runner of the world,
// the credential an earlier answer gave, no one, or a stranger.
func principalOf(tokens []world.Token, steps []*stepRun, token string) principal {
	if token == "" {
		return principal{kind: "none"}
	}
	for _, t := range tokens {
		if t.Token != token {
			continue
		}
		if t.Kind == world.KindRunner {
			return principal{kind: "runner", id: t.Runner}
		}
		return principal{kind: "agent", id: t.Agent}
	}
	for i, st := range steps {
		if st.cred != nil && st.cred.token == token {
			return principal{kind: "cred", step: i}
		}
	}
	return principal{kind: "bogus"}
}

// answerOf is a script's call as the model judges it.
func answerOf(hc *script.HistoryCall, step int) *answer {
	r := hc.Answer
	a := &answer{step: step, start: hc.Start, end: hc.End, protoErr: r.ProtoErr, refused: r.IsError, code: r.Code, text: r.Text}
	if r.ProtoErr == nil && r.Structured != nil && !r.IsError {
		_ = json.Unmarshal(r.Structured, &a.structured)
	}
	return a
}

var raceIDRe = regexp.MustCompile(`\b(race-[0-9]+-)[0-9]+-`)

// groupLines are the script lines of step i of x if it is one of a
// concurrent group (ok): a `race` line, and after the group's last call
// `concurrently`, which runs it Tries times. A group that uses no
// credential runs each try on its own copy of its world part (${TRY} in
// its ids), as exploration did; against replicas, each call names the
// replica it went to.
func groupLines(x *exploreRun, i, replicas int) (lines []string, ok bool) {
	st := x.steps[i]
	g := st.cmd.group
	if g == 0 {
		return nil, false
	}
	first := i
	for first > 0 && x.steps[first-1].cmd.group == g {
		first--
	}
	last := i
	for last+1 < len(x.steps) && x.steps[last+1].cmd.group == g {
		last++
	}
	perTry := true
	for _, s := range x.steps[first : last+1] {
		if s.cmd.p.kind == "cred" {
			perTry = false
		}
	}
	if !st.skipped {
		args := script.Quote(script.JSON(st.cmd.args))
		if perTry {
			args = raceIDRe.ReplaceAllString(args, "${1}$$"+tryVar[1:]+"-")
		}
		lines = append(lines, fmt.Sprintf("race -as %s%s %s %s", renderPrincipal(st.cmd.p), onReplica(st.cmd, replicas), st.cmd.tool, args))
	}
	if i == last {
		lines = append(lines, fmt.Sprintf("concurrently -tries %d", ScriptTries))
		if last == x.failAt {
			for _, f := range x.fails {
				lines = append(lines, "# fails: "+suite.OneLine(f.msg)+" ["+f.src+"]")
			}
		}
	}
	return lines, true
}

// retriesOf is how many runs a shrink gives a candidate: several if it
// races.
func retriesOf(cmds []*command) int {
	if slices.ContainsFunc(cmds, func(c *command) bool { return c.group != 0 }) {
		return Tries
	}
	return 1
}

// isRaceEntity reports whether the i-th entity of kind in w is part of a
// race's world.
func isRaceEntity(w *world.World, kind string, i int) bool {
	id := ""
	switch kind {
	case "task":
		id = w.Tasks[i].ID
	case "turn":
		id = w.Turns[i].Message
	case "message":
		id = w.Messages[i].ID
	}
	return strings.HasPrefix(id, racePrefix)
}

// withTries is w with a copy of every race's world part for each try up
// to n (a saved race runs n tries), made from its first try's.
func withTries(w *world.World, n int) *world.World {
	c := w.Clone()
	has := map[string]bool{}
	for _, t := range c.Tasks {
		has[t.ID] = true
	}
	for _, m := range c.Messages {
		has[m.ID] = true
	}
	rename := func(id string, t int) (string, bool) {
		loc := raceIDRe.FindStringSubmatchIndex(id)
		if loc == nil || id[loc[3]:loc[1]] != "1-" {
			return "", false
		}
		return fmt.Sprintf("%s%d-%s", id[:loc[3]], t, id[loc[1]:]), true
	}
	for t := 2; t <= n; t++ {
		for _, x := range w.Tasks {
			if id, ok := rename(x.ID, t); ok && !has[id] {
				x.ID = id
				c.Tasks = append(c.Tasks, x)
			}
		}
		for _, x := range w.Messages {
			if id, ok := rename(x.ID, t); ok && !has[id] {
				x.ID = id
				c.Messages = append(c.Messages, x)
			}
		}
		for _, x := range w.Turns {
			if id, ok := rename(x.Message, t); ok && !has[id] {
				x.Message = id
				x.Agents = slices.Clone(x.Agents)
				c.Turns = append(c.Turns, x)
			}
		}
	}
	return c
}

// wholeGroups widens del to every call of a concurrent group it has one
// of: a shrink drops a group whole, since fewer racing calls show a race
// less often.
func wholeGroups(cmds []*command, del map[int]bool) {
	groups := map[int]bool{}
	for i := range del {
		if i < len(cmds) && cmds[i].group != 0 {
			groups[cmds[i].group] = true
		}
	}
	for i, c := range cmds {
		if groups[c.group] {
			del[i] = true
		}
	}
}
