package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// stmtID names one of the hot statements: the queries that run on every
// HTTP request (Authenticate) and in every call of the three tools. They
// are compiled once, when the store opens, instead of on every call
// (compiling a statement costs about as much as running it).
//
// Cold paths (migrations, the seed, loading worlds, admin operations) keep
// their SQL inline and unprepared.
type stmtID int

const (
	// Authenticate.
	stAuthenticate stmtID = iota

	// DiscoverTeamAgents.
	stPersonProjects
	stProjectPeople
	stProjectAgents

	// ClaimTask.
	stLockTask
	stTaskForClaim
	stWakeKind
	stInsertAttempt
	stSupersedeOtherAttempts
	stFindAttempt
	stSetAttemptCredential

	// ClaimDiscussion (loadTurn, repliesLeft and the claim itself).
	stLockTurn
	stMessageRoom
	stTurn
	stTurnAgents
	stRepliesPosted
	stFindDiscussionClaim
	stLeadDraft
	stLiveDiscussionClaim
	stInsertDiscussionClaim
	stSupersedeDiscussionClaims
	stSetDiscussionCredential
	stQuote

	numStmts
)

// stmtSQL is the text of every hot statement.
var stmtSQL = [numStmts]string{
	// An agent or runner token, or the credential an attempt or a
	// discussion claim holds (migration 0006); the columns are lookupToken's.
	stAuthenticate: `SELECT t.hash, t.kind, t.agent, a.owner, t.runner, NULL, NULL,
			NULL, NULL, NULL, NULL, NULL, t.expires_at, t.revoked_at, r.revoked_at
		FROM tokens t JOIN agents a ON a.id = t.agent LEFT JOIN runners r ON r.id = t.runner
		WHERE t.hash = ?1 AND t.kind IN ('agent', 'runner')
		UNION ALL
		SELECT c.credential, 'execution_credential', r.agent, a.owner, c.runner, c.id, NULL,
			k.project, NULL, NULL, c.task, c.allowed_tools, c.live_until, NULL, r.revoked_at
		FROM attempts c JOIN runners r ON r.id = c.runner JOIN agents a ON a.id = r.agent JOIN tasks k ON k.id = c.task
		WHERE c.credential = ?1
		UNION ALL
		SELECT c.credential, 'discussion_credential', c.agent, a.owner, c.runner, NULL, c.id,
			rm.project, rm.id, c.message, NULL, c.allowed_tools, c.live_until, NULL, r.revoked_at
		FROM discussion_claims c JOIN runners r ON r.id = c.runner JOIN agents a ON a.id = c.agent
			JOIN messages m ON m.id = c.message JOIN rooms rm ON rm.id = m.room
		WHERE c.credential = ?1`,

	stPersonProjects: `SELECT project FROM memberships WHERE person = ?`,
	stProjectPeople: `SELECT p.handle, p.display_name, p.avatar_url, p.color, p.away
		FROM people p JOIN memberships m ON m.person = p.handle WHERE m.project = ? ORDER BY p.handle`,
	stProjectAgents: `SELECT a.id, a.owner, a.name, a.avatar_url, a.model, a.client, a.role,
			a.capabilities, a.availability, a.trust_level, a.last_seen_at
		FROM agents a JOIN memberships m ON m.person = a.owner WHERE m.project = ? ORDER BY a.id`,

	// The claims of one task take turns on PostgreSQL (lockRow): see
	// lockRow for why SQLite needs no lock of its own.
	stLockTask: `SELECT 1 FROM tasks WHERE id = ? FOR UPDATE`,
	// With a key not used before, the last column tells the task's other
	// attempts not superseded: NULL none, else the latest end of their
	// lives (read here, with the task, not by a statement of its own;
	// compared with the time after the read, which it does not take, so
	// that on PostgreSQL it goes with the BEGIN and the lock).
	stTaskForClaim: `SELECT t.agent, t.project, t.request_message, a.id, a.claimed_at, a.superseded_at,
			CASE WHEN a.id IS NULL THEN (SELECT max(o.live_until) FROM attempts o
				WHERE o.task = t.id AND o.superseded_at IS NULL) END
		FROM tasks t
		JOIN memberships m ON m.project = t.project AND m.person = ?
		LEFT JOIN attempts a ON a.runner = ? AND a.task = t.id AND a.idempotency_key = ?
		WHERE t.id = ?`,
	// Wherever the message is: a mention is never a run's cause.
	stWakeKind: `SELECT kind FROM messages WHERE id = ?`,
	// An attempt is inserted with its first credential; a replay replaces
	// the credential, and the attempt stays live as long as the new one.
	// A key that exists already inserts nothing (the claim then replays
	// it): on PostgreSQL a unique violation would end the transaction.
	stInsertAttempt: `INSERT INTO attempts(id, task, runner, idempotency_key, cause_message, claimed_at, live_until,
		credential, allowed_tools) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (task, runner, idempotency_key) DO NOTHING`,
	stSupersedeOtherAttempts: `UPDATE attempts SET superseded_at = ?, credential = NULL
		WHERE task = ? AND id <> ? AND superseded_at IS NULL`,
	stFindAttempt: `SELECT id, task, claimed_at, superseded_at FROM attempts
		WHERE runner = ? AND task = ? AND idempotency_key = ?`,
	stSetAttemptCredential: `UPDATE attempts SET credential = ?, allowed_tools = ?, live_until = ? WHERE id = ?`,

	// The claims of one discussion turn, and the replies posted in it,
	// take turns on PostgreSQL (lockRow).
	stLockTurn: `SELECT 1 FROM turns WHERE message = ? FOR UPDATE`,
	stMessageRoom: `SELECT r.id, r.project, r.kind, r.owner FROM messages m
		JOIN rooms r ON r.id = m.room
		JOIN memberships ms ON ms.project = r.project AND ms.person = ?
		WHERE m.id = ?`,
	stTurn:          `SELECT state, reply_limit, expires_at FROM turns WHERE message = ?`,
	stTurnAgents:    `SELECT agent, reply_posted_at IS NOT NULL FROM turn_agents WHERE turn = ? ORDER BY wake_order`,
	stRepliesPosted: `SELECT count(*) FROM messages WHERE reply_turn = ?`,
	stFindDiscussionClaim: `SELECT id, role, lead, reviewing_message, superseded_at IS NOT NULL, replied_at IS NOT NULL
		FROM discussion_claims WHERE runner = ? AND message = ? AND idempotency_key = ?`,
	stLeadDraft: `SELECT id FROM messages WHERE reply_turn = ? AND reply_role = 'draft' AND author_agent = ?
		ORDER BY created_at DESC, rowid DESC LIMIT 1`,
	stLiveDiscussionClaim: `SELECT 1 FROM discussion_claims WHERE message = ? AND agent = ?
		AND superseded_at IS NULL AND replied_at IS NULL AND live_until > ?`,
	// Like attempts: inserted with the first credential, replaced on
	// replay; a key that exists already inserts nothing.
	stInsertDiscussionClaim: `INSERT INTO discussion_claims(id, message, runner, agent, idempotency_key, role, lead,
		reviewing_message, claimed_at, live_until, credential, allowed_tools) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (runner, message, idempotency_key) DO NOTHING`,
	stSupersedeDiscussionClaims: `UPDATE discussion_claims SET superseded_at = ?, credential = NULL
		WHERE message = ? AND agent = ? AND id <> ? AND superseded_at IS NULL AND replied_at IS NULL`,
	stSetDiscussionCredential: `UPDATE discussion_claims SET credential = ?, allowed_tools = ?, live_until = ? WHERE id = ?`,
	stQuote:                   `SELECT id, author_agent, body, provenance, provenance_status FROM messages WHERE id = ?`,
}

