package store

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prickle-dev/prickle/spec/seed"
)

// replicas opens n stores on one new database, as n prickled replicas
// do, the first of them seeded (the others find the world there).
func (db testDB) replicas(t *testing.T, n int) ([]*Store, *clock, []IssuedToken) {
	t.Helper()
	c := newClock()
	dsn := db.sharedDSN(t)
	stores := make([]*Store, n)
	var issued []IssuedToken
	for i := range stores {
		stores[i] = openT(t, dsn, c)
		got, err := stores[i].SeedDefault(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && len(got) == 0 || i > 0 && got != nil {
			t.Fatalf("store %d seeded %d tokens: the first seeds, the others find the world", i, len(got))
		}
		issued = append(issued, got...)
	}
	return stores, c, issued
}

// The promises of the claims hold across stores of one database, each
// step on one store and checked on the other at once: a key replays
// wherever it is claimed again, a replay on one replaces the credential
// the other minted, another key is refused while the first attempt is
// live, and the turn's replies and states are the database's.
func TestReplicasKeepThePromises(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		rs, _, issued := db.replicas(t, 2)
		a, b := rs[0], rs[1]
		runner := auth(t, a, tokenOf(t, issued, KindRunner, seed.BuilderAgent))

		first, err := a.ClaimTask(ctx, runner, seed.TaskID, "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		auth(t, b, first.ExecutionCredential.Token)
		replay, err := b.ClaimTask(ctx, runner, seed.TaskID, "k", nil)
		if err != nil || !replay.Replayed || replay.Attempt != first.Attempt {
			t.Fatalf("the key claimed again on the other store: %+v, %v; want a replay of %+v", replay, err, first.Attempt)
		}
		if _, err := a.Authenticate(ctx, first.ExecutionCredential.Token); !errors.Is(err, ErrUnknownToken) {
			t.Fatalf("the credential replaced on the other store: %v, want ErrUnknownToken at once", err)
		}
		auth(t, a, replay.ExecutionCredential.Token)
		_, err = a.ClaimTask(ctx, runner, seed.TaskID, "other", nil)
		wantCode(t, err, CodeAttemptInProgress)

		d1, err := b.ClaimDiscussion(ctx, runner, seed.MessageID, "d", ptrTo(Harness))
		if err != nil {
			t.Fatal(err)
		}
		d2, err := a.ClaimDiscussion(ctx, runner, seed.MessageID, "d", ptrTo(Harness))
		if err != nil || !d2.Replayed || d2.Role != d1.Role {
			t.Fatalf("the discussion key claimed again on the other store: %+v, %v; want a replay", d2, err)
		}
		if _, err := b.Authenticate(ctx, d1.DiscussionCredential.Token); !errors.Is(err, ErrUnknownToken) {
			t.Fatalf("the discussion credential replaced on the other store: %v, want ErrUnknownToken at once", err)
		}
		_, err = b.ClaimDiscussion(ctx, runner, seed.MessageID, "d-other", ptrTo(Harness))
		wantCode(t, err, CodeDiscussionInProgress)

		// The reply posted on one store counts on the other.
		if _, err := b.PostDiscussionReply(ctx, auth(t, b, d2.DiscussionCredential.Token), "the draft", ""); err != nil {
			t.Fatal(err)
		}
		_, err = a.ClaimDiscussion(ctx, runner, seed.MessageID, "d", ptrTo(Harness))
		wantCode(t, err, CodeReplyPosted)

		// The turn's state set on one store refuses on the other.
		if err := a.SetTurnState(ctx, seed.MessageID, TurnStopped); err != nil {
			t.Fatal(err)
		}
		_, err = b.ClaimDiscussion(ctx, runner, seed.MessageID, "after-the-stop", ptrTo(Harness))
		wantCode(t, err, CodeTurnStopped)
	})
}

