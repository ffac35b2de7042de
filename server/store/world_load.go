package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/prickle-dev/prickle/spec/world"
)

// loader loads one validated world inside a transaction. The schema has
// checked every value; the loader checks what a schema cannot see: that
// references name entries of the new world or of the world already there,
// that ids are new, and the rules that tie entries together (FIXTURE.md).
type loader struct {
	ctx    context.Context
	tx     *txn
	now    time.Time
	opts   Options
	w      *world.World
	issued []IssuedToken
	// postedFlags are the turn agents' reply_posted as given, checked
	// against what the replies say once they are in.
	postedFlags []postedFlag
}

type postedFlag struct {
	at          any // the flag, for its place in the world
	turn, agent string
	posted      bool
}

// insertWorld inserts w inside tx, section by section, so that each
// reference points at rows already inserted: replies are attached once the
// turns exist. An error names a value of w by its address (world.Pointer).
func (s *Store) insertWorld(ctx context.Context, tx *txn, w *world.World) ([]IssuedToken, error) {
	l := &loader{ctx: ctx, tx: tx, now: s.Now(), opts: s.opts, w: w, issued: []IssuedToken{}}
	for _, section := range []func() error{
		l.projects, l.people, l.memberships, l.agents, l.runners, l.rooms, l.messages,
		l.turns, l.replies, l.tasks, l.attempts, l.discussionClaims,
	} {
		if err := section(); err != nil {
			return nil, err
		}
	}
	return l.issued, nil
}

func (l *loader) has(query string, args ...any) (bool, error) {
	return exists(l.ctx, l.tx, query, args...)
}

// ErrExists is an entry of a world being loaded whose id (or token) the
// database already holds, from that world itself or from what was there
// before it. A *world.Error wraps it; match it with errors.Is.
var ErrExists = errors.New("already exists")

// exec runs a statement; a UNIQUE or PRIMARY KEY violation is the
// world's error at the value at points at ("WHAT already exists").
func (l *loader) exec(at any, what, query string, args ...any) error {
	if _, err := l.tx.ExecContext(l.ctx, query, args...); err != nil {
		if isUniqueViolation(err) {
			return l.w.Errorf(at, "%s %w", what, ErrExists)
		}
		return err
	}
	return nil
}

// mustExist fails at the value at points at unless query finds arg.
func (l *loader) mustExist(at any, what, query string, arg any) error {
	ok, err := l.has(query, arg)
	if err != nil {
		return err
	}
	if !ok {
		return l.w.Errorf(at, "unknown %s %q", what, arg)
	}
	return nil
}

const (
	qProject = `SELECT 1 FROM projects WHERE slug = ?`
	qPerson  = `SELECT 1 FROM people WHERE handle = ?`
	qAgent   = `SELECT 1 FROM agents WHERE id = ?`
)

// timeOr returns the time at (in UTC), or def when it is not given.
func (l *loader) timeOr(at *world.Time, def time.Time) (time.Time, error) {
	if *at == "" {
		return def, nil
	}
	t, err := at.Resolve(l.now)
	if err != nil {
		return time.Time{}, l.w.Errorf(at, "%w", err)
	}
	return t.UTC(), nil
}

// dbTime is the time at as the database stores it, NULL when it is not
// given.
func (l *loader) dbTime(at *world.Time) (any, error) {
	if *at == "" {
		return nil, nil
	}
	t, err := l.timeOr(at, time.Time{})
	return toDB(t), err
}

// token stores the hash of an agent's or runner's token (the world's, or
// a fresh one) and records it as issued.
func (l *loader) token(at *string, row tokenRow, it IssuedToken) error {
	given := *at
	tok, hash := given, hashToken(given)
	if tok == "" {
		tok, hash = newToken()
	}
	if err := insertToken(l.ctx, l.tx, hash, row, l.now); err != nil {
		if isUniqueViolation(err) {
			return l.w.Errorf(at, "token %w (another agent or runner has it)", ErrExists)
		}
		return err
	}
	it.Token = tok
	l.issued = append(l.issued, it)
	return nil
}

