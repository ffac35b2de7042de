package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jackc/pgxlisten"
)

// PostgreSQL: any number of stores (prickled replicas) on one database.
//
//   - Every write is a transaction of its own (READ COMMITTED) on a
//     bounded pool (Options.MaxConns), retried whole, at most twice, when
//     PostgreSQL aborts it for a serialization failure or a deadlock.
//     What makes two writes of one task's claims (or of one discussion
//     turn) take turns across replicas is the row lock each takes first
//     (lockRow); the UNIQUE constraints still decide a key, and an insert
//     that meets one inserts nothing (ON CONFLICT DO NOTHING) and
//     replays. A claim's lock goes with its BEGIN, and its task's read
//     with both, in one round trip (pgWriter.try).
//   - Loading a world and migrating take a transaction-scoped advisory
//     lock, so that replicas starting at once seed an empty database
//     once and apply each migration once.
//   - Every operation runs under Options.Timeout, from waiting for a
//     connection to the commit: a database that is down or unreachable
//     fails a call within it, never holds it, with ErrUnavailable.
//   - The pool's connections outlive PostgreSQL's sessions: one that the
//     server ended while it idled in the pool (a restart, a failover,
//     pg_terminate_backend) fails the first statement sent on it, at
//     once. database/sql pings a connection before reuse only after it
//     idled a second, and retries a failure only when the driver says
//     nothing was sent, which pgx says of few of these. So an operation
//     whose first statement fails on a connection PostgreSQL had closed
//     runs again on another (firstOnConn): nothing of it ran, and each
//     such failure drops its connection from the pool, so that within
//     MaxConns+1 tries one is dialled anew.
//   - No principal is cached: every authentication reads the database,
//     so a token revoked or a credential replaced on one replica stops
//     working on every replica the moment its transaction commits.
//   - The directory caches (cache.go) are kept only while the store
//     listens on PostgreSQL's notifications: a change that invalidates
//     them (a world loaded; revocations and rotations notify too)
//     notifies every replica in its transaction, on commit. While the
//     listening connection is down the caches are off and every call
//     reads the database.

// Defaults of the PostgreSQL options.
const (
	// DefaultTimeout bounds one operation on PostgreSQL, from waiting for
	// a connection to its commit.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxConns bounds one store's connections to PostgreSQL (its
	// notification listener takes one more).
	DefaultMaxConns = 16
)

// ErrUnavailable marks a failure of the database rather than of the
// operation: PostgreSQL could not be reached, ended the connection, or
// did not answer within Options.Timeout. The same call may succeed
// later. Whether a write that failed so was committed is unknown: a
// claim's replay tells.
var ErrUnavailable = errors.New("the database is unavailable")

// notifyChannel is the channel on which a store tells the other stores
// of its database to drop their caches.
const notifyChannel = "prickle_caches"

// The advisory locks (pg_advisory_xact_lock) that make replicas take
// turns where no row can: applying the migrations, and loading a world.
const (
	lockMigrate int64 = 0x7072_6963_6b00_0001
	lockWorld   int64 = 0x7072_6963_6b00_0002
)

// retryable are the SQLSTATEs after which a write transaction is tried
// again: serialization_failure and deadlock_detected.
var retryable = map[string]bool{"40001": true, "40P01": true}

// pgTries is how many times a write transaction is tried.
const pgTries = 3

