package explore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/conformance/report"
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

// The decisions of server/README.md the model cites.
var (
	dIdentity      = decision("Identity and tokens")
	dWhoMayCall    = decision("Who may call what")
	dRefusals      = decision(suite.RefusalsDecision)
	dClaimTask     = decision("claim_task")
	dClaimDisc     = decision("claim_discussion")
	dDiscover      = decision("discover_team_agents")
	dStateAndCache = decision("State and caches")
	dOrder         = decision("Refusal order")
	dOrders        = decision("The order of `people` and `agents`")
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
	rank     int    // its place in the tool's refusal order (order); rules of one rank are left open
	// situations are the different situations in which the rule applies
	// (a general room, another owner's private room), each of which a run
	// must provoke; none: the rule is one situation.
	situations []string
}

// in names the situations in which r applies.
func (r *rule) in(situations ...string) *rule { r.situations = situations; return r }

// order gives each level of rules its rank: the reference profile wants
// the first applicable refusal of server/README.md's "Refusal order", and
// accepts any code of that level.
func order(levels ...[]*rule) {
	for i, l := range levels {
		for _, r := range l {
			r.rank = i
		}
	}
}

// modelRules are every rule of the model; tests read the codes from here.
var modelRules []*rule

// Rule is a refusal the model knows: the tool it refuses and why, the
// reference server's code, the page sentence that makes it mandatory (""
// where only a decision does), and the server/README.md decision, by its
// title, that names the code.
// Situation, in PageRefusals, is one of the situations in which it
// applies ("" where it names none).
type Rule struct{ Tool, What, Code, Sentence, Decision, Situation string }

// Key names the rule in report.Exploration.Provoked, as
// report.RefusalEvidence.Name does: "TOOL CODE (SENTENCE)", then
// ": SITUATION" if it has one.
func (r Rule) Key() string {
	return report.RefusalEvidence{Tool: r.Tool, Code: r.Code, Sentence: r.Sentence, Situation: r.Situation}.Name()
}

func (r *rule) export(situation string) Rule {
	return Rule{Tool: r.tool, What: r.what, Code: r.code, Sentence: r.sentence, Decision: strings.TrimPrefix(r.decision, decisionPrefix), Situation: situation}
}

// Rules returns every refusal rule of the model.
func Rules() []Rule {
	out := make([]Rule, len(modelRules))
	for i, r := range modelRules {
		out[i] = r.export("")
	}
	return out
}