// A token rotated on one store stops working on the other: at once on
// PostgreSQL, which caches no principal; within cacheTTL on SQLite,
// whose stores cache agent and runner principals (cache.go).
func TestReplicasRotation(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		rs, _, issued := db.replicas(t, 2)
		a, b := rs[0], rs[1]
		tok := tokenOf(t, issued, KindAgent, seed.BuilderAgent)
		auth(t, a, tok) // cached on SQLite
		if _, err := b.RotateAgentToken(ctx, seed.BuilderAgent); err != nil {
			t.Fatal(err)
		}
		_, err := a.Authenticate(ctx, tok)
		if db.pg != nil {
			if !errors.Is(err, ErrRevokedToken) {
				t.Fatalf("rotated on the other store: %v, want ErrRevokedToken at once", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("SQLite, within the TTL: %v, want the cached principal", err)
		}
		a.auth.invalidate() // as cacheTTL passing does
		if _, err := a.Authenticate(ctx, tok); !errors.Is(err, ErrRevokedToken) {
			t.Fatalf("SQLite, after the TTL: %v, want ErrRevokedToken", err)
		}
	})
}

// Stores that start at once on one empty database seed it once: one of
// them issues the seed's tokens, the others find its world. And a
// world loaded by several at once is loaded once: the others are told
// it is loaded already.
func TestReplicasStartAtOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		const n = 4
		dsn := db.sharedDSN(t)
		c := newClock()
		stores := make([]*Store, n)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range stores {
			// They migrate the new database at once, too.
			wg.Go(func() {
				stores[i], errs[i] = Open(ctx, dsn, Options{Now: c.Now})
			})
		}
		wg.Wait()
		for i, s := range stores {
			if errs[i] != nil {
				t.Fatalf("open %d: %v", i, errs[i])
			}
			t.Cleanup(func() { s.Close() })
		}
		seeded := make([][]IssuedToken, n)
		for i, s := range stores {
			wg.Go(func() { seeded[i], errs[i] = s.SeedDefault(ctx) })
		}
		wg.Wait()
		seeders := 0
		for i := range stores {
			if errs[i] != nil {
				t.Fatalf("store %d: %v", i, errs[i])
			}
			if len(seeded[i]) > 0 {
				seeders++
			}
		}
		if seeders != 1 {
			t.Fatalf("%d stores seeded the world, want 1", seeders)
		}
		doc := raceWorld(1)
		dsn = db.sharedDSN(t)
		for i := range stores {
			stores[i] = openT(t, dsn, c)
		}
		loaded := make([]int, n)
		for i, s := range stores {
			wg.Go(func() {
				var toks []IssuedToken
				toks, errs[i] = s.LoadWorld(ctx, strings.NewReader(doc))
				loaded[i] = len(toks)
			})
		}
		wg.Wait()
		loads := 0
		for i := range stores {
			switch {
			case errs[i] == nil && loaded[i] > 0:
				loads++
			case !errors.Is(errs[i], ErrLoaded):
				t.Fatalf("store %d: %v, want ErrLoaded or the world loaded", i, errs[i])
			}
		}
		if loads != 1 {
			t.Fatalf("%d stores loaded the world, want 1", loads)
		}
	})
}

// Each migration is written for each database from the version at which
// PostgreSQL came: the two lists hold the same versions, under the same
// names, so that a version is one schema on both.
func TestMigrationsVersionedAlike(t *testing.T) {
	sqliteMs, err := loadMigrations(sqliteMigrations)
	if err != nil {
		t.Fatal(err)
	}
	pgMs, err := loadMigrations(pgMigrations)
	if err != nil {
		t.Fatal(err)
	}
	first := pgMs[0].version
	var want []string
	for _, m := range sqliteMs {
		if m.version > first {
			want = append(want, m.name)
		}
	}
	var got []string
	for _, m := range pgMs[1:] {
		got = append(got, m.name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("PostgreSQL's migrations after its first (%d): %v; SQLite's: %v", first, got, want)
	}
	if sqliteMs[first-1].version != first {
		t.Fatalf("SQLite has no migration %d, where PostgreSQL's start", first)
	}
}
