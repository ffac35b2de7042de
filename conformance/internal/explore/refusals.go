package explore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prickle-dev/prickle/spec/world"
)

// Every refusal a page states, in every situation in which it applies
// (rule.in), is provoked alone: by a call for which no other reason to
// refuse applies, so that a refusal shows the server enforces that rule
// (model.provoked counts them). A situation the random calls rarely
// reach alone (a room wake in another owner's private room, a fresh turn
// that was replaced) the world always has (worldGen.situations), and a
// probe aims a call at it.

// situations adds to the world what some page refusals need to apply
// alone: in a project of two members or more, a message in one member's
// private room that woke another member's agent; and, for members' agents
// with a runner, fresh turns of one agent in their owner's private room
// that ended, were stopped, timed out, were replaced, or wait past their
// deadline; a turn of two agents whose reviewer is done; and a message
// in a general room that woke an agent.
func (g *worldGen) situations() {
	r, w := g.r, g.w
	for _, p := range g.projects {
		hs := g.members[p]
		if len(hs) < 2 {
			continue
		}
		i := r.IntN(len(hs))
		h, other := hs[i], hs[(i+1+r.IntN(len(hs)-1))%len(hs)]
		ag := g.agentsOf[other][r.IntN(len(g.agentsOf[other]))]
		msg := g.addMsg(world.Message{Room: g.private[[2]string{p, h}], Kind: "room_message", Author: h})
		w.Turns = append(w.Turns, world.Turn{Message: msg, Agents: []world.TurnAgent{{Agent: ag}}})
	}
	// A turn of two agents of one owner that waits on its lead: the draft
	// (claimed) and the review are posted.
	for _, h := range g.people {
		ags := g.agentsOf[h]
		p := g.projects[slices.IndexFunc(g.projects, func(p string) bool { return slices.Contains(g.members[p], h) })]
		if len(ags) < 2 || len(g.runnersOf[ags[0]]) == 0 {
			continue
		}
		msg := g.addMsg(world.Message{Room: g.private[[2]string{p, h}], Kind: "room_message", Author: h})
		w.Turns = append(w.Turns, world.Turn{Message: msg, Agents: []world.TurnAgent{{Agent: ags[0]}, {Agent: ags[1]}}})
		draft := g.addMsg(world.Message{Room: g.general[p], Kind: "room_message", Author: ags[0], ReplyTurn: ptr(msg), ReplyRole: ptr("draft")})
		g.addMsg(world.Message{Room: g.general[p], Kind: "room_message", Author: ags[1], ReplyTurn: ptr(msg), ReplyRole: ptr("review")})
		w.DiscussionClaims = append(w.DiscussionClaims, world.DiscussionClaim{ID: "dc-" + msg + "-draft", Message: msg, Runner: g.runnersOf[ags[0]][0],
			IdempotencyKey: "old-" + msg + "-draft", Role: "draft", ClaimedAt: "now-50m", LiveUntil: "now-40m", ReplyMessage: ptr(draft)})
		break
	}
	// A message in a project's general room that woke a member's agent.
	p := g.projects[r.IntN(len(g.projects))]
	h := g.members[p][r.IntN(len(g.members[p]))]
	msg := g.addMsg(world.Message{Room: g.general[p], Kind: "room_message", Author: h})
	w.Turns = append(w.Turns, world.Turn{Message: msg, Agents: []world.TurnAgent{{Agent: g.agentsOf[h][r.IntN(len(g.agentsOf[h]))]}}})
	for _, end := range []world.Turn{{State: "ended"}, {State: "stopped"}, {State: "timed_out"}, {State: "replaced"}, {ExpiresAt: "now-1h"}} {
		p := g.projects[r.IntN(len(g.projects))]
		h := g.members[p][r.IntN(len(g.members[p]))]
		ag := g.agentsOf[h][r.IntN(len(g.agentsOf[h]))]
		end.Message = g.addMsg(world.Message{Room: g.private[[2]string{p, h}], Kind: "room_message", Author: h})
		end.Agents = []world.TurnAgent{{Agent: ag}}
		w.Turns = append(w.Turns, end)
	}
}