// PageRefusals returns the refusals a page states: the rules a sentence of
// the pages makes mandatory, in every profile, one for each situation in
// which it applies. A run provokes each of them
// (report.Exploration.Provoked), or it does not certify.
func PageRefusals() []Rule {
	var out []Rule
	for _, r := range modelRules {
		if r.sentence == "" {
			continue
		}
		if len(r.situations) == 0 {
			out = append(out, r.export(""))
		}
		for _, sit := range r.situations {
			out = append(out, r.export(sit))
		}
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
	expires  time.Time // as the claim's answer said; zero if it did not parse
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
	// scope is what a linearizability search may change (linearize.go).
	scope scope
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
	// where are the situations the rules that apply are in (rule.in).
	where map[*rule]string
}

func (e *expectation) reasons() []*rule { return append(slices.Clone(e.must), e.may...) }

// codes are the refusal codes the reference profile accepts: those of the
// first rank of the refusal order among the rules that apply, and of the
// rules that may apply ahead of them.
func (e *expectation) codes() []string {
	first := -1
	for _, r := range e.must {
		if first < 0 || r.rank < first {
			first = r.rank
		}
	}
	var out []string
	for _, r := range e.reasons() {
		if first >= 0 && r.rank > first {
			continue
		}
		if !slices.Contains(out, r.code) {
			out = append(out, r.code)
		}
	}
	return out
}

// first is the rule that applies first in the refusal order.
func (e *expectation) first() *rule {
	r := e.must[0]
	for _, x := range e.must {
		if x.rank < r.rank {
			r = x
		}
	}
	return r
}

// source names what the reference profile holds r to: its decision, and
// the sentence behind it.
func (r *rule) source() string {
	if r.sentence != "" {
		return r.sentence + " (" + r.decision + ")"
	}
	return r.decision
}

// applies reports whether a rule of code applies to the call, whatever
// its rank.
func (e *expectation) applies(code string) bool {
	return slices.ContainsFunc(e.reasons(), func(r *rule) bool { return r.code == code })
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

// addIn records that r applies, in situation (one of r's).
func (e *expectation) addIn(m *model, r *rule, situation string) {
	if !slices.Contains(r.situations, situation) {
		panic("explore: " + r.code + " has no situation " + situation)
	}
	if e.where == nil {
		e.where = map[*rule]string{}
	}
	e.where[r] = situation
	e.add(m, r)
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
	mc := &mCred{token: tok, kind: kind, step: ans.step, allowed: allowed, tokenVar: tokVar, expires: exp}
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

// judge compares one answer with the expectation.
func (m *model) judge(e *expectation, a *answer) []failure {
	var he *wire.HTTPError
	switch {
	case e.deny && m.profile == suite.Reference:
		if !errors.As(a.protoErr, &he) || he.Status != 401 {
			return []failure{{src: e.denySrc, msg: fmt.Sprintf("a call without a known token was answered with %s, want HTTP 401", describe(a)), lines: []string{"stdout 'HTTP 401'"}}}
		}
		return nil
	case e.deny:
		if a.protoErr == nil && !a.refused {
			return []failure{{src: e.denySrc, msg: "a call without a known token succeeded"}}
		}
		return nil
	case a.protoErr != nil && e.protoOK:
		return nil
	case a.protoErr != nil:
		return []failure{{src: srcWire, msg: fmt.Sprintf("answered with a protocol error (%v); a refusal must be a tool result with isError: true", a.protoErr)}}
	case a.refused:
		if len(e.must) == 0 && len(e.may) == 0 {
			return []failure{{src: e.successSrc, msg: fmt.Sprintf("refused (%s), want a success", describe(a)), lines: []string{"ok"}}}
		}
		if m.profile == suite.Reference && !slices.Contains(e.codes(), a.code) {
			// The rule broken is the first one that applies; a later one
			// answered instead breaks the refusal order too.
			r := e.first()
			why := r.what
			if e.applies(a.code) {
				why += "; " + a.code + " applies too, but comes later (" + dOrder + ")"
			}
			return []failure{{src: r.source(), msg: fmt.Sprintf("refused with %q, want %s (%s)", a.code, strings.Join(e.codes(), " or "), why),
				lines: []string{"refused " + strings.Join(e.codes(), "|")}}}
		}
		if e.refused != nil {
			return e.refused(a)
		}
		return nil
	case len(e.must) > 0:
		r := e.first()
		src := r.sentence
		line := "refused"
		if m.profile == suite.Reference {
			src = r.source()
			line = "refused " + strings.Join(e.codes(), "|")
		}
		return []failure{{src: src, msg: fmt.Sprintf("succeeded, but it must be refused: %s", r.what), lines: []string{line}}}
	case e.success != nil:
		return e.success(a)
	}
	return nil
}

// provoked is the page refusal an accepted refusal a is evidence of, nil
// if none: a refusal shows that a server enforces a rule only where no
// other reason could explain it. So the rule must be the one reason that
// applies, mandatory or left open (core); in the reference profile,
// whose codes are checked, the one reason that applies with the code the
// server gave will do. A call by a credential a replay may have replaced,
// or that may have expired, is evidence of nothing: the server may refuse
// it for that.
func (m *model) provoked(e *expectation, a *answer, c caller) (Rule, bool) {
	if !a.refused || e.deny || a.protoErr != nil || c.cred != nil && m.mayBeInvalid(c.cred) {
		return Rule{}, false
	}
	rs := e.reasons()
	if m.profile == suite.Reference {
		rs = slices.DeleteFunc(rs, func(r *rule) bool { return r.code != a.code })
	}
	if len(rs) != 1 || rs[0].sentence == "" {
		return Rule{}, false
	}
	return rs[0].export(e.where[rs[0]]), true
}

// mayBeInvalid reports whether the server may no longer accept cr: a
// replay of its claim gave a newer credential, or it expires about now.
func (m *model) mayBeInvalid(cr *mCred) bool {
	if !cr.expires.IsZero() && cr.expires.Before(time.Now().Add(liveMargin)) {
		return true
	}
	for _, a := range m.attempts {
		if i := slices.Index(a.creds, cr); i >= 0 && (i < len(a.creds)-1 || a.superseded != notSuperseded) {
			return true
		}
	}
	for _, cl := range m.claims {
		if i := slices.Index(cl.creds, cr); i >= 0 && (i < len(cl.creds)-1 || cl.superseded != notSuperseded) {
			return true
		}
	}
	return false
}

func describe(a *answer) string {
	switch {
	case a.protoErr != nil:
		return "a protocol error: " + a.protoErr.Error()
	case a.refused && a.code != "":
		return fmt.Sprintf("a refusal %s: %s", a.code, a.text)
	case a.refused:
		return "a refusal: " + a.text
	}
	return "a success"
}
