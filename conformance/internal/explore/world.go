package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/prickle-dev/prickle/spec/world"
)

// The worlds of stateful exploration: worlds (package world) generated
// from a seed. Times are written relative to the moment the world is
// materialized ("now-3h"); materializeFixture resolves them and gives
// every agent and runner a fresh token.

func ptr[T any](v T) *T { return &v }

// isTrue reports whether a deprecated flag of a world is given and true.
func isTrue(b *bool) bool { return b != nil && *b }

// roleFits reports whether agent may post or claim role in turn t
// (FIXTURE.md): the lead drafts, then revises (one other agent woken) or
// combines (two or more); every other agent reviews; a lone agent only
// drafts.
func roleFits(t *world.Turn, agent, role string) bool {
	if t == nil {
		return false
	}
	idx := slices.IndexFunc(t.Agents, func(a world.TurnAgent) bool { return a.Agent == agent })
	switch {
	case idx < 0:
		return false
	case idx > 0:
		return role == "review"
	case role == "draft":
		return true
	case role == "revise":
		return len(t.Agents) == 2
	case role == "combine":
		return len(t.Agents) >= 3
	}
	return false
}

// finalRole is the role of the last reply of the idx-th agent of turn t.
func finalRole(t *world.Turn, idx int) string {
	switch {
	case idx > 0:
		return "review"
	case len(t.Agents) == 1:
		return "draft"
	case len(t.Agents) == 2:
		return "revise"
	}
	return "combine"
}

// deriveReplyPosted sets the reply_posted flags from the replies, which
// FIXTURE.md makes the one record: an agent's part is posted once its
// final reply in the turn is, and a claim's reply once it names one.
func deriveReplyPosted(w *world.World) {
	for i := range w.Turns {
		t := &w.Turns[i]
		for j := range t.Agents {
			final := finalRole(t, j)
			t.Agents[j].ReplyPosted = ptr(slices.ContainsFunc(w.Messages, func(m world.Message) bool {
				return m.ReplyTurn != nil && *m.ReplyTurn == t.Message && m.Author == t.Agents[j].Agent &&
					m.ReplyRole != nil && *m.ReplyRole == final
			}))
		}
	}
	for i := range w.DiscussionClaims {
		c := &w.DiscussionClaims[i]
		c.ReplyPosted = nil
		if c.ReplyMessage != nil {
			c.ReplyPosted = ptr(true)
		}
	}
}

// Turn stages a generated turn can be at.
const (
	stageFresh      = iota // nothing posted
	stageDrafted           // the lead's draft is posted
	stageSomeReview        // some reviews are posted
	stageReviewed          // every review is posted
	stageDone              // the lead revised or combined: every part done
)

var (
	genProjects   = []string{"web", "api", "ops"}
	genPeople     = []string{"ana", "ben", "cy", "dee", "eli"}
	genAgentNames = []string{"builder", "critic", "tester"}
	genModels     = []string{"claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro"}
	genClients    = []string{"claude-code", "codex-cli", "gemini-cli"}
	availability  = []string{"online", "working", "idle", "asleep", "away", "offline"}
	capKinds      = []string{"mcp", "repo", "deploy", "data", "other"}
	provenances   = []string{"agent_generated", "from_approved_context", "owner_approved", "owner_instruction"}
)

// genWorld generates a world: two or three projects whose members overlap,
// people with one to three agents, runners (an agent may have none or two),
// private rooms, task requests, mentions, turns at every stage and in every
// state (some timed out by their deadline), tasks, and earlier claims made
// long ago, expired, live or superseded.
func genWorld(r *rand.Rand) *world.World {
	g := &worldGen{r: r, w: &world.World{Version: world.Version}, members: map[string][]string{},
		agentsOf: map[string][]string{}, runnersOf: map[string][]string{}, general: map[string]string{},
		private: map[[2]string]string{}, minutes: 600, requestProject: map[string]string{}, requestOwner: map[string]string{}}
	g.projectsAndPeople()
	g.agents()
	g.rooms()
	for _, p := range g.projects {
		g.conversations(p)
	}
	g.tasks()
	g.situations()
	deriveReplyPosted(g.w)
	return g.w
}

