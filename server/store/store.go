package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prickle-dev/prickle/api"
)

// DefaultLaunchTimeout is the launch timeout used when Options.LaunchTimeout
// is zero: an execution credential minted by ClaimTask expires this long
// after the claim (or after its latest replay).
const DefaultLaunchTimeout = 15 * time.Minute

// DefaultDiscussionTTL is the lifetime of a discussion credential. The
// claim_discussion page fixes it at 10 minutes.
const DefaultDiscussionTTL = 10 * time.Minute

// busyTimeoutMillis is how long a connection waits for the write lock.
const busyTimeoutMillis = 10000

// Options configures a Store. The zero value is valid.
type Options struct {
	// Now is the clock. Nil means time.Now. Tests inject a fake clock to
	// reach expiry and time-outs without sleeping.
	Now func() time.Time
	// LaunchTimeout is the lifetime of an execution credential, and how long
	// an attempt stays live (blocking a claim with another key). Zero means
	// DefaultLaunchTimeout (15 minutes).
	LaunchTimeout time.Duration
	// DiscussionTTL is the lifetime of a discussion credential. Zero means
	// DefaultDiscussionTTL; the docs fix it at 10 minutes, so only tests
	// should change it.
	DiscussionTTL time.Duration
	// ExecutionTools and DiscussionTools are the allowed_tools written on
	// the execution credentials ClaimTask mints and on the discussion
	// credentials ClaimDiscussion mints. Which tools those are is the
	// server's policy (the MCP layer); the store keeps and returns them.
	ExecutionTools, DiscussionTools []string

	// Timeout bounds one operation on PostgreSQL, from waiting for a
	// connection to its commit (postgres.go). Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxConns bounds the store's connections to PostgreSQL. Zero means
	// DefaultMaxConns.
	MaxConns int
	// Logger receives the store's own events (on PostgreSQL, its
	// notifications lost and back). Nil means slog.Default().
	Logger *slog.Logger
}

// Store is the persistence and domain-rule layer of the reference server.
// It is safe for concurrent use.
type Store struct {
	db    *sql.DB     // readers (the same single connection as wdb for ":memory:"; the pool on PostgreSQL)
	wdb   *sql.DB     // SQLite: the writer's connection (a pool of one)
	w     *writer     // SQLite: runs every write transaction (writer.go)
	pw    *pgWriter   // PostgreSQL: runs every write transaction (postgres.go)
	e     *engine     // the database's dialect (engine.go)
	stmts *statements // the hot statements on db, prepared once (stmts.go)
	opts  Options
	auth  genCache[[32]byte, Principal]                  // agent and runner principals by token hash (cache.go)
	dir   genCache[string, api.DiscoverTeamAgentsOutput] // team directories by project slug (cache.go)
	// members holds the projects each person is a member of, by handle
	// (cache.go): who may see a project is decided from it alone.
	members genCache[string, map[string]bool]
	// cachesOn is set on PostgreSQL, where the caches are kept only while
	// the store listens for other stores' changes (postgres.go).
	cachesOn   *atomic.Bool
	stopListen func()
	id         string // PostgreSQL: tells its own notifications from other stores'

	// noWorlds: the database is older than migration 0008, the worlds
	// loaded (only tests open a store without migrating it fully).
	noWorlds bool

	// The JSON of opts.ExecutionTools and opts.DiscussionTools, as the
	// claims' rows keep a credential's allowed tools.
	executionTools, discussionTools string
}

// The migrations of each database, migrations/NNNN_name.sql for SQLite
// and migrations/postgres/NNNN_name.sql for PostgreSQL: a version is the
// same schema on both. PostgreSQL's start at version 7, the schema SQLite
// had reached when PostgreSQL came (0007_schema.sql); every later one is
// written for each.
var (
	//go:embed migrations/*.sql
	sqliteMigrationFS embed.FS
	//go:embed migrations/postgres/*.sql
	pgMigrationFS embed.FS

	sqliteMigrations = migrationDir{sqliteMigrationFS, "migrations"}
	pgMigrations     = migrationDir{pgMigrationFS, "migrations/postgres"}
)

