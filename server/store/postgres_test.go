package store

import (
	"strings"
	"testing"
	"time"

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
	if _, err := b.LoadFixture(ctx, strings.NewReader(`{"version": 1,
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
