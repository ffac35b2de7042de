package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// Every write transaction of the store runs through the writer, which
// owns the connection that writes:
//
//   - transactions queue on a mutex in Go, not in SQLite's busy handler
//     (whose sleeps grow to 100 ms), and start the moment the previous
//     one ends; each runs on its caller's goroutine;
//   - on a file database the writer holds its connection for the store's
//     life, with BEGIN IMMEDIATE, COMMIT and ROLLBACK prepared once, like
//     the hot statements (stmts.go).
//
// Each transaction is committed on its own: a caller gets its answer once
// its COMMIT has returned. (Two alternatives were measured on the claims
// workload and did not pay: running the transactions on one long-lived
// goroutine, whose stack would not grow per request, costs more in
// hand-offs than it saves; committing the transactions that queued
// meanwhile together, group commit, gains nothing when the writer is
// rarely busy as a transaction arrives.)
//
// An in-memory database has a single connection, shared with the
// readers: the writer takes it for each transaction (a database/sql
// transaction), so readers wait for the transaction to end, as before.

// errClosed answers the transactions submitted after Close.
var errClosed = errors.New("store: closed")

// writer runs the store's write transactions, one at a time.
type writer struct {
	mu     sync.Mutex // held for the whole of a transaction
	closed bool

	// File databases: the writer's own connection, its control statements
	// and the hot statements prepared on it.
	conn *sql.Conn
	ctl  [numCtl]*sql.Stmt
	st   *statements
	// In-memory databases: the one connection's pool; st holds statements
	// prepared on it, bound to each transaction.
	db *sql.DB
}

// The control statements, prepared on the writer's connection.
const (
	ctlBegin = iota
	ctlCommit
	ctlRollback
	numCtl
)

var ctlSQL = [numCtl]string{
	ctlBegin:    `BEGIN IMMEDIATE`,
	ctlCommit:   `COMMIT`,
	ctlRollback: `ROLLBACK`,
}

// newFileWriter opens the writer's own connection on db (a pool of one)
// and prepares its control statements.
func newFileWriter(ctx context.Context, db *sql.DB) (*writer, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := &writer{conn: conn}
	for i, q := range ctlSQL {
		if w.ctl[i], err = conn.PrepareContext(ctx, q); err != nil {
			w.closeConn()
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
	}
	return w, nil
}

// newMemoryWriter returns the writer of an in-memory database.
func newMemoryWriter(db *sql.DB) *writer { return &writer{db: db} }

// prepare prepares the hot statements for the writer's transactions,
// before the store is used.
func (w *writer) prepare(ctx context.Context, strict bool, shared *statements) error {
	if w.conn == nil {
		w.st = shared // prepared on the same single connection
		return nil
	}
	st, err := prepareStatements(ctx, w.conn, strict)
	w.st = st
	return err
}

// close waits for the transaction in progress, if any, and closes the
// connection. Transactions submitted later fail with errClosed.
func (w *writer) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return w.closeConn()
}

func (w *writer) closeConn() error {
	errs := []error{closeStmts(w.ctl[:])}
	if w.st != nil && w.conn != nil {
		errs = append(errs, w.st.close())
	}
	if w.conn != nil {
		errs = append(errs, w.conn.Close())
	}
	return errors.Join(errs...)
}

// do runs fn in a write transaction: fn's work is committed if it returns
// nil and rolled back otherwise. It returns fn's error unchanged, or the
// error that kept its work from being committed. A panic in fn rolls the
// transaction back and goes on.
func (w *writer) do(fn func(tx *txn) error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errClosed
	}
	tx, end, err := w.begin(context.Background())
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = end(false) // fn failed or panicked
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	committed = true
	if err := end(true); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// begin starts a write transaction; end commits it (or rolls it back).
func (w *writer) begin(ctx context.Context) (tx *txn, end func(commit bool) error, err error) {
	if w.conn == nil {
		t, err := w.db.BeginTx(ctx, nil) // _txlock=immediate
		if err != nil {
			return nil, nil, err
		}
		return &txn{q: t, tx: t, st: w.st}, func(commit bool) error {
			if commit {
				return t.Commit()
			}
			return t.Rollback()
		}, nil
	}
	if _, err := w.ctl[ctlBegin].ExecContext(ctx); err != nil {
		// A connection left inside a transaction (a failed ROLLBACK) is
		// rolled back, and the BEGIN tried once more.
		if _, rerr := w.ctl[ctlRollback].ExecContext(ctx); rerr != nil {
			return nil, nil, err
		}
		if _, err := w.ctl[ctlBegin].ExecContext(ctx); err != nil {
			return nil, nil, err
		}
	}
	return &txn{q: w.conn, st: w.st}, func(commit bool) error {
		if commit {
			if _, err := w.ctl[ctlCommit].ExecContext(ctx); err != nil {
				// A COMMIT that failed may leave the transaction open.
				_, _ = w.ctl[ctlRollback].ExecContext(ctx)
				return err
			}
			return nil
		}
		_, err := w.ctl[ctlRollback].ExecContext(ctx)
		return err
	}, nil
}
