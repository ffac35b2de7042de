package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/prickle-dev/prickle/spec/world"
)

// Generating a sequence: the calls of many principals on one world, each
// tool's own generator (claim_task.go, ...) making its calls, mixing fresh
// idempotency keys with the world's and the sequence's earlier ones.

// generator makes the calls of one sequence on world w, drawing from r.
type generator struct {
	r *rand.Rand
	w *world.World
	// runners and agents are every runner's and agent's id; runnersOf the
	// runners of each agent.
	runners, agents []string
	runnersOf       map[string][]string
	// requests, mentions and others are the messages by kind.
	requests, mentions, others []string
	// taskKeys and discKeys are the keys used per (runner, task) and
	// (runner, message): the world's first, then the sequence's.
	taskKeys, discKeys map[[2]string][]string
	// keysOf are every key each runner used, on any task or message: a key
	// is tried again across the scopes it is not meant to cross.
	keysOf map[string][]string
	// stale are the world's claims that a new key would supersede:
	// expired and unreplied.
	stale []world.DiscussionClaim
	// out is the sequence so far; claimSteps are its claims, whose
	// credentials later steps may call with.
	out        []*command
	claimSteps []int
	// nextProbe is the place in the list of probes of the next probe's
	// first try (refusals.go); probes the places of those drawn.
	nextProbe int
	probes    []int
}

func newGenerator(r *rand.Rand, w *world.World) *generator {
	g := &generator{r: r, w: w, runnersOf: map[string][]string{}, taskKeys: map[[2]string][]string{}, discKeys: map[[2]string][]string{}, keysOf: map[string][]string{}}
	for _, x := range w.Runners {
		g.runners = append(g.runners, x.ID)
		g.runnersOf[x.Agent] = append(g.runnersOf[x.Agent], x.ID)
	}
	for _, a := range w.Agents {
		g.agents = append(g.agents, a.ID)
	}
	for _, m := range w.Messages {
		switch {
		case m.Kind == "task_request":
			g.requests = append(g.requests, m.ID)
		case m.Kind == "mention":
			g.mentions = append(g.mentions, m.ID)
		default:
			g.others = append(g.others, m.ID)
		}
	}
	for _, a := range w.Attempts {
		k := [2]string{a.Runner, a.Task}
		g.taskKeys[k] = append(g.taskKeys[k], a.IdempotencyKey)
		g.keysOf[a.Runner] = append(g.keysOf[a.Runner], a.IdempotencyKey)
	}
	for _, c := range w.DiscussionClaims {
		k := [2]string{c.Runner, c.Message}
		g.discKeys[k] = append(g.discKeys[k], c.IdempotencyKey)
		g.keysOf[c.Runner] = append(g.keysOf[c.Runner], c.IdempotencyKey)
	}
	for _, c := range w.DiscussionClaims {
		if !isTrue(c.ReplyPosted) && c.ReplyMessage == nil && strings.HasPrefix(string(c.LiveUntil), "now-") {
			g.stale = append(g.stale, c)
		}
	}
	return g
}

// genCommands generates n calls for world w.
func genCommands(r *rand.Rand, w *world.World, n, index int) ([]*command, []int) {
	g := newGenerator(r, w)
	// Sequence index's probes start at its place in the list, and each
	// sequence probes at least once: a run of S sequences aims a probe at
	// each situation at least S/len(probes) times, whatever its seed.
	g.nextProbe = index
	for i := 0; len(g.out) < n; i++ {
		var c *command
		switch x := r.IntN(100); {
		case x < 10 && len(g.out) > 0: // the same call again
			prev := g.out[r.IntN(len(g.out))]
			c = &command{p: prev.p, tool: prev.tool, args: prev.args}
		case x < 14 && len(g.stale) > 0 && len(g.out) < n-1:
			c = g.claimAfterExpiry(i)
		case x < 19 && len(g.out) < n-3:
			c = g.replacement(i)
		case x < 24 && len(g.out) < n-2:
			c = g.keyElsewhere(i)
		case x < 44 && len(g.out) < n-1:
			c = g.probe(i)
		case x < 56:
			c = g.claimTask(i)
		case x < 82:
			c = g.claimDiscussion(i)
		default:
			c = g.discover(n)
		}
		if len(g.probes) == 0 && len(g.out) >= n-2 {
			c = g.probe(i)
		}
		if c.p.kind == "runner" && c.p.id == "none-such" {
			c.p = principal{kind: "agent", id: g.pick(g.agents)}
		}
		if strings.HasPrefix(c.tool, "claim_") {
			g.claimSteps = append(g.claimSteps, len(g.out))
		}
		g.out = append(g.out, c)
	}
	return g.out, g.probes
}

