package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"time"
	"unicode/utf8"
)

// FixtureVersion is the fixture format version LoadFixture reads.
const FixtureVersion = 1

// FixtureError is a fixture problem, naming the JSON path of the bad entry
// (for example "$.agents[1].owner").
type FixtureError struct {
	// Path is the JSON path of the offending entry or field.
	Path string
	// Err is the underlying problem.
	Err error
}

// Error returns "fixture: PATH: problem".
func (e *FixtureError) Error() string { return "fixture: " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the underlying problem.
func (e *FixtureError) Unwrap() error { return e.Err }

func fxErr(path, format string, args ...any) error {
	return &FixtureError{Path: path, Err: fmt.Errorf(format, args...)}
}

// The fixture format; see FIXTURE.md.
type (
	fxProject struct {
		Slug string `json:"slug"`
		Name string `json:"name"`
	}
	fxPerson struct {
		Handle      string  `json:"handle"`
		DisplayName string  `json:"display_name"`
		AvatarURL   *string `json:"avatar_url"`
		Color       int     `json:"color"`
		Away        bool    `json:"away"`
	}
	fxMembership struct {
		Project string `json:"project"`
		Person  string `json:"person"`
	}
	fxAgent struct {
		ID           string       `json:"id"`
		AvatarURL    *string      `json:"avatar_url"`
		Model        string       `json:"model"`
		Client       string       `json:"client"`
		Role         string       `json:"role"`
		Capabilities []Capability `json:"capabilities"`
		Availability string       `json:"availability"`
		TrustLevel   string       `json:"trust_level"`
		LastSeenAt   *time.Time   `json:"last_seen_at"`
		Token        string       `json:"token"`
	}
	fxRunner struct {
		ID    string `json:"id"`
		Agent string `json:"agent"`
		Name  string `json:"name"`
		Token string `json:"token"`
	}
	fxRoom struct {
		ID      string  `json:"id"`
		Project string  `json:"project"`
		Kind    string  `json:"kind"`
		Owner   *string `json:"owner"`
		Name    string  `json:"name"`
	}
	fxMessage struct {
		ID               string     `json:"id"`
		Room             string     `json:"room"`
		Kind             string     `json:"kind"`
		Author           string     `json:"author"`
		Body             string     `json:"body"`
		Provenance       string     `json:"provenance"`
		ProvenanceStatus string     `json:"provenance_status"`
		CreatedAt        *time.Time `json:"created_at"`
		ReplyTurn        *string    `json:"reply_turn"`
		ReplyRole        *string    `json:"reply_role"`
	}
	fxTurnAgent struct {
		Agent       string `json:"agent"`
		ReplyPosted bool   `json:"reply_posted"`
	}
	fxTurn struct {
		Message    string        `json:"message"`
		State      string        `json:"state"`
		Agents     []fxTurnAgent `json:"agents"`
		ReplyLimit *int          `json:"reply_limit"`
		ExpiresAt  *time.Time    `json:"expires_at"`
	}
	fxTask struct {
		ID             string  `json:"id"`
		Project        string  `json:"project"`
		Agent          string  `json:"agent"`
		Title          string  `json:"title"`
		RequestMessage *string `json:"request_message"`
	}
	fxAttempt struct {
		ID             string     `json:"id"`
		Task           string     `json:"task"`
		Runner         string     `json:"runner"`
		IdempotencyKey string     `json:"idempotency_key"`
		ClaimedAt      *time.Time `json:"claimed_at"`
		LiveUntil      *time.Time `json:"live_until"`
		Superseded     bool       `json:"superseded"`
	}
	fxDiscussionClaim struct {
		ID             string     `json:"id"`
		Message        string     `json:"message"`
		Runner         string     `json:"runner"`
		IdempotencyKey string     `json:"idempotency_key"`
		Role           string     `json:"role"`
		Reviewing      *string    `json:"reviewing"`
		ClaimedAt      *time.Time `json:"claimed_at"`
		LiveUntil      *time.Time `json:"live_until"`
		Superseded     bool       `json:"superseded"`
		ReplyMessage   *string    `json:"reply_message"`
		ReplyPosted    bool       `json:"reply_posted"`
	}
	fixtureWorld struct {
		Version          int
		Projects         []fxProject
		People           []fxPerson
		Memberships      []fxMembership
		Agents           []fxAgent
		Runners          []fxRunner
		Rooms            []fxRoom
		Messages         []fxMessage
		Turns            []fxTurn
		Tasks            []fxTask
		Attempts         []fxAttempt
		DiscussionClaims []fxDiscussionClaim
	}
)

var fixtureSections = []string{"version", "projects", "people", "memberships", "agents", "runners", "rooms",
	"messages", "turns", "tasks", "attempts", "discussion_claims"}

func decodeStrict(raw json.RawMessage, v any, path string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return &FixtureError{Path: path + "." + te.Field, Err: fmt.Errorf("expected %s, got JSON %s", te.Type, te.Value)}
		}
		return &FixtureError{Path: path, Err: err}
	}
	return nil
}