// worldGen generates one world, part after part, each drawing from r in
// turn: the world's shape is the seed's.
type worldGen struct {
	r *rand.Rand
	w *world.World
	// projects and people are the slugs and handles; members the people
	// of each project.
	projects, people []string
	members          map[string][]string
	// agentsOf are the agents of each person; runnersOf the runners of
	// each agent.
	agentsOf, runnersOf map[string][]string
	// general is each project's general room; private each member's
	// private room in it.
	general map[string]string
	private map[[2]string]string
	// msgN counts the messages; their created_at counts down to now from
	// minutes ago, in fixture order.
	msgN, minutes int
	// requests are the task requests, with their project and owner.
	requests                     []string
	requestProject, requestOwner map[string]string
}

// projectsAndPeople adds the projects, the people and the memberships:
// the first person is in every project (so one caller sees several
// teams); each other person joins at least one.
func (g *worldGen) projectsAndPeople() {
	r, w := g.r, g.w
	nProjects := 2 + r.IntN(2)
	nPeople := 3 + r.IntN(3)
	g.projects = genProjects[:nProjects]
	g.people = genPeople[:nPeople]
	for _, p := range g.projects {
		w.Projects = append(w.Projects, world.Project{Slug: p, Name: strings.ToUpper(p[:1]) + p[1:]})
	}
	for _, h := range g.people {
		p := world.Person{Handle: h, DisplayName: strings.ToUpper(h[:1]) + h[1:] + " Tester", Color: r.IntN(8), Away: r.IntN(4) == 0}
		if r.IntN(2) == 0 {
			p.AvatarURL = ptr(fmt.Sprintf("https://avatars.example.com/%s.png", h))
		}
		w.People = append(w.People, p)
	}
	for pi, h := range g.people {
		for qi, p := range g.projects {
			in := pi == 0 || r.IntN(2) == 0 || (qi == pi%nProjects)
			if in {
				g.members[p] = append(g.members[p], h)
				w.Memberships = append(w.Memberships, world.Membership{Project: p, Person: h})
			}
		}
	}
}

// agents adds one to three agents per person, each with no runner, one or
// two.
func (g *worldGen) agents() {
	r, w := g.r, g.w
	for _, h := range g.people {
		n := 1 + r.IntN(3)
		for _, name := range genAgentNames[:n] {
			id := h + "/" + name
			a := world.Agent{ID: id, Model: genModels[r.IntN(len(genModels))], Client: genClients[r.IntN(len(genClients))],
				Role: "", Capabilities: []world.Capability{}, Availability: availability[r.IntN(len(availability))],
				TrustLevel: []string{"owner_verified", "unverified"}[r.IntN(2)]}
			if r.IntN(3) > 0 {
				a.Role = strings.ToUpper(name[:1]) + name[1:] + " for " + h
			}
			if r.IntN(2) == 0 {
				a.AvatarURL = ptr(fmt.Sprintf("https://avatars.example.com/%s-%s.png", h, name))
			}
			if r.IntN(2) == 0 {
				a.LastSeenAt = world.Time(fmt.Sprintf("now-%dm", 1+r.IntN(600)))
			}
			for c := r.IntN(3); c > 0; c-- {
				a.Capabilities = append(a.Capabilities, world.Capability{Kind: capKinds[r.IntN(len(capKinds))], Name: fmt.Sprintf("cap-%d", r.IntN(100))})
			}
			w.Agents = append(w.Agents, a)
			g.agentsOf[h] = append(g.agentsOf[h], id)
			nr := 1
			switch r.IntN(6) {
			case 0:
				nr = 0
			case 1:
				nr = 2
			}
			for k := 1; k <= nr; k++ {
				rid := fmt.Sprintf("%s-%s-r%d", h, name, k)
				w.Runners = append(w.Runners, world.Runner{ID: rid, Agent: id, Name: rid})
				g.runnersOf[id] = append(g.runnersOf[id], rid)
			}
		}
	}
}

