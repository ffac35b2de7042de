package store

// Store-level benchmarks of the hot paths, on a database file as deployed
// (WAL, synchronous=NORMAL), without MCP or HTTP: the part of a tool call's
// latency that the store is responsible for.
//
//	go test ./server/store/ -run '^$' -bench . -count 5

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/prickle-dev/prickle/spec/seed"
)

func benchStore(b *testing.B) (*Store, []IssuedToken) {
	b.Helper()
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	issued, err := s.SeedDefault(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return s, issued
}

func benchToken(b *testing.B, issued []IssuedToken, kind TokenKind) string {
	for _, it := range issued {
		if it.Kind == kind && it.Agent == seed.BuilderAgent {
			return it.Token
		}
	}
	b.Fatalf("no %s token", kind)
	return ""
}

// BenchmarkAuthenticate: cached, a runner token as every HTTP request
// presents it; uncached, the database lookup (the cache emptied first);
// credential, an execution credential, which is never cached.
func BenchmarkAuthenticate(b *testing.B) {
	s, issued := benchStore(b)
	tok := benchToken(b, issued, KindRunner)
	for _, cached := range []bool{true, false} {
		b.Run(map[bool]string{true: "cached", false: "uncached"}[cached], func(b *testing.B) {
			for b.Loop() {
				if !cached {
					s.auth.invalidate()
				}
				if _, err := s.Authenticate(ctx, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("credential", func(b *testing.B) {
		p, err := s.Authenticate(ctx, tok)
		if err != nil {
			b.Fatal(err)
		}
		res, err := s.ClaimTask(ctx, p, seed.TaskID, "bench-key", nil)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := s.Authenticate(ctx, res.ExecutionCredential.Token); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkClaimTaskReplay replays one idempotency key: the same attempt,
// a fresh credential, the earlier one revoked. Its cost must not grow with
// the number of earlier replays.
func BenchmarkClaimTaskReplay(b *testing.B) {
	s, issued := benchStore(b)
	p, err := s.Authenticate(ctx, benchToken(b, issued, KindRunner))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("same-goroutine", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.ClaimTask(ctx, p, seed.TaskID, "bench-key", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	// As the server calls it: each call on a goroutine of its own (the
	// go-sdk handles each request on a new one).
	b.Run("goroutine-per-call", func(b *testing.B) {
		errc := make(chan error)
		for b.Loop() {
			go func() {
				_, err := s.ClaimTask(ctx, p, seed.TaskID, "bench-key", nil)
				errc <- err
			}()
			if err := <-errc; err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkClaimTaskFresh claims a task never claimed, with a new key,
// on every call: a new attempt and its credential. In parallel, 16
// callers at once (as 16 clients make the server call it): the writer
// commits the claims that wait together.
func BenchmarkClaimTaskFresh(b *testing.B) {
	s, issued := benchStore(b)
	p, err := s.Authenticate(ctx, benchToken(b, issued, KindRunner))
	if err != nil {
		b.Fatal(err)
	}
	const tasks = 200000
	if err := s.inTx(ctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < ?)
			INSERT INTO tasks(id, project, agent, created_at) SELECT 'bench-task-' || i, ?, ?, 0 FROM n`,
			tasks-1, seed.Project, seed.BuilderAgent)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	claim := func(b *testing.B) {
		i := next.Add(1) - 1
		if i >= tasks {
			b.Fatal("out of tasks")
		}
		if _, err := s.ClaimTask(ctx, p, fmt.Sprintf("bench-task-%d", i), "bench-key", nil); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			claim(b)
		}
	})
	b.Run("parallel-16", func(b *testing.B) {
		b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				claim(b)
			}
		})
	})
}

func BenchmarkClaimDiscussionReplay(b *testing.B) {
	s, issued := benchStore(b)
	p, err := s.Authenticate(ctx, benchToken(b, issued, KindRunner))
	if err != nil {
		b.Fatal(err)
	}
	harness := Harness
	for b.Loop() {
		if _, err := s.ClaimDiscussion(ctx, p, seed.MessageID, "bench-key", &harness); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiscoverTeamAgents: cached, the directory from memory (a deep
// copy); uncached, the read transaction (the cache emptied first).
func BenchmarkDiscoverTeamAgents(b *testing.B) {
	s, issued := benchStore(b)
	p, err := s.Authenticate(ctx, benchToken(b, issued, KindAgent))
	if err != nil {
		b.Fatal(err)
	}
	for _, cached := range []bool{true, false} {
		b.Run(map[bool]string{true: "cached", false: "uncached"}[cached], func(b *testing.B) {
			for b.Loop() {
				if !cached {
					s.dir.invalidate()
				}
				if _, err := s.DiscoverTeamAgents(ctx, p, seed.Project); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDiscoverRefused: the refusals of a project the caller may not
// see and of one that does not exist, side by side (they must cost the
// same, or the timing tells which projects exist).
func BenchmarkDiscoverRefused(b *testing.B) {
	s, issued := benchStore(b)
	p, err := s.Authenticate(context.Background(), benchToken(b, issued, KindAgent))
	if err != nil {
		b.Fatal(err)
	}
	for _, project := range []string{seed.OutsideProject, "no-such-project"} {
		b.Run(project, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.DiscoverTeamAgents(context.Background(), p, project); err == nil {
					b.Fatal("served")
				}
			}
		})
	}
}
