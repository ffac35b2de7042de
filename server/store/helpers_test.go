package store

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/internal/testkit"
)

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
		ExecutionTools: testExecutionTools, DiscussionTools: testDiscussionTools})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// seeded returns an in-memory store with the default world.
func seeded(t *testing.T) (*Store, *clock, []IssuedToken) {
	t.Helper()
	c := newClock()
	s := openT(t, ":memory:", c)
	issued, err := s.SeedDefault(context.Background())
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	return s, c, issued
}

// loaded returns an in-memory store loaded with testdata/world.json.
func loaded(t *testing.T) (*Store, *clock) {
	t.Helper()
	c := newClock()
	s := openT(t, ":memory:", c)
	f, err := os.Open("testdata/world.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := s.LoadFixture(context.Background(), f); err != nil {
		t.Fatalf("load fixture: %v", err)
	}
	return s, c
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

// Fixture tokens from testdata/world.json.
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
	if err := s.db.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