func (l *loader) projects() error {
	for i := range l.w.Projects {
		p := &l.w.Projects[i]
		name := p.Name
		if name == "" {
			name = p.Slug
		}
		if err := l.exec(&p.Slug, "project "+p.Slug,
			`INSERT INTO projects(slug, name, created_at) VALUES (?,?,?)`, p.Slug, name, toDB(l.now)); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) people() error {
	for i := range l.w.People {
		p := &l.w.People[i]
		if err := l.exec(&p.Handle, "person "+p.Handle,
			`INSERT INTO people(handle, display_name, avatar_url, color, away) VALUES (?,?,?,?,?)`,
			p.Handle, p.DisplayName, dbString(p.AvatarURL), p.Color, p.Away); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) memberships() error {
	for i := range l.w.Memberships {
		m := &l.w.Memberships[i]
		if err := l.mustExist(&m.Project, "project", qProject, m.Project); err != nil {
			return err
		}
		if err := l.mustExist(&m.Person, "person", qPerson, m.Person); err != nil {
			return err
		}
		if err := l.exec(m, "membership of "+m.Person+" in "+m.Project,
			`INSERT INTO memberships(project, person) VALUES (?,?)`, m.Project, m.Person); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) agents() error {
	for i := range l.w.Agents {
		a := &l.w.Agents[i]
		owner, name, _ := strings.Cut(a.ID, "/")
		if err := l.mustExist(&a.ID, "owner", qPerson, owner); err != nil {
			return err
		}
		caps := a.Capabilities
		if caps == nil {
			caps = []world.Capability{}
		}
		cb, err := json.Marshal(caps)
		if err != nil {
			return err
		}
		seen, err := l.dbTime(&a.LastSeenAt)
		if err != nil {
			return err
		}
		if err := l.exec(&a.ID, "agent "+a.ID, `INSERT INTO agents(id, owner, name, avatar_url, model, client,
			role, capabilities, availability, trust_level, last_seen_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
			a.ID, owner, name, dbString(a.AvatarURL), a.Model, a.Client, a.Role, string(cb), a.Availability, a.TrustLevel,
			seen); err != nil {
			return err
		}
		if err := l.token(&a.Token, tokenRow{kind: KindAgent, agent: a.ID},
			IssuedToken{Kind: KindAgent, Agent: a.ID}); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) runners() error {
	for i := range l.w.Runners {
		r := &l.w.Runners[i]
		if err := l.mustExist(&r.Agent, "agent", qAgent, r.Agent); err != nil {
			return err
		}
		if err := l.exec(&r.ID, "runner "+r.ID, `INSERT INTO runners(id, agent, name, created_at) VALUES (?,?,?,?)`,
			r.ID, r.Agent, r.Name, toDB(l.now)); err != nil {
			return err
		}
		id := r.ID
		if err := l.token(&r.Token, tokenRow{kind: KindRunner, agent: r.Agent, runner: &id},
			IssuedToken{Kind: KindRunner, Agent: r.Agent, Runner: r.ID}); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) rooms() error {
	for i := range l.w.Rooms {
		r := &l.w.Rooms[i]
		if err := l.mustExist(&r.Project, "project", qProject, r.Project); err != nil {
			return err
		}
		what := "room " + r.ID
		if r.Owner != nil { // a private room: the schema requires its owner
			if err := l.mustExist(&r.Owner, "person", qPerson, *r.Owner); err != nil {
				return err
			}
		} else {
			what += " (or another general room of " + r.Project + ")"
		}
		if err := l.exec(&r.ID, what, `INSERT INTO rooms(id, project, kind, owner, name) VALUES (?,?,?,?,?)`,
			r.ID, r.Project, r.Kind, dbString(r.Owner), r.Name); err != nil {
			return err
		}
	}
	return nil
}

// isAgentID reports whether a validated author is an agent (owner/name)
// rather than a person's handle: handles have no slash.
func isAgentID(author string) bool { return strings.Contains(author, "/") }

func (l *loader) messages() error {
	for i := range l.w.Messages {
		m := &l.w.Messages[i]
		if err := l.mustExist(&m.Room, "room", `SELECT 1 FROM rooms WHERE id = ?`, m.Room); err != nil {
			return err
		}
		var person, agent any
		prov := m.Provenance
		if isAgentID(m.Author) {
			if err := l.mustExist(&m.Author, "agent", qAgent, m.Author); err != nil {
				return err
			}
			agent = m.Author
			if prov == "" {
				prov = "agent_generated"
			}
		} else {
			if err := l.mustExist(&m.Author, "person", qPerson, m.Author); err != nil {
				return err
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
		// Without created_at, messages are one millisecond apart in
		// the world's order, the last one just before load time.
		created, err := l.timeOr(&m.CreatedAt, l.now.Add(time.Duration(i-len(l.w.Messages))*time.Millisecond))
		if err != nil {
			return err
		}
		if err := l.exec(&m.ID, "message "+m.ID, `INSERT INTO messages(id, room, kind, author_person,
			author_agent, body, provenance, provenance_status, created_at) VALUES (?,?,?,?,?,?,?,?,?)`,
			m.ID, m.Room, m.Kind, person, agent, m.Body, prov, status, toDB(created)); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) turns() error {
	for i := range l.w.Turns {
		t := &l.w.Turns[i]
		if err := l.mustExist(&t.Message, "message", `SELECT 1 FROM messages WHERE id = ?`, t.Message); err != nil {
			return err
		}
		state := t.State
		if state == "" {
			state = TurnWaiting
		}
		limit := MaxReplies
		if t.ReplyLimit != nil {
			limit = *t.ReplyLimit
		}
		expires, err := l.dbTime(&t.ExpiresAt)
		if err != nil {
			return err
		}
		if err := l.exec(&t.Message, "turn for message "+t.Message, `INSERT INTO turns(message, state,
			reply_limit, expires_at, created_at) VALUES (?,?,?,?,?)`, t.Message, state, limit, expires, toDB(l.now)); err != nil {
			return err
		}
		for j := range t.Agents {
			a := &t.Agents[j]
			if err := l.mustExist(&a.Agent, "agent", qAgent, a.Agent); err != nil {
				return err
			}
			if err := l.exec(&a.Agent, "agent "+a.Agent+" in this turn", `INSERT INTO turn_agents(turn, agent, wake_order)
				VALUES (?,?,?)`, t.Message, a.Agent, j); err != nil {
				return err
			}
			if a.ReplyPosted != nil {
				l.postedFlags = append(l.postedFlags, postedFlag{at: &a.ReplyPosted, turn: t.Message, agent: a.Agent, posted: *a.ReplyPosted})
			}
		}
	}
	return nil
}

// turnPlace is an agent's place in a turn.
type turnPlace struct {
	lead      bool
	reviewers int // the turn's agents after the lead
}

// place returns agent's place in the turn of message, or false when that
// turn did not wake it.
func (l *loader) place(message, agent string) (turnPlace, bool, error) {
	var p turnPlace
	var n int
	err := l.tx.QueryRowContext(l.ctx, `SELECT ta.wake_order = (SELECT min(wake_order) FROM turn_agents WHERE turn = ta.turn),
		(SELECT count(*) FROM turn_agents WHERE turn = ta.turn) FROM turn_agents ta WHERE ta.turn = ? AND ta.agent = ?`,
		message, agent).Scan(&p.lead, &n)
	if errors.Is(err, sql.ErrNoRows) {
		return p, false, nil
	}
	p.reviewers = n - 1
	return p, err == nil, err
}

// fits reports whether role is one the harness gives an agent in this
// place: the lead drafts, then revises one review or combines several;
// every other agent reviews.
func (p turnPlace) fits(role string) bool {
	switch role {
	case RoleDraft:
		return p.lead
	case RoleRevise:
		return p.lead && p.reviewers == 1
	case RoleCombine:
		return p.lead && p.reviewers >= 2
	case RoleReview:
		return !p.lead
	}
	return false
}

// final reports whether a reply in role is the agent's last in the turn.
func (p turnPlace) final(role string) bool { return role != RoleDraft || p.reviewers == 0 }

// replies attaches the replies (messages with reply_turn) to their turns.
// They are the one record of what was posted: an agent's part in a turn is
// done once its final reply is in (turn_agents.reply_posted_at), and a
// discussion claim's reply is its agent's reply under its role.
func (l *loader) replies() error {
	for i := range l.w.Messages {
		m := &l.w.Messages[i]
		if m.ReplyTurn == nil {
			continue
		}
		turn, role := *m.ReplyTurn, *m.ReplyRole
		p, ok, err := l.place(turn, m.Author)
		if err != nil {
			return err
		}
		if !ok {
			return l.w.Errorf(&m.ReplyTurn, "no turn on message %q woke %s", turn, m.Author)
		}
		if !p.fits(role) {
			return l.w.Errorf(&m.ReplyRole, "%s does not reply %s in this turn: %s", m.Author, role, p.roles())
		}
		if twice, err := l.has(`SELECT 1 FROM messages WHERE reply_turn = ? AND author_agent = ? AND reply_role = ?`,
			turn, m.Author, role); err != nil || twice {
			if err == nil {
				err = l.w.Errorf(m, "%s already posted its %s reply in the turn of %q", m.Author, role, turn)
			}
			return err
		}
		if _, err := l.tx.ExecContext(l.ctx, `UPDATE messages SET reply_turn = ?, reply_role = ? WHERE id = ?`, turn, role, m.ID); err != nil {
			return err
		}
		if p.final(role) {
			if _, err := l.tx.ExecContext(l.ctx, `UPDATE turn_agents SET reply_posted_at = (SELECT created_at FROM messages WHERE id = ?)
				WHERE turn = ? AND agent = ?`, m.ID, turn, m.Author); err != nil {
				return err
			}
		}
	}
	for _, f := range l.postedFlags {
		var posted bool
		if err := l.tx.QueryRowContext(l.ctx, `SELECT reply_posted_at IS NOT NULL FROM turn_agents WHERE turn = ? AND agent = ?`,
			f.turn, f.agent).Scan(&posted); err != nil {
			return err
		}
		if posted != f.posted {
			has := "no"
			if posted {
				has = "its"
			}
			return l.w.Errorf(f.at, "says %v, but %s has %s final reply in this turn (it is derived from messages[].reply_turn)",
				f.posted, f.agent, has)
		}
	}
	return nil
}

// roles lists the roles that fit p, for an error.
func (p turnPlace) roles() string {
	switch {
	case !p.lead:
		return "a reviewer reviews"
	case p.reviewers == 0:
		return "a lone agent drafts"
	case p.reviewers == 1:
		return "the lead drafts and revises"
	}
	return "the lead drafts and combines"
}

func (l *loader) tasks() error {
	for i := range l.w.Tasks {
		t := &l.w.Tasks[i]
		if err := l.mustExist(&t.Project, "project", qProject, t.Project); err != nil {
			return err
		}
		if err := l.mustExist(&t.Agent, "agent", qAgent, t.Agent); err != nil {
			return err
		}
		if t.RequestMessage != nil {
			ok, err := l.has(`SELECT 1 FROM messages m JOIN rooms r ON r.id = m.room
				WHERE m.id = ? AND m.kind = 'task_request' AND r.project = ?`, *t.RequestMessage, t.Project)
			if err != nil {
				return err
			}
			if !ok {
				return l.w.Errorf(&t.RequestMessage, "%q is not a task_request message in project %s", *t.RequestMessage, t.Project)
			}
		}
		if err := l.exec(&t.ID, "task "+t.ID, `INSERT INTO tasks(id, project, agent, title, request_message, created_at)
			VALUES (?,?,?,?,?,?)`, t.ID, t.Project, t.Agent, t.Title, dbString(t.RequestMessage), toDB(l.now)); err != nil {
			return err
		}
	}
	return nil
}

// idOr returns id, or a fresh one with prefix when it is empty.
func idOr(id, prefix string) (string, error) {
	if id != "" {
		return id, nil
	}
	return newID(prefix)
}

// supersededAt is when a loaded world's superseded claim was superseded.
func (l *loader) supersededAt(superseded bool) any {
	if superseded {
		return toDB(l.now)
	}
	return nil
}

func (l *loader) attempts() error {
	for i := range l.w.Attempts {
		a := &l.w.Attempts[i]
		id, err := idOr(a.ID, "att_")
		if err != nil {
			return err
		}
		var taskAgent string
		var request sql.NullString
		err = l.tx.QueryRowContext(l.ctx, `SELECT agent, request_message FROM tasks WHERE id = ?`, a.Task).Scan(&taskAgent, &request)
		if errors.Is(err, sql.ErrNoRows) {
			return l.w.Errorf(&a.Task, "unknown task %q", a.Task)
		}
		if err != nil {
			return err
		}
		ok, err := l.has(`SELECT 1 FROM runners WHERE id = ? AND agent = ?`, a.Runner, taskAgent)
		if err != nil {
			return err
		}
		if !ok {
			return l.w.Errorf(&a.Runner, "no runner %q paired to the task's agent %s", a.Runner, taskAgent)
		}
		claimed, err := l.timeOr(&a.ClaimedAt, l.now)
		if err != nil {
			return err
		}
		live, err := l.timeOr(&a.LiveUntil, claimed.Add(l.opts.LaunchTimeout))
		if err != nil {
			return err
		}
		if err := l.exec(a, "attempt "+id+" (or its runner, task and idempotency key)", `INSERT INTO attempts(id,
			task, runner, idempotency_key, cause_message, claimed_at, live_until, superseded_at) VALUES (?,?,?,?,?,?,?,?)`,
			id, a.Task, a.Runner, a.IdempotencyKey, request, toDB(claimed), toDB(live), l.supersededAt(a.Superseded)); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) discussionClaims() error {
	for i := range l.w.DiscussionClaims {
		c := &l.w.DiscussionClaims[i]
		id, err := idOr(c.ID, "dsc_")
		if err != nil {
			return err
		}
		var agent string
		err = l.tx.QueryRowContext(l.ctx, `SELECT agent FROM runners WHERE id = ?`, c.Runner).Scan(&agent)
		if errors.Is(err, sql.ErrNoRows) {
			return l.w.Errorf(&c.Runner, "unknown runner %q", c.Runner)
		}
		if err != nil {
			return err
		}
		p, ok, err := l.place(c.Message, agent)
		if err != nil {
			return err
		}
		if !ok {
			return l.w.Errorf(&c.Message, "no turn on message %q woke the runner's agent %s", c.Message, agent)
		}
		if !p.fits(c.Role) {
			return l.w.Errorf(&c.Role, "%s is not claimed for %s in this turn: %s", c.Role, agent, p.roles())
		}
		if c.Reviewing != nil {
			ok, err := l.has(`SELECT 1 FROM messages WHERE id = ? AND reply_turn = ? AND reply_role = 'draft'`, *c.Reviewing, c.Message)
			if err != nil {
				return err
			}
			if !ok {
				return l.w.Errorf(&c.Reviewing, "%q is not the draft reply in the turn of %q", *c.Reviewing, c.Message)
			}
		}
		reply, err := l.claimReply(c, agent)
		if err != nil {
			return err
		}
		var repliedAt any
		if reply.Valid {
			if err := l.tx.QueryRowContext(l.ctx, `SELECT created_at FROM messages WHERE id = ?`, reply.String).Scan(&repliedAt); err != nil {
				return err
			}
		}
		claimed, err := l.timeOr(&c.ClaimedAt, l.now)
		if err != nil {
			return err
		}
		live, err := l.timeOr(&c.LiveUntil, claimed.Add(l.opts.DiscussionTTL))
		if err != nil {
			return err
		}
		if err := l.exec(c, "discussion claim "+id+" (or its runner, message and idempotency key)",
			`INSERT INTO discussion_claims(id, message, runner, agent, idempotency_key, role, lead, reviewing_message, claimed_at,
			live_until, superseded_at, reply_message, replied_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			id, c.Message, c.Runner, agent, c.IdempotencyKey, c.Role, p.lead, dbString(c.Reviewing), toDB(claimed), toDB(live),
			l.supersededAt(c.Superseded), reply, repliedAt); err != nil {
			return err
		}
	}
	return nil
}

// claimReply derives a discussion claim's reply: its agent's reply in the
// turn under the claim's role, unless the claim was superseded (a
// superseded claim never posted). At most one claim of an agent holds a
// role in a turn without being superseded. The deprecated reply_message
// and reply_posted must agree with what is derived.
func (l *loader) claimReply(c *world.DiscussionClaim, agent string) (sql.NullString, error) {
	var reply sql.NullString
	if !c.Superseded {
		twice, err := l.has(`SELECT 1 FROM discussion_claims WHERE message = ? AND agent = ? AND role = ? AND superseded_at IS NULL`,
			c.Message, agent, c.Role)
		if err != nil {
			return reply, err
		}
		if twice {
			return reply, l.w.Errorf(c, "%s already holds a %s claim in the turn of %q that is not superseded",
				agent, c.Role, c.Message)
		}
		err = l.tx.QueryRowContext(l.ctx, `SELECT id FROM messages WHERE reply_turn = ? AND author_agent = ? AND reply_role = ?`,
			c.Message, agent, c.Role).Scan(&reply)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return reply, err
		}
	}
	if c.ReplyMessage != nil && (!reply.Valid || reply.String != *c.ReplyMessage) {
		return reply, l.w.Errorf(&c.ReplyMessage, "%q is not this claim's reply: that is %s",
			*c.ReplyMessage, describeReply(reply, c, agent))
	}
	if c.ReplyPosted != nil && *c.ReplyPosted != reply.Valid {
		return reply, l.w.Errorf(&c.ReplyPosted, "says %v, but this claim's reply is %s",
			*c.ReplyPosted, describeReply(reply, c, agent))
	}
	return reply, nil
}

// describeReply says what a claim's derived reply is, for an error.
func describeReply(reply sql.NullString, c *world.DiscussionClaim, agent string) string {
	switch {
	case reply.Valid:
		return "message " + reply.String
	case c.Superseded:
		return "none (a superseded claim posted nothing)"
	}
	return "none (no " + c.Role + " reply by " + agent + " in the turn of " + c.Message + ")"
}