// openPostgres opens the PostgreSQL database of dsn (a postgres:// URL;
// the PG* environment variables and the password file fill in what it
// leaves out, as libpq's do) and applies any pending migrations.
func openPostgres(ctx context.Context, dsn string, opts Options) (*Store, error) {
	fail := func(err error) (*Store, error) {
		return nil, fmt.Errorf("store: open %s: %w", Redact(dsn), err)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return fail(err)
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > opts.Timeout {
		cfg.ConnectTimeout = opts.Timeout
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(opts.MaxConns)
	db.SetMaxIdleConns(opts.MaxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	e := &engine{pg: true}
	id, err := newID("")
	if err != nil {
		db.Close()
		return fail(err)
	}
	s := &Store{db: db, wdb: db, e: e, opts: opts, id: id,
		executionTools: toolsJSON(opts.ExecutionTools), discussionTools: toolsJSON(opts.DiscussionTools)}
	s.pw = &pgWriter{db: db, e: e, timeout: opts.Timeout, maxConns: opts.MaxConns, storeID: id}
	pctx, cancel := s.opContext(ctx)
	err = db.PingContext(pctx)
	cancel()
	if err != nil {
		db.Close()
		return fail(err)
	}
	ms, err := loadMigrations(pgMigrations)
	if err == nil {
		err = s.migrate(ctx, ms)
	}
	if err == nil {
		s.stmts, err = prepareStatements(ctx, db, e, true)
		s.pw.st = s.stmts
	}
	if err != nil {
		s.Close()
		return fail(err)
	}
	// The caches are on from the first call, unless the listener cannot
	// connect in time: then they come on once it does.
	select {
	case <-s.listen(cfg):
	case <-time.After(opts.Timeout):
	}
	return s, nil
}

// opContext is the context of one operation on PostgreSQL: the caller's
// values, not its cancellation (an operation that has begun runs to its
// end), with Options.Timeout. SQLite's is the caller's, uncancelled.
func (s *Store) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx = context.WithoutCancel(ctx)
	if !s.e.pg {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.opts.Timeout)
}

// pgWriter runs the write transactions of a PostgreSQL store.
type pgWriter struct {
	db       *sql.DB
	e        *engine
	st       *statements
	timeout  time.Duration
	maxConns int
	storeID  string // the store's id, for its notifications

	mu     sync.RWMutex // closed, against new transactions
	closed bool
	wg     sync.WaitGroup // the transactions running
}

// do runs fn in a transaction of its own: committed if fn returns nil,
// rolled back otherwise. lock, if not nil, is the row lock fn takes
// first (lockRow): it goes with the BEGIN, in one round trip. It waits
// for a connection while ctx lasts (and at most the timeout); once fn
// has begun, ctx no longer matters. A transaction that PostgreSQL aborts
// for a serialization failure or a deadlock runs again. A panic in fn
// rolls it back and is raised again.
func (w *pgWriter) do(ctx context.Context, lock *rowLock, fn func(tx *txn) error) error {
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return errClosed
	}
	w.wg.Add(1)
	w.mu.RUnlock()
	defer w.wg.Done()
	for try := 1; ; try++ {
		err := w.try(ctx, lock, fn)
		var pe *pgconn.PgError
		if try < pgTries && errors.As(err, &pe) && retryable[pe.Code] {
			continue
		}
		return err
	}
}

// try runs fn once. The transaction is the connection's own, begun and
// ended by statements sent on it rather than a *sql.Tx, so that its
// BEGIN can go with its first statement (pgx's batch: one write, the
// answers read in order; PostgreSQL still runs the lock before anything
// after it, each statement in a snapshot of its own).
func (w *pgWriter) try(ctx context.Context, lock *rowLock, fn func(tx *txn) error) error {
	actx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	tctx, tcancel := context.WithTimeout(context.WithoutCancel(ctx), w.timeout)
	defer tcancel()
	conn, err := firstOnConn(w.db, w.maxConns, actx, tctx, func(conn *sql.Conn) error {
		return pgBegin(tctx, conn, w.e, lock)
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	defer conn.Close()
	ferr, p := runWork(fn, &txn{q: conn, st: w.st, e: w.e, ctx: tctx, storeID: w.storeID, held: lock})
	if p != nil {
		pgEnd(tctx, conn, false)
		panic(p)
	}
	if ferr != nil {
		pgEnd(tctx, conn, false)
		return unavailable(conn, tctx, ferr)
	}
	if err := pgEnd(tctx, conn, true); err != nil {
		return unavailable(conn, tctx, fmt.Errorf("commit: %w", err))
	}
	return nil
}

// pgBegin begins a transaction on conn, taking lock (if not nil) and
// reading the row it names next (lock.then) in the same round trip. On
// failure no transaction is left open: it is rolled back, or the
// connection is dropped.
func pgBegin(ctx context.Context, conn *sql.Conn, e *engine, lock *rowLock) error {
	return conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		if lock == nil {
			if _, err := c.Exec(ctx, "begin"); err != nil {
				return fmt.Errorf("begin: %w", err)
			}
			return nil
		}
		b := &pgx.Batch{}
		b.Queue("begin")
		b.Queue(e.rebind(stmtSQL[lock.id]), lock.key)
		r := lock.then
		if r != nil {
			r.done = false
			b.Queue(e.rebind(stmtSQL[r.id]), r.args...).QueryRow(func(row pgx.Row) error {
				r.err = row.Scan(r.dest...)
				if errors.Is(r.err, sql.ErrNoRows) {
					r.err, r.done = sql.ErrNoRows, true
					return nil
				}
				r.done = r.err == nil
				return r.err
			})
		}
		if err := c.SendBatch(ctx, b).Close(); err != nil {
			return errors.Join(fmt.Errorf("begin: %w", err), endTx(ctx, c, false))
		}
		return nil
	})
}

// pgEnd commits (or rolls back) the transaction pgBegin began on conn.
func pgEnd(ctx context.Context, conn *sql.Conn, commit bool) error {
	return conn.Raw(func(dc any) error { return endTx(ctx, dc.(*stdlib.Conn).Conn(), commit) })
}

// endTx commits or rolls back the transaction open on c. A COMMIT that
// PostgreSQL turned into a ROLLBACK (the transaction had failed) is an
// error. A connection whose transaction may still be open (the statement
// got no answer) is dropped (driver.ErrBadConn), never put back in the
// pool inside it.
func endTx(ctx context.Context, c *pgx.Conn, commit bool) error {
	end := "rollback"
	if commit {
		end = "commit"
	}
	tag, err := c.Exec(ctx, end)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe): // answered: the transaction is over
		return err
	case err != nil:
		return errors.Join(err, driver.ErrBadConn)
	case commit && tag.String() != "COMMIT":
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// unavailable returns err, the failure of an operation on conn under
// ctx, marked ErrUnavailable when the connection is gone or ctx, the
// operation's time, has run out (pgx closes a connection whose
// statement ran out of time, too).
func unavailable(conn *sql.Conn, ctx context.Context, err error) error {
	if err == nil || RefusalCode(err) != "" || errors.Is(err, ErrUnavailable) || ctx.Err() == nil && !connClosed(conn) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// firstOnConn takes a connection of the pool, waiting while wait lasts,
// and runs first, an operation's first statement, on it. When first
// fails on a connection that PostgreSQL had closed (the top of this
// file says why that happens), and run, the operation's context, has
// not ended, first runs again on another connection, at most maxConns
// times more. It returns the connection, for the rest of the operation,
// which the caller closes; on failure it has closed it, and marked the
// failure ErrUnavailable if the database is to blame (unavailable).
func firstOnConn(db *sql.DB, maxConns int, wait, run context.Context, first func(conn *sql.Conn) error) (*sql.Conn, error) {
	for lost := 0; ; lost++ {
		conn, err := db.Conn(wait)
		if err != nil {
			return nil, fmt.Errorf("%w: connect: %w", ErrUnavailable, err)
		}
		if err = first(conn); err == nil {
			return conn, nil
		}
		err = unavailable(conn, run, err)
		again := lost < maxConns && run.Err() == nil && errors.Is(err, ErrUnavailable)
		conn.Close()
		if !again {
			return nil, err
		}
	}
}

// connClosed reports whether conn's connection to PostgreSQL is closed:
// pgx closes one whose socket failed, and database/sql one the driver
// called bad.
func connClosed(conn *sql.Conn) bool {
	closed := false
	err := conn.Raw(func(dc any) error {
		if c, ok := dc.(*stdlib.Conn); ok {
			closed = c.Conn().IsClosed()
		}
		return nil
	})
	return closed || err != nil // an error: database/sql closed it
}

// close refuses new transactions and waits for those running.
func (w *pgWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.wg.Wait()
}

// listen starts the listener that keeps the caches right across the
// stores of one database (see the top of this file). The channel it
// returns is closed once it first listens.
func (s *Store) listen(cfg *pgx.ConnConfig) <-chan struct{} {
	log := s.opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s.cachesOn = new(atomic.Bool)
	s.dir.on, s.members.on = s.cachesOn, s.cachesOn
	s.auth.on = new(atomic.Bool) // never: see the top of this file
	ctx, cancel := context.WithCancel(context.Background())
	var lost atomic.Bool
	l := &pgxlisten.Listener{
		Connect: func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, cfg.Copy()) },
		LogError: func(ctx context.Context, err error) {
			s.cachesOn.Store(false)
			if ctx.Err() == nil && !lost.Swap(true) {
				log.Warn("store: PostgreSQL notifications lost; every call reads the database until they are back",
					"err", err.Error())
			}
		},
		ReconnectDelay: time.Second,
	}
	listening := make(chan struct{})
	l.Handle(notifyChannel, listenHandler{s: s, lost: &lost, log: log, first: sync.OnceFunc(func() { close(listening) })})
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Listen(ctx)
	}()
	s.stopListen = func() { cancel(); <-done }
	return listening
}

