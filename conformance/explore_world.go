package conformance

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// The worlds of stateful exploration: fixtures (server/store/FIXTURE.md,
// version 1) generated from a seed. Times are written relative to the
// moment the fixture is materialized ("now-3h"); materializeFixture
// resolves them and gives every agent and runner a fresh token.

type fxWorld struct {
	Version          int           `json:"version"`
	Projects         []fxProject   `json:"projects,omitempty"`
	People           []fxPerson    `json:"people,omitempty"`
	Memberships      []fxMember    `json:"memberships,omitempty"`
	Agents           []fxAgent     `json:"agents,omitempty"`
	Runners          []fxRunner    `json:"runners,omitempty"`
	Rooms            []fxRoom      `json:"rooms,omitempty"`
	Messages         []fxMessage   `json:"messages,omitempty"`
	Turns            []fxTurn      `json:"turns,omitempty"`
	Tasks            []fxTask      `json:"tasks,omitempty"`
	Attempts         []fxAttempt   `json:"attempts,omitempty"`
	DiscussionClaims []fxDiscClaim `json:"discussion_claims,omitempty"`
}

type fxProject struct {
	Slug string `json:"slug"`
	Name string `json:"name,omitempty"`
}

type fxPerson struct {
	Handle      string  `json:"handle"`
	DisplayName string  `json:"display_name"`
	AvatarURL   *string `json:"avatar_url"`
	Color       int     `json:"color"`
	Away        bool    `json:"away"`
}

type fxMember struct {
	Project string `json:"project"`
	Person  string `json:"person"`
}

type fxCapability struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

type fxAgent struct {
	ID           string         `json:"id"`
	AvatarURL    *string        `json:"avatar_url"`
	Model        string         `json:"model"`
	Client       string         `json:"client"`
	Role         string         `json:"role"`
	Capabilities []fxCapability `json:"capabilities"`
	Availability string         `json:"availability"`
	TrustLevel   string         `json:"trust_level"`
	LastSeenAt   *string        `json:"last_seen_at"`
	Token        string         `json:"token,omitempty"`
}

type fxRunner struct {
	ID    string `json:"id"`
	Agent string `json:"agent"`
	Name  string `json:"name,omitempty"`
	Token string `json:"token,omitempty"`
}

type fxRoom struct {
	ID      string  `json:"id"`
	Project string  `json:"project"`
	Kind    string  `json:"kind"`
	Owner   *string `json:"owner,omitempty"`
	Name    string  `json:"name,omitempty"`
}

type fxMessage struct {
	ID               string  `json:"id"`
	Room             string  `json:"room"`
	Kind             string  `json:"kind"`
	Author           string  `json:"author"`
	Body             string  `json:"body"`
	Provenance       string  `json:"provenance,omitempty"`
	ProvenanceStatus string  `json:"provenance_status,omitempty"`
	CreatedAt        string  `json:"created_at,omitempty"`
	ReplyTurn        *string `json:"reply_turn,omitempty"`
	ReplyRole        *string `json:"reply_role,omitempty"`
}

type fxTurnAgent struct {
	Agent       string `json:"agent"`
	ReplyPosted bool   `json:"reply_posted"`
}

type fxTurn struct {
	Message    string        `json:"message"`
	State      string        `json:"state,omitempty"`
	Agents     []fxTurnAgent `json:"agents"`
	ReplyLimit *int          `json:"reply_limit,omitempty"`
	ExpiresAt  *string       `json:"expires_at,omitempty"`
}

type fxTask struct {
	ID             string  `json:"id"`
	Project        string  `json:"project"`
	Agent          string  `json:"agent"`
	Title          string  `json:"title,omitempty"`
	RequestMessage *string `json:"request_message"`
}

type fxAttempt struct {
	ID             string `json:"id"`
	Task           string `json:"task"`
	Runner         string `json:"runner"`
	IdempotencyKey string `json:"idempotency_key"`
	ClaimedAt      string `json:"claimed_at"`
	LiveUntil      string `json:"live_until"`
	Superseded     bool   `json:"superseded,omitempty"`
}

type fxDiscClaim struct {
	ID             string  `json:"id"`
	Message        string  `json:"message"`
	Runner         string  `json:"runner"`
	IdempotencyKey string  `json:"idempotency_key"`
	Role           string  `json:"role"`
	Reviewing      *string `json:"reviewing,omitempty"`
	ClaimedAt      string  `json:"claimed_at"`
	LiveUntil      string  `json:"live_until"`
	Superseded     bool    `json:"superseded,omitempty"`
	ReplyMessage   *string `json:"reply_message,omitempty"`
	ReplyPosted    bool    `json:"reply_posted,omitempty"`
}