func decodeSection[T any](top map[string]json.RawMessage, key string) ([]T, error) {
	raw, ok := top[key]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fxErr("$."+key, "must be an array")
	}
	out := make([]T, len(items))
	for i, it := range items {
		if err := decodeStrict(it, &out[i], fmt.Sprintf("$.%s[%d]", key, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func parseFixture(r io.Reader) (fixtureWorld, error) {
	var w fixtureWorld
	data, err := io.ReadAll(r)
	if err != nil {
		return w, fmt.Errorf("fixture: read: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return w, &FixtureError{Path: "$", Err: err}
	}
	for k := range top {
		if !slices.Contains(fixtureSections, k) {
			return w, fxErr("$."+k, "unknown section")
		}
	}
	if raw, ok := top["version"]; ok {
		if err := json.Unmarshal(raw, &w.Version); err != nil {
			return w, fxErr("$.version", "must be an integer")
		}
	}
	if w.Version != FixtureVersion {
		return w, fxErr("$.version", "must be %d, got %d", FixtureVersion, w.Version)
	}
	if w.Projects, err = decodeSection[fxProject](top, "projects"); err != nil {
		return w, err
	}
	if w.People, err = decodeSection[fxPerson](top, "people"); err != nil {
		return w, err
	}
	if w.Memberships, err = decodeSection[fxMembership](top, "memberships"); err != nil {
		return w, err
	}
	if w.Agents, err = decodeSection[fxAgent](top, "agents"); err != nil {
		return w, err
	}
	if w.Runners, err = decodeSection[fxRunner](top, "runners"); err != nil {
		return w, err
	}
	if w.Rooms, err = decodeSection[fxRoom](top, "rooms"); err != nil {
		return w, err
	}
	if w.Messages, err = decodeSection[fxMessage](top, "messages"); err != nil {
		return w, err
	}
	if w.Turns, err = decodeSection[fxTurn](top, "turns"); err != nil {
		return w, err
	}
	if w.Tasks, err = decodeSection[fxTask](top, "tasks"); err != nil {
		return w, err
	}
	if w.Attempts, err = decodeSection[fxAttempt](top, "attempts"); err != nil {
		return w, err
	}
	if w.DiscussionClaims, err = decodeSection[fxDiscussionClaim](top, "discussion_claims"); err != nil {
		return w, err
	}
	return w, nil
}

// LoadFixture loads the JSON world description in r (format: FIXTURE.md)
// into the store, all or nothing, in one transaction. It may be loaded
// into an empty or a non-empty database; ids must not collide. It returns
// one IssuedToken per agent and per runner: the fixture's plaintext token,
// or a freshly minted one where the fixture gives none. Errors are
// *FixtureError values naming the JSON path of the bad entry.
func (s *Store) LoadFixture(ctx context.Context, r io.Reader) ([]IssuedToken, error) {
	w, err := parseFixture(r)
	if err != nil {
		return nil, err
	}
	defer s.worldChanged()
	var issued []IssuedToken
	err = s.inTx(ctx, func(tx *txn) error {
		var err error
		issued, err = s.loadWorld(ctx, tx, w)
		return err
	})
	if err != nil {
		var fe *FixtureError
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, fmt.Errorf("fixture: %w", err)
	}
	return issued, nil
}

// loader carries the state of one loadWorld call.
type loader struct {
	ctx context.Context
	tx  *txn
	now time.Time
}

func (l *loader) has(query string, args ...any) (bool, error) {
	return exists(l.ctx, l.tx, query, args...)
}

// exec runs a statement, turning a constraint failure into a FixtureError
// at path.
func (l *loader) exec(path, what string, query string, args ...any) error {
	if _, err := l.tx.ExecContext(l.ctx, query, args...); err != nil {
		if isUniqueViolation(err) {
			return fxErr(path, "%s already exists", what)
		}
		return &FixtureError{Path: path, Err: err}
	}
	return nil
}

func (l *loader) mustExist(path, what, query string, arg any) error {
	ok, err := l.has(query, arg)
	if err != nil {
		return err
	}
	if !ok {
		return fxErr(path, "unknown %s %q", what, arg)
	}
	return nil
}

func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && (u.Host != "" || u.Opaque != "")
}

func lenBetween(s string, lo, hi int) bool {
	n := utf8.RuneCountInString(s)
	return n >= lo && n <= hi
}

func (l *loader) token(path string, given string, row tokenRow, issued *[]IssuedToken, it IssuedToken) error {
	tok := given
	var hash []byte
	if tok == "" {
		var err error
		if tok, hash, err = newToken(); err != nil {
			return err
		}
	} else {
		if len(tok) < 16 {
			return fxErr(path, "token must be at least 16 characters")
		}
		hash = hashToken(tok)
	}
	if err := insertToken(l.ctx, l.tx, hash, row, l.now); err != nil {
		if isUniqueViolation(err) {
			return fxErr(path, "token is already in use")
		}
		return &FixtureError{Path: path, Err: err}
	}
	it.Token = tok
	*issued = append(*issued, it)
	return nil
}

var (
	availabilities = []string{"online", "working", "idle", "asleep", "away", "offline"}
	trustLevels    = []string{"owner_verified", "unverified"}
	capKinds       = []string{"mcp", "repo", "deploy", "data", "other"}
	messageKinds   = []string{"task_request", "mention", "room_message"}
	turnStates     = []string{TurnWaiting, TurnEnded, TurnStopped, TurnTimedOut, TurnReplaced}
	roles          = []string{RoleDraft, RoleReview, RoleRevise, RoleCombine}
)

// loadWorld validates and inserts w inside tx.
func (s *Store) loadWorld(ctx context.Context, tx *txn, w fixtureWorld) ([]IssuedToken, error) {
	l := &loader{ctx: ctx, tx: tx, now: s.Now()}
	issued := []IssuedToken{}
	at := func(t *time.Time, def time.Time) time.Time {
		if t == nil {
			return def
		}
		return t.UTC()
	}

	for i, p := range w.Projects {
		path := fmt.Sprintf("$.projects[%d]", i)
		if !validSlug(p.Slug) {
			return nil, fxErr(path+".slug", "invalid project slug %q", p.Slug)
		}
		name := p.Name
		if name == "" {
			name = p.Slug
		}
		if err := l.exec(path+".slug", "project "+p.Slug, `INSERT INTO projects(slug, name, created_at) VALUES (?,?,?)`,
			p.Slug, name, toDB(l.now)); err != nil {
			return nil, err
		}
	}
	for i, p := range w.People {
		path := fmt.Sprintf("$.people[%d]", i)
		switch {
		case !validSlug(p.Handle):
			return nil, fxErr(path+".handle", "invalid handle %q", p.Handle)
		case !lenBetween(p.DisplayName, 1, 80):
			return nil, fxErr(path+".display_name", "must be 1 to 80 characters")
		case p.AvatarURL != nil && !validURL(*p.AvatarURL):
			return nil, fxErr(path+".avatar_url", "must be an absolute URL or null")
		case p.Color < 0 || p.Color > 7:
			return nil, fxErr(path+".color", "must be 0 to 7, got %d", p.Color)
		}
		if err := l.exec(path+".handle", "person "+p.Handle, `INSERT INTO people(handle, display_name, avatar_url, color, away) VALUES (?,?,?,?,?)`,
			p.Handle, p.DisplayName, dbString(p.AvatarURL), p.Color, p.Away); err != nil {
			return nil, err
		}
	}
	for i, m := range w.Memberships {
		path := fmt.Sprintf("$.memberships[%d]", i)
		if err := l.mustExist(path+".project", "project", `SELECT 1 FROM projects WHERE slug = ?`, m.Project); err != nil {
			return nil, err
		}
		if err := l.mustExist(path+".person", "person", `SELECT 1 FROM people WHERE handle = ?`, m.Person); err != nil {
			return nil, err
		}
		if err := l.exec(path, "membership", `INSERT INTO memberships(project, person) VALUES (?,?)`, m.Project, m.Person); err != nil {
			return nil, err
		}
	}
	for i, a := range w.Agents {
		path := fmt.Sprintf("$.agents[%d]", i)
		sm := reAgent.FindStringSubmatch(a.ID)
		if sm == nil || len(sm[1]) > 39 || len(sm[2]) > 39 {
			return nil, fxErr(path+".id", "invalid agent id %q (want owner/name)", a.ID)
		}
		owner, name := sm[1], sm[2]
		if err := l.mustExist(path+".id", "owner", `SELECT 1 FROM people WHERE handle = ?`, owner); err != nil {
			return nil, err
		}
		switch {
		case a.AvatarURL != nil && !validURL(*a.AvatarURL):
			return nil, fxErr(path+".avatar_url", "must be an absolute URL or null")
		case !lenBetween(a.Model, 1, 40):
			return nil, fxErr(path+".model", "must be 1 to 40 characters")
		case !lenBetween(a.Client, 1, 40):
			return nil, fxErr(path+".client", "must be 1 to 40 characters")
		case !lenBetween(a.Role, 0, 80):
			return nil, fxErr(path+".role", "must be at most 80 characters")
		case len(a.Capabilities) > 50:
			return nil, fxErr(path+".capabilities", "at most 50 capabilities")
		case !slices.Contains(availabilities, a.Availability):
			return nil, fxErr(path+".availability", "must be one of %v, got %q", availabilities, a.Availability)
		case !slices.Contains(trustLevels, a.TrustLevel):
			return nil, fxErr(path+".trust_level", "must be one of %v, got %q", trustLevels, a.TrustLevel)
		}
		caps := a.Capabilities
		if caps == nil {
			caps = []Capability{}
		}
		for j, c := range caps {
			if !slices.Contains(capKinds, c.Kind) {
				return nil, fxErr(fmt.Sprintf("%s.capabilities[%d].kind", path, j), "must be one of %v, got %q", capKinds, c.Kind)
			}
			if !lenBetween(c.Name, 1, 80) {
				return nil, fxErr(fmt.Sprintf("%s.capabilities[%d].name", path, j), "must be 1 to 80 characters")
			}
		}
		cb, err := json.Marshal(caps)
		if err != nil {
			return nil, err
		}
		var seen any
		if a.LastSeenAt != nil {
			seen = toDB(*a.LastSeenAt)
		}
		if err := l.exec(path+".id", "agent "+a.ID, `INSERT INTO agents(id, owner, name, avatar_url, model, client, role, capabilities,
			availability, trust_level, last_seen_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
			a.ID, owner, name, dbString(a.AvatarURL), a.Model, a.Client, a.Role, string(cb), a.Availability, a.TrustLevel, seen); err != nil {
			return nil, err
		}
		if err := l.token(path+".token", a.Token, tokenRow{kind: KindAgent, agent: a.ID}, &issued,
			IssuedToken{Kind: KindAgent, Agent: a.ID}); err != nil {
			return nil, err
		}
	}
	for i, r := range w.Runners {
		path := fmt.Sprintf("$.runners[%d]", i)
		if !reID.MatchString(r.ID) {
			return nil, fxErr(path+".id", "invalid runner id %q", r.ID)
		}
		if err := l.mustExist(path+".agent", "agent", `SELECT 1 FROM agents WHERE id = ?`, r.Agent); err != nil {
			return nil, err
		}
		if err := l.exec(path+".id", "runner "+r.ID, `INSERT INTO runners(id, agent, name, created_at) VALUES (?,?,?,?)`,
			r.ID, r.Agent, r.Name, toDB(l.now)); err != nil {
			return nil, err
		}
		id := r.ID
		if err := l.token(path+".token", r.Token, tokenRow{kind: KindRunner, agent: r.Agent, runner: &id}, &issued,
			IssuedToken{Kind: KindRunner, Agent: r.Agent, Runner: r.ID}); err != nil {
			return nil, err
		}
	}
	for i, r := range w.Rooms {
		path := fmt.Sprintf("$.rooms[%d]", i)
		if !reID.MatchString(r.ID) {
			return nil, fxErr(path+".id", "invalid room id %q", r.ID)
		}
		if err := l.mustExist(path+".project", "project", `SELECT 1 FROM projects WHERE slug = ?`, r.Project); err != nil {
			return nil, err
		}
		switch r.Kind {
		case "general":
			if r.Owner != nil {
				return nil, fxErr(path+".owner", "a general room has no owner")
			}
		case "private":
			if r.Owner == nil {
				return nil, fxErr(path+".owner", "a private room needs an owner")
			}
			if err := l.mustExist(path+".owner", "person", `SELECT 1 FROM people WHERE handle = ?`, *r.Owner); err != nil {
				return nil, err
			}
		default:
			return nil, fxErr(path+".kind", "must be general or private, got %q", r.Kind)
		}
		what := "room " + r.ID
		if r.Kind == "general" {
			what = "room " + r.ID + " (or another general room of " + r.Project + ")"
		}
		if err := l.exec(path+".id", what, `INSERT INTO rooms(id, project, kind, owner, name) VALUES (?,?,?,?,?)`,
			r.ID, r.Project, r.Kind, dbString(r.Owner), r.Name); err != nil {
			return nil, err
		}
	}
	for i, m := range w.Messages {
		path := fmt.Sprintf("$.messages[%d]", i)
		if !reID.MatchString(m.ID) {
			return nil, fxErr(path+".id", "invalid message id %q", m.ID)
		}
		if err := l.mustExist(path+".room", "room", `SELECT 1 FROM rooms WHERE id = ?`, m.Room); err != nil {
			return nil, err
		}
		if !slices.Contains(messageKinds, m.Kind) {
			return nil, fxErr(path+".kind", "must be one of %v, got %q", messageKinds, m.Kind)
		}
		var person, agent any
		prov := m.Provenance
		if reAgent.MatchString(m.Author) {
			if err := l.mustExist(path+".author", "agent", `SELECT 1 FROM agents WHERE id = ?`, m.Author); err != nil {
				return nil, err
			}
			agent = m.Author
			if prov == "" {
				prov = "agent_generated"
			}
		} else {
			if err := l.mustExist(path+".author", "person", `SELECT 1 FROM people WHERE handle = ?`, m.Author); err != nil {
				return nil, err
			}
			person = m.Author
			if prov == "" {
				prov = "owner_instruction"
			}
		}
		status := m.ProvenanceStatus
		if status == "" {
			status = "claimed"
		}
		switch {
		case !lenBetween(m.Body, 1, 8000):
			return nil, fxErr(path+".body", "must be 1 to 8000 characters")
		case !slices.Contains(Provenances, prov):
			return nil, fxErr(path+".provenance", "must be one of %v, got %q", Provenances, prov)
		case status != "claimed" && status != "attested":
			return nil, fxErr(path+".provenance_status", "must be claimed or attested, got %q", status)
		case (m.ReplyTurn == nil) != (m.ReplyRole == nil):
			return nil, fxErr(path, "reply_turn and reply_role go together")
		case m.ReplyRole != nil && !slices.Contains(roles, *m.ReplyRole):
			return nil, fxErr(path+".reply_role", "must be one of %v, got %q", roles, *m.ReplyRole)
		case m.ReplyTurn != nil && agent == nil:
			return nil, fxErr(path+".author", "a reply in a turn must be authored by an agent")
		}
		// Messages are created in fixture order unless created_at says otherwise.
		created := at(m.CreatedAt, l.now.Add(time.Duration(i-len(w.Messages))*time.Millisecond))
		if err := l.exec(path+".id", "message "+m.ID, `INSERT INTO messages(id, room, kind, author_person, author_agent, body,
			provenance, provenance_status, created_at) VALUES (?,?,?,?,?,?,?,?,?)`,
			m.ID, m.Room, m.Kind, person, agent, m.Body, prov, status, toDB(created)); err != nil {
			return nil, err
		}
	}
	for i, t := range w.Turns {
		path := fmt.Sprintf("$.turns[%d]", i)
		if err := l.mustExist(path+".message", "message", `SELECT 1 FROM messages WHERE id = ?`, t.Message); err != nil {
			return nil, err
		}
		state := t.State
		if state == "" {
			state = TurnWaiting
		}
		if !slices.Contains(turnStates, state) {
			return nil, fxErr(path+".state", "must be one of %v, got %q", turnStates, state)
		}
		limit := MaxReplies
		if t.ReplyLimit != nil {
			limit = *t.ReplyLimit
		}
		if limit < 0 || limit > MaxReplies {
			return nil, fxErr(path+".reply_limit", "must be 0 to %d, got %d", MaxReplies, limit)
		}
		if len(t.Agents) == 0 {
			return nil, fxErr(path+".agents", "a turn wakes at least one agent")
		}
		if err := l.exec(path+".message", "turn for message "+t.Message, `INSERT INTO turns(message, state, reply_limit, expires_at, created_at)
			VALUES (?,?,?,?,?)`, t.Message, state, limit, dbTime(t.ExpiresAt), toDB(l.now)); err != nil {
			return nil, err
		}
		for j, a := range t.Agents {
			ap := fmt.Sprintf("%s.agents[%d]", path, j)
			if err := l.mustExist(ap+".agent", "agent", `SELECT 1 FROM agents WHERE id = ?`, a.Agent); err != nil {
				return nil, err
			}
			var posted any
			if a.ReplyPosted {
				posted = toDB(l.now)
			}
			if err := l.exec(ap+".agent", "agent "+a.Agent+" in this turn", `INSERT INTO turn_agents(turn, agent, wake_order, reply_posted_at)
				VALUES (?,?,?,?)`, t.Message, a.Agent, j, posted); err != nil {
				return nil, err
			}
		}
	}
	for i, m := range w.Messages {
		if m.ReplyTurn == nil {
			continue
		}
		path := fmt.Sprintf("$.messages[%d].reply_turn", i)
		ok, err := l.has(`SELECT 1 FROM turn_agents WHERE turn = ? AND agent = ?`, *m.ReplyTurn, m.Author)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fxErr(path, "no turn on message %q woke %s", *m.ReplyTurn, m.Author)
		}
		if err := l.exec(path, "reply", `UPDATE messages SET reply_turn = ?, reply_role = ? WHERE id = ?`,
			*m.ReplyTurn, *m.ReplyRole, m.ID); err != nil {
			return nil, err
		}
	}
	for i, t := range w.Tasks {
		path := fmt.Sprintf("$.tasks[%d]", i)
		if !reID.MatchString(t.ID) {
			return nil, fxErr(path+".id", "invalid task id %q", t.ID)
		}
		if err := l.mustExist(path+".project", "project", `SELECT 1 FROM projects WHERE slug = ?`, t.Project); err != nil {
			return nil, err
		}
		if err := l.mustExist(path+".agent", "agent", `SELECT 1 FROM agents WHERE id = ?`, t.Agent); err != nil {
			return nil, err
		}
		if t.RequestMessage != nil {
			ok, err := l.has(`SELECT 1 FROM messages m JOIN rooms r ON r.id = m.room
				WHERE m.id = ? AND m.kind = 'task_request' AND r.project = ?`, *t.RequestMessage, t.Project)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fxErr(path+".request_message", "%q is not a task_request message in project %s", *t.RequestMessage, t.Project)
			}
		}
		if err := l.exec(path+".id", "task "+t.ID, `INSERT INTO tasks(id, project, agent, title, request_message, created_at)
			VALUES (?,?,?,?,?,?)`, t.ID, t.Project, t.Agent, t.Title, dbString(t.RequestMessage), toDB(l.now)); err != nil {
			return nil, err
		}
	}
	for i, a := range w.Attempts {
		path := fmt.Sprintf("$.attempts[%d]", i)
		id := a.ID
		if id == "" {
			var err error
			if id, err = newID("att_"); err != nil {
				return nil, err
			}
		} else if !reID.MatchString(id) {
			return nil, fxErr(path+".id", "invalid attempt id %q", id)
		}
		var taskAgent string
		var request sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT agent, request_message FROM tasks WHERE id = ?`, a.Task).Scan(&taskAgent, &request)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fxErr(path+".task", "unknown task %q", a.Task)
		}
		if err != nil {
			return nil, err
		}
		ok, err := l.has(`SELECT 1 FROM runners WHERE id = ? AND agent = ?`, a.Runner, taskAgent)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fxErr(path+".runner", "no runner %q paired to the task's agent %s", a.Runner, taskAgent)
		}
		if !lenBetween(a.IdempotencyKey, 1, 100) {
			return nil, fxErr(path+".idempotency_key", "must be 1 to 100 characters")
		}
		claimed := at(a.ClaimedAt, l.now)
		live := at(a.LiveUntil, claimed.Add(s.opts.LaunchTimeout))
		var sup any
		if a.Superseded {
			sup = toDB(l.now)
		}
		if err := l.exec(path, "attempt "+id+" (or its runner, task and idempotency key)", `INSERT INTO attempts(id, task, runner,
			idempotency_key, cause_message, claimed_at, live_until, superseded_at) VALUES (?,?,?,?,?,?,?,?)`,
			id, a.Task, a.Runner, a.IdempotencyKey, request, toDB(claimed), toDB(live), sup); err != nil {
			return nil, err
		}
	}
	for i, c := range w.DiscussionClaims {
		path := fmt.Sprintf("$.discussion_claims[%d]", i)
		id := c.ID
		if id == "" {
			var err error
			if id, err = newID("dsc_"); err != nil {
				return nil, err
			}
		} else if !reID.MatchString(id) {
			return nil, fxErr(path+".id", "invalid discussion claim id %q", id)
		}
		var agent string
		err := tx.QueryRowContext(ctx, `SELECT agent FROM runners WHERE id = ?`, c.Runner).Scan(&agent)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fxErr(path+".runner", "unknown runner %q", c.Runner)
		}
		if err != nil {
			return nil, err
		}
		var order int
		err = tx.QueryRowContext(ctx, `SELECT wake_order FROM turn_agents WHERE turn = ? AND agent = ?`, c.Message, agent).Scan(&order)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fxErr(path+".message", "no turn on message %q woke the runner's agent %s", c.Message, agent)
		}
		if err != nil {
			return nil, err
		}
		var lead bool
		if err := tx.QueryRowContext(ctx, `SELECT min(wake_order) = ? FROM turn_agents WHERE turn = ?`, order, c.Message).Scan(&lead); err != nil {
			return nil, err
		}
		if !slices.Contains(roles, c.Role) {
			return nil, fxErr(path+".role", "must be one of %v, got %q", roles, c.Role)
		}
		if !lenBetween(c.IdempotencyKey, 1, 100) {
			return nil, fxErr(path+".idempotency_key", "must be 1 to 100 characters")
		}
		needsDraft := c.Role == RoleReview || c.Role == RoleRevise
		if needsDraft != (c.Reviewing != nil) {
			return nil, fxErr(path+".reviewing", "review and revise claims quote a draft; draft and combine claims do not")
		}
		if c.Reviewing != nil {
			ok, err := l.has(`SELECT 1 FROM messages WHERE id = ? AND reply_turn = ? AND reply_role = 'draft'`, *c.Reviewing, c.Message)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fxErr(path+".reviewing", "%q is not a draft reply in the turn of %q", *c.Reviewing, c.Message)
			}
		}
		var repliedAt any
		if c.ReplyMessage != nil {
			ok, err := l.has(`SELECT 1 FROM messages WHERE id = ? AND reply_turn = ? AND author_agent = ?`, *c.ReplyMessage, c.Message, agent)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fxErr(path+".reply_message", "%q is not a reply by %s in the turn of %q", *c.ReplyMessage, agent, c.Message)
			}
		}
		if c.ReplyPosted || c.ReplyMessage != nil {
			repliedAt = toDB(l.now)
		}
		claimed := at(c.ClaimedAt, l.now)
		live := at(c.LiveUntil, claimed.Add(s.opts.DiscussionTTL))
		var sup any
		if c.Superseded {
			sup = toDB(l.now)
		}
		if err := l.exec(path, "discussion claim "+id+" (or its runner, message and idempotency key)", `INSERT INTO discussion_claims(id, message,
			runner, agent, idempotency_key, role, lead, reviewing_message, claimed_at, live_until, superseded_at, reply_message, replied_at)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`, id, c.Message, c.Runner, agent, c.IdempotencyKey, c.Role, lead,
			dbString(c.Reviewing), toDB(claimed), toDB(live), sup, dbString(c.ReplyMessage), repliedAt); err != nil {
			return nil, err
		}
	}
	return issued, nil
}