// probe is a call aimed at one situation of a page refusal, the next in
// turn (g.nextProbe) among those the world has; it is made by a runner
// the situation needs, with a fresh key (i numbers it), harness 2 and no
// wake, so that nothing else refuses it.
func (g *generator) probe(i int) *command {
	probes := []func(key string) *command{
		g.probeForeignRoom, g.probeGeneralRoom, g.probeWokeNobody, g.probeWokeOthers, g.probeMessageElsewhere,
		g.probeTurnOver, g.probeAgentDone, g.probeReplyPosted, g.probeHarness,
		g.probeOwnAgentsTask, g.probeOtherOwnersTask, g.probeTaskElsewhere, g.probeCause,
		g.probeNotMember, g.probeDiscussionCredential, g.probeNotRunner, g.probeCause, g.probeMissing,
		// A credential's call counts only once its claim was granted and
		// while nothing replaced it: these get more draws.
		g.probeDiscussionCredential, g.probeNotRunner, g.probeNotRunner, g.probeNotRunner, g.probeNotRunner,
	}
	key := fmt.Sprintf("key-%d-p", i)
	start := g.nextProbe % len(probes)
	g.nextProbe++
	g.probes = append(g.probes, start)
	for k := range probes {
		if c := probes[(start+k)%len(probes)](key); c != nil {
			if c.p.kind == "runner" {
				g.keysOf[c.p.id] = append(g.keysOf[c.p.id], c.args["idempotency_key"].(string))
			}
			return c
		}
	}
	return g.claimDiscussion(i)
}

// room, message and member look the world up.
func (g *generator) room(id string) *world.Room {
	for i := range g.w.Rooms {
		if g.w.Rooms[i].ID == id {
			return &g.w.Rooms[i]
		}
	}
	return nil
}

func (g *generator) message(id string) *world.Message {
	for i := range g.w.Messages {
		if g.w.Messages[i].ID == id {
			return &g.w.Messages[i]
		}
	}
	return nil
}

func (g *generator) member(owner, project string) bool {
	return slices.ContainsFunc(g.w.Memberships, func(m world.Membership) bool { return m.Project == project && m.Person == owner })
}

// claimDiscussionAs is a claim of msg's discussion by runner with key and
// harness 2.
func claimDiscussionAs(runner, msg, key string) *command {
	return &command{p: principal{kind: "runner", id: runner}, tool: "claim_discussion",
		args: map[string]any{"message_id": msg, "idempotency_key": key, "harness": 2}}
}

// wokenRunners are (runner, message) pairs: a runner of an agent turn t
// woke, for the turns for which ok holds of the turn, its room and the
// agent's place in it.
func (g *generator) wokenRunners(ok func(t *world.Turn, room *world.Room, idx int) bool) [][2]string {
	var out [][2]string
	for i := range g.w.Turns {
		t := &g.w.Turns[i]
		msg := g.message(t.Message)
		if msg == nil {
			continue
		}
		room := g.room(msg.Room)
		for idx, a := range t.Agents {
			if room != nil && ok(t, room, idx) {
				for _, r := range g.runnersOf[a.Agent] {
					out = append(out, [2]string{r, t.Message})
				}
			}
		}
	}
	return out
}

func (g *generator) pickPair(xs [][2]string, key string) *command {
	if len(xs) == 0 {
		return nil
	}
	x := xs[g.r.IntN(len(xs))]
	return claimDiscussionAs(x[0], x[1], key)
}

func ownedBy(room *world.Room, owner string) bool {
	return room.Kind == "private" && room.Owner != nil && *room.Owner == owner
}

// probeForeignRoom: a room wake in another owner's private room.
func (g *generator) probeForeignRoom(key string) *command {
	return g.pickPair(g.wokenRunners(func(t *world.Turn, room *world.Room, idx int) bool {
		owner := ownerOf(t.Agents[idx].Agent)
		return room.Kind == "private" && !ownedBy(room, owner) && g.member(owner, room.Project)
	}), key)
}