// listenHandler drops the caches on every notification, and when the
// listener (re)connects, since it may have missed some.
type listenHandler struct {
	s     *Store
	lost  *atomic.Bool
	log   *slog.Logger
	first func() // called once it listens
}

func (h listenHandler) HandleNotification(_ context.Context, n *pgconn.Notification, _ *pgx.Conn) error {
	if n.Payload != h.s.id { // its own changes, a store has dropped already
		h.s.worldChanged()
	}
	return nil
}

func (h listenHandler) HandleBacklog(context.Context, string, *pgx.Conn) error {
	h.s.worldChanged()
	h.s.cachesOn.Store(true)
	h.first()
	if h.lost.Swap(false) {
		h.log.Info("store: PostgreSQL notifications are back")
	}
	return nil
}

// notifyCaches tells the other stores of a PostgreSQL database to drop
// their caches when tx commits (this store drops its own).
func (tx *txn) notifyCaches(ctx context.Context) error {
	if !tx.e.pg {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_notify('`+notifyChannel+`', ?)`, tx.storeID)
	return err
}

// advisoryLock takes the transaction-scoped advisory lock key on
// PostgreSQL; on SQLite the writing transaction holds the database's
// one write lock already.
func (tx *txn) advisoryLock(ctx context.Context, key int64) error {
	if !tx.e.pg {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, key)
	return err
}
