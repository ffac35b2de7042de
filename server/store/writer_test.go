package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/spec/seed"
)

// writerStores returns a seeded store on each kind of database: the
// writer holds its own connection on a file, and shares the one
// connection of ":memory:".
// with the runner's principal.
func writerStores(t *testing.T) map[string]writerStore {
	t.Helper()
	out := map[string]writerStore{}
	for name, dsn := range map[string]string{"memory": ":memory:", "file": filepath.Join(t.TempDir(), "w.db")} {
		s := openT(t, dsn, newClock())
		issued, err := s.SeedDefault(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = writerStore{s, auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))}
	}
	return out
}

type writerStore struct {
	*Store
	runner *Principal
}

func countPeople(t *testing.T, s writerStore, handle string) int {
	t.Helper()
	return count(t, s.Store, `SELECT count(*) FROM people WHERE handle = ?`, handle)
}

const insertPerson = `INSERT INTO people(handle, display_name, color, away) VALUES (?, 'X', 0, 0)`

// A transaction's error comes back unchanged and its work is rolled back;
// the next transaction runs.
func TestWriterRollsBackOnError(t *testing.T) {
	for name, s := range writerStores(t) {
		t.Run(name, func(t *testing.T) {
			boom := errors.New("boom")
			err := s.inTx(ctx, func(tx *txn) error {
				if _, err := tx.ExecContext(ctx, insertPerson, "ghost"); err != nil {
					return err
				}
				return boom
			})
			if err != boom {
				t.Fatalf("err = %v, want boom unchanged", err)
			}
			if n := countPeople(t, s, "ghost"); n != 0 {
				t.Fatalf("the failed transaction's insert was kept (%d rows)", n)
			}
			if err := s.inTx(ctx, func(tx *txn) error {
				_, err := tx.ExecContext(ctx, insertPerson, "kept")
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if n := countPeople(t, s, "kept"); n != 1 {
				t.Fatalf("the next transaction was not committed (%d rows)", n)
			}
		})
	}
}

// A panic in a transaction reaches its caller (with the panic's value),
// its work is rolled back, and the writer keeps working.
func TestWriterPanicReachesCaller(t *testing.T) {
	for name, s := range writerStores(t) {
		t.Run(name, func(t *testing.T) {
			got := func() (p any) {
				defer func() { p = recover() }()
				_ = s.inTx(ctx, func(tx *txn) error {
					if _, err := tx.ExecContext(ctx, insertPerson, "ghost"); err != nil {
						return err
					}
					panic("kaboom")
				})
				return nil
			}()
			if got == nil || !strings.Contains(fmt.Sprint(got), "kaboom") {
				t.Fatalf("recovered %v, want the transaction's panic", got)
			}
			if n := countPeople(t, s, "ghost"); n != 0 {
				t.Fatalf("the panicking transaction's insert was kept (%d rows)", n)
			}
			p := s.runner
			if _, err := s.ClaimTask(ctx, p, seed.TaskID, "after-panic", nil); err != nil {
				t.Fatalf("claim after a panic: %v", err)
			}
		})
	}
}

// A COMMIT that fails (here a deferred foreign-key violation) is the
// caller's error, nothing of the transaction is kept, and the connection
// is not left inside a transaction.
func TestWriterCommitFailure(t *testing.T) {
	for name, s := range writerStores(t) {
		t.Run(name, func(t *testing.T) {
			err := s.inTx(ctx, func(tx *txn) error {
				if _, err := tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, insertPerson, "ghost"); err != nil {
					return err
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO memberships(project, person) VALUES ('no-such-project', 'ghost')`)
				return err
			})
			if err == nil || !strings.Contains(err.Error(), "commit") {
				t.Fatalf("err = %v, want the COMMIT's failure", err)
			}
			if n := countPeople(t, s, "ghost"); n != 0 {
				t.Fatalf("the transaction whose COMMIT failed was kept (%d rows)", n)
			}
			p := s.runner
			if _, err := s.ClaimTask(ctx, p, seed.TaskID, "after-commit-failure", nil); err != nil {
				t.Fatalf("claim after a failed commit: %v", err)
			}
		})
	}
}

// A transaction that has started runs to completion whatever becomes of
// its caller's context: a claim whose client went away is committed (and
// replays).
func TestWriterStartedIgnoresCancellation(t *testing.T) {
	for name, s := range writerStores(t) {
		t.Run(name, func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			err := s.inTx(cctx, func(tx *txn) error {
				cancel()
				_, err := tx.ExecContext(ctx, insertPerson, "kept")
				return err
			})
			if err != nil {
				t.Fatalf("a transaction cancelled while it ran: %v", err)
			}
			if n := countPeople(t, s, "kept"); n != 1 {
				t.Fatalf("the transaction cancelled while it ran was not committed (%d rows)", n)
			}
		})
	}
}

// A claim whose context ends while it waits for the writer never runs: it
// gets the context's error, nothing of it is written, and its key then
// claims afresh. One whose context ended before it was submitted does
// not run either.
func TestWriterDropsCancelledWaiting(t *testing.T) {
	for name, s := range writerStores(t) {
		t.Run(name, func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := s.ClaimTask(cctx, s.runner, seed.TaskID, "dropped", nil); !errors.Is(err, context.Canceled) {
				t.Fatalf("claim with a context cancelled before: %v, want context.Canceled", err)
			}
			unhold := holdWriter(t, s.Store)
			cctx, cancel = context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() {
				_, err := s.ClaimTask(cctx, s.runner, seed.TaskID, "dropped", nil)
				errc <- err
			}()
			waitQueued(t, s.Store, 1)
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Fatalf("claim cancelled while waiting: %v, want context.Canceled", err)
			}
			unhold()
			res, err := s.ClaimTask(ctx, s.runner, seed.TaskID, "dropped", nil)
			if err != nil || res.Replayed {
				t.Fatalf("the dropped claim's key: %+v, %v; want a fresh attempt (nothing was written)", res, err)
			}
		})
	}
}

// holdWriter runs a transaction that holds the writer until the returned
// function is called (it then waits for the transaction's end): the
// writes submitted meanwhile queue, and run together after it.
func holdWriter(t *testing.T, s *Store) (unhold func()) {
	t.Helper()
	holding, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.inTx(ctx, func(*txn) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	var once sync.Once
	unhold = func() {
		once.Do(func() {
			close(release)
			if err := <-done; err != nil {
				t.Errorf("holding transaction: %v", err)
			}
		})
	}
	t.Cleanup(unhold)
	return unhold
}

// waitQueued waits until n writes wait in the writer's queue.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.w.queue) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", len(s.w.queue), n)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// batchOutcome is what one write of a batch returned (or raised).
type batchOutcome struct {
	err    error
	panic  any
	result any
}

// inOneBatch submits the writes, in order, while the writer is held, then
// lets them run, and returns their outcomes. It fails the test unless
// they ran as one batch: one transaction, committed at most once.
func inOneBatch(t *testing.T, s *Store, writes ...func() (any, error)) []batchOutcome {
	t.Helper()
	unhold := holdWriter(t, s)
	out := make([]batchOutcome, len(writes))
	var wg sync.WaitGroup
	for i, write := range writes {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					out[i].panic = p
				}
			}()
			out[i].result, out[i].err = write()
		})
		waitQueued(t, s, i+1) // in this order
	}
	before := s.w.commits.Load()
	unhold()
	wg.Wait()
	if d := s.w.commits.Load() - before; d > 2 { // the holder's and the batch's
		t.Fatalf("the writes took %d commits after the holder's, want one batch", d-1)
	}
	return out
}

// claimWrite is a claim_task of the batch tests.
func claimWrite(s writerStore, task, key string) func() (any, error) {
	return func() (any, error) { return s.ClaimTask(ctx, s.runner, task, key, nil) }
}

// In one batch: a claim, the same task claimed with another key (refused,
// attempt_in_progress, after its insert: its savepoint alone rolls back),
// a write that fails after writing, a write that panics, the first key
// again (it replays the batch's own attempt: the same transaction sees
// it), and a discussion claim. Everything but the refused, failed and
// panicking writes is committed, once.
func TestBatchRefusalRollsBackAlone(t *testing.T) {
	for name, s := range writerStores(t) {
		t.Run(name, func(t *testing.T) {
			boom := errors.New("boom")
			commits := s.w.commits.Load()
			out := inOneBatch(t, s.Store,
				claimWrite(s, seed.TaskID, "first"),
				claimWrite(s, seed.TaskID, "second"),
				func() (any, error) {
					return nil, s.inTx(ctx, func(tx *txn) error {
						if _, err := tx.ExecContext(ctx, insertPerson, "ghost"); err != nil {
							return err
						}
						return boom
					})
				},
				func() (any, error) {
					return nil, s.inTx(ctx, func(tx *txn) error {
						if _, err := tx.ExecContext(ctx, insertPerson, "phantom"); err != nil {
							return err
						}
						panic("kaboom")
					})
				},
				claimWrite(s, seed.TaskID, "first"),
				func() (any, error) {
					return s.ClaimDiscussion(ctx, s.runner, seed.MessageID, "talk", ptrTo(Harness))
				},
			)
			if d := s.w.commits.Load() - commits; d != 2 {
				t.Fatalf("%d commits, want 2 (the holder's and the batch's)", d)
			}
			first, ok := out[0].result.(ClaimTaskResult)
			if out[0].err != nil || !ok || first.Replayed {
				t.Fatalf("first claim: %+v", out[0])
			}
			wantCode(t, out[1].err, CodeAttemptInProgress)
			if out[2].err != boom {
				t.Fatalf("failed write: %v, want boom unchanged", out[2].err)
			}
			if out[3].panic == nil || !strings.Contains(fmt.Sprint(out[3].panic), "kaboom") {
				t.Fatalf("panicking write: %+v, want its panic raised on its caller", out[3])
			}
			again, ok := out[4].result.(ClaimTaskResult)
			if out[4].err != nil || !ok || !again.Replayed || again.Attempt != first.Attempt {
				t.Fatalf("the key again in the batch: %+v; want a replay of %+v", out[4], first.Attempt)
			}
			if out[5].err != nil {
				t.Fatalf("discussion claim in the batch: %v", out[5].err)
			}
			if n := count(t, s.Store, `SELECT count(*) FROM attempts WHERE task = ?`, seed.TaskID); n != 1 {
				t.Fatalf("%d attempts on the task, want the first key's alone (the refused one rolled back)", n)
			}
			if n := countPeople(t, s, "ghost") + countPeople(t, s, "phantom"); n != 0 {
				t.Fatalf("the failed and the panicking writes were kept (%d rows)", n)
			}
			if n := count(t, s.Store, `SELECT count(*) FROM discussion_claims WHERE idempotency_key = 'talk'`); n != 1 {
				t.Fatalf("%d discussion claims committed, want 1", n)
			}
			// The credential the replay answered is the one that works.
			if _, err := s.Authenticate(ctx, again.ExecutionCredential.Token); err != nil {
				t.Fatalf("the batch's last credential: %v", err)
			}
			if _, err := s.Authenticate(ctx, first.ExecutionCredential.Token); !errors.Is(err, ErrUnknownToken) {
				t.Fatalf("the credential the replay replaced: %v, want ErrUnknownToken", err)
			}
		})
	}
}

// A COMMIT that fails fails every write of its batch, refusals too (a
// refusal may rest on a batch-mate's rolled-back work): none is answered
// as done, none is kept, and the writer goes on.
func TestBatchCommitFailureFailsAll(t *testing.T) {
	for name, s := range writerStores(t) {
		t.Run(name, func(t *testing.T) {
			out := inOneBatch(t, s.Store,
				claimWrite(s, seed.TaskID, "lost"),
				claimWrite(s, "no-such-task", "lost"),
				func() (any, error) {
					return s.ClaimDiscussion(ctx, s.runner, seed.MessageID, "lost", ptrTo(Harness))
				},
				func() (any, error) {
					// A deferred foreign-key violation fails the COMMIT.
					return nil, s.inTx(ctx, func(tx *txn) error {
						if _, err := tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
							return err
						}
						_, err := tx.ExecContext(ctx, `INSERT INTO memberships(project, person) VALUES ('no-such-project', 'ghost')`)
						return err
					})
				},
			)
			for i, o := range out {
				if o.err == nil || RefusalCode(o.err) != "" || !strings.Contains(o.err.Error(), "commit") {
					t.Errorf("write %d of the batch: %+v, want the COMMIT's failure", i, o)
				}
			}
			if n := count(t, s.Store, `SELECT count(*) FROM attempts`) + count(t, s.Store, `SELECT count(*) FROM discussion_claims`); n != 0 {
				t.Fatalf("%d claims kept from a batch whose COMMIT failed", n)
			}
			res, err := s.ClaimTask(ctx, s.runner, seed.TaskID, "lost", nil)
			if err != nil || res.Replayed {
				t.Fatalf("the key after the failed batch: %+v, %v; want a fresh attempt", res, err)
			}
		})
	}
}

// The queue is bounded: with the writer held and writerQueue writes
// waiting, one more waits for room until its context ends, and is never
// run; the queued ones all run once the writer goes on.
func TestWriterQueueBound(t *testing.T) {
	s := writerStores(t)["file"]
	unhold := holdWriter(t, s.Store)
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range writerQueue {
		wg.Go(func() {
			if err := s.inTx(ctx, func(tx *txn) error {
				_, err := tx.ExecContext(ctx, insertPerson, fmt.Sprintf("queued-%d", i))
				return err
			}); err != nil {
				failed.Add(1)
			}
		})
	}
	waitQueued(t, s.Store, writerQueue)
	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err := s.inTx(tctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, insertPerson, "overflow")
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a write beyond the queue's bound: %v, want it to wait until its context ends", err)
	}
	if n := len(s.w.queue); n != writerQueue {
		t.Fatalf("%d writes queued, want the bound %d", n, writerQueue)
	}
	unhold()
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d queued writes failed", failed.Load())
	}
	if n := count(t, s.Store, `SELECT count(*) FROM people WHERE handle LIKE 'queued-%'`); n != writerQueue {
		t.Fatalf("%d queued writes committed, want %d", n, writerQueue)
	}
	if n := countPeople(t, s, "overflow"); n != 0 {
		t.Fatal("the write that found the queue full ran")
	}
}

// Close runs the writes already waiting, then refuses new ones: a claim
// queued when the store closes is committed and answered.
func TestWriterCloseRunsWaiting(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "close.db")
	s := openT(t, dsn, newClock())
	issued, err := s.SeedDefault(ctx)
	if err != nil {
		t.Fatal(err)
	}
	runner := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
	unhold := holdWriter(t, s)
	errc := make(chan error, 1)
	go func() {
		_, err := s.ClaimTask(ctx, runner, seed.TaskID, "at-close", nil)
		errc <- err
	}()
	waitQueued(t, s, 1)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for !func() bool { s.w.mu.RLock(); defer s.w.mu.RUnlock(); return s.w.closed }() {
		time.Sleep(100 * time.Microsecond)
	}
	if _, err := s.ClaimTask(ctx, runner, seed.TaskID, "after-close", nil); !errors.Is(err, errClosed) {
		t.Fatalf("claim after Close began: %v, want errClosed", err)
	}
	unhold()
	if err := <-errc; err != nil {
		t.Fatalf("the claim waiting at Close: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	s2 := openT(t, dsn, newClock())
	if n := count(t, s2, `SELECT count(*) FROM attempts WHERE idempotency_key = 'at-close'`); n != 1 {
		t.Fatalf("the claim answered at Close: %d attempts after reopening, want 1", n)
	}
}

// After Close, writes fail instead of waiting for a writer that is gone.
func TestWriterClosed(t *testing.T) {
	for name, s := range writerStores(t) {
		t.Run(name, func(t *testing.T) {
			p := s.runner
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ClaimTask(ctx, p, seed.TaskID, "closed", nil); !errors.Is(err, errClosed) {
				t.Fatalf("claim on a closed store: %v, want errClosed", err)
			}
		})
	}
}