// Open opens (creating if needed) the database named by dsn and applies any
// pending migrations. dsn is a PostgreSQL URL (postgres:// or
// postgresql://; postgres.go), a SQLite file path, a "file:" URI, or
// ":memory:" for a private in-memory database (one connection, so every
// caller sees the same data). SQLite files use WAL; every connection has
// foreign keys on and a busy timeout; transactions that write begin
// IMMEDIATE. A URL of any other scheme is refused.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if IsPostgres(dsn) {
		return openPostgres(ctx, dsn, opts)
	}
	if isKeywordDSN(dsn) {
		return nil, fmt.Errorf("store: open %s: a key=value connection string is not a database name here: give PostgreSQL as a postgres:// URL", Redact(dsn))
	}
	if scheme := urlScheme(dsn); scheme != "" {
		return nil, fmt.Errorf("store: open %s: a database is a SQLite file path, :memory:, or a postgres:// or postgresql:// URL, not a %s:// URL", Redact(dsn), scheme)
	}
	ms, err := loadMigrations(sqliteMigrations)
	if err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	return open(ctx, dsn, opts, ms, true)
}

// withDefaults fills in the zero options.
func (opts Options) withDefaults() Options {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LaunchTimeout <= 0 {
		opts.LaunchTimeout = DefaultLaunchTimeout
	}
	if opts.DiscussionTTL <= 0 {
		opts.DiscussionTTL = DefaultDiscussionTTL
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	return opts
}

// open opens a SQLite database with the migrations to apply. Tests open
// older versions with strict false: a hot statement that does not compile
// against the older schema is then left out (using it panics) instead of
// failing the open.
func open(ctx context.Context, dsn string, opts Options, ms []migration, strict bool) (*Store, error) {
	opts = opts.withDefaults()
	if dsn == "" {
		return nil, errors.New("store: open: empty database name")
	}
	params := []string{
		"_pragma=busy_timeout(" + strconv.Itoa(busyTimeoutMillis) + ")",
		"_pragma=foreign_keys(1)",
		"_txlock=immediate",
	}
	memory := dsn == ":memory:"
	var name string
	switch {
	case memory:
		name = ":memory:?" + strings.Join(params, "&")
	case strings.HasPrefix(dsn, "file:"):
		params = append(params, "_pragma=journal_mode(WAL)", "_pragma=synchronous(NORMAL)")
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		name = dsn + sep + strings.Join(params, "&")
	default:
		if strings.ContainsAny(dsn, "?#") {
			return nil, fmt.Errorf("store: open %q: a file path may not contain '?' or '#'; use a file: URI", dsn)
		}
		params = append(params, "_pragma=journal_mode(WAL)", "_pragma=synchronous(NORMAL)")
		name = dsn + "?" + strings.Join(params, "&")
	}
	if !memory {
		if err := createPrivate(dsn); err != nil {
			return nil, fmt.Errorf("store: open %q: %w", dsn, err)
		}
	}
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, fmt.Errorf("store: open %q: %w", dsn, err)
	}
	s := &Store{db: db, wdb: db, e: sqliteEngine, opts: opts,
		executionTools: toolsJSON(opts.ExecutionTools), discussionTools: toolsJSON(opts.DiscussionTools)}
	if memory {
		// Every connection to ":memory:" is its own database: keep exactly
		// one, for reads and writes.
		singleConn(db)
	} else {
		// Readers share a pool (WAL lets them run beside the writer); the
		// writer is one connection of its own, so that writing transactions
		// queue in Go and start the moment the previous one ends, instead
		// of polling for SQLite's write lock in its busy handler (sleeps of
		// up to 100 ms under contention).
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8)
		if s.wdb, err = sql.Open("sqlite", name); err != nil {
			db.Close()
			return nil, fmt.Errorf("store: open %q: %w", dsn, err)
		}
		singleConn(s.wdb)
	}
	if memory {
		s.w = newMemoryWriter(db)
	} else if s.w, err = newFileWriter(ctx, s.wdb); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("store: open %q: %w", dsn, err)
	}
	if err := s.migrate(ctx, ms); err != nil {
		s.Close()
		return nil, err
	}
	s.noWorlds = ms[len(ms)-1].version < worldsVersion
	if s.stmts, err = prepareStatements(ctx, db, s.e, strict); err == nil {
		err = s.w.prepare(ctx, strict, s.stmts)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("store: open %q: %w", dsn, err)
	}
	return s, nil
}

