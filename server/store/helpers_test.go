package store

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/internal/pgtest"
	"github.com/prickle-dev/prickle/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// A testDB is a database the store's tests run on. Every test of the
// store runs on both, from one body, through eachDB; the few that test
// what one database alone has say so (README.md of this folder lists
// them).
type testDB struct {
	name string
	pg   *pgtest.Cluster // nil for SQLite
}

// eachDB runs f as a subtest on SQLite and on PostgreSQL (the package's
// throwaway cluster: pgtest, which skips the subtest where PostgreSQL is
// not installed, unless PRICKLE_POSTGRES=1).
func eachDB(t *testing.T, f func(t *testing.T, db testDB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { f(t, testDB{name: "sqlite"}) })
	t.Run("postgres", func(t *testing.T) { f(t, testDB{name: "postgres", pg: pgtest.Start(t)}) })
}

// migrations are the database's embedded migrations, in order.
func (db testDB) migrations(t *testing.T) []migration {
	t.Helper()
	dir := sqliteMigrations
	if db.pg != nil {
		dir = pgMigrations
	}
	ms, err := loadMigrations(dir)
	if err != nil || len(ms) == 0 {
		t.Fatalf("migrations: %v (%d)", err, len(ms))
	}
	return ms
}

// dsn names a new, empty database: in memory for SQLite (one store's
// alone), a database of its own on the cluster for PostgreSQL.
func (db testDB) dsn(t *testing.T) string {
	t.Helper()
	if db.pg != nil {
		return db.pg.NewDSN(t)
	}
	return ":memory:"
}

// sharedDSN names a new, empty database that several stores can open, as
// replicas do: a file for SQLite.
func (db testDB) sharedDSN(t *testing.T) string {
	t.Helper()
	if db.pg != nil {
		return db.pg.NewDSN(t)
	}
	return filepath.Join(t.TempDir(), "shared.db")
}

// open opens a new empty database with the test options.
func (db testDB) open(t *testing.T, c *clock) *Store {
	t.Helper()
	return openT(t, db.dsn(t), c)
}

// seeded returns a store of a new database with the default world.
func (db testDB) seeded(t *testing.T) (*Store, *clock, []IssuedToken) {
	t.Helper()
	c := newClock()
	s := db.open(t, c)
	issued, err := s.SeedDefault(context.Background())
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	return s, c, issued
}

// loaded returns a store of a new database loaded with
// testdata/world.json.
func (db testDB) loaded(t *testing.T) (*Store, *clock) {
	t.Helper()
	c := newClock()
	return loadWorldFile(t, db.open(t, c)), c
}

func loadWorldFile(t *testing.T, s *Store) *Store {
	t.Helper()
	f, err := os.Open("testdata/world.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := s.LoadWorld(context.Background(), f); err != nil {
		t.Fatalf("load world: %v", err)
	}
	return s
}

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// clock is the injected clock (Options.Now).
type clock = testkit.Clock

func newClock() *clock { return testkit.NewClock(t0) }

// The allowed tools the test stores write on the credentials they mint:
// the store keeps and returns whatever the server's policy gives it.
var (
	testExecutionTools  = []string{"discover_team_agents", "checkpoint", "return_result"}
	testDiscussionTools = []string{"read_room", "post_message"}
)

func openT(t *testing.T, dsn string, c *clock) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn, Options{Now: c.Now,
		ExecutionTools: testExecutionTools, DiscussionTools: testDiscussionTools, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func tokenOf(t *testing.T, issued []IssuedToken, kind TokenKind, agent string) string {
	t.Helper()
	for _, it := range issued {
		if it.Kind == kind && it.Agent == agent {
			return it.Token
		}
	}
	t.Fatalf("no %s token for %s in %v", kind, agent, issued)
	return ""
}

func auth(t *testing.T, s *Store, tok string) *Principal {
	t.Helper()
	p, err := s.Authenticate(context.Background(), tok)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	return p
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want refusal %s, got success", code)
	}
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("want refusal %s, got non-refusal error %v", code, err)
	}
	if r.Code != code {
		t.Fatalf("want refusal %s, got %s (%s)", code, r.Code, r.Message)
	}
	if !errors.Is(err, &Refusal{Code: code}) {
		t.Fatalf("errors.Is does not match code %s", code)
	}
}

func ptrTo[T any](v T) *T { return &v }

// Tokens from testdata/world.json.
const (
	fxBuilderAgent  = "prk_fixture-agent-maya-builder-0001"
	fxTheoAgent     = "prk_fixture-agent-theo-reviewer-0001"
	fxBuilderRunner = "prk_fixture-runner-maya-laptop-0001"
	fxCriticRunner  = "prk_fixture-runner-maya-critic-0001"
	fxScoutRunner   = "prk_fixture-runner-maya-scout-0001"
	fxTheoRunner    = "prk_fixture-runner-theo-desktop-0001"
)

// count runs a SELECT count(*) query on s and fails the test if it cannot:
// a count that silently stayed 0 would pass every "nothing was written".
func count(t *testing.T, s *Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.db.QueryRowContext(ctx, s.e.rebind(query), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// execSQL runs SQL (SQLite's dialect, rebound for the store's database)
// behind the store's back.
func (s *Store) execSQL(query string, args ...any) (sql.Result, error) {
	return s.db.ExecContext(ctx, s.e.rebind(query), args...)
}

// queryRowSQL is execSQL's query of one row.
func (s *Store) queryRowSQL(query string, args ...any) *sql.Row {
	return s.db.QueryRowContext(ctx, s.e.rebind(query), args...)
}

// querySQL is execSQL's query.
func (s *Store) querySQL(query string, args ...any) (*sql.Rows, error) {
	return s.db.QueryContext(ctx, s.e.rebind(query), args...)
}
