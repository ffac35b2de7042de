package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// Every write transaction of the store runs on one goroutine, the writer,
// which owns the connection that writes:
//
//   - transactions queue in Go, not in SQLite's busy handler (whose sleeps
//     grow to 100 ms), and start the moment the previous one ends;
//   - the goroutine lives as long as the store, so SQLite's deep call
//     chains (C compiled to Go) run on a stack that has already grown,
//     instead of growing the stack of every request's new goroutine;
//   - on a file database the writer holds its connection for the store's
//     life, with BEGIN IMMEDIATE, COMMIT and ROLLBACK prepared once, like
//     the hot statements (stmts.go).
//
// Each transaction is committed on its own: a caller is answered once its
// COMMIT has returned. (Committing the transactions that queued meanwhile
// together, group commit, was measured and did not pay on the claims
// workload: the writer is rarely busy when a transaction arrives.)
//
// An in-memory database has a single connection, shared with the
// readers: the writer takes it for each transaction (a database/sql
// transaction), so readers wait for the transaction to end, as before.

// errClosed answers the transactions submitted after Close.
var errClosed = errors.New("store: closed")

// writer runs the store's write transactions.
type writer struct {
	mu     sync.RWMutex
	jobs   chan *writeJob // nil until start: Open's migrations run inline
	closed bool
	exited chan struct{} // closed when the goroutine ends

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

// writeJob is one transaction waiting for the writer.
type writeJob struct {
	fn    func(tx *txn) error
	err   error
	panic *writerPanic // fn panicked: re-raised in the caller
	done  chan struct{}
}

var jobPool = sync.Pool{New: func() any { return &writeJob{done: make(chan struct{}, 1)} }}

// writerPanic carries a panic of a transaction's function to its caller,
// with the writer's stack where it happened.
type writerPanic struct {
	value any
	stack []byte
}

func (p *writerPanic) Error() string {
	return fmt.Sprintf("%v [in a store transaction]\n%s", p.value, p.stack)
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

// prepare prepares the hot statements for the writer's transactions. It
// runs before start.
func (w *writer) prepare(ctx context.Context, strict bool, shared *statements) error {
	if w.conn == nil {
		w.st = shared // prepared on the same single connection
		return nil
	}
	st, err := prepareStatements(ctx, w.conn, strict)
	w.st = st
	return err
}

// start starts the goroutine; until then do runs transactions inline
// (Open's migrations).
func (w *writer) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.jobs = make(chan *writeJob)
	w.exited = make(chan struct{})
	go w.loop(w.jobs, w.exited)
}

// close stops the goroutine once the transactions already submitted are
// done, and closes the connection. Transactions submitted later fail with
// errClosed.
func (w *writer) close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	jobs, exited := w.jobs, w.exited
	w.mu.Unlock()
	if jobs != nil {
		close(jobs) // every sender has finished: they send under the read lock
		<-exited
	}
	return w.closeConn()
}

func (w *writer) closeConn() error {
	var errs []error
	for i, s := range w.ctl {
		if s != nil {
			errs = append(errs, s.Close())
			w.ctl[i] = nil
		}
	}
	if w.st != nil && w.conn != nil {
		errs = append(errs, w.st.close())
	}
	if w.conn != nil {
		errs = append(errs, w.conn.Close())
	}
	return errors.Join(errs...)
}

// do runs fn in a write transaction (see the package's writer notes) and
// returns fn's error unchanged, or the error that kept its work from being
// committed. A panic in fn is re-raised here.
func (w *writer) do(fn func(tx *txn) error) error {
	j := jobPool.Get().(*writeJob)
	j.fn = fn
	w.mu.RLock()
	switch {
	case w.closed:
		w.mu.RUnlock()
		j.fn = nil
		jobPool.Put(j)
		return errClosed
	case w.jobs == nil:
		w.mu.RUnlock()
		w.run(j)
	default:
		w.jobs <- j
		w.mu.RUnlock()
	}
	<-j.done
	err, p := j.err, j.panic
	*j = writeJob{done: j.done}
	jobPool.Put(j)
	if p != nil {
		panic(p)
	}
	return err
}

// loop runs the queued transactions, one at a time, until jobs is closed.
func (w *writer) loop(jobs chan *writeJob, exited chan struct{}) {
	defer close(exited)
	for j := range jobs {
		w.run(j)
	}
}

// run runs j in a transaction of its own and answers it.
func (w *writer) run(j *writeJob) {
	defer func() { j.done <- struct{}{} }()
	tx, end, err := w.begin(context.Background())
	if err != nil {
		j.err = fmt.Errorf("begin: %w", err)
		return
	}
	if !w.runJob(j, tx) {
		_ = end(false)
		return
	}
	if err := end(true); err != nil {
		j.err = fmt.Errorf("commit: %w", err)
	}
}

// runJob runs j's function in tx and reports whether it succeeded; its
// error or panic is kept in j.
func (w *writer) runJob(j *writeJob, tx *txn) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			j.panic = &writerPanic{value: p, stack: debug.Stack()}
			ok = false
		}
	}()
	j.err = j.fn(tx)
	return j.err == nil
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
