package server_test

import (
	"context"
	"sync"
	"testing"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

const concurrentClients = 16

// concurrently connects n clients with tok, then releases their calls at
// once and collects what each got.
func concurrently[Out any](t *testing.T, e *env, tok string, n int, call func(i int, c *api.Client) (*Out, error)) ([]*Out, []error) {
	t.Helper()
	conns := make([]*conn, n)
	for i := range conns {
		conns[i] = e.connect(tok)
	}
	outs, errs := make([]*Out, n), make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			outs[i], errs[i] = call(i, conns[i].api)
		}()
	}
	close(start)
	wg.Wait()
	return outs, errs
}

// TestConcurrentClaimsSameKey: 16 clients claim the same task with the same
// idempotency key at once, on a file database: every one is answered with
// the one attempt, and exactly one attempt row exists. Each answer carries
// a fresh credential; only the last one minted still works.
func TestConcurrentClaimsSameKey(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	outs, errs := concurrently(t, e, e.token(store.KindRunner, seed.BuilderAgent), concurrentClients,
		func(_ int, c *api.Client) (*api.ClaimTaskOutput, error) {
			return c.ClaimTask(context.Background(), &api.ClaimTaskInput{TaskID: seed.TaskID, IdempotencyKey: "same"})
		})
	ids := map[string]bool{}
	tokens := map[string]bool{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		if err := outs[i].Validate(); err != nil {
			t.Fatalf("client %d: output: %v", i, err)
		}
		ids[outs[i].Attempt.AttemptID] = true
		tokens[outs[i].ExecutionCredential.Token] = true
	}
	if len(ids) != 1 {
		t.Fatalf("%d attempt ids among %d answers: %v", len(ids), concurrentClients, ids)
	}
	if len(tokens) != concurrentClients {
		t.Fatalf("%d distinct credentials among %d answers", len(tokens), concurrentClients)
	}
	if n := e.count("attempts"); n != 1 {
		t.Fatalf("%d attempt rows, want 1", n)
	}
	valid := 0
	for tok := range tokens {
		if _, err := e.srv.Store().Authenticate(context.Background(), tok); err == nil {
			valid++
		}
	}
	if valid != 1 {
		t.Fatalf("%d credentials still valid, want exactly 1 (the newest)", valid)
	}
}

// TestConcurrentClaimsDifferentKeys: 16 clients claim the same task with 16
// keys at once: one attempt wins, the others are attempt_in_progress.
func TestConcurrentClaimsDifferentKeys(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	_, errs := concurrently(t, e, e.token(store.KindRunner, seed.BuilderAgent), concurrentClients,
		func(i int, c *api.Client) (*api.ClaimTaskOutput, error) {
			return c.ClaimTask(context.Background(), &api.ClaimTaskInput{TaskID: seed.TaskID, IdempotencyKey: "key-" + string(rune('a'+i))})
		})
	won := 0
	for i, err := range errs {
		if err == nil {
			won++
			continue
		}
		if te, ok := rt.AsToolError(err); !ok || te.Code != store.CodeAttemptInProgress {
			t.Fatalf("client %d: %v, want attempt_in_progress", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d claims won, want 1", won)
	}
	if n := e.count("attempts"); n != 1 {
		t.Fatalf("%d attempt rows, want 1", n)
	}
}
