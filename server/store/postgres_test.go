package store

import (
	"bytes"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/prickle-dev/prickle/internal/pgtest"
	"github.com/prickle-dev/prickle/spec/seed"
)

// PostgreSQL only: the directory caches of a store follow what another
// store of the database changes, told by its notification, long before
// cacheTTL; and while a store's notification connection is down its
// caches are off (every call reads the database), until it is back.
func TestPostgresCachesFollowOtherStores(t *testing.T) {
	db := testDB{name: "postgres", pg: pgtest.Start(t)}
	rs, _, issued := db.replicas(t, 2)
	a, b := rs[0], rs[1]
	wall := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a.dir.now = func() time.Time { return wall } // cacheTTL never passes
	a.members.now = a.dir.now
	maya := auth(t, a, tokenOf(t, issued, KindAgent, seed.BuilderAgent))
	people := func() int {
		t.Helper()
		r, err := a.DiscoverTeamAgents(ctx, maya, seed.Project)
		if err != nil {
			t.Fatal(err)
		}
		return len(r.People)
	}
	before := people()
	// Behind the stores' backs: the cache answers.
	if _, err := b.execSQL(`UPDATE people SET display_name = 'X' WHERE handle = 'maya'`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.LoadWorld(ctx, strings.NewReader(`{"version": 1,
		"people": [{"handle": "zed", "display_name": "Zed", "color": 3}],
		"memberships": [{"project": "`+seed.Project+`", "person": "zed"}]}`)); err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, "store A's directory to hold the person store B added", func() bool { return people() == before+1 })

	// The notification connection lost: the caches go off.
	if err := db.pg.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query ILIKE 'listen %'`); err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, "the caches to go off", func() bool { return !a.cachesOn.Load() })
	if _, err := b.execSQL(`DELETE FROM memberships WHERE person = 'zed'`); err != nil {
		t.Fatal(err)
	}
	if got := people(); got != before {
		t.Fatalf("caches off: %d people, want %d, read from the database", got, before)
	}
	within(t, 10*time.Second, "the caches to come back", func() bool { return a.cachesOn.Load() })
}

// within waits until cond holds, failing after d.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
	}
}

// PostgreSQL only: the pool's idle connections outlive PostgreSQL's
// sessions. Once the server has ended them (a restart; here too
// pg_terminate_backend, as a failover or an operator would) the next
// calls, of every kind, succeed: none fails on a connection that
// PostgreSQL had closed while it idled in the pool.
func TestPostgresStaleConnections(t *testing.T) {
	c := pgtest.Start(t)
	for _, how := range []string{"restart", "terminate"} {
		t.Run(how, func(t *testing.T) {
			name := c.NewDatabase(t)
			s := openT(t, c.DSN(name), newClock())
			issued, err := s.SeedDefault(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tok := tokenOf(t, issued, KindRunner, seed.BuilderAgent)
			runner := auth(t, s, tok)
			// Fill the pool with idle connections, each used just now, and
			// twice (database/sql pings a connection before reuse when it
			// was never reset, or idled a second: on a machine stalled that
			// long the test passes regardless).
			const idle = 6
			for range 2 {
				conns := make([]*sql.Conn, idle)
				for i := range conns {
					if conns[i], err = s.db.Conn(ctx); err != nil {
						t.Fatal(err)
					}
				}
				for _, conn := range conns {
					if err := conn.PingContext(ctx); err != nil {
						t.Fatal(err)
					}
					conn.Close()
				}
			}
			switch how {
			case "restart":
				c.Kill()
				if err := c.Restart(); err != nil {
					t.Fatal(err)
				}
			case "terminate":
				if err := c.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '` + name + `'`); err != nil {
					t.Fatal(err)
				}
			}
			for i := range idle + 1 {
				if _, err := s.ClaimTask(ctx, runner, seed.TaskID, "k", nil); err != nil {
					t.Errorf("claim %d after the %s: %v", i, how, err)
				}
				if _, err := s.Authenticate(ctx, tok); err != nil {
					t.Errorf("authenticate %d after the %s: %v", i, how, err)
				}
				if _, err := s.DiscoverTeamAgents(ctx, runner, seed.Project); err != nil {
					t.Errorf("discover %d after the %s: %v", i, how, err)
				}
				if _, err := s.HasWorld(ctx); err != nil {
					t.Errorf("has world %d after the %s: %v", i, how, err)
				}
			}
		})
	}
}