// pick returns one of xs, or an id nothing has when there is none.
func (g *generator) pick(xs []string) string {
	if len(xs) == 0 {
		return "none-such"
	}
	return xs[g.r.IntN(len(xs))]
}

// credOrElse is the credential of an earlier claim of the sequence, or
// fallback before the first.
func (g *generator) credOrElse(fallback principal) principal {
	if len(g.claimSteps) == 0 {
		return fallback
	}
	return principal{kind: "cred", step: g.claimSteps[g.r.IntN(len(g.claimSteps))]}
}

// nobody is a caller with no identity: no token, or one nobody issued.
func (g *generator) nobody() principal {
	if g.r.IntN(2) == 0 {
		return principal{kind: "none"}
	}
	return principal{kind: "bogus"}
}

// crossKey returns a key runner used on another task or message (either
// tool), "" if it has none: a key is scoped to one runner and one task or
// message, and reusing it elsewhere must neither replay nor refuse the
// other claim.
func (g *generator) crossKey(runner string) string {
	if len(g.keysOf[runner]) == 0 {
		return ""
	}
	return g.pick(g.keysOf[runner])
}

// freshClaim adds a claim by a runner with a key nothing used (suffix
// keeps the patterns' keys apart) to the sequence, and returns it; a
// claim the generator made as anyone else it returns, not added, and
// false.
func (g *generator) freshClaim(i int, suffix string) (*command, bool) {
	var c *command
	if g.r.IntN(2) == 0 {
		c = g.claimTask(i)
	} else {
		c = g.claimDiscussion(i)
	}
	if c.p.kind != "runner" {
		return c, false
	}
	key := fmt.Sprintf("key-%d-%s", i, suffix)
	c.args["idempotency_key"] = key
	g.keysOf[c.p.id] = append(g.keysOf[c.p.id], key)
	g.claimSteps = append(g.claimSteps, len(g.out))
	g.out = append(g.out, c)
	return c, true
}

// replacement claims with a fresh key, sometimes uses the credential (so
// that whatever a server caches of it is warm), replays the claim, and
// returns a call with the replaced credential: every replacement is
// checked both after the credential was used and before.
func (g *generator) replacement(i int) *command {
	claim, ok := g.freshClaim(i, "r")
	if !ok {
		return claim
	}
	use := &command{p: principal{kind: "cred", step: len(g.out) - 1}, tool: "discover_team_agents",
		args: map[string]any{"project": g.projectOf(claim)}}
	if g.r.IntN(2) == 0 {
		g.out = append(g.out, use)
	}
	g.claimSteps = append(g.claimSteps, len(g.out))
	g.out = append(g.out, &command{p: claim.p, tool: claim.tool, args: claim.args})
	return &command{p: use.p, tool: use.tool, args: use.args}
}

// projectOf is the project of a claim's task or message, or the world's
// first.
func (g *generator) projectOf(c *command) string {
	for _, t := range g.w.Tasks {
		if t.ID == c.args["task_id"] {
			return t.Project
		}
	}
	for _, m := range g.w.Messages {
		if m.ID != c.args["message_id"] {
			continue
		}
		for _, r := range g.w.Rooms {
			if r.ID == m.Room {
				return r.Project
			}
		}
	}
	return g.w.Projects[0].Slug
}

// keyElsewhere claims with a fresh key and returns a claim with the same
// key in another scope: by the same runner on another task or message
// (of the same agent's when it has one), or by another runner of the same
// agent on the same one. Neither replays the first claim.
func (g *generator) keyElsewhere(i int) *command {
	first, ok := g.freshClaim(i, "x")
	if !ok {
		return first
	}
	agent := ""
	for _, r := range g.w.Runners {
		if r.ID == first.p.id {
			agent = r.Agent
		}
	}
	next := &command{p: first.p, tool: first.tool, args: map[string]any{}}
	for k, v := range first.args {
		next.args[k] = v
	}
	if others := slices.DeleteFunc(slices.Clone(g.runnersOf[agent]), func(r string) bool { return r == first.p.id }); len(others) > 0 && g.r.IntN(3) == 0 {
		next.p = principal{kind: "runner", id: g.pick(others)}
		return next
	}
	switch first.tool {
	case "claim_task":
		var tasks []string
		for _, t := range g.w.Tasks {
			if t.ID != first.args["task_id"] && (t.Agent == agent || g.r.IntN(4) == 0) {
				tasks = append(tasks, t.ID)
			}
		}
		next.args["task_id"] = g.pick(tasks)
		delete(next.args, "wake")
	default:
		var msgs []string
		for _, t := range g.w.Turns {
			if t.Message != first.args["message_id"] && slices.ContainsFunc(t.Agents, func(a world.TurnAgent) bool { return a.Agent == agent }) {
				msgs = append(msgs, t.Message)
			}
		}
		next.args["message_id"] = g.pick(msgs)
	}
	return next
}
