package explore

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/spec/world"
)

// The model of claim_discussion.

// The sentences of claim_discussion the model cites.
var (
	sCDRoomWake   = sentence("claim_discussion#61a5882b")
	sCDHarness    = sentence("claim_discussion#9a6c81c1")
	sCDRole       = sentence("claim_discussion#587ee1ed")
	sCDCredential = sentence("claim_discussion#373f9dbc")
	sCDReplay     = sentence("claim_discussion#393d6bef")
	sCDTurnOver   = sentence("claim_discussion#a6f19e4e")
	sCDNoRun      = sentence("claim_discussion#efcba6a1")
	sCDPaired     = sentence("claim_discussion#fc26a52b")
	sCDTenMinutes = sentence("claim_discussion#8940c38d")
)

// The reasons to refuse a claim_discussion call.
var (
	ruleNotRunnerDisc   = newRule("claim_discussion", "only a paired runner can claim a discussion", "not_runner", sCDPaired, dWhoMayCall).in(sitAgent, sitCredential)
	ruleHarnessOutdated = newRule("claim_discussion", "a claim without harness 2 is refused", "harness_outdated", sCDHarness, dClaimDisc).in(sitNoHarness, sitHarnessOne)
	ruleHarnessNewer    = newRule("claim_discussion", "a harness above 2 is unsupported", "harness_unsupported", "", dClaimDisc)
	ruleMessageNotFound = newRule("claim_discussion", "no such message in a project the owner belongs to", "message_not_found", sCDRoomWake, dClaimDisc).in(sitNoSuchMessage, sitMessageElsewhere)
	ruleNotYourRoom     = newRule("claim_discussion", "the message is not in one of the owner's private rooms", "not_your_room", sCDRoomWake, dClaimDisc).in(sitGeneralRoom, sitOthersRoom)
	ruleNotWoken        = newRule("claim_discussion", "the message did not wake the runner's agent", "not_woken", sCDRoomWake, dClaimDisc).in(sitWokeNobody, sitWokeOthers)
	ruleReplyPosted     = newRule("claim_discussion", "the claim's reply is posted", "reply_posted", sCDReplay, dClaimDisc)
	ruleAgentDone       = newRule("claim_discussion", "the turn no longer waits on the agent: its last reply is posted", "reply_posted", sCDTurnOver, dClaimDisc)
	ruleTurnEnded       = newRule("claim_discussion", "the turn has ended", "turn_ended", sCDTurnOver, dClaimDisc)
	ruleTurnStopped     = newRule("claim_discussion", "the turn was stopped", "turn_stopped", sCDTurnOver, dClaimDisc)
	ruleTurnTimedOut    = newRule("claim_discussion", "the turn is out of time", "turn_timed_out", sCDTurnOver, dClaimDisc).in(sitTimedOut, sitPastDeadline)
	ruleTurnReplaced    = newRule("claim_discussion", "the turn was replaced by the owner's next message", "turn_replaced", sCDTurnOver, dClaimDisc)
	ruleClaimSuperseded = newRule("claim_discussion", "the key's discussion claim was superseded", "claim_superseded", "", dClaimDisc)
	ruleDraftPending    = newRule("claim_discussion", "a reviewer claims before the lead's draft is posted", "draft_pending", "", dClaimDisc)
	ruleReviewsPending  = newRule("claim_discussion", "the lead claims again before every review is posted", "reviews_pending", "", dClaimDisc)
	ruleNoRepliesLeft   = newRule("claim_discussion", "the turn allows no more replies", "no_replies_left", "", dClaimDisc)
	ruleDiscussionLive  = newRule("claim_discussion", "the agent has a live claim in the turn under another key", "discussion_in_progress", "", dClaimDisc)
	ruleLoneAgentDone   = newRule("claim_discussion", "a lone agent only drafts", "reply_posted", "", dClaimDisc)
)