// PostgreSQL only: while the database is stopped, and while it is frozen
// (it accepts connections but answers nothing), every operation fails
// with ErrUnavailable, within the timeout; once the database is back,
// every operation succeeds again on the same store.
func TestPostgresUnavailable(t *testing.T) {
	c := pgtest.Start(t)
	// A bound no failure may take longer than: the store's timeout, the
	// second pgx gives a statement to end after its cancel request, and
	// as much again for a busy machine.
	const timeout = time.Second
	const bound = 4 * timeout
	s, tok, runner := openSeeded(t, c.NewDSN(t), Options{Timeout: timeout, MaxConns: 4})
	ops := []struct {
		name string
		op   func() error
	}{
		{"claim", func() error { _, err := s.ClaimTask(ctx, runner, seed.TaskID, "k", nil); return err }},
		{"authenticate", func() error { _, err := s.Authenticate(ctx, tok); return err }},
		{"read", func() error { _, err := s.HasWorld(ctx); return err }},
	}
	each := func(state string, want error) {
		t.Helper()
		for _, o := range ops {
			begin := time.Now()
			err := o.op()
			took := time.Since(begin)
			if want == nil && err != nil || want != nil && !errors.Is(err, want) {
				t.Errorf("%s, %s: %v, want %v", state, o.name, err, want)
			}
			if took > bound {
				t.Errorf("%s, %s: took %v, more than %v", state, o.name, took, bound)
			}
			t.Logf("%s, %s: %v in %v", state, o.name, err, took)
		}
	}
	each("up", nil)
	c.Kill()
	each("stopped", ErrUnavailable)
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	each("back", nil)

	// Frozen: every process of the cluster stopped (SIGSTOP), as a
	// server that hangs or a network that drops every packet.
	thaw := freeze(t, c)
	defer thaw()
	each("frozen", ErrUnavailable)
	thaw()
	each("thawed", nil)
}

// openSeeded opens the database of dsn with opts (logging nowhere) and
// seeds it, and returns the store, the seed runner's token and its
// principal.
func openSeeded(t *testing.T, dsn string, opts Options) (*Store, string, *Principal) {
	t.Helper()
	opts.Logger = slog.New(slog.DiscardHandler)
	s, err := Open(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	issued, err := s.SeedDefault(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tok := tokenOf(t, issued, KindRunner, seed.BuilderAgent)
	return s, tok, auth(t, s, tok)
}

// freeze stops (SIGSTOP) the postmaster of c and every process it
// started (each in a session of its own), and returns the function that
// resumes them, once, which the test calls however it ends.
func freeze(t *testing.T, c *pgtest.Cluster) (thaw func()) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.Dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	postmaster, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{postmaster} // first, so that it starts no more
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		i := bytes.LastIndex(b, []byte(") ")) // after "pid (comm) "
		if err != nil || i < 0 {
			continue
		}
		if fields := strings.Fields(string(b[i+2:])); len(fields) > 1 && fields[1] == strconv.Itoa(postmaster) { // state, ppid
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Logf("SIGSTOP %d: %v", pid, err)
		}
	}
	return sync.OnceFunc(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	})
}

// PostgreSQL only: a claim whose row lock fails (lock_timeout, while
// another session holds the task's row) fails alone. The lock went with
// the transaction's BEGIN; the transaction is rolled back and its
// connection kept (pgx would drop one left in a transaction), and the
// next calls on it succeed.
func TestPostgresFailedLockEndsItsTransaction(t *testing.T) {
	c := pgtest.Start(t)
	name := c.NewDatabase(t)
	if err := c.Exec(`ALTER DATABASE ` + name + ` SET lock_timeout = '200ms'`); err != nil {
		t.Fatal(err)
	}
	s, tok, runner := openSeeded(t, c.DSN(name), Options{MaxConns: 1})
	holder, err := pgx.Connect(ctx, c.DSN(name))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(ctx)
	if _, err := holder.Exec(ctx, `BEGIN`); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, `SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE`, seed.TaskID); err != nil {
		t.Fatal(err)
	}
	var before time.Time
	if err := holder.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	_, err = s.ClaimTask(ctx, runner, seed.TaskID, "k", nil)
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "55P03" {
		t.Fatalf("claim of a task whose row another session holds: %v, want lock_not_available (55P03)", err)
	}
	if _, err := holder.Exec(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.ClaimTask(ctx, runner, seed.TaskID, "k", nil); err != nil {
			t.Errorf("claim %d after the failed lock: %v", i, err)
		}
		if _, err := s.Authenticate(ctx, tok); err != nil {
			t.Errorf("authenticate %d after the failed lock: %v", i, err)
		}
	}
	var open, dialled int
	if err := holder.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state LIKE 'idle in transaction%'), count(*) FILTER (WHERE backend_start > $2)
		FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`, name, before).Scan(&open, &dialled); err != nil {
		t.Fatal(err)
	}
	if open != 0 || dialled != 0 {
		t.Errorf("after the failed lock: %d sessions in a transaction, %d connections dialled anew; want none", open, dialled)
	}
}