// rooms adds a general room per project and a private room per member.
func (g *worldGen) rooms() {
	for _, p := range g.projects {
		g.general[p] = p + "-general"
		g.w.Rooms = append(g.w.Rooms, world.Room{ID: p + "-general", Project: p, Kind: "general", Name: "general"})
		for _, h := range g.members[p] {
			id := p + "-" + h
			g.private[[2]string{p, h}] = id
			g.w.Rooms = append(g.w.Rooms, world.Room{ID: id, Project: p, Kind: "private", Owner: ptr(h), Name: h})
		}
	}
}

// addMsg adds message m, with the next id and, unless it has one, the
// next created_at, and returns its id.
func (g *worldGen) addMsg(m world.Message) string {
	g.msgN++
	m.ID = fmt.Sprintf("m%d", g.msgN)
	g.minutes -= 1 + g.r.IntN(5)
	if m.CreatedAt == "" {
		m.CreatedAt = world.Time(fmt.Sprintf("now-%dm", max(g.minutes, 1)))
	}
	if m.Body == "" {
		m.Body = fmt.Sprintf("Message %d.", g.msgN)
	}
	g.w.Messages = append(g.w.Messages, m)
	return m.ID
}

// conversations adds project p's messages: in each member's private room,
// task requests and messages that woke the member's agents (turns); in
// the general room, mentions and chat, which may wake an agent.
func (g *worldGen) conversations(p string) {
	r, w := g.r, g.w
	for _, h := range g.members[p] {
		room := g.private[[2]string{p, h}]
		for range 1 + r.IntN(3) {
			// A task request (some become a task's cause).
			if r.IntN(2) == 0 {
				id := g.addMsg(world.Message{Room: room, Kind: "task_request", Author: h, Body: "Task request: please do it."})
				g.requests = append(g.requests, id)
				g.requestProject[id], g.requestOwner[id] = p, h
			}
			msg := g.addMsg(world.Message{Room: room, Kind: "room_message", Author: h})
			ags := slices.Clone(g.agentsOf[h])
			r.Shuffle(len(ags), func(i, j int) { ags[i], ags[j] = ags[j], ags[i] })
			if r.IntN(5) == 0 {
				continue // a message that woke nobody
			}
			woken := ags[:1+r.IntN(len(ags))]
			genTurn(r, w, msg, woken, g.general[p], g.runnersOf, g.addMsg)
		}
	}
	for range 1 + r.IntN(2) {
		h := g.members[p][r.IntN(len(g.members[p]))]
		g.addMsg(world.Message{Room: g.general[p], Kind: "mention", Author: h, Body: "@someone please look."})
	}
	if r.IntN(2) == 0 {
		h := g.members[p][r.IntN(len(g.members[p]))]
		id := g.addMsg(world.Message{Room: g.general[p], Kind: "room_message", Author: h})
		if ags := g.agentsOf[h]; len(ags) > 0 && r.IntN(2) == 0 {
			w.Turns = append(w.Turns, world.Turn{Message: id, Agents: []world.TurnAgent{{Agent: ags[0]}}})
		}
	}
}

// tasks adds two to four tasks per project, routed to agents of members,
// some bound to a task request of the same project (by the routed agent's
// owner), each with the earlier attempts genAttempts gives it.
func (g *worldGen) tasks() {
	r, w := g.r, g.w
	taskN := 0
	for _, p := range g.projects {
		for range 2 + r.IntN(3) {
			h := g.members[p][r.IntN(len(g.members[p]))]
			ag := g.agentsOf[h][r.IntN(len(g.agentsOf[h]))]
			taskN++
			t := world.Task{ID: fmt.Sprintf("t%d", taskN), Project: p, Agent: ag, Title: fmt.Sprintf("Task %d", taskN)}
			if r.IntN(3) > 0 {
				for _, req := range g.requests {
					if g.requestProject[req] == p && g.requestOwner[req] == h && r.IntN(2) == 0 {
						t.RequestMessage = ptr(req)
						break
					}
				}
			}
			w.Tasks = append(w.Tasks, t)
			genAttempts(r, w, t, g.runnersOf[ag])
		}
	}
}