// The situations in which a page's refusal of claim_discussion applies:
// which harness, where the message is, whom it woke, how the turn ran out
// of time.
const (
	sitNoHarness        = "no harness"
	sitHarnessOne       = "harness 1"
	sitNoSuchMessage    = "no such message"
	sitMessageElsewhere = "a message of a project the owner is not in"
	sitGeneralRoom      = "a general room"
	sitOthersRoom       = "another owner's private room"
	sitWokeNobody       = "a message that woke no agent"
	sitWokeOthers       = "a message that woke other agents"
	sitTimedOut         = "a turn timed out"
	sitPastDeadline     = "a waiting turn past its deadline"
)

func init() {
	order([]*rule{ruleNotRunnerDisc}, []*rule{ruleHarnessOutdated, ruleHarnessNewer}, []*rule{ruleMessageNotFound},
		[]*rule{ruleNotYourRoom}, []*rule{ruleNotWoken}, []*rule{ruleReplyPosted}, []*rule{ruleClaimSuperseded},
		[]*rule{ruleTurnEnded, ruleTurnStopped, ruleTurnTimedOut, ruleTurnReplaced}, []*rule{ruleAgentDone},
		[]*rule{ruleDraftPending, ruleReviewsPending, ruleLoneAgentDone}, []*rule{ruleNoRepliesLeft}, []*rule{ruleDiscussionLive})
}

type mClaim struct {
	message, runner, agent, key string
	role                        string
	lead                        bool
	reviewing                   any // the quoted draft (decoded JSON) or nil
	liveUntil                   time.Time
	superseded                  supersession
	replied                     bool
	creds                       []*mCred
}

// quote is how a claim quotes a draft message.
func (m *model) quote(id string) any {
	msg := m.msgs[id]
	prov := msg.Provenance
	if prov == "" {
		prov = "agent_generated" // FIXTURE.md: the default for agents
	}
	status := msg.ProvenanceStatus
	if status == "" {
		status = "claimed"
	}
	return map[string]any{"message_id": msg.ID, "author": msg.Author, "body": msg.Body, "provenance": prov, "provenance_status": status}
}

// leadDraft is the id of the lead's draft in the turn of message (an agent
// posts each role once, FIXTURE.md), "" if none is posted.
func (m *model) leadDraft(t *world.Turn) string {
	lead := t.Agents[0].Agent
	for _, msg := range m.w.Messages {
		if msg.ReplyTurn != nil && *msg.ReplyTurn == t.Message && msg.Author == lead && msg.ReplyRole != nil && *msg.ReplyRole == "draft" {
			return msg.ID
		}
	}
	return ""
}

func (m *model) repliesPosted(t *world.Turn) int {
	n := 0
	for _, msg := range m.w.Messages {
		if msg.ReplyTurn != nil && *msg.ReplyTurn == t.Message {
			n++
		}
	}
	return n
}

func (m *model) repliesLeft(t *world.Turn) int {
	limit := 8
	if t.ReplyLimit != nil {
		limit = *t.ReplyLimit
	}
	return min(max(limit-m.repliesPosted(t), 0), 8)
}

// turnOver adds to e the rule that refuses a claim in a turn that no
// longer waits, if there is one.
func (m *model) turnOver(e *expectation, t *world.Turn) {
	switch t.State {
	case "ended":
		e.add(m, ruleTurnEnded)
	case "stopped":
		e.add(m, ruleTurnStopped)
	case "timed_out":
		e.addIn(m, ruleTurnTimedOut, sitTimedOut)
	case "replaced":
		e.add(m, ruleTurnReplaced)
	default:
		if t.ExpiresAt != "" && !mustTime(t.ExpiresAt, m.now).After(time.Now().Add(liveMargin)) {
			e.addIn(m, ruleTurnTimedOut, sitPastDeadline)
		}
	}
}

// expectClaimDiscussion is what the pages (and, in the reference profile,
// server/README.md) demand of a claim_discussion call by c: who may
// claim, the harness, the message and its room, the turn that woke c's
// agent, then a replay of c's claim or a new claim in harness 2's
// schedule.
func (m *model) expectClaimDiscussion(e *expectation, cmd *command, c caller) {
	msgID, _ := argString(cmd.args, "message_id")
	key, _ := argString(cmd.args, "idempotency_key")
	if c.kind != "runner" {
		e.addIn(m, ruleNotRunnerDisc, callerSituation(c))
		return
	}
	m.expectHarness(e, cmd)
	t, idx, room, ok := m.discussionTurn(e, msgID, c)
	if !ok || len(e.must) > 0 {
		return
	}
	if cl := m.discussionClaim(c, msgID, key); cl != nil {
		m.expectReplayedDiscussion(e, cl, t, idx, room, c)
		return
	}
	m.expectNewDiscussion(e, t, idx, room, c, msgID, key)
}