// sqliteSkips are the hot statements SQLite does without: its write
// transactions (BEGIN IMMEDIATE) hold the database's one write lock, so
// a transaction has nothing to lock row by row (lockRow).
var sqliteSkips = map[stmtID]bool{stLockTask: true, stLockTurn: true}

// statements holds the hot statements, prepared on the readers' *sql.DB
// (database/sql prepares each one lazily on every pooled connection that
// runs it and keeps it there) and on the SQLite writer's connection: a
// statement is compiled once per connection, not per call.
type statements struct {
	byID [numStmts]*sql.Stmt
}

// prepareStatements prepares every hot statement of the database e. It
// runs after the migrations, so the statements see the current schema.
// With strict false (tests of older schema versions) a statement that
// fails to compile is skipped.
func prepareStatements(ctx context.Context, db preparer, e *engine, strict bool) (*statements, error) {
	st := &statements{}
	for id, q := range stmtSQL {
		if q == "" {
			st.close()
			return nil, fmt.Errorf("statement %d has no SQL", id)
		}
		if !e.pg && sqliteSkips[stmtID(id)] {
			continue
		}
		p, err := db.PrepareContext(ctx, e.rebind(q))
		if err != nil && !strict {
			continue
		}
		if err != nil {
			st.close()
			return nil, fmt.Errorf("prepare statement %d: %w", id, err)
		}
		st.byID[id] = p
	}
	return st, nil
}

