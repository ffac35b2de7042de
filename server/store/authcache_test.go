package store

import (
	"errors"
	"testing"
	"time"
)

// A revocation through the Store ends a cached agent token at once.
func TestAuthCacheRevocationTakesEffectAtOnce(t *testing.T) {
	s, _, issued := seeded(t)
	tok := tokenOf(t, issued, KindAgent, SeedBuilderAgent)
	auth(t, s, tok) // now cached
	auth(t, s, tok)
	if err := s.RevokeToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, tok); !errors.Is(err, ErrRevokedToken) {
		t.Fatalf("after RevokeToken: %v, want ErrRevokedToken", err)
	}
}

// A change made behind the Store's back (here: SQL on the same database)
// is seen once the cached entry is older than authCacheTTL, and not
// before: the cache does answer.
func TestAuthCacheTTLBoundsStaleness(t *testing.T) {
	s, _, issued := seeded(t)
	wall := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.auth.now = func() time.Time { return wall }
	tok := tokenOf(t, issued, KindRunner, SeedBuilderAgent)
	auth(t, s, tok)
	if _, err := s.db.ExecContext(ctx, `UPDATE tokens SET revoked_at = 1 WHERE hash = ?`, hashToken(tok)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, tok); err != nil {
		t.Fatalf("within the TTL the cached principal answers: %v", err)
	}
	wall = wall.Add(authCacheTTL)
	if _, err := s.Authenticate(ctx, tok); !errors.Is(err, ErrRevokedToken) {
		t.Fatalf("after the TTL: %v, want ErrRevokedToken", err)
	}
}

// Credentials are never cached: a claim's replay revokes the earlier one,
// and so does SQL behind the Store's back, at once.
func TestAuthCacheSkipsCredentials(t *testing.T) {
	s, _, issued := seeded(t)
	runner := auth(t, s, tokenOf(t, issued, KindRunner, SeedBuilderAgent))
	res, err := s.ClaimTask(ctx, runner, SeedTaskID, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	tok := res.ExecutionCredential.Token
	auth(t, s, tok)
	if _, err := s.db.ExecContext(ctx, `UPDATE tokens SET revoked_at = 1 WHERE hash = ?`, hashToken(tok)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, tok); !errors.Is(err, ErrRevokedToken) {
		t.Fatalf("credential revoked by SQL: %v, want ErrRevokedToken", err)
	}
}

// A principal read before an invalidation is not cached after it, and
// callers get copies they may change.
func TestAuthCachePutAfterInvalidate(t *testing.T) {
	var c authCache
	h := [32]byte{1}
	p := &Principal{Kind: KindAgent, Agent: "maya/builder"}
	_, gen := c.get(h)
	c.invalidate()
	c.put(h, p, gen)
	if got, _ := c.get(h); got != nil {
		t.Fatalf("stale principal cached: %+v", got)
	}
	_, gen = c.get(h)
	c.put(h, p, gen)
	got, _ := c.get(h)
	if got == nil || got.Agent != "maya/builder" {
		t.Fatalf("cached = %+v", got)
	}
	got.Agent = "changed"
	if again, _ := c.get(h); again.Agent != "maya/builder" {
		t.Fatalf("a caller's change leaked into the cache: %+v", again)
	}
	c.put([32]byte{2}, &Principal{Kind: KindExecution}, gen)
	if got, _ := c.get([32]byte{2}); got != nil {
		t.Fatal("an execution credential was cached")
	}
}