// expectHarness adds the refusal of a call whose harness is missing,
// older than 2 or newer.
func (m *model) expectHarness(e *expectation, cmd *command) {
	if h, ok := cmd.args["harness"]; !ok {
		e.addIn(m, ruleHarnessOutdated, sitNoHarness)
	} else if toInt(h) < 2 {
		e.addIn(m, ruleHarnessOutdated, sitHarnessOne)
	} else if toInt(h) > 2 {
		e.add(m, ruleHarnessNewer)
	}
}

// discussionTurn is the turn of message msgID, c's agent's place among
// those it woke (idx, -1 if it did not wake it) and the message's room,
// with the refusals of a message c cannot see, a room not its owner's
// private room, and a turn that did not wake its agent. ok is false when
// nothing more can be said of the call: the message is not found, or
// the turn did not wake c's agent.
func (m *model) discussionTurn(e *expectation, msgID string, c caller) (t *world.Turn, idx int, room *world.Room, ok bool) {
	msg := m.msgs[msgID]
	switch {
	case msg == nil:
		e.addIn(m, ruleMessageNotFound, sitNoSuchMessage)
		return nil, -1, nil, false
	case !m.visible(c.owner, m.rooms[msg.Room].Project):
		e.addIn(m, ruleMessageNotFound, sitMessageElsewhere)
		return nil, -1, nil, false
	}
	room = m.rooms[msg.Room]
	switch {
	case room.Kind != "private" || room.Owner == nil:
		e.addIn(m, ruleNotYourRoom, sitGeneralRoom)
	case *room.Owner != c.owner:
		e.addIn(m, ruleNotYourRoom, sitOthersRoom)
	}
	t = m.turns[msgID]
	idx = -1
	if t != nil {
		idx = slices.IndexFunc(t.Agents, func(a world.TurnAgent) bool { return a.Agent == c.agent })
	}
	switch {
	case t == nil:
		e.addIn(m, ruleNotWoken, sitWokeNobody)
	case idx < 0:
		e.addIn(m, ruleNotWoken, sitWokeOthers)
	}
	return t, idx, room, idx >= 0
}

// discussionClaim is c's runner's claim of message msgID with key, which
// a call with that key replays; nil if it made none.
func (m *model) discussionClaim(c caller, msgID, key string) *mClaim {
	var cl *mClaim
	for _, x := range m.claims {
		if x.runner == c.runner && x.message == msgID && x.key == key {
			cl = x
		}
	}
	return cl
}

// expectReplayedDiscussion is what a replay of claim cl must get: the
// claim again, unless its reply is posted, the turn is over, the agent's
// part is done, the claim was superseded, or no reply is left.
func (m *model) expectReplayedDiscussion(e *expectation, cl *mClaim, t *world.Turn, idx int, room *world.Room, c caller) {
	if cl.replied {
		e.add(m, ruleReplyPosted)
	}
	m.turnOver(e, t)
	if isTrue(t.Agents[idx].ReplyPosted) {
		e.add(m, ruleAgentDone)
	}
	switch cl.superseded {
	case superseded:
		e.add(m, ruleClaimSuperseded)
	case perhaps:
		e.may = append(e.may, ruleClaimSuperseded)
	}
	if m.repliesLeft(t) == 0 {
		e.add(m, ruleNoRepliesLeft)
	}
	e.successSrc = sCDReplay
	e.success = func(ans *answer) []failure { return m.replayedClaim(ans, cl, t, room, c) }
}

