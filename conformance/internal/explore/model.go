package explore

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/spec/world"
)

// The model of stateful exploration: the documented rules of the three
// tools, executable, written from the pages (core) and from the reference
// server's documented decisions (server/README.md; reference profile), not
// from any server's code.
//
// For every call the model says which answers are acceptable: a success
// (with the checks its fields must pass), a refusal (in the reference
// profile, with which codes), or a protocol error. Where the pages leave a
// choice open, the core model accepts every answer compatible with them
// and follows the one the server gave (a claim the pages neither demand
// nor forbid may be granted or refused; the model records what happened).
// Every check names its source: a sentence ID of the pages, or a decision
// of server/README.md.

// Sources the model cites. A sentence ID is checked against the spec
// before exploring (a page edit makes the model stale, and the run says
// so); a decision names a bold paragraph title of server/README.md, and a
// test checks that the paragraph exists and names the codes of its rules.
var (
	citedSentences []string
	citedDecisions []string
)

func sentence(id string) string { citedSentences = append(citedSentences, id); return id }

// decisionPrefix leads the source of a rule that a decision makes.
const decisionPrefix = "server/README.md: "

func decision(title string) string {
	citedDecisions = append(citedDecisions, title)
	return decisionPrefix + title
}

var (
	sCTRunnerOnly  = sentence("claim_task#5e5dfcd3") // Runner devices only: claim a task routed to your agent ...
	sCTReturns     = sentence("claim_task#d58db1d3") // Returns the attempt and an execution credential ...
	sCTReplay      = sentence("claim_task#1d2c6a82") // Retrying with the same idempotency key replays the claim ...
	sCTCause       = sentence("claim_task#1900f01b") // ... wake.message_id may only repeat it.
	sCTMention     = sentence("claim_task#fa24cf09") // A mention is never a run's cause.
	sCTPaired      = sentence("claim_task#e94d1a5d") // Only a paired runner can claim.
	sCTCredential  = sentence("claim_task#6ebe5180") // The runner receives a short-lived credential for one task and attempt.
	sCDRoomWake    = sentence("claim_discussion#61a5882b")
	sCDHarness     = sentence("claim_discussion#9a6c81c1")
	sCDRole        = sentence("claim_discussion#587ee1ed")
	sCDCredential  = sentence("claim_discussion#373f9dbc")
	sCDReplay      = sentence("claim_discussion#393d6bef")
	sCDTurnOver    = sentence("claim_discussion#a6f19e4e")
	sCDNoRun       = sentence("claim_discussion#efcba6a1")
	sCDPaired      = sentence("claim_discussion#fc26a52b")
	sCDTenMinutes  = sentence("claim_discussion#8940c38d")
	sDTList        = sentence("discover_team_agents#05161da5")
	dIdentity      = decision("Identity and tokens")
	dWhoMayCall    = decision("Who may call what")
	dRefusals      = decision(suite.RefusalsDecision)
	dClaimTask     = decision("claim_task")
	dClaimDisc     = decision("claim_discussion")
	dDiscover      = decision("discover_team_agents")
	dStateAndCache = decision("State and caches")
)

// srcPreamble is the pages' shared preamble: identity comes from the token.
const srcPreamble = `the pages' preamble: "Identity comes from the agent's token, never from a tool argument."`

// srcWire is MCP's rule that a tool's refusal is a tool result.
const srcWire = "MCP tools: a refusal is a tool result with isError: true, not a protocol error"

// A rule is one reason to refuse a call.
type rule struct {
	tool     string // the tool it refuses
	what     string // the reason, for messages
	code     string // the reference server's refusal code
	sentence string // the page sentence that makes the refusal mandatory; "" where the pages leave it open
	decision string // the server/README.md decision that names code
}

// modelRules are every rule of the model; tests read the codes from here.
var modelRules []*rule

// Rule is a refusal the model knows: the tool it refuses and why, the
// reference server's code, and the server/README.md decision, by its
// title, that names the code.
type Rule struct{ Tool, What, Code, Decision string }

// Rules returns every refusal rule of the model.
func Rules() []Rule {
	out := make([]Rule, len(modelRules))
	for i, r := range modelRules {
		out[i] = Rule{Tool: r.tool, What: r.what, Code: r.code, Decision: strings.TrimPrefix(r.decision, decisionPrefix)}
	}
	return out
}

// Decisions returns the titles of the server/README.md decisions the model
// cites.
func Decisions() []string { return slices.Clone(citedDecisions) }

func newRule(tool, what, code, sentence, decision string) *rule {
	r := &rule{tool: tool, what: what, code: code, sentence: sentence, decision: decision}
	modelRules = append(modelRules, r)
	return r
}