// preparer prepares statements: a *sql.DB (the readers' pool) or the
// writer's *sql.Conn.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// get returns the statement for use outside a transaction.
func (st *statements) get(id stmtID) *sql.Stmt { return st.byID[id] }

// close closes every prepared statement.
func (st *statements) close() error { return closeStmts(st.byID[:]) }

// closeStmts closes the statements of ss and clears them.
func closeStmts(ss []*sql.Stmt) error {
	var errs []error
	for i, p := range ss {
		if p != nil {
			errs = append(errs, p.Close())
			ss[i] = nil
		}
	}
	return errors.Join(errs...)
}

// txn is a transaction of the store. It runs cold, inline SQL (written
// for SQLite, rebound for PostgreSQL by its engine) and the store's
// prepared statements.
//
// A transaction runs to completion once begun: the context a caller
// passes to its methods is not given to the database (transactions take
// microseconds to milliseconds, and a claim whose client went away is one
// it can replay). Its statements run under ctx instead: on SQLite
// context.Background (not watching a context saves the driver a
// goroutine per statement), on PostgreSQL the operation's own deadline
// (Options.Timeout), so that an unreachable server fails a call instead
// of holding it.
type txn struct {
	q   querier // the transaction's connection
	tx  *sql.Tx // non-nil: the statements are bound to this transaction
	st  *statements
	e   *engine
	ctx context.Context
	// storeID is the id of the PostgreSQL store that runs the
	// transaction, which its notifications carry (postgres.go).
	storeID string
	// held is the row lock the transaction took with its BEGIN
	// (PostgreSQL, pgWriter): lockRow of it has nothing left to do.
	held *rowLock
}

// rowLock is the row lock of hot statement id (a SELECT ... FOR UPDATE)
// on the row of key: what a write transaction takes first (lockRow).
// then, if not nil, is the row it reads next.
type rowLock struct {
	id   stmtID
	key  string
	then *rowRead
}

// rowRead is a read of one row by hot statement id, scanned into dest.
// After a rowLock, on PostgreSQL, it goes with the BEGIN and the lock, in
// the same round trip (pgWriter.try); read then answers what it found.
type rowRead struct {
	id   stmtID
	args []any
	dest []any
	done bool  // read with the BEGIN
	err  error // what it found: nil or sql.ErrNoRows
}

// read scans r's row into its dest (sql.ErrNoRows: none), unless it was
// read with the transaction's BEGIN.
func (tx *txn) read(ctx context.Context, r *rowRead) error {
	if r.done {
		return r.err
	}
	return tx.stmt(ctx, r.id).QueryRowContext(ctx, r.args...).Scan(r.dest...)
}