// expectNewDiscussion is what a new claim of message msgID by c's runner
// with key must get: a discussion in the role harness 2's schedule gives
// c's agent (agent idx of turn t), unless its part is done, the turn is
// over, the schedule gives it no role yet, no reply is left, or a
// discussion of its agent is live.
func (m *model) expectNewDiscussion(e *expectation, t *world.Turn, idx int, room *world.Room, c caller, msgID, key string) {
	if isTrue(t.Agents[idx].ReplyPosted) {
		e.add(m, ruleAgentDone)
	}
	m.turnOver(e, t)
	lead := idx == 0
	draft := m.leadDraft(t)
	role := m.harnessRole(e, t, lead, draft)
	left := m.repliesLeft(t)
	if left == 0 {
		e.add(m, ruleNoRepliesLeft)
	}
	m.liveDiscussions(e, c, msgID)
	// Core: only a lone agent's first claim in a fresh turn is beyond doubt;
	// how harness 2 schedules sessions otherwise is the server's choice.
	fresh := len(t.Agents) == 1 && m.repliesPosted(t) == 0 && left > 0 &&
		!slices.ContainsFunc(m.claims, func(x *mClaim) bool { return x.message == msgID })
	if !fresh {
		e.open(m, &rule{what: "the pages leave harness 2's schedule to the server"})
	}
	e.successSrc = sCDRoomWake
	e.success = func(ans *answer) []failure { return m.newClaim(ans, t, room, c, key, role, lead, draft) }
}

// harnessRole is the role harness 2's schedule (reference) gives the
// lead, or a reviewer, of turn t, given the lead's draft ("" if not
// posted): the lead drafts; reviewers review the posted draft; the lead
// then revises (one reviewer) or combines. "" with the refusal when the
// schedule gives none yet.
func (m *model) harnessRole(e *expectation, t *world.Turn, lead bool, draft string) string {
	switch {
	case lead && draft == "":
		return "draft"
	case !lead && draft == "":
		e.add(m, ruleDraftPending)
	case !lead:
		return "review"
	case len(t.Agents) == 1:
		e.add(m, ruleLoneAgentDone)
	case slices.ContainsFunc(t.Agents[1:], func(a world.TurnAgent) bool { return !isTrue(a.ReplyPosted) }):
		e.add(m, ruleReviewsPending)
	case len(t.Agents) == 2:
		return "revise"
	default:
		return "combine"
	}
	return ""
}

// liveDiscussions adds the refusal of a claim while a discussion of c's
// agent in message msgID's turn is live (a claim unreplied, not
// superseded, still live; one about to end may or may not count).
func (m *model) liveDiscussions(e *expectation, c caller, msgID string) {
	now := time.Now()
	for _, x := range m.claims {
		if x.agent != c.agent || x.message != msgID || x.replied || x.superseded == superseded {
			continue
		}
		if x.liveUntil.After(now.Add(-liveMargin)) {
			if x.liveUntil.Before(now.Add(liveMargin)) {
				e.may = append(e.may, ruleDiscussionLive)
			} else {
				e.add(m, ruleDiscussionLive)
			}
		}
	}
}

func toInt(v any) int {
	switch x := v.(type) {
	case json.Number:
		n, _ := x.Int64()
		return int(n)
	case float64:
		return int(x)
	case int:
		return x
	}
	return 0
}

// discussionFields checks what every claim_discussion success says.
func (m *model) discussionFields(ans *answer, t *world.Turn, room *world.Room) []failure {
	var fs []failure
	if p := fmt.Sprint(ans.structured["project"]); p != room.Project {
		fs = append(fs, failure{src: sCDRoomWake, msg: fmt.Sprintf("project %s, want the message's project %s", p, room.Project), lines: []string{"json project == " + room.Project}})
	}
	if m.profile == suite.Reference {
		if v, ok := ans.structured["own_room"]; !ok || v != true {
			fs = append(fs, failure{src: dClaimDisc, msg: fmt.Sprintf("own_room %v, want true", wire.Compact(v)), lines: []string{"json own_room == true"}})
		}
		if got, want := ans.structured["replies_left"], float64(m.repliesLeft(t)); got != want {
			fs = append(fs, failure{src: dClaimDisc, msg: fmt.Sprintf("replies_left %v, want %v (the turn's limit minus the replies posted)", wire.Compact(got), want),
				lines: []string{fmt.Sprintf("json replies_left == %v", want)}})
		}
	}
	return fs
}