var (
	ruleNotRunnerTask     = newRule("claim_task", "only a paired runner can claim a task", "not_runner", sCTPaired, dWhoMayCall)
	ruleNotRunnerDisc     = newRule("claim_discussion", "only a paired runner can claim a discussion", "not_runner", sCDPaired, dWhoMayCall)
	ruleDiscCredTool      = newRule("discover_team_agents", "a discussion credential may only read its room", "tool_not_allowed", sCDCredential, dWhoMayCall)
	ruleExecCredTool      = newRule("discover_team_agents", "a credential may call only its allowed_tools", "tool_not_allowed", "", dWhoMayCall)
	ruleTaskNotFound      = newRule("claim_task", "no such task in a project the runner's owner belongs to", "task_not_found", sCTRunnerOnly, dClaimTask)
	ruleNotRouted         = newRule("claim_task", "the task is routed to another agent", "not_routed", sCTRunnerOnly, dClaimTask)
	ruleMention           = newRule("claim_task", "a mention is never a run's cause", "mention_not_cause", sCTMention, dClaimTask)
	ruleMentionElsewhere  = newRule("claim_task", "a mention is never a run's cause (one outside the task's project is not looked at)", "cause_mismatch", sCTMention, dClaimTask)
	ruleCauseMismatch     = newRule("claim_task", "wake.message_id may only repeat the task's own request", "cause_mismatch", sCTCause, dClaimTask)
	ruleCauseNoRequest    = newRule("claim_task", "a task without a Task request takes no wake", "cause_mismatch", "", dClaimTask)
	ruleAttemptLive       = newRule("claim_task", "another attempt on the task is live", "attempt_in_progress", "", dClaimTask)
	ruleAttemptSuperseded = newRule("claim_task", "the key's attempt was superseded", "attempt_superseded", "", dClaimTask)
	ruleHarnessOutdated   = newRule("claim_discussion", "a claim without harness 2 is refused", "harness_outdated", sCDHarness, dClaimDisc)
	ruleHarnessNewer      = newRule("claim_discussion", "a harness above 2 is unsupported", "harness_unsupported", "", dClaimDisc)
	ruleMessageNotFound   = newRule("claim_discussion", "no such message in a project the owner belongs to", "message_not_found", sCDRoomWake, dClaimDisc)
	ruleNotYourRoom       = newRule("claim_discussion", "the message is not in one of the owner's private rooms", "not_your_room", sCDRoomWake, dClaimDisc)
	ruleNotWoken          = newRule("claim_discussion", "the message did not wake the runner's agent", "not_woken", sCDRoomWake, dClaimDisc)
	ruleReplyPosted       = newRule("claim_discussion", "the claim's reply is posted", "reply_posted", sCDReplay, dClaimDisc)
	ruleAgentDone         = newRule("claim_discussion", "the turn no longer waits on the agent: its last reply is posted", "reply_posted", sCDTurnOver, dClaimDisc)
	ruleTurnEnded         = newRule("claim_discussion", "the turn has ended", "turn_ended", sCDTurnOver, dClaimDisc)
	ruleTurnStopped       = newRule("claim_discussion", "the turn was stopped", "turn_stopped", sCDTurnOver, dClaimDisc)
	ruleTurnTimedOut      = newRule("claim_discussion", "the turn is out of time", "turn_timed_out", sCDTurnOver, dClaimDisc)
	ruleTurnReplaced      = newRule("claim_discussion", "the turn was replaced by the owner's next message", "turn_replaced", sCDTurnOver, dClaimDisc)
	ruleClaimSuperseded   = newRule("claim_discussion", "the key's discussion claim was superseded", "claim_superseded", "", dClaimDisc)
	ruleDraftPending      = newRule("claim_discussion", "a reviewer claims before the lead's draft is posted", "draft_pending", "", dClaimDisc)
	ruleReviewsPending    = newRule("claim_discussion", "the lead claims again before every review is posted", "reviews_pending", "", dClaimDisc)
	ruleNoRepliesLeft     = newRule("claim_discussion", "the turn allows no more replies", "no_replies_left", "", dClaimDisc)
	ruleDiscussionLive    = newRule("claim_discussion", "the agent has a live claim in the turn under another key", "discussion_in_progress", "", dClaimDisc)
	ruleLoneAgentDone     = newRule("claim_discussion", "a lone agent only drafts", "reply_posted", "", dClaimDisc)
	ruleProjectInvisible  = newRule("discover_team_agents", "the project does not exist or the caller is not a member", "project_not_visible", sDTList, dDiscover)
	ruleCredScope         = newRule("discover_team_agents", "an execution credential sees only its task's project", "project_not_visible", "", dDiscover)
)

// Reference decisions on credentials, allowed tools and times.
var (
	referenceExecutionTools = []string{"discover_team_agents", "get_project_context", "read_room", "post_message",
		"wait_for_mention", "handoff", "check_inbox", "checkpoint", "return_result", "update_pulse",
		"request_capability", "wait_for_updates", "request_step"}
	referenceDiscussionTools = []string{"read_room", "post_message"}
)

const (
	referenceLaunchTimeout = 15 * time.Minute
	discussionTTL          = 10 * time.Minute // the pages: "expires after 10 minutes"
	// liveMargin keeps the model away from instants it cannot decide
	// (a claim whose credential expires during the call).
	liveMargin = 30 * time.Second
)

// supersession is what the model knows of a claim being superseded.
type supersession int

const (
	notSuperseded supersession = iota // its key replays
	superseded                        // superseded: its key is refused
	perhaps                           // core: the server may have superseded it
)

