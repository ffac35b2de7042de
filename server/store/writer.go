package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Every write transaction of the store runs through the writer, which
// owns the connection that writes, and commits the transactions that
// wait for it together (group commit):
//
//   - a caller queues its work (a bounded queue: writerQueue) and waits;
//     one waiting caller at a time leads: it takes up to writerBatch
//     queued works, runs each in a SAVEPOINT of one transaction (BEGIN
//     IMMEDIATE), RELEASEs it when it succeeds and ROLLs BACK TO it when
//     it fails (a refusal is an answer, not a failure of the batch),
//     COMMITs once, then answers each (a work alone in its batch needs no
//     savepoint: it has the transaction); it leads until its own work is
//     answered, then hands the lead to another waiting caller. An idle
//     writer is led at once by the caller that arrives, on its own
//     goroutine: no hand-off;
//   - a work is answered only after the COMMIT that holds it has
//     returned; if the COMMIT fails, every work of the batch gets the
//     error (their refusals too: they may rest on the rolled-back work of
//     a batch-mate);
//   - works of one batch run one after another on one connection, so a
//     later one sees the earlier ones' rows exactly as if they had
//     committed before it (a key claimed twice replays);
//   - a work whose context ends before it starts is dropped (nothing of
//     it is written); one that has started runs to completion whatever
//     becomes of its caller's context;
//   - a panic in a work rolls back its savepoint alone and is raised
//     again on its caller's goroutine, once the batch has committed;
//   - on a file database the writer holds its connection for the store's
//     life, with its control statements (BEGIN IMMEDIATE, COMMIT,
//     ROLLBACK and the savepoint's) prepared once, like the hot
//     statements (stmts.go).
//
// An in-memory database has a single connection, shared with the
// readers: the writer takes it for each batch (a database/sql
// transaction), so readers wait for the batch to end.

// The writer's bounds. A caller that finds the queue full waits for room
// (or for its context to end); a batch is at most writerBatch works, so
// that a transaction, and a caller's wait for it, stays short.
const (
	writerQueue = 1024
	writerBatch = 64
)

// errClosed answers the transactions submitted after Close.
var errClosed = errors.New("store: closed")

// writer runs the store's write transactions.
type writer struct {
	// queue holds the works submitted and not yet taken by a leader.
	queue chan *work
	// lead is held (a value in it) by the caller that runs batches.
	lead chan struct{}

	mu     sync.RWMutex // closed, against submissions
	closed bool

	// commits counts the batches committed (tests tell batches by it).
	commits atomic.Uint64

	// File databases: the writer's own connection, its control statements
	// and the hot statements prepared on it.
	conn *sql.Conn
	ctl  [numCtl]*sql.Stmt
	st   *statements
	// In-memory databases: the one connection's pool; st holds statements
	// prepared on it, bound to each transaction.
	db *sql.DB
}

// work is one caller's transaction: fn, and its outcome.
type work struct {
	fn    func(tx *txn) error
	state atomic.Int32 // workQueued, then workStarted or workDropped
	done  chan struct{}
	err   error
	panic *txPanic
}

// The states of a work.
const (
	workQueued  = iota
	workStarted // taken by a leader: it will be answered
	workDropped // its caller's context ended first: it never runs
)

// txPanic is a panic of a work, raised again on its caller's goroutine
// with the stack where it happened.
type txPanic struct {
	value any
	stack []byte
}

func (p *txPanic) Error() string {
	return fmt.Sprintf("store: write transaction panicked: %v\n%s", p.value, p.stack)
}

// The control statements, prepared on the writer's connection. The
// savepoint's name is fixed: a batch's works run one at a time, each
// savepoint released before the next is made.
const (
	ctlBegin = iota
	ctlCommit
	ctlRollback
	ctlSavepoint
	ctlRelease
	ctlRollbackTo
	numCtl
)