func (m *model) replayedClaim(ans *answer, cl *mClaim, t *world.Turn, room *world.Room, c caller) []failure {
	fs := m.discussionFields(ans, t, room)
	if r := fmt.Sprint(ans.structured["role"]); cl.role != "" && r != cl.role {
		fs = append(fs, failure{src: sCDReplay, msg: fmt.Sprintf("a replay answered role %s, the claim's was %s", r, cl.role), lines: []string{"json role == " + cl.role}})
	}
	if m.profile == suite.Reference {
		if l := ans.structured["lead"]; l != cl.lead {
			fs = append(fs, failure{src: dClaimDisc, msg: fmt.Sprintf("a replay answered lead %v, the claim's was %v", l, cl.lead), lines: []string{fmt.Sprintf("json lead == %v", cl.lead)}})
		}
	}
	if cl.role != "" && !reflect.DeepEqual(ans.structured["reviewing"], cl.reviewing) {
		fs = append(fs, failure{src: sCDReplay, msg: fmt.Sprintf("a replay quoted %s, the claim quoted %s", wire.Compact(ans.structured["reviewing"]), wire.Compact(cl.reviewing)),
			lines: []string{reviewingLine(cl.reviewing)}})
	}
	cf, cr := m.credentialChecks(ans, "discussion_credential", "disc")
	fs = append(fs, cf...)
	if len(fs) > 0 {
		return fs
	}
	if cl.role == "" {
		cl.role, cl.reviewing = fmt.Sprint(ans.structured["role"]), ans.structured["reviewing"]
	}
	if m.profile == suite.Reference {
		for _, old := range cl.creds {
			old.revoked = true
		}
	}
	m.issue(cr, c, room.Project)
	cl.creds = append(cl.creds, cr)
	if exp, err := time.Parse(time.RFC3339Nano, fmt.Sprint(ans.structured["discussion_credential"].(map[string]any)["expires_at"])); err == nil && exp.After(cl.liveUntil) {
		cl.liveUntil = exp
	}
	cl.superseded = notSuperseded
	return nil
}

func reviewingLine(v any) string {
	if v == nil {
		return "json reviewing null"
	}
	return "json reviewing == " + script.Quote(script.JSON(v))
}

func (m *model) newClaim(ans *answer, t *world.Turn, room *world.Room, c caller, key, role string, lead bool, draft string) []failure {
	fs := m.discussionFields(ans, t, room)
	got := fmt.Sprint(ans.structured["role"])
	reviewing := ans.structured["reviewing"]
	switch {
	case m.profile == suite.Reference && got != role:
		fs = append(fs, failure{src: dClaimDisc, msg: fmt.Sprintf("role %s, want %s (harness 2's schedule)", got, role), lines: []string{"json role == " + role}})
	case (got == "review" || got == "revise") && draft == "":
		fs = append(fs, failure{src: sCDRole, msg: fmt.Sprintf("role %s, but the turn has no draft to quote", got), lines: []string{"! json role == " + got}})
	}
	var want any
	if (got == "review" || got == "revise") && draft != "" {
		want = m.quote(draft)
	}
	if (got == "review" || got == "revise" || got == "draft" || m.profile == suite.Reference) && !reflect.DeepEqual(reviewing, want) {
		src := sCDRole
		if got == "combine" {
			src = dClaimDisc
		}
		fs = append(fs, failure{src: src, msg: fmt.Sprintf("role %s quotes %s, want %s", got, wire.Compact(reviewing), wire.Compact(want)), lines: []string{reviewingLine(want)}})
	}
	if m.profile == suite.Reference {
		if l := ans.structured["lead"]; l != lead {
			fs = append(fs, failure{src: dClaimDisc, msg: fmt.Sprintf("lead %v, want %v (the first agent the message woke leads)", l, lead), lines: []string{fmt.Sprintf("json lead == %v", lead)}})
		}
	}
	cf, cr := m.credentialChecks(ans, "discussion_credential", "disc")
	fs = append(fs, cf...)
	if len(fs) > 0 {
		return fs
	}
	cl := &mClaim{message: t.Message, runner: c.runner, agent: c.agent, key: key, role: got, lead: ans.structured["lead"] == true, reviewing: reviewing}
	if exp, err := time.Parse(time.RFC3339Nano, fmt.Sprint(ans.structured["discussion_credential"].(map[string]any)["expires_at"])); err == nil {
		cl.liveUntil = exp
	}
	for _, x := range m.claims {
		if x.agent != c.agent || x.message != t.Message || x.replied || x.superseded == superseded {
			continue
		}
		if m.profile == suite.Reference {
			x.superseded = superseded
			for _, old := range x.creds {
				old.revoked = true
			}
		} else {
			x.superseded = perhaps
		}
	}
	m.issue(cr, c, room.Project)
	cl.creds = append(cl.creds, cr)
	m.claims = append(m.claims, cl)
	return nil
}