// singleConn limits db to one connection, kept open.
func singleConn(db *sql.DB) {
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

// closeDBs closes the reader pool and the writer.
func (s *Store) closeDBs() error {
	err := s.db.Close()
	if s.wdb != nil && s.wdb != s.db {
		err = errors.Join(err, s.wdb.Close())
	}
	return err
}

// Close waits for the write transactions already submitted, then closes
// the prepared statements and the database. Later operations fail.
func (s *Store) Close() error {
	var err error
	if s.stopListen != nil {
		s.stopListen()
	}
	if s.w != nil {
		err = s.w.close()
	}
	if s.pw != nil {
		s.pw.close()
	}
	if s.stmts != nil {
		err = errors.Join(err, s.stmts.close())
	}
	if dbErr := s.closeDBs(); dbErr != nil {
		err = dbErr
	}
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// worldsVersion is the migration that records the worlds loaded.
const worldsVersion = 8

// Now returns the store's current time (UTC, millisecond precision), from
// the injected clock.
func (s *Store) Now() time.Time { return s.opts.Now().UTC().Truncate(time.Millisecond) }

// LaunchTimeout returns the effective launch timeout.
func (s *Store) LaunchTimeout() time.Duration { return s.opts.LaunchTimeout }

// SchemaVersion returns the highest applied migration version.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	if err := s.db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return int(v.Int64), nil
}

type migration struct {
	version int
	name    string
	sql     string
}

// migrationDir is the folder of one database's migrations.
type migrationDir struct {
	fsys fs.FS
	dir  string
}

func loadMigrations(d migrationDir) ([]migration, error) {
	entries, err := fs.ReadDir(d.fsys, d.dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []migration
	seen := map[int]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok {
			return nil, fmt.Errorf("migration %q: name must be NNNN_name.sql", e.Name())
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: bad version number", e.Name())
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %q and %q share version %d", prev, e.Name(), v)
		}
		seen[v] = e.Name()
		body, err := fs.ReadFile(d.fsys, d.dir+"/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// migrate applies every pending migration, each in its own transaction.
// Concurrent openers are safe: the version check happens inside the
// transaction, which holds SQLite's write lock (IMMEDIATE) or, on
// PostgreSQL, an advisory lock of the migrations.
func (s *Store) migrate(ctx context.Context, ms []migration) error {
	err := s.inTx(ctx, func(tx *txn) error {
		if err := tx.advisoryLock(ctx, lockMigrate); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at BIGINT NOT NULL
		)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: migrate: create schema_migrations: %w", err)
	}
	current, err := s.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	if len(ms) > 0 && current > ms[len(ms)-1].version {
		return fmt.Errorf("store: migrate: database schema version %d is newer than this build (%d)", current, ms[len(ms)-1].version)
	}
	for _, m := range ms {
		err := s.inTx(ctx, func(tx *txn) error {
			if err := tx.advisoryLock(ctx, lockMigrate); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, toDB(s.Now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("store: migrate: apply %s: %w", m.name, err)
		}
	}
	return nil
}

// inTx runs fn in a write transaction (BEGIN IMMEDIATE) on the writer
// (writer.go): fn's work is committed if it returns nil and rolled back
// otherwise, and inTx returns once it is durable. fn's error is returned
// unchanged. Like every txn, fn's statements run to completion whatever
// becomes of ctx.
func (s *Store) inTx(ctx context.Context, fn func(tx *txn) error) error {
	return s.inLockedTx(ctx, nil, fn)
}

// inLockedTx is inTx for a transaction whose first statement is the row
// lock (lockRow; nil: none): on PostgreSQL the lock is sent with the
// BEGIN, in one round trip.
func (s *Store) inLockedTx(ctx context.Context, lock *rowLock, fn func(tx *txn) error) error {
	if s.pw != nil {
		return s.pw.do(ctx, lock, fn)
	}
	return s.w.do(ctx, fn)
}

// inTxValue runs fn in one write transaction and returns its value, or the
// error as opError gives it.
func inTxValue[T any](ctx context.Context, s *Store, op string, fn func(tx *txn) (T, error)) (T, error) {
	return inLockedTxValue(ctx, s, op, nil, fn)
}

// inLockedTxValue is inTxValue for a transaction whose first statement is
// the row lock lock (inLockedTx).
func inLockedTxValue[T any](ctx context.Context, s *Store, op string, lock *rowLock, fn func(tx *txn) (T, error)) (T, error) {
	var res T
	err := s.inLockedTx(ctx, lock, func(tx *txn) error {
		var err error
		res, err = fn(tx)
		return err
	})
	if err != nil {
		var zero T
		return zero, opError(op, err)
	}
	return res, nil
}

// opError passes a *Refusal through as it is (the caller shows it to the
// client) and wraps any other failure as "store: OP: ...".
func opError(op string, err error) error {
	if RefusalCode(err) != "" {
		return err
	}
	return fmt.Errorf("store: %s: %w", op, err)
}

// inReadTx runs fn in one read-only (deferred) transaction.
// Like inTx, it does not pass ctx's cancellation to the database.
func (s *Store) inReadTx(ctx context.Context, fn func(tx *txn) error) error {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	ro := &sql.TxOptions{ReadOnly: true}
	if s.e.pg {
		var tx *sql.Tx
		conn, err := firstOnConn(s.db, s.opts.MaxConns, ctx, ctx, func(conn *sql.Conn) (err error) {
			if tx, err = conn.BeginTx(ctx, ro); err != nil {
				err = fmt.Errorf("begin: %w", err)
			}
			return err
		})
		if err != nil {
			return err
		}
		defer conn.Close()
		defer tx.Rollback() //nolint:errcheck // read-only
		return unavailable(conn, ctx, fn(&txn{q: tx, tx: tx, st: s.stmts, e: s.e, ctx: ctx}))
	}
	tx, err := s.db.BeginTx(ctx, ro)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only
	return fn(&txn{q: tx, tx: tx, st: s.stmts, e: s.e, ctx: context.Background()})
}

func toDB(t time.Time) int64 { return t.UTC().UnixNano() }

func fromDB(n int64) time.Time { return time.Unix(0, n).UTC() }

func nullTime(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromDB(n.Int64)
	return &t
}

func nullString(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	v := n.String
	return &v
}

func dbTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return toDB(*t)
}

func dbString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// worldChanged invalidates the caches after a world was loaded: it may
// hold revoked tokens and runners, and changes people, agents and
// memberships.
func (s *Store) worldChanged() {
	s.auth.invalidate()
	s.dir.invalidate()
	s.members.invalidate()
}

// createPrivate creates the database file of dsn with mode 0600 when it
// does not exist yet, before SQLite does (with 0644): the file holds the
// hash of every token. SQLite gives the -wal and -shm files the mode of
// the database file. An existing file keeps its mode; a "file:" URI
// naming an in-memory database (mode=memory) or no file is left alone.
func createPrivate(dsn string) error {
	path := dsn
	if rest, ok := strings.CutPrefix(dsn, "file:"); ok {
		p, query, _ := strings.Cut(rest, "?")
		if strings.Contains(query, "mode=memory") || p == "" || p == ":memory:" {
			return nil
		}
		path = p
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}