// probeGeneralRoom: a wake in a general room.
func (g *generator) probeGeneralRoom(key string) *command {
	return g.pickPair(g.wokenRunners(func(t *world.Turn, room *world.Room, idx int) bool {
		return room.Kind == "general" && g.member(ownerOf(t.Agents[idx].Agent), room.Project)
	}), key)
}

// messageRunners are (runner, message) pairs for which ok holds of the
// message's room, its turn (nil if it woke no agent) and the runner.
func (g *generator) messageRunners(ok func(room *world.Room, t *world.Turn, r world.Runner) bool) [][2]string {
	var out [][2]string
	for _, m := range g.w.Messages {
		room := g.room(m.Room)
		if room == nil {
			continue
		}
		t := g.turn(m.ID)
		for _, r := range g.w.Runners {
			if ok(room, t, r) {
				out = append(out, [2]string{r.ID, m.ID})
			}
		}
	}
	return out
}

// probeWokeNobody: a message in the runner's owner's private room that
// woke no agent.
func (g *generator) probeWokeNobody(key string) *command {
	return g.pickPair(g.messageRunners(func(room *world.Room, t *world.Turn, r world.Runner) bool {
		return t == nil && ownedBy(room, ownerOf(r.Agent))
	}), key)
}

// probeWokeOthers: a message in the runner's owner's private room that
// woke other agents.
func (g *generator) probeWokeOthers(key string) *command {
	return g.pickPair(g.messageRunners(func(room *world.Room, t *world.Turn, r world.Runner) bool {
		return t != nil && ownedBy(room, ownerOf(r.Agent)) && !slices.ContainsFunc(t.Agents, func(a world.TurnAgent) bool { return a.Agent == r.Agent })
	}), key)
}

// probeMessageElsewhere: a message of a project the runner's owner is not
// in.
func (g *generator) probeMessageElsewhere(key string) *command {
	return g.pickPair(g.messageRunners(func(room *world.Room, _ *world.Turn, r world.Runner) bool {
		return !g.member(ownerOf(r.Agent), room.Project)
	}), key)
}

// probeTurnOver: a lone agent's fresh turn in its owner's room that no
// longer waits (ended, stopped, timed out, replaced, past its deadline).
func (g *generator) probeTurnOver(key string) *command {
	return g.pickPair(g.wokenRunners(func(t *world.Turn, room *world.Room, idx int) bool {
		over := t.State != "" && t.State != "waiting" || strings.HasPrefix(string(t.ExpiresAt), "now-")
		return over && len(t.Agents) == 1 && ownedBy(room, ownerOf(t.Agents[idx].Agent)) && !g.discussed(t.Message)
	}), key)
}

// turn is msg's turn.
func (g *generator) turn(msg string) *world.Turn {
	for i := range g.w.Turns {
		if g.w.Turns[i].Message == msg {
			return &g.w.Turns[i]
		}
	}
	return nil
}

// waits reports whether turn t waits, with replies left.
func (g *generator) waits(t *world.Turn) bool {
	replies := 0
	for _, m := range g.w.Messages {
		if m.ReplyTurn != nil && *m.ReplyTurn == t.Message {
			replies++
		}
	}
	return (t.State == "" || t.State == "waiting") && !strings.HasPrefix(string(t.ExpiresAt), "now-") &&
		(t.ReplyLimit == nil || *t.ReplyLimit > replies)
}

// granted adds to the sequence a claim with tool the server should grant,
// with key, and returns its step, -1 if the world has none: of a task routed
// to the runner's agent that no attempt holds, or of a lone agent's
// fresh turn in its owner's room that still waits.
func (g *generator) granted(key, tool string) int {
	var c *command
	if tool == "claim_task" {
		c = g.pickTask(g.taskRunners(func(t world.Task, r world.Runner) bool {
			return t.Agent == r.Agent && t.RequestMessage == nil && !slices.ContainsFunc(g.w.Attempts, func(a world.Attempt) bool { return a.Task == t.ID })
		}), key)
	} else {
		c = g.pickPair(g.wokenRunners(func(t *world.Turn, room *world.Room, idx int) bool {
			return len(t.Agents) == 1 && g.waits(t) && !g.discussed(t.Message) && ownedBy(room, ownerOf(t.Agents[idx].Agent))
		}), key)
	}
	if c == nil {
		return -1
	}
	g.keysOf[c.p.id] = append(g.keysOf[c.p.id], key)
	g.claimSteps = append(g.claimSteps, len(g.out))
	g.out = append(g.out, c)
	return len(g.out) - 1
}