var ctlSQL = [numCtl]string{
	ctlBegin:      `BEGIN IMMEDIATE`,
	ctlCommit:     `COMMIT`,
	ctlRollback:   `ROLLBACK`,
	ctlSavepoint:  `SAVEPOINT work`,
	ctlRelease:    `RELEASE work`,
	ctlRollbackTo: `ROLLBACK TO work`,
}

func newWriter() *writer {
	return &writer{queue: make(chan *work, writerQueue), lead: make(chan struct{}, 1)}
}

// newFileWriter opens the writer's own connection on db (a pool of one)
// and prepares its control statements.
func newFileWriter(ctx context.Context, db *sql.DB) (*writer, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := newWriter()
	w.conn = conn
	for i, q := range ctlSQL {
		if w.ctl[i], err = conn.PrepareContext(ctx, q); err != nil {
			w.closeConn()
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
	}
	return w, nil
}

// newMemoryWriter returns the writer of an in-memory database.
func newMemoryWriter(db *sql.DB) *writer {
	w := newWriter()
	w.db = db
	return w
}

// prepare prepares the hot statements for the writer's transactions,
// before the store is used.
func (w *writer) prepare(ctx context.Context, strict bool, shared *statements) error {
	if w.conn == nil {
		w.st = shared // prepared on the same single connection
		return nil
	}
	st, err := prepareStatements(ctx, w.conn, sqliteEngine, strict)
	w.st = st
	return err
}

// close refuses new transactions (errClosed), runs those already
// submitted, and closes the connection.
func (w *writer) close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	// Lead, for good: no submission can come any more, so the queue empties.
	w.lead <- struct{}{}
	for w.runBatch() {
	}
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

// do runs fn in a write transaction, with other callers' in a batch: fn's
// work is committed if it returns nil and rolled back otherwise. It
// returns fn's error unchanged, or the error that kept its work from
// being committed, once the batch's COMMIT has returned. If ctx ends
// before fn starts, fn never runs and do returns ctx's error. A panic in
// fn rolls its work back and is raised again here.
func (w *writer) do(ctx context.Context, fn func(tx *txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	wk := &work{fn: fn, done: make(chan struct{})}
	if err := w.submit(ctx, wk); err != nil {
		return err
	}
	for {
		select {
		case <-wk.done:
			return wk.result()
		case w.lead <- struct{}{}:
			w.leadUntil(wk)
		case <-ctx.Done():
			if wk.state.CompareAndSwap(workQueued, workDropped) {
				return ctx.Err()
			}
			<-wk.done // started: it runs to completion
			return wk.result()
		}
	}
}

// leadUntil runs batches, holding the lead, until wk is answered (or the
// queue is empty), then hands the lead on.
func (w *writer) leadUntil(wk *work) {
	defer func() { <-w.lead }()
	for !wk.answered() && w.runBatch() {
	}
}

// submit queues wk, waiting for room in the queue while ctx lasts.
func (w *writer) submit(ctx context.Context, wk *work) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		return errClosed
	}
	select {
	case w.queue <- wk:
		return nil
	default:
	}
	select {
	case w.queue <- wk:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (wk *work) answered() bool {
	select {
	case <-wk.done:
		return true
	default:
		return false
	}
}

// result is what do returns for an answered work.
func (wk *work) result() error {
	if wk.panic != nil {
		panic(wk.panic)
	}
	return wk.err
}

// runBatch takes up to writerBatch queued works and runs them, answering
// each. It reports false if the queue held none.
func (w *writer) runBatch() bool {
	batch := make([]*work, 0, min(len(w.queue), writerBatch))
take:
	for len(batch) < writerBatch {
		select {
		case wk := <-w.queue:
			if wk.state.CompareAndSwap(workQueued, workStarted) {
				batch = append(batch, wk)
			}
		default:
			break take
		}
	}
	if len(batch) == 0 {
		return len(w.queue) > 0 // only dropped works were taken
	}
	defer func() {
		// A panic outside the works (theirs are recovered) still answers
		// every work taken, none as done, and goes on up.
		if v := recover(); v != nil {
			failAll(batch, fmt.Errorf("store: writer panicked: %v", v))
			for _, wk := range batch {
				close(wk.done)
			}
			panic(v)
		}
	}()
	for len(batch) > 0 {
		n := w.runTx(batch)
		for _, wk := range batch[:n] {
			close(wk.done)
		}
		batch = batch[n:]
	}
	return true
}

// runTx runs works of batch, in order, in one transaction, and sets
// their outcome; it returns how many it ran (at least one). It stops
// early only when the transaction cannot go on (a savepoint statement
// failed): the works it ran then fail, and the rest wait for another
// transaction.
func (w *writer) runTx(batch []*work) int {
	tx, ctl, end, err := w.begin()
	if err != nil {
		batch[0].err = fmt.Errorf("begin: %w", err)
		return 1
	}
	if len(batch) == 1 {
		// A work alone needs no savepoint: the transaction is its own.
		wk := batch[0]
		if wk.err, wk.panic = runWork(wk.fn, tx); wk.err != nil || wk.panic != nil {
			_ = end(false)
			return 1
		}
		if err := end(true); err != nil {
			wk.err = fmt.Errorf("commit: %w", err)
			return 1
		}
		w.commits.Add(1)
		return 1
	}
	n, broken := 0, error(nil)
	for _, wk := range batch {
		n++
		if broken = ctl(ctlSavepoint); broken != nil {
			break
		}
		wk.err, wk.panic = runWork(wk.fn, tx)
		if wk.err == nil && wk.panic == nil {
			broken = ctl(ctlRelease)
		} else if broken = ctl(ctlRollbackTo); broken == nil {
			broken = ctl(ctlRelease)
		}
		if broken != nil {
			break
		}
	}
	if broken != nil {
		// The transaction's state is unknown (an error may have rolled it
		// back): none of its works is kept.
		// The last work's own failure, if any, is what broke it (an error
		// that rolls back the whole transaction); it is said, not passed
		// on: a refusal would be an answer.
		_ = end(false)
		err := fmt.Errorf("savepoint: %w", broken)
		if last := batch[n-1]; last.err != nil {
			err = fmt.Errorf("savepoint: %w (after the work failed: %v)", broken, last.err)
		}
		failAll(batch[:n], err)
		return n
	}
	if err := end(true); err != nil {
		failAll(batch[:n], fmt.Errorf("commit: %w", err))
		return n
	}
	w.commits.Add(1)
	return n
}

// failAll gives err to every work of ws, whatever their own outcome was:
// none of them is kept.
func failAll(ws []*work, err error) {
	for _, wk := range ws {
		wk.err, wk.panic = err, nil
	}
}

// runWork calls fn, turning a panic into a *txPanic.
func runWork(fn func(tx *txn) error, tx *txn) (err error, p *txPanic) {
	defer func() {
		if v := recover(); v != nil {
			p = &txPanic{value: v, stack: debug.Stack()}
		}
	}()
	return fn(tx), nil
}

// begin starts a write transaction. ctl runs a savepoint statement in
// it; end commits it (or rolls it back).
func (w *writer) begin() (tx *txn, ctl func(int) error, end func(commit bool) error, err error) {
	ctx := context.Background()
	if w.conn == nil {
		t, err := w.db.BeginTx(ctx, nil) // _txlock=immediate
		if err != nil {
			return nil, nil, nil, err
		}
		return &txn{q: t, tx: t, st: w.st, e: sqliteEngine, ctx: ctx}, func(i int) error {
				_, err := t.ExecContext(ctx, ctlSQL[i])
				return err
			}, func(commit bool) error {
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
			return nil, nil, nil, err
		}
		if _, err := w.ctl[ctlBegin].ExecContext(ctx); err != nil {
			return nil, nil, nil, err
		}
	}
	return &txn{q: w.conn, st: w.st, e: sqliteEngine, ctx: ctx}, func(i int) error {
			_, err := w.ctl[i].ExecContext(ctx)
			return err
		}, func(commit bool) error {
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