func (w *fxWorld) marshal() []byte {
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		panic(err) // plain structs
	}
	return append(b, '\n')
}

func ptr[T any](v T) *T { return &v }

// roleFits reports whether agent may post or claim role in turn t
// (FIXTURE.md): the lead drafts, then revises (one other agent woken) or
// combines (two or more); every other agent reviews; a lone agent only
// drafts.
func roleFits(t *fxTurn, agent, role string) bool {
	if t == nil {
		return false
	}
	idx := slices.IndexFunc(t.Agents, func(a fxTurnAgent) bool { return a.Agent == agent })
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
func finalRole(t *fxTurn, idx int) string {
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
func (w *fxWorld) deriveReplyPosted() {
	for i := range w.Turns {
		t := &w.Turns[i]
		for j := range t.Agents {
			final := finalRole(t, j)
			t.Agents[j].ReplyPosted = slices.ContainsFunc(w.Messages, func(m fxMessage) bool {
				return m.ReplyTurn != nil && *m.ReplyTurn == t.Message && m.Author == t.Agents[j].Agent &&
					m.ReplyRole != nil && *m.ReplyRole == final
			})
		}
	}
	for i := range w.DiscussionClaims {
		w.DiscussionClaims[i].ReplyPosted = w.DiscussionClaims[i].ReplyMessage != nil
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
func genWorld(r *rand.Rand) *fxWorld {
	w := &fxWorld{Version: 1}
	nProjects := 2 + r.IntN(2)
	nPeople := 3 + r.IntN(3)
	projects := genProjects[:nProjects]
	people := genPeople[:nPeople]
	for _, p := range projects {
		w.Projects = append(w.Projects, fxProject{Slug: p, Name: strings.ToUpper(p[:1]) + p[1:]})
	}
	for _, h := range people {
		p := fxPerson{Handle: h, DisplayName: strings.ToUpper(h[:1]) + h[1:] + " Tester", Color: r.IntN(8), Away: r.IntN(4) == 0}
		if r.IntN(2) == 0 {
			p.AvatarURL = ptr(fmt.Sprintf("https://avatars.example.com/%s.png", h))
		}
		w.People = append(w.People, p)
	}
	// Memberships: the first person is in every project (so one caller
	// sees several teams); each other person joins at least one.
	members := map[string][]string{}
	for pi, h := range people {
		for qi, p := range projects {
			in := pi == 0 || r.IntN(2) == 0 || (qi == pi%nProjects)
			if in {
				members[p] = append(members[p], h)
				w.Memberships = append(w.Memberships, fxMember{Project: p, Person: h})
			}
		}
	}
	// Agents and runners.
	agentsOf := map[string][]string{}
	runnersOf := map[string][]string{}
	for _, h := range people {
		n := 1 + r.IntN(3)
		for _, name := range genAgentNames[:n] {
			id := h + "/" + name
			a := fxAgent{ID: id, Model: genModels[r.IntN(len(genModels))], Client: genClients[r.IntN(len(genClients))],
				Role: "", Capabilities: []fxCapability{}, Availability: availability[r.IntN(len(availability))],
				TrustLevel: []string{"owner_verified", "unverified"}[r.IntN(2)]}
			if r.IntN(3) > 0 {
				a.Role = strings.ToUpper(name[:1]) + name[1:] + " for " + h
			}
			if r.IntN(2) == 0 {
				a.AvatarURL = ptr(fmt.Sprintf("https://avatars.example.com/%s-%s.png", h, name))
			}
			if r.IntN(2) == 0 {
				a.LastSeenAt = ptr(fmt.Sprintf("now-%dm", 1+r.IntN(600)))
			}
			for c := r.IntN(3); c > 0; c-- {
				a.Capabilities = append(a.Capabilities, fxCapability{Kind: capKinds[r.IntN(len(capKinds))], Name: fmt.Sprintf("cap-%d", r.IntN(100))})
			}
			w.Agents = append(w.Agents, a)
			agentsOf[h] = append(agentsOf[h], id)
			nr := 1
			switch r.IntN(6) {
			case 0:
				nr = 0
			case 1:
				nr = 2
			}
			for k := 1; k <= nr; k++ {
				rid := fmt.Sprintf("%s-%s-r%d", h, name, k)
				w.Runners = append(w.Runners, fxRunner{ID: rid, Agent: id, Name: rid})
				runnersOf[id] = append(runnersOf[id], rid)
			}
		}
	}
	// Rooms: a general room per project, a private room per member.
	general := map[string]string{}
	private := map[[2]string]string{}
	for _, p := range projects {
		general[p] = p + "-general"
		w.Rooms = append(w.Rooms, fxRoom{ID: p + "-general", Project: p, Kind: "general", Name: "general"})
		for _, h := range members[p] {
			id := p + "-" + h
			private[[2]string{p, h}] = id
			w.Rooms = append(w.Rooms, fxRoom{ID: id, Project: p, Kind: "private", Owner: ptr(h), Name: h})
		}
	}
	msgN := 0
	minutes := 600 // created_at counts down to now, in fixture order
	addMsg := func(m fxMessage) string {
		msgN++
		m.ID = fmt.Sprintf("m%d", msgN)
		minutes -= 1 + r.IntN(5)
		if m.CreatedAt == "" {
			m.CreatedAt = fmt.Sprintf("now-%dm", max(minutes, 1))
		}
		if m.Body == "" {
			m.Body = fmt.Sprintf("Message %d.", msgN)
		}
		w.Messages = append(w.Messages, m)
		return m.ID
	}
	var requests, mentions []string
	requestProject := map[string]string{}
	requestOwner := map[string]string{}
	// Turns in private rooms.
	for _, p := range projects {
		for _, h := range members[p] {
			room := private[[2]string{p, h}]
			for range 1 + r.IntN(3) {
				// A task request (some become a task's cause).
				if r.IntN(2) == 0 {
					id := addMsg(fxMessage{Room: room, Kind: "task_request", Author: h, Body: "Task request: please do it."})
					requests = append(requests, id)
					requestProject[id], requestOwner[id] = p, h
				}
				msg := addMsg(fxMessage{Room: room, Kind: "room_message", Author: h})
				ags := slices.Clone(agentsOf[h])
				r.Shuffle(len(ags), func(i, j int) { ags[i], ags[j] = ags[j], ags[i] })
				if r.IntN(5) == 0 {
					continue // a message that woke nobody
				}
				woken := ags[:1+r.IntN(len(ags))]
				genTurn(r, w, msg, woken, general[p], runnersOf, addMsg)
			}
		}
		// Mentions and chat in the general room; one may wake an agent.
		for range 1 + r.IntN(2) {
			h := members[p][r.IntN(len(members[p]))]
			id := addMsg(fxMessage{Room: general[p], Kind: "mention", Author: h, Body: "@someone please look."})
			mentions = append(mentions, id)
		}
		if r.IntN(2) == 0 {
			h := members[p][r.IntN(len(members[p]))]
			id := addMsg(fxMessage{Room: general[p], Kind: "room_message", Author: h})
			if ags := agentsOf[h]; len(ags) > 0 && r.IntN(2) == 0 {
				w.Turns = append(w.Turns, fxTurn{Message: id, Agents: []fxTurnAgent{{Agent: ags[0]}}})
			}
		}
	}
	// Tasks, routed to agents of members, some bound to a task request of
	// the same project (by the routed agent's owner).
	taskN := 0
	for _, p := range projects {
		for range 2 + r.IntN(3) {
			h := members[p][r.IntN(len(members[p]))]
			ag := agentsOf[h][r.IntN(len(agentsOf[h]))]
			taskN++
			t := fxTask{ID: fmt.Sprintf("t%d", taskN), Project: p, Agent: ag, Title: fmt.Sprintf("Task %d", taskN)}
			if r.IntN(3) > 0 {
				for _, req := range requests {
					if requestProject[req] == p && requestOwner[req] == h && r.IntN(2) == 0 {
						t.RequestMessage = ptr(req)
						break
					}
				}
			}
			w.Tasks = append(w.Tasks, t)
			genAttempts(r, w, t, runnersOf[ag])
		}
	}
	w.deriveReplyPosted()
	return w
}

// genTurn adds the turn of message msg, which woke the agents in wake
// order, at a random stage and state, with the replies and the earlier
// discussion claims that stage implies.
func genTurn(r *rand.Rand, w *fxWorld, msg string, woken []string, generalRoom string, runnersOf map[string][]string, addMsg func(fxMessage) string) {
	t := fxTurn{Message: msg}
	for _, a := range woken {
		t.Agents = append(t.Agents, fxTurnAgent{Agent: a})
	}
	stage := []int{stageFresh, stageFresh, stageFresh, stageDrafted, stageDrafted, stageDrafted, stageSomeReview, stageSomeReview, stageReviewed, stageDone}[r.IntN(10)]
	if len(woken) == 1 && stage > stageDrafted {
		stage = stageDrafted
	}
	lead := woken[0]
	reviewers := woken[1:]
	replies := 0
	var draft string
	claimN := 0
	claim := func(agent, role string, reviewing *string, reply *string) {
		rs := runnersOf[agent]
		if len(rs) == 0 {
			return
		}
		claimN++
		c := fxDiscClaim{ID: fmt.Sprintf("dc-%s-%d", msg, claimN), Message: msg, Runner: rs[r.IntN(len(rs))],
			IdempotencyKey: fmt.Sprintf("old-%s-%d", msg, claimN), Role: role, Reviewing: reviewing,
			ClaimedAt: "now-50m", LiveUntil: "now-40m"}
		if reply != nil {
			c.ReplyMessage, c.ReplyPosted = reply, true
		}
		w.DiscussionClaims = append(w.DiscussionClaims, c)
	}
	post := func(agent, role, createdAt string) string {
		replies++
		m := fxMessage{Room: generalRoom, Kind: "room_message", Author: agent, Body: fmt.Sprintf("%s by %s (%d).", role, agent, replies),
			ReplyTurn: ptr(msg), ReplyRole: ptr(role), CreatedAt: createdAt}
		if r.IntN(4) > 0 { // otherwise FIXTURE.md's defaults
			m.Provenance, m.ProvenanceStatus = provenances[r.IntN(len(provenances))], []string{"claimed", "attested"}[r.IntN(2)]
		}
		return addMsg(m)
	}
	if stage >= stageDrafted {
		draft = post(lead, "draft", "") // each agent posts each role once (FIXTURE.md)
		claim(lead, "draft", nil, ptr(draft))
		if len(reviewers) == 0 {
			t.Agents[0].ReplyPosted = true
		}
	}
	for i, rv := range reviewers {
		posted := stage >= stageReviewed || (stage == stageSomeReview && (i == 0 || r.IntN(2) == 0) && i < len(reviewers)-1)
		if posted {
			id := post(rv, "review", "")
			claim(rv, "review", ptr(draft), ptr(id))
			t.Agents[i+1].ReplyPosted = true
		}
	}
	if stage == stageDone {
		role := "revise"
		var quoting *string = ptr(draft)
		if len(reviewers) >= 2 {
			role, quoting = "combine", nil
		}
		id := post(lead, role, "")
		claim(lead, role, quoting, ptr(id))
		t.Agents[0].ReplyPosted = true
	}
	// An earlier, unreplied claim of one agent whose part is not done:
	// still live, or expired long ago (then maybe superseded by nothing).
	for i, ta := range t.Agents {
		if ta.ReplyPosted || r.IntN(3) > 0 {
			continue
		}
		role := "draft"
		var reviewing *string
		switch {
		case i > 0 && draft == "":
			continue // a reviewer before the draft had nothing to claim
		case i > 0:
			role, reviewing = "review", ptr(draft)
		case draft != "" && len(reviewers) == 1:
			role, reviewing = "revise", ptr(draft)
		case draft != "":
			role = "combine"
		}
		if i == 0 && draft != "" && slices.ContainsFunc(t.Agents[1:], func(a fxTurnAgent) bool { return !a.ReplyPosted }) {
			continue // the lead waits for reviews
		}
		rs := runnersOf[ta.Agent]
		if len(rs) == 0 {
			continue
		}
		claimN++
		c := fxDiscClaim{ID: fmt.Sprintf("dc-%s-%d", msg, claimN), Message: msg, Runner: rs[r.IntN(len(rs))],
			IdempotencyKey: fmt.Sprintf("old-%s-%d", msg, claimN), Role: role, Reviewing: reviewing}
		if r.IntN(2) == 0 {
			c.ClaimedAt, c.LiveUntil = "now-3m", "now+7m"
		} else {
			c.ClaimedAt, c.LiveUntil = "now-3h", "now-2h50m"
		}
		w.DiscussionClaims = append(w.DiscussionClaims, c)
	}
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
	if t.State == "waiting" && !slices.ContainsFunc(t.Agents, func(a fxTurnAgent) bool { return !a.ReplyPosted }) {
		t.State = "ended" // a turn that waits on nobody has ended
	}
	switch r.IntN(8) {
	case 0:
		t.ExpiresAt = ptr("now-1h") // out of time by its deadline
	case 1:
		t.ExpiresAt = ptr("now+2h")
	}
	switch r.IntN(4) {
	case 0:
		t.ReplyLimit = ptr(replies) // no reply left
	case 1:
		t.ReplyLimit = ptr(min(replies+1, 8))
	}
	w.Turns = append(w.Turns, t)
}

// genAttempts adds earlier claim_task attempts on t: none, one made long
// ago and expired (maybe superseded by a later one), or one still live.
func genAttempts(r *rand.Rand, w *fxWorld, t fxTask, runners []string) {
	if len(runners) == 0 {
		return
	}
	n := 0
	add := func(claimed, live string, superseded bool) {
		n++
		w.Attempts = append(w.Attempts, fxAttempt{ID: fmt.Sprintf("att-%s-%d", t.ID, n), Task: t.ID,
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
