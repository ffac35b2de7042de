package store

import (
	"errors"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/spec/seed"
)

// A revocation through the Store ends a cached agent token at once.
func TestAuthCacheRevocationTakesEffectAtOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		tok := tokenOf(t, issued, KindAgent, seed.BuilderAgent)
		auth(t, s, tok) // now cached
		auth(t, s, tok)
		if err := s.RevokeToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, tok); !errors.Is(err, ErrRevokedToken) {
			t.Fatalf("after RevokeToken: %v, want ErrRevokedToken", err)
		}
	})
}

// A change made behind the Store's back (here: SQL on the same database)
// is seen once the cached entry is older than authCacheTTL, and not
// before: the cache does answer.
func TestCacheTTLBoundsStaleness(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		wall := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		s.auth.now = func() time.Time { return wall }
		tok := tokenOf(t, issued, KindRunner, seed.BuilderAgent)
		auth(t, s, tok)
		if _, err := s.execSQL(`UPDATE tokens SET revoked_at = 1 WHERE hash = ?`, hashToken(tok)); err != nil {
			t.Fatal(err)
		}
		if db.pg != nil {
			// PostgreSQL caches no principal (postgres.go).
			if _, err := s.Authenticate(ctx, tok); !errors.Is(err, ErrRevokedToken) {
				t.Fatalf("PostgreSQL, at once: %v, want ErrRevokedToken", err)
			}
			return
		}
		if _, err := s.Authenticate(ctx, tok); err != nil {
			t.Fatalf("within the TTL the cached principal answers: %v", err)
		}
		wall = wall.Add(cacheTTL)
		if _, err := s.Authenticate(ctx, tok); !errors.Is(err, ErrRevokedToken) {
			t.Fatalf("after the TTL: %v, want ErrRevokedToken", err)
		}
	})
}

// Credentials are never cached: a claim's replay replaces the earlier
// one, and SQL behind the Store's back drops one, at once.
func TestAuthCacheSkipsCredentials(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		runner := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		res, err := s.ClaimTask(ctx, runner, seed.TaskID, "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		tok := res.ExecutionCredential.Token
		auth(t, s, tok)
		if _, err := s.execSQL(`UPDATE attempts SET credential = NULL WHERE credential = ?`, hashToken(tok)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, tok); !errors.Is(err, ErrUnknownToken) {
			t.Fatalf("credential dropped by SQL: %v, want ErrUnknownToken", err)
		}
	})
}

// A value read before an invalidation is not cached after it.
func TestCachePutAfterInvalidate(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		var c genCache[string, int]
		_, _, gen := c.get("k")
		c.invalidate()
		c.put("k", 1, gen)
		if v, ok, _ := c.get("k"); ok {
			t.Fatalf("stale value cached: %d", v)
		}
		_, _, gen = c.get("k")
		c.put("k", 2, gen)
		if v, ok, _ := c.get("k"); !ok || v != 2 {
			t.Fatalf("cached = %d, %v; want 2, true", v, ok)
		}
	})
}

// Callers of Authenticate and DiscoverTeamAgents get copies: changing
// them does not change what the next caller gets.
func TestCachedValuesAreCopies(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		tok := tokenOf(t, issued, KindAgent, seed.BuilderAgent)
		auth(t, s, tok).Agent = "changed"
		if p := auth(t, s, tok); p.Agent != seed.BuilderAgent {
			t.Fatalf("a caller's change leaked into the principal cache: %+v", p)
		}
		p := auth(t, s, tok)
		for range 2 {
			r, err := s.DiscoverTeamAgents(ctx, p, seed.Project)
			if err != nil {
				t.Fatal(err)
			}
			if r.Agents[0].Role == "changed" || *r.Agents[0].AvatarURL == "changed" || r.Agents[0].Capabilities[0].Name == "changed" {
				t.Fatalf("a caller's change leaked into the directory cache: %+v", r.Agents[0])
			}
			r.Agents[0].Role = "changed"
			*r.Agents[0].AvatarURL = "changed"
			r.Agents[0].Capabilities[0].Name = "changed"
		}
	})
}