// claimDiscussion is a claim_discussion call, mostly on a turn's message
// by a runner of an agent it woke, with a key used before or a fresh one,
// mostly with harness 2.
func (g *generator) claimDiscussion(i int) *command {
	r := g.r
	msg := g.pick(g.others)
	woken := []string(nil)
	if len(g.w.Turns) > 0 && r.IntN(10) > 0 {
		t := g.w.Turns[r.IntN(len(g.w.Turns))]
		msg = t.Message
		for _, a := range t.Agents {
			woken = append(woken, g.runnersOf[a.Agent]...)
		}
	}
	c := &command{tool: "claim_discussion", args: map[string]any{"message_id": msg}}
	switch y := r.IntN(100); {
	case y < 88 && len(woken) > 0:
		c.p = principal{kind: "runner", id: g.pick(woken)}
	case y < 91:
		c.p = principal{kind: "runner", id: g.pick(g.runners)}
	case y < 93:
		c.p = principal{kind: "agent", id: g.pick(g.agents)}
	case y < 98:
		c.p = g.credOrElse(principal{kind: "agent", id: g.pick(g.agents)})
	default:
		c.p = g.nobody()
	}
	if r.IntN(30) == 0 {
		c.args["message_id"] = "no-such-message"
	}
	k := [2]string{c.p.id, msg}
	switch y := r.IntN(100); {
	case y < 40 && len(g.discKeys[k]) > 0:
		c.args["idempotency_key"] = g.pick(g.discKeys[k])
	case y < 47 && len(woken) > 1:
		// A key another runner (of the same agent, or of another agent
		// the message woke) used on this message.
		other := g.pick(woken)
		if keys := g.discKeys[[2]string{other, msg}]; len(keys) > 0 {
			c.args["idempotency_key"] = g.pick(keys)
			g.discKeys[k] = append(g.discKeys[k], c.args["idempotency_key"].(string))
			break
		}
		fallthrough
	case y < 55 && g.crossKey(c.p.id) != "":
		if key := g.crossKey(c.p.id); key != "" {
			c.args["idempotency_key"] = key
			g.discKeys[k] = append(g.discKeys[k], key)
			break
		}
		fallthrough
	default:
		key := fmt.Sprintf("key-%d", i)
		c.args["idempotency_key"] = key
		g.discKeys[k] = append(g.discKeys[k], key)
		g.keysOf[c.p.id] = append(g.keysOf[c.p.id], key)
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
	return c
}

// claimAfterExpiry adds a claim with a new key for an agent whose earlier
// claim in the world expired, and returns the claim with the earlier key
// again, to follow it.
func (g *generator) claimAfterExpiry(i int) *command {
	old := g.stale[g.r.IntN(len(g.stale))]
	p := principal{kind: "runner", id: old.Runner}
	g.claimSteps = append(g.claimSteps, len(g.out))
	g.out = append(g.out, &command{p: p, tool: "claim_discussion", args: map[string]any{"message_id": old.Message, "idempotency_key": fmt.Sprintf("key-%d", i), "harness": 2}})
	return &command{p: p, tool: "claim_discussion", args: map[string]any{"message_id": old.Message, "idempotency_key": old.IdempotencyKey, "harness": 2}}
}