// querier is what runs SQL in a txn: a *sql.Tx, or the writer's
// *sql.Conn inside its BEGIN.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ExecContext runs query in the transaction.
func (tx *txn) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	return tx.q.ExecContext(tx.ctx, tx.e.rebind(query), args...)
}

// QueryContext runs query in the transaction.
func (tx *txn) QueryContext(_ context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.q.QueryContext(tx.ctx, tx.e.rebind(query), args...)
}

// QueryRowContext runs query in the transaction.
func (tx *txn) QueryRowContext(_ context.Context, query string, args ...any) *sql.Row {
	return tx.q.QueryRowContext(tx.ctx, tx.e.rebind(query), args...)
}

// stmt returns hot statement id in the transaction. Bound to a
// *sql.Tx, database/sql reuses the statement already prepared on the
// transaction's connection, and closes the binding with the transaction.
//
// A PostgreSQL write transaction runs on its connection without a
// *sql.Tx (pgWriter): there the statement goes as its text, which pgx
// prepares once per connection and keeps (its statement cache), so it
// costs the same round trip as a statement prepared through
// database/sql.
func (tx *txn) stmt(_ context.Context, id stmtID) txStmt {
	if tx.tx == nil && tx.e.pg {
		return txStmt{q: tx.q, query: tx.e.rebind(stmtSQL[id]), ctx: tx.ctx}
	}
	s := tx.st.get(id)
	if tx.tx != nil {
		s = tx.tx.Stmt(s)
	}
	return txStmt{s: s, ctx: tx.ctx}
}

// lockRow takes the row lock of hot statement id (a SELECT ... FOR
// UPDATE) on PostgreSQL, where it is what makes the writes of one task's
// claims, or of one discussion turn, take turns across every replica: a
// second transaction waits at the lock until the first has committed,
// and its later statements, each reading a fresh snapshot (READ
// COMMITTED), see what the first wrote. On SQLite it does nothing: the
// writing transaction already holds the database's one write lock (BEGIN
// IMMEDIATE), across processes too.
func (tx *txn) lockRow(ctx context.Context, id stmtID, key string) error {
	if !tx.e.pg || tx.held != nil && tx.held.id == id && tx.held.key == key {
		return nil
	}
	_, err := tx.stmt(ctx, id).ExecContext(ctx, key)
	return err
}

// lockQuery is lockRow for a cold path: query is its SELECT ... FOR
// UPDATE of one row, whose key is key.
func (tx *txn) lockQuery(ctx context.Context, query, key string) error {
	if !tx.e.pg {
		return nil
	}
	_, err := tx.ExecContext(ctx, query, key)
	return err
}

// txStmt is a hot statement in a txn: prepared (s), or the text query
// that q, a PostgreSQL connection, prepares (txn.stmt). Like txn, it
// does not pass a caller's context to the database.
type txStmt struct {
	s     *sql.Stmt
	q     querier
	query string
	ctx   context.Context
}

// ExecContext runs the statement.
func (s txStmt) ExecContext(_ context.Context, args ...any) (sql.Result, error) {
	if s.s == nil {
		return s.q.ExecContext(s.ctx, s.query, args...)
	}
	return s.s.ExecContext(s.ctx, args...)
}

// QueryContext runs the statement.
func (s txStmt) QueryContext(_ context.Context, args ...any) (*sql.Rows, error) {
	if s.s == nil {
		return s.q.QueryContext(s.ctx, s.query, args...)
	}
	return s.s.QueryContext(s.ctx, args...)
}

// QueryRowContext runs the statement.
func (s txStmt) QueryRowContext(_ context.Context, args ...any) *sql.Row {
	if s.s == nil {
		return s.q.QueryRowContext(s.ctx, s.query, args...)
	}
	return s.s.QueryRowContext(s.ctx, args...)
}

// hasRow reports whether row holds a row (for "SELECT 1 ... " existence
// checks).
func hasRow(row *sql.Row) (bool, error) {
	var one int
	err := row.Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}