// The team directory is cached: SQL behind the Store's back is seen after
// cacheTTL, and not before; a caller who may not see the project is still
// refused from the cache, and a project that does not exist is not cached.
func TestDirectoryCache(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		wall := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		s.dir.now = func() time.Time { return wall }
		maya := auth(t, s, tokenOf(t, issued, KindAgent, seed.BuilderAgent))
		rin := auth(t, s, tokenOf(t, issued, KindAgent, "rin/analyst"))
		role := func() string {
			t.Helper()
			r, err := s.DiscoverTeamAgents(ctx, maya, seed.Project)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range r.Agents {
				if a.AgentID == seed.BuilderAgent {
					return a.Role
				}
			}
			t.Fatalf("%s not in the directory", seed.BuilderAgent)
			return ""
		}
		before := role()
		if _, err := s.execSQL(`UPDATE agents SET role = 'Rewritten' WHERE id = ?`, seed.BuilderAgent); err != nil {
			t.Fatal(err)
		}
		if got := role(); got != before {
			t.Fatalf("within the TTL: role %q, want the cached %q", got, before)
		}
		if _, err := s.DiscoverTeamAgents(ctx, rin, seed.Project); RefusalCode(err) != CodeProjectNotVisible {
			t.Fatalf("rin from the cache: %v, want project_not_visible", err)
		}
		wall = wall.Add(cacheTTL)
		if got := role(); got != "Rewritten" {
			t.Fatalf("after the TTL: role %q, want Rewritten", got)
		}
		if _, err := s.DiscoverTeamAgents(ctx, maya, "no-such-project"); RefusalCode(err) != CodeProjectNotVisible {
			t.Fatalf("unknown project: %v, want project_not_visible", err)
		}
		if _, ok, _ := s.dir.get("no-such-project"); ok {
			t.Fatal("a project that does not exist was cached")
		}
	})
}

// Loading a world invalidates both caches.
func TestWorldLoadInvalidatesCaches(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s := db.open(t, newClock())
		s.auth.put([32]byte{1}, Principal{Kind: KindAgent}, 0)
		s.dir.put(seed.Project, api.DiscoverTeamAgentsOutput{People: []api.DiscoverTeamAgentsOutputPerson{{Handle: "ghost"}}}, 0)
		if _, err := s.SeedDefault(ctx); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.auth.get([32]byte{1}); ok {
			t.Fatal("the principal cache survived SeedDefault")
		}
		if _, ok, _ := s.dir.get(seed.Project); ok {
			t.Fatal("the directory cache survived SeedDefault")
		}
	})
}

// A project the caller may not see and one that does not exist are
// refused along one path, which reads neither project's directory: the
// caller's memberships decide. (The invisible project was refused from
// the directory cache and the missing one read SQLite each time, about
// 20% slower: the timing told which projects exist.) With the directory
// tables gone behind the Store's back, both are still refused alike, and
// the visible one is still served from the cache.
func TestDiscoverRefusalsTakeOnePath(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		wall := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		s.dir.now = func() time.Time { return wall }
		s.members.now = s.dir.now
		p := auth(t, s, tokenOf(t, issued, KindAgent, seed.BuilderAgent))
		for _, project := range []string{seed.Project, seed.OutsideProject, "no-such-project"} {
			s.DiscoverTeamAgents(ctx, p, project) // warm whatever is cached
		}
		for _, table := range []string{"people", "agents"} {
			if _, err := s.execSQL(`ALTER TABLE ` + table + ` RENAME TO ` + table + `_gone`); err != nil {
				t.Fatal(err)
			}
		}
		for _, project := range []string{seed.OutsideProject, "no-such-project"} {
			var r *Refusal
			if _, err := s.DiscoverTeamAgents(ctx, p, project); !errors.As(err, &r) || r.Code != CodeProjectNotVisible {
				t.Errorf("%s: %v, want %s without reading its directory", project, err, CodeProjectNotVisible)
			}
		}
		if _, err := s.DiscoverTeamAgents(ctx, p, seed.Project); err != nil {
			t.Errorf("%s: %v, want the cached directory", seed.Project, err)
		}
	})
}
