package explore

import (
	"math/rand/v2"
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
	// stale are the world's claims that a new key would supersede:
	// expired and unreplied.
	stale []world.DiscussionClaim
	// out is the sequence so far; claimSteps are its claims, whose
	// credentials later steps may call with.
	out        []*command
	claimSteps []int
}

func newGenerator(r *rand.Rand, w *world.World) *generator {
	g := &generator{r: r, w: w, runnersOf: map[string][]string{}, taskKeys: map[[2]string][]string{}, discKeys: map[[2]string][]string{}}
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
	}
	for _, c := range w.DiscussionClaims {
		k := [2]string{c.Runner, c.Message}
		g.discKeys[k] = append(g.discKeys[k], c.IdempotencyKey)
	}
	for _, c := range w.DiscussionClaims {
		if !isTrue(c.ReplyPosted) && c.ReplyMessage == nil && strings.HasPrefix(string(c.LiveUntil), "now-") {
			g.stale = append(g.stale, c)
		}
	}
	return g
}

// genCommands generates n calls for world w.
func genCommands(r *rand.Rand, w *world.World, n int) []*command {
	g := newGenerator(r, w)
	for i := 0; len(g.out) < n; i++ {
		var c *command
		switch x := r.IntN(100); {
		case x < 10 && len(g.out) > 0: // the same call again
			prev := g.out[r.IntN(len(g.out))]
			c = &command{p: prev.p, tool: prev.tool, args: prev.args}
		case x < 14 && len(g.stale) > 0 && len(g.out) < n-1:
			c = g.claimAfterExpiry(i)
		case x < 45:
			c = g.claimTask(i)
		case x < 80:
			c = g.claimDiscussion(i)
		default:
			c = g.discover(n)
		}
		if c.p.kind == "runner" && c.p.id == "none-such" {
			c.p = principal{kind: "agent", id: g.pick(g.agents)}
		}
		if strings.HasPrefix(c.tool, "claim_") {
			g.claimSteps = append(g.claimSteps, len(g.out))
		}
		g.out = append(g.out, c)
	}
	return g.out
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