type mAttempt struct {
	id, task, runner, key string
	claimedAt             time.Time
	liveUntil             time.Time
	superseded            supersession
	// idVar and claimedVar name the script variables holding the id and
	// claimed_at of an attempt first seen in an answer ("" for the world's).
	idVar, claimedVar string
	creds             []*mCred
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

type mCred struct {
	token    string
	kind     string // "exec" or "disc"
	step     int
	agent    string
	owner    string
	project  string
	allowed  []string
	revoked  bool // reference: a later replay or a newer claim revoked it
	tokenVar string
}

type model struct {
	profile suite.Profile
	now     time.Time // the fixture's now
	w       *world.World
	members map[string]map[string]bool // project -> handles
	people  map[string]*world.Person
	agents  map[string]*world.Agent
	runners map[string]*world.Runner
	rooms   map[string]*world.Room
	msgs    map[string]*world.Message
	msgIdx  map[string]int
	turns   map[string]*world.Turn
	tasks   map[string]*world.Task

	attempts []*mAttempt
	claims   []*mClaim
	creds    map[string]*mCred
	// seen holds every token the world or the server has given out, and
	// the script variable that holds it ("" for the world's).
	seen map[string]string
	// notVisibleText is the reference refusal text of project_not_visible
	// (the project's slug redacted), and the step that first gave it.
	notVisibleText string
	notVisibleVar  string
}

// mustTime resolves a time of a generated world, which is always valid.
func mustTime(t world.Time, now time.Time) time.Time {
	at, err := t.Resolve(now)
	if err != nil {
		panic(err)
	}
	return at
}

func newModel(w *world.World, profile suite.Profile, now time.Time, tokens []world.Token) *model {
	m := &model{profile: profile, now: now, w: w,
		members: map[string]map[string]bool{}, people: map[string]*world.Person{}, agents: map[string]*world.Agent{},
		runners: map[string]*world.Runner{}, rooms: map[string]*world.Room{}, msgs: map[string]*world.Message{}, msgIdx: map[string]int{},
		turns: map[string]*world.Turn{}, tasks: map[string]*world.Task{}, creds: map[string]*mCred{}, seen: map[string]string{}}
	for _, p := range w.Projects {
		m.members[p.Slug] = map[string]bool{}
	}
	for _, ms := range w.Memberships {
		m.members[ms.Project][ms.Person] = true
	}
	for i := range w.People {
		m.people[w.People[i].Handle] = &w.People[i]
	}
	for i := range w.Agents {
		m.agents[w.Agents[i].ID] = &w.Agents[i]
	}
	for i := range w.Runners {
		m.runners[w.Runners[i].ID] = &w.Runners[i]
	}
	for i := range w.Rooms {
		m.rooms[w.Rooms[i].ID] = &w.Rooms[i]
	}
	for i := range w.Messages {
		m.msgs[w.Messages[i].ID] = &w.Messages[i]
		m.msgIdx[w.Messages[i].ID] = i
	}
	for i := range w.Turns {
		m.turns[w.Turns[i].Message] = &w.Turns[i]
	}
	for i := range w.Tasks {
		m.tasks[w.Tasks[i].ID] = &w.Tasks[i]
	}
	for _, a := range w.Attempts {
		sup := notSuperseded
		if a.Superseded {
			sup = superseded
		}
		m.attempts = append(m.attempts, &mAttempt{id: a.ID, task: a.Task, runner: a.Runner, key: a.IdempotencyKey,
			claimedAt: mustTime(a.ClaimedAt, now), liveUntil: mustTime(a.LiveUntil, now), superseded: sup})
	}
	for _, c := range w.DiscussionClaims {
		sup := notSuperseded
		if c.Superseded {
			sup = superseded
		}
		mc := &mClaim{message: c.Message, runner: c.Runner, agent: m.runners[c.Runner].Agent, key: c.IdempotencyKey,
			role: c.Role, liveUntil: mustTime(c.LiveUntil, now), superseded: sup, replied: isTrue(c.ReplyPosted) || c.ReplyMessage != nil}
		mc.lead = m.turns[c.Message].Agents[0].Agent == mc.agent
		if c.Reviewing != nil {
			mc.reviewing = m.quote(*c.Reviewing)
		}
		m.claims = append(m.claims, mc)
	}
	for _, t := range tokens {
		m.seen[t.Token] = ""
	}
	return m
}

func ownerOf(agent string) string { o, _, _ := strings.Cut(agent, "/"); return o }

func (m *model) visible(owner, project string) bool { return m.members[project][owner] }

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

// turnOver is the rule that refuses a claim in a turn that no longer
// waits, nil while it waits.
func (m *model) turnOver(t *world.Turn) *rule {
	state := t.State
	if state == "" {
		state = "waiting"
	}
	if state == "waiting" && t.ExpiresAt != "" && !mustTime(t.ExpiresAt, m.now).After(time.Now().Add(liveMargin)) {
		state = "timed_out"
	}
	switch state {
	case "ended":
		return ruleTurnEnded
	case "stopped":
		return ruleTurnStopped
	case "timed_out":
		return ruleTurnTimedOut
	case "replaced":
		return ruleTurnReplaced
	}
	return nil
}

// team is the project's people and agents as discover_team_agents lists
// them (FIXTURE.md: a project's people are its members; its agents are
// those their owners' are).
func (m *model) team(project string) (people, agents []any) {
	people, agents = []any{}, []any{}
	for _, p := range m.w.People {
		if !m.members[project][p.Handle] {
			continue
		}
		var avatar any
		if p.AvatarURL != nil {
			avatar = *p.AvatarURL
		}
		people = append(people, map[string]any{"handle": p.Handle, "display_name": p.DisplayName, "avatar_url": avatar,
			"color": float64(p.Color), "away": p.Away})
	}
	for _, a := range m.w.Agents {
		owner, name, _ := strings.Cut(a.ID, "/")
		if !m.members[project][owner] {
			continue
		}
		var avatar, seen any
		if a.AvatarURL != nil {
			avatar = *a.AvatarURL
		}
		if a.LastSeenAt != "" {
			seen = mustTime(a.LastSeenAt, m.now).UTC().Format(time.RFC3339)
		}
		caps := []any{}
		for _, c := range a.Capabilities {
			caps = append(caps, map[string]any{"kind": c.Kind, "name": c.Name})
		}
		agents = append(agents, map[string]any{"agent_id": a.ID, "owner": owner, "name": name, "avatar_url": avatar,
			"model": a.Model, "client": a.Client, "role": a.Role, "capabilities": caps, "availability": a.Availability,
			"trust_level": a.TrustLevel, "last_seen_at": seen})
	}
	return people, agents
}

// caller is who a call is made as, as the model knows it.
type caller struct {
	kind   string // agent, runner, exec, disc, none, bogus
	agent  string
	owner  string
	runner string
	cred   *mCred
}

// expectation is what the model accepts as the answer to one call.
type expectation struct {
	// deny: the caller has no identity the server may accept (no token, a
	// token nobody issued; reference: a revoked credential): reference
	// wants HTTP 401, core a refusal or a protocol error.
	deny    bool
	denySrc string
	// must are the reasons the profile demands a refusal for; may those it
	// accepts one for.
	must, may []*rule
	// protoOK: a protocol error is as good as a refusal (core, calls with
	// credentials the server may have revoked or expired).
	protoOK bool
	// successSrc demands a success where no reason applies.
	successSrc string
	// success checks a successful answer and updates the model; refused
	// updates the model after an accepted refusal.
	success func(a *answer) []failure
	refused func(a *answer) []failure
}

func (e *expectation) reasons() []*rule { return append(slices.Clone(e.must), e.may...) }

// codes are the refusal codes the reference profile accepts.
func (e *expectation) codes() []string {
	var out []string
	for _, r := range e.reasons() {
		if !slices.Contains(out, r.code) {
			out = append(out, r.code)
		}
	}
	return out
}

// add records that r applies: the profile either demands the refusal or
// leaves it open.
func (e *expectation) add(m *model, r *rule) {
	if m.profile == suite.Reference || r.sentence != "" {
		e.must = append(e.must, r)
	} else {
		e.may = append(e.may, r)
	}
}

// open records a choice the pages leave open that the reference profile
// decides for success: core accepts a refusal.
func (e *expectation) open(m *model, r *rule) {
	if m.profile == suite.Core {
		e.may = append(e.may, r)
	}
}

// answer is one call's answer as the model judges it.
type answer struct {
	protoErr   error
	refused    bool
	code, text string
	structured map[string]any
	start, end time.Time
	step       int
}

// failure is one way an answer breaks the model.
type failure struct {
	src   string   // the sentence ID or decision broken
	msg   string   // what is wrong
	lines []string // script lines that assert the rule (they fail on this answer)
}

func (m *model) resolve(p principal, steps []*stepRun) (caller, bool) {
	switch p.kind {
	case "agent":
		if m.agents[p.id] == nil {
			return caller{}, false
		}
		return caller{kind: "agent", agent: p.id, owner: ownerOf(p.id)}, true
	case "runner":
		r := m.runners[p.id]
		if r == nil {
			return caller{}, false
		}
		return caller{kind: "runner", agent: r.Agent, owner: ownerOf(r.Agent), runner: p.id}, true
	case "cred":
		if p.step >= len(steps) || steps[p.step] == nil || steps[p.step].cred == nil {
			return caller{}, false
		}
		c := steps[p.step].cred
		return caller{kind: c.kind, agent: c.agent, owner: c.owner, cred: c}, true
	case "none", "bogus":
		return caller{kind: p.kind}, true
	}
	return caller{}, false
}

// expect returns what the model accepts for cmd made as c.
func (m *model) expect(cmd *command, c caller) *expectation {
	e := &expectation{}
	switch {
	case c.kind == "none" || c.kind == "bogus":
		e.deny, e.denySrc = true, srcPreamble
		if m.profile == suite.Reference {
			e.denySrc = dIdentity
		}
		return e
	case c.cred != nil && c.cred.revoked && m.profile == suite.Reference:
		e.deny, e.denySrc = true, dStateAndCache
		return e
	}
	if c.cred != nil && m.profile == suite.Core {
		e.protoOK = true
	}
	switch cmd.tool {
	case "discover_team_agents":
		m.expectDiscover(e, cmd, c)
	case "claim_task":
		m.expectClaimTask(e, cmd, c)
	case "claim_discussion":
		m.expectClaimDiscussion(e, cmd, c)
	}
	return e
}

func argString(args map[string]any, k string) (string, bool) {
	s, ok := args[k].(string)
	return s, ok
}

func (m *model) expectDiscover(e *expectation, cmd *command, c caller) {
	project, _ := argString(cmd.args, "project")
	if c.kind == "disc" {
		e.add(m, ruleDiscCredTool)
		return
	}
	if c.kind == "exec" && !slices.Contains(c.cred.allowed, "discover_team_agents") {
		e.add(m, ruleExecCredTool)
		return
	}
	if !m.visible(c.owner, project) {
		e.add(m, ruleProjectInvisible)
	} else if c.kind == "exec" && project != c.cred.project {
		e.add(m, ruleCredScope)
	}
	switch c.kind {
	case "agent":
		e.successSrc = sDTList
	case "runner":
		e.open(m, &rule{what: "the pages do not say whether a runner may list a team"})
		e.successSrc = dWhoMayCall
	case "exec":
		e.open(m, &rule{what: "the pages do not say what an execution credential may list"})
		e.successSrc = dDiscover
	}
	e.refused = func(a *answer) []failure {
		if m.profile != suite.Reference || a.code != ruleProjectInvisible.code {
			return nil
		}
		// One refusal for a missing and an invisible project: nothing but
		// the project's name may tell them apart.
		text := strings.ReplaceAll(a.text, project, "<redacted>")
		if m.notVisibleText == "" {
			m.notVisibleText, m.notVisibleVar = text, fmt.Sprintf("NV%d", a.step)
			return nil
		}
		if text != m.notVisibleText {
			return []failure{{src: dDiscover, msg: fmt.Sprintf("project_not_visible says %q here and %q before: a missing and an invisible project must get the same message", text, m.notVisibleText),
				lines: []string{fmt.Sprintf("eq $NV%d $%s", a.step, m.notVisibleVar)}}}
		}
		return nil
	}
	e.success = func(a *answer) []failure {
		people, agents := m.team(project)
		var fs []failure
		for _, part := range []struct {
			path, key string
			want      []any
		}{{"people", "handle", people}, {"agents", "agent_id", agents}} {
			got, _ := a.structured[part.path].([]any)
			normalizeTimes(got, "last_seen_at")
			if d := diffSet(part.want, got, part.key); d != "" {
				fs = append(fs, failure{src: sDTList, msg: fmt.Sprintf("the %s of project %s: %s", part.path, project, d),
					lines: m.teamLines(part.path, part.key, part.want, got)})
			}
		}
		return fs
	}
}

// teamLines are the script checks of a list of the team: its length, and
// for each element the suite expects, the fields the answer got wrong (a
// time as relative to the fixture's now, so that the script runs again
// later).
func (m *model) teamLines(path, key string, want, got []any) []string {
	lines := []string{fmt.Sprintf("json %s len %d", path, len(want))}
	byKey := map[string]map[string]any{}
	for _, g := range got {
		if obj, ok := g.(map[string]any); ok {
			byKey[fmt.Sprint(obj[key])] = obj
		}
	}
	for _, w := range want {
		obj := w.(map[string]any)
		sel := fmt.Sprintf("%s[%s=%s]", path, key, obj[key])
		g := byKey[fmt.Sprint(obj[key])]
		if g == nil {
			lines = append(lines, "json "+sel+" exists")
			continue
		}
		for _, f := range slices.Sorted(maps.Keys(obj)) {
			if reflect.DeepEqual(obj[f], g[f]) {
				continue
			}
			switch v := obj[f].(type) {
			case nil:
				lines = append(lines, fmt.Sprintf("json %s.%s null", sel, f))
			case string:
				if t, err := time.Parse(time.RFC3339, v); err == nil && f == "last_seen_at" {
					lines = append(lines, fmt.Sprintf("time %s.%s == %s", sel, f, m.relTime(t)))
					continue
				}
				lines = append(lines, fmt.Sprintf("json %s.%s == %s", sel, f, script.Quote(script.JSON(v))))
			default:
				lines = append(lines, fmt.Sprintf("json %s.%s == %s", sel, f, script.Quote(script.JSON(v))))
			}
		}
	}
	return lines
}

// normalizeTimes rewrites field of every object in list as RFC 3339 in
// UTC, to the second, where it parses: any spelling of the same instant
// compares equal.
func normalizeTimes(list []any, field string) {
	for _, x := range list {
		obj, _ := x.(map[string]any)
		if s, ok := obj[field].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil && t.Equal(t.Truncate(time.Second)) {
				obj[field] = t.UTC().Format(time.RFC3339)
			}
		}
	}
}