// genTurn adds the turn of message msg, which woke the agents in wake
// order, at a random stage and state, with the replies and the earlier
// discussion claims that stage implies.
func genTurn(r *rand.Rand, w *world.World, msg string, woken []string, generalRoom string, runnersOf map[string][]string, addMsg func(world.Message) string) {
	g := &turnGen{r: r, w: w, msg: msg, generalRoom: generalRoom, runnersOf: runnersOf, addMsg: addMsg, t: world.Turn{Message: msg}}
	for _, a := range woken {
		g.t.Agents = append(g.t.Agents, world.TurnAgent{Agent: a})
	}
	stage := []int{stageFresh, stageFresh, stageFresh, stageDrafted, stageDrafted, stageDrafted, stageSomeReview, stageSomeReview, stageReviewed, stageDone}[r.IntN(10)]
	if len(woken) == 1 && stage > stageDrafted {
		stage = stageDrafted
	}
	g.lead, g.reviewers = woken[0], woken[1:]
	g.reply(stage)
	g.earlierClaims()
	g.end()
	w.Turns = append(w.Turns, g.t)
}

// turnGen generates one turn (genTurn): the replies its stage implies,
// with their claims, earlier claims, and how it ended. Its random draws
// are made in a fixed order, so that a seed gives the same world.
type turnGen struct {
	r           *rand.Rand
	w           *world.World
	msg         string
	generalRoom string
	runnersOf   map[string][]string
	addMsg      func(world.Message) string

	t               world.Turn
	lead            string
	reviewers       []string
	draft           string // the draft's message, once posted
	replies, claimN int
}

// claim adds a discussion claim made long ago by one of agent's runners
// (none if it has none), for role, with the reply it posted.
func (g *turnGen) claim(agent, role string, reviewing *string, reply *string) {
	rs := g.runnersOf[agent]
	if len(rs) == 0 {
		return
	}
	g.claimN++
	c := world.DiscussionClaim{ID: fmt.Sprintf("dc-%s-%d", g.msg, g.claimN), Message: g.msg, Runner: rs[g.r.IntN(len(rs))],
		IdempotencyKey: fmt.Sprintf("old-%s-%d", g.msg, g.claimN), Role: role, Reviewing: reviewing,
		ClaimedAt: "now-50m", LiveUntil: "now-40m"}
	if reply != nil {
		c.ReplyMessage, c.ReplyPosted = reply, ptr(true)
	}
	g.w.DiscussionClaims = append(g.w.DiscussionClaims, c)
}

// post posts agent's reply in role to the turn, in the general room, and
// returns its message's ID.
func (g *turnGen) post(agent, role string, createdAt world.Time) string {
	g.replies++
	m := world.Message{Room: g.generalRoom, Kind: "room_message", Author: agent, Body: fmt.Sprintf("%s by %s (%d).", role, agent, g.replies),
		ReplyTurn: ptr(g.msg), ReplyRole: ptr(role), CreatedAt: createdAt}
	if g.r.IntN(4) > 0 { // otherwise FIXTURE.md's defaults
		m.Provenance, m.ProvenanceStatus = provenances[g.r.IntN(len(provenances))], []string{"claimed", "attested"}[g.r.IntN(2)]
	}
	return g.addMsg(m)
}

// reply posts the replies of stage, each with its claim: the lead's
// draft, the reviews posted so far, and the revision or combination that
// ends the discussion.
func (g *turnGen) reply(stage int) {
	t := &g.t
	if stage >= stageDrafted {
		g.draft = g.post(g.lead, "draft", "") // each agent posts each role once (FIXTURE.md)
		g.claim(g.lead, "draft", nil, ptr(g.draft))
		if len(g.reviewers) == 0 {
			t.Agents[0].ReplyPosted = ptr(true)
		}
	}
	for i, rv := range g.reviewers {
		posted := stage >= stageReviewed || (stage == stageSomeReview && (i == 0 || g.r.IntN(2) == 0) && i < len(g.reviewers)-1)
		if posted {
			id := g.post(rv, "review", "")
			g.claim(rv, "review", ptr(g.draft), ptr(id))
			t.Agents[i+1].ReplyPosted = ptr(true)
		}
	}
	if stage == stageDone {
		role := "revise"
		var quoting *string = ptr(g.draft)
		if len(g.reviewers) >= 2 {
			role, quoting = "combine", nil
		}
		id := g.post(g.lead, role, "")
		g.claim(g.lead, role, quoting, ptr(id))
		t.Agents[0].ReplyPosted = ptr(true)
	}
}

