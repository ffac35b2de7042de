package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

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

// A transaction runs to completion whatever becomes of the caller's
// context: a claim whose client went away is committed (and replays).
func TestWriterIgnoresCancellation(t *testing.T) {
	for name, s := range writerStores(t) {
		t.Run(name, func(t *testing.T) {
			p := s.runner
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			first, err := s.ClaimTask(cctx, p, seed.TaskID, "canceled", nil)
			if err != nil {
				t.Fatalf("claim with a canceled context: %v", err)
			}
			again, err := s.ClaimTask(ctx, p, seed.TaskID, "canceled", nil)
			if err != nil || !again.Replayed || again.Attempt.AttemptID != first.Attempt.AttemptID {
				t.Fatalf("replay = %+v, %v; want the committed attempt %s", again, err, first.Attempt.AttemptID)
			}
		})
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
