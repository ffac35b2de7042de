package explore

import (
	"fmt"
	"slices"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
)

// The model of claim_task.

// The sentences of claim_task the model cites.
var (
	sCTRunnerOnly = sentence("claim_task#5e5dfcd3") // Runner devices only: claim a task routed to your agent ...
	sCTReturns    = sentence("claim_task#d58db1d3") // Returns the attempt and an execution credential ...
	sCTReplay     = sentence("claim_task#1d2c6a82") // Retrying with the same idempotency key replays the claim ...
	sCTCause      = sentence("claim_task#1900f01b") // ... wake.message_id may only repeat it.
	sCTMention    = sentence("claim_task#fa24cf09") // A mention is never a run's cause.
	sCTPaired     = sentence("claim_task#e94d1a5d") // Only a paired runner can claim.
	sCTCredential = sentence("claim_task#6ebe5180") // The runner receives a short-lived credential for one task and attempt.
)

// The reasons to refuse a claim_task call.
var (
	ruleNotRunnerTask     = newRule("claim_task", "only a paired runner can claim a task", "not_runner", sCTPaired, dWhoMayCall).in(sitAgent, sitCredential)
	ruleTaskNotFound      = newRule("claim_task", "no such task in a project the runner's owner belongs to", "task_not_found", sCTRunnerOnly, dClaimTask).in(sitNoSuchTask, sitTaskElsewhere)
	ruleNotRouted         = newRule("claim_task", "the task is routed to another agent", "not_routed", sCTRunnerOnly, dClaimTask).in(sitOwnAgentsTask, sitOtherOwnersTask)
	ruleMention           = newRule("claim_task", "a mention is never a run's cause", "mention_not_cause", sCTMention, dClaimTask)
	ruleCauseMismatch     = newRule("claim_task", "wake.message_id may only repeat the task's own request", "cause_mismatch", sCTCause, dClaimTask)
	ruleCauseNoRequest    = newRule("claim_task", "a task without a Task request takes no wake", "cause_mismatch", "", dClaimTask)
	ruleAttemptLive       = newRule("claim_task", "another attempt on the task is live", "attempt_in_progress", "", dClaimTask)
	ruleAttemptSuperseded = newRule("claim_task", "the key's attempt was superseded", "attempt_superseded", "", dClaimTask)
)

// The situations in which a page's refusal of claim_task applies: who
// calls, and whose task it is.
const (
	sitAgent           = "an agent"
	sitCredential      = "a credential"
	sitNoSuchTask      = "no such task"
	sitTaskElsewhere   = "a task of a project the owner is not in"
	sitOwnAgentsTask   = "a task of another agent of the same owner"
	sitOtherOwnersTask = "a task of another owner's agent"
)

// callerSituation is the situation of a call by c, who is no runner.
func callerSituation(c caller) string {
	if c.cred != nil {
		return sitCredential
	}
	return sitAgent
}

func init() {
	order([]*rule{ruleNotRunnerTask}, []*rule{ruleTaskNotFound}, []*rule{ruleNotRouted},
		[]*rule{ruleMention, ruleCauseMismatch, ruleCauseNoRequest}, []*rule{ruleAttemptSuperseded, ruleAttemptLive})
}

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

func (m *model) expectClaimTask(e *expectation, cmd *command, c caller) {
	taskID, _ := argString(cmd.args, "task_id")
	key, _ := argString(cmd.args, "idempotency_key")
	if c.kind != "runner" {
		e.addIn(m, ruleNotRunnerTask, callerSituation(c))
		return
	}
	t := m.tasks[taskID]
	switch {
	case t == nil:
		e.addIn(m, ruleTaskNotFound, sitNoSuchTask)
		return
	case !m.visible(c.owner, t.Project):
		e.addIn(m, ruleTaskNotFound, sitTaskElsewhere)
		return
	case ownerOf(t.Agent) == c.owner && t.Agent != c.agent:
		e.addIn(m, ruleNotRouted, sitOwnAgentsTask)
	case t.Agent != c.agent:
		e.addIn(m, ruleNotRouted, sitOtherOwnersTask)
	}
	if wake, ok := cmd.args["wake"].(map[string]any); ok {
		id, _ := wake["message_id"].(string)
		msg := m.msgs[id]
		switch {
		case msg != nil && msg.Kind == "mention": // in whatever project
			e.add(m, ruleMention)
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

// claimTask is a claim_task call on one of the world's tasks, mostly by a
// runner of its agent, with one of the keys used before or a fresh one,
// and sometimes a wake.
func (g *generator) claimTask(i int) *command {
	r := g.r
	t := g.w.Tasks[r.IntN(len(g.w.Tasks))]
	c := &command{tool: "claim_task", args: map[string]any{"task_id": t.ID}}
	switch y := r.IntN(100); {
	case y < 75 && len(g.runnersOf[t.Agent]) > 0:
		c.p = principal{kind: "runner", id: g.pick(g.runnersOf[t.Agent])}
	case y < 85:
		c.p = principal{kind: "runner", id: g.pick(g.runners)}
	case y < 91:
		c.p = principal{kind: "agent", id: g.pick(g.agents)}
	case y < 97:
		c.p = g.credOrElse(principal{kind: "agent", id: t.Agent})
	default:
		c.p = g.nobody()
	}
	if r.IntN(20) == 0 {
		c.args["task_id"] = "no-such-task"
	}
	k := [2]string{c.p.id, t.ID}
	switch y := r.IntN(100); {
	case y < 40 && len(g.taskKeys[k]) > 0:
		c.args["idempotency_key"] = g.pick(g.taskKeys[k])
	case y < 47:
		// Any runner's key for the task, in an order the seed fixes (not
		// the map's).
		var all []string
		for kk, v := range g.taskKeys {
			if kk[1] == t.ID {
				all = append(all, v...)
			}
		}
		slices.Sort(all)
		c.args["idempotency_key"] = g.pick(all)
	case y < 57 && g.crossKey(c.p.id) != "":
		c.args["idempotency_key"] = g.crossKey(c.p.id)
		g.taskKeys[k] = append(g.taskKeys[k], c.args["idempotency_key"].(string))
	default:
		key := fmt.Sprintf("key-%d", i)
		c.args["idempotency_key"] = key
		g.taskKeys[k] = append(g.taskKeys[k], key)
		g.keysOf[c.p.id] = append(g.keysOf[c.p.id], key)
	}
	switch y := r.IntN(100); {
	case y < 65:
	case y < 88 && t.RequestMessage != nil:
		c.args["wake"] = map[string]any{"message_id": *t.RequestMessage}
	case y < 91:
		c.args["wake"] = map[string]any{"message_id": g.pick(g.requests)}
	case y < 94:
		c.args["wake"] = map[string]any{"message_id": g.pick(g.others)}
	case y < 99:
		c.args["wake"] = map[string]any{"message_id": g.pick(g.mentions)}
	default:
		c.args["wake"] = map[string]any{"message_id": "no-such-message"}
	}
	return c
}