// diffSet compares two lists of objects keyed by key, ignoring order.
func diffSet(want, got []any, key string) string {
	index := func(xs []any) (map[string]any, []string) {
		m := map[string]any{}
		var keys []string
		for _, x := range xs {
			obj, _ := x.(map[string]any)
			k := fmt.Sprint(obj[key])
			m[k] = x
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return m, keys
	}
	wm, wk := index(want)
	gm, gk := index(got)
	if !slices.Equal(wk, gk) {
		return fmt.Sprintf("want %s [%s], got [%s]", key, strings.Join(wk, " "), strings.Join(gk, " "))
	}
	for _, k := range wk {
		if !reflect.DeepEqual(wm[k], gm[k]) {
			return fmt.Sprintf("%s %s: want %s, got %s", key, k, wire.Compact(wm[k]), wire.Compact(gm[k]))
		}
	}
	return ""
}

func (m *model) expectClaimTask(e *expectation, cmd *command, c caller) {
	taskID, _ := argString(cmd.args, "task_id")
	key, _ := argString(cmd.args, "idempotency_key")
	if c.kind != "runner" {
		e.add(m, ruleNotRunnerTask)
		return
	}
	t := m.tasks[taskID]
	switch {
	case t == nil || !m.visible(c.owner, t.Project):
		e.add(m, ruleTaskNotFound)
		return
	case t.Agent != c.agent:
		e.add(m, ruleNotRouted)
	}
	if wake, ok := cmd.args["wake"].(map[string]any); ok {
		id, _ := wake["message_id"].(string)
		msg := m.msgs[id]
		switch {
		case msg != nil && msg.Kind == "mention" && m.rooms[msg.Room].Project == t.Project:
			e.add(m, ruleMention)
		case msg != nil && msg.Kind == "mention":
			e.add(m, ruleMentionElsewhere)
		case t.RequestMessage != nil && id != *t.RequestMessage:
			e.add(m, ruleCauseMismatch)
		case t.RequestMessage == nil:
			e.add(m, ruleCauseNoRequest)
		}
	}
	if len(e.must) > 0 {
		return
	}
	now := time.Now()
	var a *mAttempt
	for _, x := range m.attempts {
		if x.runner == c.runner && x.task == taskID && x.key == key {
			a = x
		}
	}
	if a != nil {
		switch a.superseded {
		case superseded:
			e.add(m, ruleAttemptSuperseded)
		case perhaps:
			e.may = append(e.may, ruleAttemptSuperseded)
		}
		e.successSrc = sCTReplay
		e.success = func(ans *answer) []failure { return m.replayedAttempt(ans, a, c) }
		return
	}
	others := false
	for _, x := range m.attempts {
		if x.task != taskID || x.superseded == superseded {
			continue
		}
		if x.liveUntil.After(now.Add(-liveMargin)) {
			if x.liveUntil.Before(now.Add(liveMargin)) {
				e.may = append(e.may, ruleAttemptLive) // expiring during the call: either answer
			} else {
				e.add(m, ruleAttemptLive)
			}
		}
		others = true
	}
	if others {
		e.open(m, &rule{what: "the pages do not say whether a task may be claimed again under a new key"})
	}
	e.successSrc = sCTRunnerOnly
	e.success = func(ans *answer) []failure { return m.newAttempt(ans, taskID, key, c) }
}

// credentialChecks are the checks of a fresh credential in a claim's
// answer at path ("execution_credential" or "discussion_credential").
func (m *model) credentialChecks(ans *answer, path string, kind string) ([]failure, *mCred) {
	var fs []failure
	cred, _ := ans.structured[path].(map[string]any)
	tok, _ := cred["token"].(string)
	tokVar := fmt.Sprintf("T%d", ans.step)
	if v, seen := m.seen[tok]; seen {
		src, lines := sCTReplay, []string{fmt.Sprintf("# the token was given out before%s", map[bool]string{true: " (a world token)", false: ""}[v == ""])}
		if kind == "disc" {
			src = sCDReplay
		}
		if v != "" {
			lines = []string{fmt.Sprintf("! eq $%s $%s", tokVar, v)}
		}
		fs = append(fs, failure{src: src, msg: "the credential's token was given out before; every claim and replay gets a fresh one", lines: lines})
	}
	exp, err := time.Parse(time.RFC3339Nano, fmt.Sprint(cred["expires_at"]))
	if err == nil {
		switch {
		case kind == "disc":
			if !within(exp, ans, discussionTTL, suite.TimeTolerance) {
				fs = append(fs, failure{src: sCDTenMinutes, msg: fmt.Sprintf("the discussion credential expires at %s, not 10 minutes after the call", cred["expires_at"]),
					lines: []string{"time discussion_credential.expires_at ~ 10m"}})
			}
		case m.profile == suite.Reference:
			if !within(exp, ans, referenceLaunchTimeout, suite.TimeTolerance) {
				fs = append(fs, failure{src: dClaimTask, msg: fmt.Sprintf("the execution credential expires at %s, not 15 minutes (the default launch timeout) after the call", cred["expires_at"]),
					lines: []string{"time execution_credential.expires_at ~ 15m"}})
			}
		default:
			if !exp.After(ans.start) {
				fs = append(fs, failure{src: sCTReturns, msg: fmt.Sprintf("the execution credential expires at %s, before the call", cred["expires_at"]),
					lines: []string{"time execution_credential.expires_at > 0s"}})
			}
		}
	}
	var allowed []string
	for _, x := range asList(cred["allowed_tools"]) {
		allowed = append(allowed, fmt.Sprint(x))
	}
	switch {
	case kind == "disc" && m.profile == suite.Reference && !slices.Equal(allowed, referenceDiscussionTools):
		fs = append(fs, failure{src: dWhoMayCall, msg: fmt.Sprintf("allowed_tools %v, want %v", allowed, referenceDiscussionTools),
			lines: []string{"json discussion_credential.allowed_tools == " + script.Quote(script.JSON(referenceDiscussionTools))}})
	case kind == "disc" && slices.ContainsFunc(allowed, func(s string) bool { return !slices.Contains(referenceDiscussionTools, s) }):
		fs = append(fs, failure{src: sCDCredential, msg: fmt.Sprintf("a discussion credential may only read its room and reply, but allows %v", allowed),
			lines: []string{"json discussion_credential.allowed_tools within " + script.Quote(script.JSON(referenceDiscussionTools))}})
	case kind == "exec" && m.profile == suite.Reference && !slices.Equal(allowed, referenceExecutionTools):
		fs = append(fs, failure{src: dWhoMayCall, msg: fmt.Sprintf("allowed_tools %v, want %v", allowed, referenceExecutionTools),
			lines: []string{"json execution_credential.allowed_tools == " + script.Quote(script.JSON(referenceExecutionTools))}})
	case kind == "exec" && (slices.Contains(allowed, "claim_task") || slices.Contains(allowed, "claim_discussion")):
		fs = append(fs, failure{src: sCTCredential, msg: fmt.Sprintf("a run's credential allows a claim: %v", allowed),
			lines: []string{"! json execution_credential.allowed_tools contains claim_task", "! json execution_credential.allowed_tools contains claim_discussion"}})
	}
	mc := &mCred{token: tok, kind: kind, step: ans.step, allowed: allowed, tokenVar: tokVar}
	return fs, mc
}

func asList(v any) []any { l, _ := v.([]any); return l }

// within reports whether t is d after the call, give or take tol.
func within(t time.Time, a *answer, d, tol time.Duration) bool {
	return !t.Before(a.start.Add(d-tol)) && !t.After(a.end.Add(d+tol))
}

// issue records a credential the server gave out.
func (m *model) issue(cr *mCred, c caller, project string) {
	cr.agent, cr.owner, cr.project = c.agent, c.owner, project
	m.creds[cr.token] = cr
	m.seen[cr.token] = cr.tokenVar
}

func (m *model) replayedAttempt(ans *answer, a *mAttempt, c caller) []failure {
	fs := m.attemptFields(ans, a.task)
	at, _ := ans.structured["attempt"].(map[string]any)
	if id := fmt.Sprint(at["attempt_id"]); id != a.id {
		want := a.id
		if a.idVar != "" {
			want = "$" + a.idVar
		}
		fs = append(fs, failure{src: sCTReplay, msg: fmt.Sprintf("a replay answered attempt %s, want the key's attempt %s", id, a.id),
			lines: []string{"json attempt.attempt_id == " + want}})
	}
	if got, err := time.Parse(time.RFC3339Nano, fmt.Sprint(at["claimed_at"])); err == nil && !got.Equal(a.claimedAt) {
		want := a.claimedAt.UTC().Format(time.RFC3339Nano)
		if a.claimedVar != "" {
			want = "$" + a.claimedVar
		} else if rel := m.relTime(a.claimedAt); rel != "" {
			want = rel
		}
		fs = append(fs, failure{src: sCTReplay, msg: fmt.Sprintf("a replay answered claimed_at %s, want the attempt's %s", at["claimed_at"], a.claimedAt.UTC().Format(time.RFC3339Nano)),
			lines: []string{"time attempt.claimed_at == " + want}})
	}
	cf, cr := m.credentialChecks(ans, "execution_credential", "exec")
	fs = append(fs, cf...)
	if len(fs) > 0 {
		return fs
	}
	if m.profile == suite.Reference {
		for _, old := range a.creds {
			old.revoked = true
		}
	}
	m.issue(cr, c, m.tasks[a.task].Project)
	a.creds = append(a.creds, cr)
	if exp, err := time.Parse(time.RFC3339Nano, fmt.Sprint(ans.structured["execution_credential"].(map[string]any)["expires_at"])); err == nil && exp.After(a.liveUntil) {
		a.liveUntil = exp
	}
	a.superseded = notSuperseded
	return nil
}

// relTime writes t relative to the fixture's now, as scripts may.
func (m *model) relTime(t time.Time) string {
	d := t.Sub(m.now)
	switch {
	case d == 0:
		return "now"
	case d < 0:
		return "now-" + (-d).String()
	default:
		return "now+" + d.String()
	}
}

// attemptFields checks the attempt's task.
func (m *model) attemptFields(ans *answer, task string) []failure {
	at, _ := ans.structured["attempt"].(map[string]any)
	if got := fmt.Sprint(at["task_id"]); got != task {
		return []failure{{src: sCTReturns, msg: fmt.Sprintf("the attempt is for task %s, want %s", got, task), lines: []string{"json attempt.task_id == " + task}}}
	}
	return nil
}

func (m *model) newAttempt(ans *answer, taskID, key string, c caller) []failure {
	fs := m.attemptFields(ans, taskID)
	at, _ := ans.structured["attempt"].(map[string]any)
	id := fmt.Sprint(at["attempt_id"])
	if m.profile == suite.Reference {
		for _, x := range m.attempts {
			if x.id == id {
				want := x.id
				if x.idVar != "" {
					want = "$" + x.idVar
				}
				fs = append(fs, failure{src: dClaimTask, msg: fmt.Sprintf("a new key answered attempt %s, which another key claimed", id),
					lines: []string{"json attempt.attempt_id != " + want}})
			}
		}
	}
	claimed, err := time.Parse(time.RFC3339Nano, fmt.Sprint(at["claimed_at"]))
	if err == nil && !within(claimed, ans, 0, suite.TimeTolerance) {
		fs = append(fs, failure{src: sCTReturns, msg: fmt.Sprintf("a new attempt claimed at %s, not at the call", at["claimed_at"]),
			lines: []string{"time attempt.claimed_at ~ 0s"}})
	}
	cf, cr := m.credentialChecks(ans, "execution_credential", "exec")
	fs = append(fs, cf...)
	if len(fs) > 0 {
		return fs
	}
	a := &mAttempt{id: id, task: taskID, runner: c.runner, key: key, claimedAt: claimed,
		idVar: fmt.Sprintf("A%d", ans.step), claimedVar: fmt.Sprintf("CA%d", ans.step)}
	if exp, err := time.Parse(time.RFC3339Nano, fmt.Sprint(ans.structured["execution_credential"].(map[string]any)["expires_at"])); err == nil {
		a.liveUntil = exp
	}
	for _, x := range m.attempts {
		if x.task != taskID || x.superseded == superseded {
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
	m.issue(cr, c, m.tasks[taskID].Project)
	a.creds = append(a.creds, cr)
	m.attempts = append(m.attempts, a)
	return nil
}

func (m *model) expectClaimDiscussion(e *expectation, cmd *command, c caller) {
	msgID, _ := argString(cmd.args, "message_id")
	key, _ := argString(cmd.args, "idempotency_key")
	if c.kind != "runner" {
		e.add(m, ruleNotRunnerDisc)
		return
	}
	if h, ok := cmd.args["harness"]; !ok || toInt(h) < 2 {
		e.add(m, ruleHarnessOutdated)
	} else if toInt(h) > 2 {
		e.add(m, ruleHarnessNewer)
	}
	msg := m.msgs[msgID]
	if msg == nil || !m.visible(c.owner, m.rooms[msg.Room].Project) {
		e.add(m, ruleMessageNotFound)
		return
	}
	room := m.rooms[msg.Room]
	if room.Kind != "private" || room.Owner == nil || *room.Owner != c.owner {
		e.add(m, ruleNotYourRoom)
	}
	t := m.turns[msgID]
	idx := -1
	if t != nil {
		idx = slices.IndexFunc(t.Agents, func(a world.TurnAgent) bool { return a.Agent == c.agent })
	}
	if idx < 0 {
		e.add(m, ruleNotWoken)
	}
	if len(e.must) > 0 || idx < 0 {
		return
	}
	over := m.turnOver(t)
	var cl *mClaim
	for _, x := range m.claims {
		if x.runner == c.runner && x.message == msgID && x.key == key {
			cl = x
		}
	}
	left := m.repliesLeft(t)
	if cl != nil {
		if cl.replied {
			e.add(m, ruleReplyPosted)
		}
		if over != nil {
			e.add(m, over)
		}
		if isTrue(t.Agents[idx].ReplyPosted) {
			e.add(m, ruleAgentDone)
		}
		switch cl.superseded {
		case superseded:
			e.add(m, ruleClaimSuperseded)
		case perhaps:
			e.may = append(e.may, ruleClaimSuperseded)
		}
		if left == 0 {
			e.add(m, ruleNoRepliesLeft)
		}
		e.successSrc = sCDReplay
		e.success = func(ans *answer) []failure { return m.replayedClaim(ans, cl, t, room, c) }
		return
	}
	if isTrue(t.Agents[idx].ReplyPosted) {
		e.add(m, ruleAgentDone)
	}
	if over != nil {
		e.add(m, over)
	}
	// Harness 2's schedule (reference): the lead drafts; reviewers review
	// the posted draft; the lead then revises (one reviewer) or combines.
	lead := idx == 0
	draft := m.leadDraft(t)
	role := ""
	switch {
	case lead && draft == "":
		role = "draft"
	case !lead && draft == "":
		e.add(m, ruleDraftPending)
	case !lead:
		role = "review"
	case len(t.Agents) == 1:
		e.add(m, ruleLoneAgentDone)
	case slices.ContainsFunc(t.Agents[1:], func(a world.TurnAgent) bool { return !isTrue(a.ReplyPosted) }):
		e.add(m, ruleReviewsPending)
	case len(t.Agents) == 2:
		role = "revise"
	default:
		role = "combine"
	}
	if left == 0 {
		e.add(m, ruleNoRepliesLeft)
	}
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