// discussed reports whether the world has a reply or a claim in msg's
// turn.
func (g *generator) discussed(msg string) bool {
	return slices.ContainsFunc(g.w.Messages, func(m world.Message) bool { return m.ReplyTurn != nil && *m.ReplyTurn == msg }) ||
		slices.ContainsFunc(g.w.DiscussionClaims, func(c world.DiscussionClaim) bool { return c.Message == msg })
}

// probeAgentDone: a new key of an agent whose part in a waiting turn is
// done.
func (g *generator) probeAgentDone(key string) *command {
	return g.pickPair(g.wokenRunners(func(t *world.Turn, room *world.Room, idx int) bool {
		return g.waits(t) && len(t.Agents) > 1 && isTrue(t.Agents[idx].ReplyPosted) && ownedBy(room, ownerOf(t.Agents[idx].Agent))
	}), key)
}

// probeReplyPosted: the key of a world's claim whose reply is posted.
func (g *generator) probeReplyPosted(string) *command {
	var cs []world.DiscussionClaim
	for _, c := range g.w.DiscussionClaims {
		// A lead's draft in a turn that still waits on it: only the
		// claim's reply is posted.
		if t := g.turn(c.Message); c.ReplyMessage != nil && !c.Superseded && c.Role == "draft" && len(t.Agents) > 1 && g.waits(t) {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return nil
	}
	c := cs[g.r.IntN(len(cs))]
	return claimDiscussionAs(c.Runner, c.Message, c.IdempotencyKey)
}

// probeHarness: a room wake claimed without harness 2 (none, or 1).
func (g *generator) probeHarness(key string) *command {
	c := g.pickPair(g.wokenRunners(func(t *world.Turn, room *world.Room, idx int) bool {
		return ownedBy(room, ownerOf(t.Agents[idx].Agent))
	}), key)
	if c == nil {
		return nil
	}
	if g.r.IntN(2) == 0 {
		delete(c.args, "harness")
	} else {
		c.args["harness"] = 1
	}
	return c
}

// claimTaskAs is a claim of task by runner with key.
func claimTaskAs(runner, task, key string) *command {
	return &command{p: principal{kind: "runner", id: runner}, tool: "claim_task", args: map[string]any{"task_id": task, "idempotency_key": key}}
}

// taskRunners are (runner, task) pairs for which ok holds.
func (g *generator) taskRunners(ok func(t world.Task, runner world.Runner) bool) [][2]string {
	var out [][2]string
	for _, t := range g.w.Tasks {
		for _, r := range g.w.Runners {
			if ok(t, r) {
				out = append(out, [2]string{r.ID, t.ID})
			}
		}
	}
	return out
}

func (g *generator) pickTask(xs [][2]string, key string) *command {
	if len(xs) == 0 {
		return nil
	}
	x := xs[g.r.IntN(len(xs))]
	return claimTaskAs(x[0], x[1], key)
}

// probeOwnAgentsTask: a task routed to another agent of the runner's
// owner.
func (g *generator) probeOwnAgentsTask(key string) *command {
	return g.pickTask(g.taskRunners(func(t world.Task, r world.Runner) bool {
		return t.Agent != r.Agent && ownerOf(t.Agent) == ownerOf(r.Agent)
	}), key)
}

// probeOtherOwnersTask: a task routed to another owner's agent, in a
// project the runner's owner is in.
func (g *generator) probeOtherOwnersTask(key string) *command {
	return g.pickTask(g.taskRunners(func(t world.Task, r world.Runner) bool {
		return ownerOf(t.Agent) != ownerOf(r.Agent) && g.member(ownerOf(r.Agent), t.Project)
	}), key)
}

// probeTaskElsewhere: a task of a project the runner's owner is not in.
func (g *generator) probeTaskElsewhere(key string) *command {
	return g.pickTask(g.taskRunners(func(t world.Task, r world.Runner) bool {
		return !g.member(ownerOf(r.Agent), t.Project)
	}), key)
}

// probeCause: a runner of a task's agent claims it with a wake that is a
// mention, or another message than the task's own request.
func (g *generator) probeCause(key string) *command {
	mention := g.r.IntN(2) == 0 && len(g.mentions) > 0
	c := g.pickTask(g.taskRunners(func(t world.Task, r world.Runner) bool {
		return t.Agent == r.Agent && (mention || t.RequestMessage != nil)
	}), key)
	if c == nil {
		return nil
	}
	wake := g.pick(g.mentions)
	if !mention {
		req := ""
		for _, t := range g.w.Tasks {
			if t.ID == c.args["task_id"] {
				req = *t.RequestMessage
			}
		}
		wake = g.pick(slices.DeleteFunc(append(slices.Clone(g.requests), g.others...), func(id string) bool { return id == req }))
	}
	c.args["wake"] = map[string]any{"message_id": wake}
	return c
}

// probeNotMember: an agent asks for the team of a project its owner is
// not in.
func (g *generator) probeNotMember(string) *command {
	var xs [][2]string
	for _, p := range g.w.Projects {
		for _, a := range g.agents {
			if !g.member(ownerOf(a), p.Slug) {
				xs = append(xs, [2]string{a, p.Slug})
			}
		}
	}
	if len(xs) == 0 {
		return nil
	}
	x := xs[g.r.IntN(len(xs))]
	return &command{p: principal{kind: "agent", id: x[0]}, tool: "discover_team_agents", args: map[string]any{"project": x[1]}}
}

// probeDiscussionCredential: a discussion credential asks for the team
// of its project.
func (g *generator) probeDiscussionCredential(key string) *command {
	s := g.granted(key+"g", "claim_discussion")
	if s < 0 {
		return nil
	}
	return &command{p: principal{kind: "cred", step: s}, tool: "discover_team_agents", args: map[string]any{"project": g.projectOf(g.out[s])}}
}

// probeNotRunner: a credential an earlier call got (an agent if the world
// has no claim to grant) claims a task or a turn's discussion.
func (g *generator) probeNotRunner(key string) *command {
	p := principal{kind: "agent", id: g.pick(g.agents)}
	if s := g.granted(key+"g", []string{"claim_task", "claim_discussion"}[g.r.IntN(2)]); s >= 0 {
		p = principal{kind: "cred", step: s}
	}
	if g.r.IntN(2) == 0 || len(g.w.Turns) == 0 {
		return &command{p: p, tool: "claim_task", args: map[string]any{"task_id": g.w.Tasks[g.r.IntN(len(g.w.Tasks))].ID, "idempotency_key": key}}
	}
	msg := g.w.Turns[g.r.IntN(len(g.w.Turns))].Message
	return &command{p: p, tool: "claim_discussion", args: map[string]any{"message_id": msg, "idempotency_key": key, "harness": 2}}
}

// probeMissing: a runner claims a task or a message that does not exist,
// or an agent asks for the team of a project that does not exist.
func (g *generator) probeMissing(key string) *command {
	runner := principal{kind: "runner", id: g.pick(g.runners)}
	switch g.r.IntN(3) {
	case 0:
		return &command{p: runner, tool: "claim_task", args: map[string]any{"task_id": "no-such-task", "idempotency_key": key}}
	case 1:
		return &command{p: runner, tool: "claim_discussion", args: map[string]any{"message_id": "no-such-message", "idempotency_key": key, "harness": 2}}
	}
	return &command{p: principal{kind: "agent", id: g.pick(g.agents)}, tool: "discover_team_agents", args: map[string]any{"project": "no-such-project"}}
}