// earlierClaims adds, for some agents whose part is not done, an earlier
// unreplied claim: still live, or expired long ago (then maybe
// superseded by nothing).
func (g *turnGen) earlierClaims() {
	t, draft, r := &g.t, g.draft, g.r
	for i, ta := range t.Agents {
		if isTrue(ta.ReplyPosted) || r.IntN(3) > 0 {
			continue
		}
		role := "draft"
		var reviewing *string
		switch {
		case i > 0 && draft == "":
			continue // a reviewer before the draft had nothing to claim
		case i > 0:
			role, reviewing = "review", ptr(draft)
		case draft != "" && len(g.reviewers) == 1:
			role, reviewing = "revise", ptr(draft)
		case draft != "":
			role = "combine"
		}
		if i == 0 && draft != "" && slices.ContainsFunc(t.Agents[1:], func(a world.TurnAgent) bool { return !isTrue(a.ReplyPosted) }) {
			continue // the lead waits for reviews
		}
		rs := g.runnersOf[ta.Agent]
		if len(rs) == 0 {
			continue
		}
		g.claimN++
		c := world.DiscussionClaim{ID: fmt.Sprintf("dc-%s-%d", g.msg, g.claimN), Message: g.msg, Runner: rs[r.IntN(len(rs))],
			IdempotencyKey: fmt.Sprintf("old-%s-%d", g.msg, g.claimN), Role: role, Reviewing: reviewing}
		if r.IntN(2) == 0 {
			c.ClaimedAt, c.LiveUntil = "now-3m", "now+7m"
		} else {
			c.ClaimedAt, c.LiveUntil = "now-3h", "now-2h50m"
		}
		g.w.DiscussionClaims = append(g.w.DiscussionClaims, c)
	}
}

// end draws how the turn stands: its state (a turn that waits on nobody
// has ended), its deadline and its reply limit.
func (g *turnGen) end() {
	t, r := &g.t, g.r
	switch r.IntN(14) {
	case 0:
		t.State = "ended"
	case 1:
		t.State = "stopped"
	case 2:
		t.State = "timed_out"
	case 3:
		t.State = "replaced"
	default:
		t.State = "waiting"
	}
	if t.State == "waiting" && !slices.ContainsFunc(t.Agents, func(a world.TurnAgent) bool { return !isTrue(a.ReplyPosted) }) {
		t.State = "ended" // a turn that waits on nobody has ended
	}
	switch r.IntN(8) {
	case 0:
		t.ExpiresAt = "now-1h" // out of time by its deadline
	case 1:
		t.ExpiresAt = "now+2h"
	}
	switch r.IntN(4) {
	case 0:
		t.ReplyLimit = ptr(g.replies) // no reply left
	case 1:
		t.ReplyLimit = ptr(min(g.replies+1, 8))
	}
}

// genAttempts adds earlier claim_task attempts on t: none, one made long
// ago and expired (maybe superseded by a later one), or one still live.
func genAttempts(r *rand.Rand, w *world.World, t world.Task, runners []string) {
	if len(runners) == 0 {
		return
	}
	n := 0
	add := func(claimed, live world.Time, superseded bool) {
		n++
		w.Attempts = append(w.Attempts, world.Attempt{ID: fmt.Sprintf("att-%s-%d", t.ID, n), Task: t.ID,
			Runner: runners[r.IntN(len(runners))], IdempotencyKey: fmt.Sprintf("old-%s-%d", t.ID, n),
			ClaimedAt: claimed, LiveUntil: live, Superseded: superseded})
	}
	switch r.IntN(5) {
	case 0:
		add("now-5h", "now-4h45m", false) // long ago, expired
	case 1:
		add("now-6h", "now-5h45m", true) // superseded by the next
		add("now-3h", "now-2h45m", false)
	case 2:
		add("now-4m", "now+11m", false) // still live
	case 3:
		add("now-9h", "now-8h45m", true)
		add("now-2m", "now+13m", false)
	}
}
