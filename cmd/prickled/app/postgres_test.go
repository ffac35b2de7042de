package app

// Process tests on PostgreSQL: prickled replicas on one database of the
// package's throwaway cluster (internal/pgtest), under a load of claims
// sent to them directly over stateless streamable HTTP; a replica killed,
// the database stopped and started again, the pool's bound, bad database
// URLs, and the token command beside a running replica.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/internal/pgtest"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

// reply is what a prickled answered to one tools/call, or why nothing
// came back.
type reply struct {
	status int    // the HTTP status; 0 when no answer came
	err    error  // why no answer came
	body   string // the answer's body
	took   time.Duration

	out  json.RawMessage // a successful call's structuredContent
	code string          // a tool error's code
	rpc  *rpcError       // a JSON-RPC error
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (r reply) String() string {
	if r.status == 0 {
		return fmt.Sprintf("no answer after %v: %v", r.took, r.err)
	}
	return fmt.Sprintf("HTTP %d after %v: %s", r.status, r.took, strings.TrimSpace(r.body))
}

// ok reports whether the call succeeded.
func (r reply) ok() bool { return r.out != nil }

// attempt is the attempt of a successful claim_task.
func (r reply) attempt(t *testing.T) api.ClaimTaskOutputAttempt {
	t.Helper()
	var out api.ClaimTaskOutput
	if err := json.Unmarshal(r.out, &out); err != nil {
		t.Errorf("claim_task answer %s: %v", r.out, err)
	}
	return out.Attempt
}

// newHTTPClient is a client of its own for one worker of a load: its
// connections closed when the test ends.
func newHTTPClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: hangGuard, Transport: tr}
}

// callTool posts one tools/call with token to a stateless prickled (no
// session: every POST stands alone, to any replica) and reads its answer.
func callTool(hc *http.Client, url, token, tool string, args any) reply {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	begin := time.Now()
	var r reply
	resp, err := hc.Do(req)
	if err == nil {
		var b bytes.Buffer
		_, err = b.ReadFrom(resp.Body)
		resp.Body.Close()
		r.status, r.body = resp.StatusCode, b.String()
	}
	r.took, r.err = time.Since(begin), err
	if err != nil {
		r.status = 0
		return r
	}
	if r.status != http.StatusOK {
		return r
	}
	for _, line := range strings.Split(r.body, "\n") {
		data := strings.TrimPrefix(line, "data: ")
		var m struct {
			Result *struct {
				IsError bool `json:"isError"`
				Meta    struct {
					Code string `json:"code"`
				} `json:"_meta"`
				StructuredContent json.RawMessage `json:"structuredContent"`
			} `json:"result"`
			Error *rpcError `json:"error"`
		}
		if json.Unmarshal([]byte(data), &m) != nil {
			continue
		}
		switch {
		case m.Error != nil:
			r.rpc = m.Error
		case m.Result != nil && m.Result.IsError:
			r.code = m.Result.Meta.Code
		case m.Result != nil:
			r.out = m.Result.StructuredContent
		}
	}
	return r
}

func claimCall(hc *http.Client, url, token, task, key string) reply {
	return callTool(hc, url, token, "claim_task", map[string]any{"task_id": task, "idempotency_key": key})
}

// taskKey is the task (of crashWorld's) and the key of the load's
// claim number i.
func taskKey(i int) (task, key string) {
	return fmt.Sprintf("task-%02d", i), fmt.Sprintf("key-%02d", i)
}

// upTo returns a closed channel holding 0 to n-1: the claims of a load,
// which its workers share.
func upTo(n int) <-chan int {
	c := make(chan int, n)
	for i := range n {
		c <- i
	}
	close(c)
	return c
}

// keyOf is the key of task in the load.
func keyOf(task string) string { return "key-" + strings.TrimPrefix(task, "task-") }

// pgQuery runs fn on a connection of its own to database dsn.
func pgQuery(t *testing.T, dsn string, fn func(conn *pgx.Conn) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := fn(conn); err != nil {
		t.Fatal(err)
	}
}

// dbAttempt is a row of the attempts table.
type dbAttempt struct {
	id, task, key string
	whole         bool // every column a live attempt needs is set
}

// attemptsIn reads the attempts table of dsn, by task, failing the test
// when a task has more than one.
func attemptsIn(t *testing.T, dsn string) map[string]dbAttempt {
	t.Helper()
	got := map[string]dbAttempt{}
	pgQuery(t, dsn, func(conn *pgx.Conn) error {
		rows, err := conn.Query(context.Background(), `SELECT id, task, idempotency_key,
			runner IS NOT NULL AND claimed_at > 0 AND live_until > claimed_at AND credential IS NOT NULL
				AND allowed_tools IS NOT NULL AND superseded_at IS NULL
			FROM attempts`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a dbAttempt
			if err := rows.Scan(&a.id, &a.task, &a.key, &a.whole); err != nil {
				return err
			}
			if _, dup := got[a.task]; dup {
				t.Errorf("%s has several attempts", a.task)
			}
			got[a.task] = a
		}
		return rows.Err()
	})
	return got
}

// pgWorld starts a first replica on a new database of the cluster with
// crashWorld's world of n tasks and returns the database's URL, the
// world file's path, the replica and the runner's token.
func pgWorld(t *testing.T, c *pgtest.Cluster, n int, args ...string) (dsn, worldFile string, p *proc, runnerTok string) {
	t.Helper()
	dsn = c.NewDSN(t)
	dir := t.TempDir()
	worldFile = filepath.Join(dir, "world.json")
	crashWorld(t, worldFile, n)
	tokFile := filepath.Join(dir, "tokens.json")
	p = start(t, append([]string{"--addr", "127.0.0.1:0", "--db", dsn, "--world", worldFile, "--tokens-out", tokFile}, args...)...)
	return dsn, worldFile, p, tokenOf(t, readTokens(t, tokFile), store.KindRunner, "maya/builder")
}

// TestPostgresReplicaKilled: two replicas on one database under a load of
// claims (each task claimed with a fresh key on one replica and replayed
// on the other, by many clients at once); one replica is killed
// (SIGKILL) in the middle, and the load goes on on the other. No answered
// claim is lost: each is in the database and replays to the same attempt
// on the survivor, and each claim that was cut off, retried there with
// its key, gives one attempt, again the same. Every task ends with
// exactly one attempt, whole.
func TestPostgresReplicaKilled(t *testing.T) {
	const tasks, workers, killAfter = 240, 16, 60
	c := pgtest.Start(t)
	dsn, worldFile, a, tok := pgWorld(t, c, tasks)
	b := start(t, "--addr", "127.0.0.1:0", "--db", dsn, "--world", worldFile)

	l := &killLoad{claims: map[string]*killedClaim{}, killAfter: killAfter, kill: make(chan struct{})}
	wg := l.start(t, []*proc{a, b}, tok, tasks, workers)
	select {
	case <-l.kill:
	case <-time.After(hangGuard):
		t.Fatal("the claims did not get going")
	}
	l.mu.Lock()
	atKill := l.answered
	l.mu.Unlock()
	l.killed.Store(true)
	a.signal(syscall.SIGKILL)
	wg.Wait()
	if code := a.wait(); code != -1 {
		t.Fatalf("exit code %d after SIGKILL", code)
	}
	if atKill >= tasks {
		t.Fatalf("all %d tasks were claimed before the kill landed", tasks)
	}

	cutOff, inFlight, lost := checkAnswersStored(t, dsn, l.claims)
	lost += claimAgainOnSurvivor(t, b.url(), tok, tasks, l.claims)
	rows := attemptsIn(t, dsn)
	whole := 0
	for _, row := range rows {
		if row.whole {
			whole++
		}
	}
	if len(rows) != tasks || whole != tasks {
		t.Errorf("the database holds %d attempts (%d whole) for %d tasks", len(rows), whole, tasks)
	}
	t.Logf("tasks answered when the kill was sent: %d of %d; calls cut off by the kill: %d (in flight: %d, refused: %d); lost: %d",
		atKill, tasks, cutOff, inFlight, cutOff-inFlight, lost)

	b.signal(syscall.SIGTERM)
	if code := b.wait(); code != 0 {
		t.Fatalf("the survivor's exit code %d; stderr:\n%s", code, b.stderr.String())
	}
	if out := b.stdout.String(); !strings.Contains(out, "holds the world of "+worldFile+" already") || strings.Contains(out, store.TokenPrefix) {
		t.Errorf("the second replica printed:\n%s", out)
	}
}

// killedClaim is what TestPostgresReplicaKilled's load saw of one task.
type killedClaim struct {
	first    *api.ClaimTaskOutputAttempt // the first answer, if any came
	cutOff   int                         // calls to the killed replica that got no answer
	inFlight int                         // of them, those it had accepted (not refused)
	answered int                         // calls answered
}

// killLoad is TestPostgresReplicaKilled's load: each task claimed with a
// fresh key on one replica and replayed on the other, by many clients at
// once. Once killAfter tasks have an answer, kill is closed; once killed
// is set, replica 0 may not answer.
type killLoad struct {
	mu        sync.Mutex
	claims    map[string]*killedClaim
	answered  int // tasks with an answer
	killAfter int
	killed    atomic.Bool
	kill      chan struct{}
	killOnce  sync.Once
}

// start starts the load's workers on replicas; they stop when the tasks
// run out.
func (l *killLoad) start(t *testing.T, replicas []*proc, tok string, tasks, workers int) *sync.WaitGroup {
	next := upTo(tasks)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			hc := newHTTPClient(t)
			gone := false // this client found replica 0 gone, and sends to replica 1 alone
			for i := range next {
				task, key := taskKey(i)
				for n := range 2 { // the claim, then its replay on the other replica
					r := (w + n) % 2
					if gone {
						r = 1
					}
					if l.record(t, task, r, claimCall(hc, replicas[r].url(), tok, task, key)) {
						gone = true
					}
				}
			}
		})
	}
	return &wg
}

// record notes replica r's answer to a claim of task; it reports whether
// the answer says the replica is gone.
func (l *killLoad) record(t *testing.T, task string, r int, rep reply) (gone bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cl := l.claims[task]
	if cl == nil {
		cl = &killedClaim{}
		l.claims[task] = cl
	}
	switch {
	case rep.ok():
		at := rep.attempt(t)
		if cl.first == nil {
			cl.first = &at
			l.answered++
		} else if at != *cl.first {
			t.Errorf("%s: replica %d answered %+v, after %+v", task, r, at, *cl.first)
		}
		cl.answered++
	case r == 0 && rep.status == 0 && l.killed.Load():
		cl.cutOff++
		if !errors.Is(rep.err, syscall.ECONNREFUSED) {
			cl.inFlight++
		}
		gone = true
	default:
		t.Errorf("%s on replica %d: %s", task, r, rep)
	}
	if l.answered >= l.killAfter {
		l.killOnce.Do(func() { close(l.kill) })
	}
	return gone
}

// checkAnswersStored: every answered attempt is in the database, for its
// task and key. It counts the calls cut off, those in flight among them,
// and the answers lost.
func checkAnswersStored(t *testing.T, dsn string, claims map[string]*killedClaim) (cutOff, inFlight, lost int) {
	t.Helper()
	rows := attemptsIn(t, dsn)
	for task, cl := range claims {
		cutOff += cl.cutOff
		inFlight += cl.inFlight
		if cl.first == nil {
			continue
		}
		if row, ok := rows[task]; !ok || row.id != cl.first.AttemptID || row.key != keyOf(task) {
			t.Errorf("%s: answered %s; the database holds %+v", task, cl.first.AttemptID, row)
			lost++
		}
	}
	return cutOff, inFlight, lost
}

// claimAgainOnSurvivor claims each task again on the survivor at url,
// with its key: the attempt answered first, or (a claim that got no
// answer) one attempt, twice. It counts the answers lost.
func claimAgainOnSurvivor(t *testing.T, url, tok string, tasks int, claims map[string]*killedClaim) (lost int) {
	t.Helper()
	hc := newHTTPClient(t)
	for i := range tasks {
		task, key := taskKey(i)
		one := claimCall(hc, url, tok, task, key)
		if !one.ok() {
			t.Errorf("%s again on the survivor: %s", task, one)
			continue
		}
		got := one.attempt(t)
		if cl := claims[task]; cl != nil && cl.first != nil {
			if got != *cl.first {
				t.Errorf("%s again on the survivor: %+v, want %+v", task, got, *cl.first)
				lost++
			}
			continue
		}
		if two := claimCall(hc, url, tok, task, key); !two.ok() || two.attempt(t) != got {
			t.Errorf("%s: %+v, then %s", task, got, two)
		}
	}
	return lost
}

// TestPostgresOutage: PostgreSQL stopped at once (an immediate shutdown,
// as a crash) under a load of claims, then started again. Meanwhile every
// call is answered, within a bound of --db-timeout (no call hangs), with
// an error that says the database is unavailable and nothing more (no
// stack trace, no internals); once it is back, without a restart of
// prickled, every call succeeds again, and the notification listener is
// back. No claim is half-written: every attempt row is whole, every
// claim answered before the stop replays to its attempt, and every claim
// that failed replays to one attempt, twice the same.
func TestPostgresOutage(t *testing.T) {
	const tasks, workers = 600, 8
	// --db-timeout, set low. A call runs two operations, each bounded by
	// it (its token's authentication, then the claim): the bound is
	// twice that, with as much again for a busy machine. (A database that
	// is down fails them at once; one that hangs makes them wait the
	// timeout: the store's TestPostgresUnavailable.)
	const dbTimeout = 2 * time.Second
	const bound = 4 * dbTimeout
	c := pgtest.Start(t)
	dsn, _, p, tok := pgWorld(t, c, tasks, "--db-timeout", dbTimeout.String())

	l := &outageLoad{changed: make(chan struct{}, 1), stop: make(chan struct{})}
	l.start(t, p.url(), tok, tasks, workers)
	defer l.end() // the load ends even when the test fails half-way
	l.waitFor(t, "claims before the stop", func() bool { return l.ok[phaseUp] >= 40 })
	l.phase.Store(phaseStopping)
	c.Kill()
	l.phase.Store(phaseDown)
	l.waitFor(t, "calls during the outage", func() bool { return l.failed[phaseDown] >= 4*workers })
	l.phase.Store(phaseRestarting)
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	l.phase.Store(phaseBack)
	l.waitFor(t, "claims after the restart", func() bool { return l.ok[phaseBack] >= 40 })
	l.end()

	answered, failedTasks, slowest := checkOutageAnswers(t, l.calls, bound)
	t.Logf("calls: %d; succeeded before the stop: %d; failed during the outage: %d (the slowest in %v); succeeded after the restart: %d",
		len(l.calls), l.ok[phaseUp], l.failed[phaseStopping]+l.failed[phaseDown]+l.failed[phaseRestarting], slowest, l.ok[phaseBack])
	checkListenerBack(t, p, dsn)
	cutOff := checkNothingHalfWritten(t, dsn, p.url(), tok, answered, failedTasks)
	t.Logf("tasks answered: %d; tasks whose every call failed, claimed again after: %d", len(answered), cutOff)

	select {
	case <-p.done:
		t.Fatalf("prickled exited; stderr:\n%s", p.stderr.String())
	default:
	}
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM; stderr:\n%s", code, p.stderr.String())
	}
	if logs := p.stderr.String(); strings.Contains(logs, "goroutine ") || strings.Contains(logs, "panic") {
		t.Errorf("a stack trace or a panic in the log:\n%s", logs)
	}
}

// The phases of TestPostgresOutage's outage, as the calls see them when
// they start and end.
const (
	phaseUp         = iota
	phaseStopping   // PostgreSQL is being stopped
	phaseDown       // it is stopped
	phaseRestarting // it is being started
	phaseBack       // it accepts connections again
	phases
)

// outageCall is one call of TestPostgresOutage's load, with the phases it
// started and ended in.
type outageCall struct {
	task       string
	start, end int
	rep        reply
}

// outageLoad is TestPostgresOutage's load: each task claimed, then the
// claim replayed, by many clients at once, until the tasks run out or the
// load ends.
type outageLoad struct {
	phase   atomic.Int32
	mu      sync.Mutex
	calls   []outageCall
	ok      [phases]int // calls that succeeded, by the phase they started in
	failed  [phases]int // calls that failed, likewise
	changed chan struct{}
	stop    chan struct{}
	end     func() // ends the load and waits for its workers
}

func (l *outageLoad) start(t *testing.T, url, tok string, tasks, workers int) {
	next := upTo(tasks)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			hc := newHTTPClient(t)
			for i := range next {
				task, key := taskKey(i)
				for range 2 { // a fresh claim, then its replay
					select {
					case <-l.stop:
						return
					default:
					}
					start := int(l.phase.Load())
					rep := claimCall(hc, url, tok, task, key)
					l.mu.Lock()
					l.calls = append(l.calls, outageCall{task: task, start: start, end: int(l.phase.Load()), rep: rep})
					if rep.ok() {
						l.ok[start]++
					} else {
						l.failed[start]++
					}
					l.mu.Unlock()
					select {
					case l.changed <- struct{}{}:
					default:
					}
				}
			}
		})
	}
	l.end = sync.OnceFunc(func() { close(l.stop); wg.Wait() })
}

// waitFor waits until the load reaches cond.
func (l *outageLoad) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(hangGuard)
	for {
		l.mu.Lock()
		reached := cond()
		l.mu.Unlock()
		if reached {
			return
		}
		select {
		case <-l.changed:
		case <-deadline:
			t.Fatalf("waited %v for %s", hangGuard, what)
		}
	}
}

// checkOutageAnswers checks each call of the outage: one that succeeded
// answered its task's attempt, and did not run while PostgreSQL was
// down; one that failed ran during the outage, was answered within bound,
// and said the database is unavailable and nothing more. It returns each
// task's first answer, the tasks with a failed call, and the slowest
// failure.
func checkOutageAnswers(t *testing.T, calls []outageCall, bound time.Duration) (answered map[string]api.ClaimTaskOutputAttempt, failedTasks map[string]bool, slowest time.Duration) {
	t.Helper()
	answered = map[string]api.ClaimTaskOutputAttempt{} // by task, its first answer
	failedTasks = map[string]bool{}
	for _, cl := range calls {
		if cl.rep.ok() {
			at := cl.rep.attempt(t)
			if first, seen := answered[cl.task]; seen && first != at {
				t.Errorf("%s: answered %+v, then %+v", cl.task, first, at)
			} else if !seen {
				answered[cl.task] = at
			}
			if cl.start == phaseDown && cl.end == phaseDown {
				t.Errorf("%s: a call while PostgreSQL was stopped succeeded", cl.task)
			}
			continue
		}
		failedTasks[cl.task] = true
		slowest = max(slowest, cl.rep.took)
		switch {
		case cl.end == phaseUp || cl.start == phaseBack:
			t.Errorf("%s: a call while PostgreSQL was up failed: %s", cl.task, cl.rep)
		case cl.rep.took > bound:
			t.Errorf("%s: a call during the outage took %v, more than %v: %s", cl.task, cl.rep.took, bound, cl.rep)
		case cl.rep.status == http.StatusServiceUnavailable && cl.rep.body == "the database is unavailable; retry later\n":
		case cl.rep.status == http.StatusOK && cl.rep.rpc != nil && cl.rep.rpc.Code == -32603 &&
			cl.rep.rpc.Message == "the database is unavailable; retry later":
		default:
			t.Errorf("%s: a call during the outage was answered %s, not that the database is unavailable", cl.task, cl.rep)
		}
	}
	return answered, failedTasks, slowest
}

// checkListenerBack: the notification listener logged its loss and its
// return, and listens again.
func checkListenerBack(t *testing.T, p *proc, dsn string) {
	t.Helper()
	p.waitLog("store: PostgreSQL notifications lost")
	p.waitLog("store: PostgreSQL notifications are back")
	pgQuery(t, dsn, func(conn *pgx.Conn) error {
		var n int
		err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query ILIKE 'listen %'`).Scan(&n)
		if err == nil && n != 1 {
			t.Errorf("%d connections listen after the restart, want 1", n)
		}
		return err
	})
}

// checkNothingHalfWritten: after the outage every attempt row is whole,
// every answer is in the database and replays, and a task whose every
// call failed, claimed twice now, gives one attempt. It returns how many
// such tasks there were.
func checkNothingHalfWritten(t *testing.T, dsn, url, tok string, answered map[string]api.ClaimTaskOutputAttempt, failedTasks map[string]bool) (cutOff int) {
	t.Helper()
	rows := attemptsIn(t, dsn)
	for task, row := range rows {
		if !row.whole {
			t.Errorf("%s: attempt %+v is not whole", task, row)
		}
	}
	hc := newHTTPClient(t)
	for task, at := range answered {
		if row := rows[task]; row.id != at.AttemptID {
			t.Errorf("%s: answered %s; the database holds %+v", task, at.AttemptID, row)
		}
		if again := claimCall(hc, url, tok, task, keyOf(task)); !again.ok() || again.attempt(t) != at {
			t.Errorf("%s: answered %+v; replayed after the outage: %s", task, at, again)
		}
	}
	for task := range failedTasks {
		if _, ok := answered[task]; ok {
			continue
		}
		cutOff++
		one := claimCall(hc, url, tok, task, keyOf(task))
		two := claimCall(hc, url, tok, task, keyOf(task))
		if !one.ok() || !two.ok() || one.attempt(t) != two.attempt(t) {
			t.Errorf("%s: failed during the outage; now %s, then %s", task, one, two)
		}
	}
	return cutOff
}

// TestPostgresPoolBounded: under more concurrent calls than --db-conns,
// PostgreSQL sees at most --db-conns connections of prickled, and one
// more that listens for the other replicas' changes, from its start to
// its end.
func TestPostgresPoolBounded(t *testing.T) {
	const conns, clients, tasks = 3, 24, 240
	c := pgtest.Start(t)
	name := c.NewDatabase(t)
	dsn := c.DSN(name)
	// PostgreSQL's count, sampled from another database until the test
	// ends.
	var most atomic.Int64
	sampled := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(sampled)
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, c.DSN("postgres"))
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		for {
			var n int64
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, name).Scan(&n); err != nil {
				t.Error(err)
				return
			}
			if n > most.Load() {
				most.Store(n)
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	stopSampling := sync.OnceFunc(func() { close(done); <-sampled })
	defer stopSampling()

	dir := t.TempDir()
	worldFile, tokFile := filepath.Join(dir, "world.json"), filepath.Join(dir, "tokens.json")
	crashWorld(t, worldFile, tasks)
	p := start(t, "--addr", "127.0.0.1:0", "--db", dsn, "--world", worldFile, "--tokens-out", tokFile,
		"--db-conns", strconv.Itoa(conns))
	toks := readTokens(t, tokFile)
	runner, agent := tokenOf(t, toks, store.KindRunner, "maya/builder"), tokenOf(t, toks, store.KindAgent, "maya/builder")
	var inFlight, mostInFlight atomic.Int64
	next := upTo(tasks)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			hc := newHTTPClient(t)
			for i := range next {
				task, key := taskKey(i)
				for _, call := range []func() reply{
					func() reply { return claimCall(hc, p.url(), runner, task, key) },
					func() reply { return claimCall(hc, p.url(), runner, task, key) },
					func() reply {
						return callTool(hc, p.url(), agent, "discover_team_agents", map[string]any{"project": "crash"})
					},
				} {
					n := inFlight.Add(1)
					if n > mostInFlight.Load() {
						mostInFlight.Store(n) // a lower bound of the most: enough
					}
					rep := call()
					inFlight.Add(-1)
					if !rep.ok() {
						t.Errorf("%s: %s", task, rep)
					}
				}
			}
		})
	}
	wg.Wait()
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, p.stderr.String())
	}
	stopSampling()
	t.Logf("calls in flight at once: up to %d; connections PostgreSQL saw at once: up to %d (--db-conns %d)",
		mostInFlight.Load(), most.Load(), conns)
	if got := most.Load(); got > conns+1 {
		t.Errorf("PostgreSQL saw %d connections of prickled at once, more than --db-conns %d and its listener", got, conns)
	}
	if mostInFlight.Load() <= conns {
		t.Errorf("at most %d calls were in flight at once: not more than --db-conns %d, so the bound was not tested", mostInFlight.Load(), conns)
	}
}

// wrongPassword is a password that PostgreSQL refuses, and that no output
// may show either.
const wrongPassword = "Wr0ng-pa55word-never-shown"

// TestPostgresBadDatabase: prickled, and prickled token issue|rotate,
// given a database URL they cannot use (another scheme, a port nothing
// listens on, a wrong password in the user part or as a parameter) exit
// 1 with one line on stderr that says why, no stack trace, and never the
// password.
func TestPostgresBadDatabase(t *testing.T) {
	c := pgtest.Start(t)
	name := c.NewDatabase(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	role := pgtest.PasswordRole
	for _, tc := range []struct {
		what, dsn, why string
	}{
		{"another scheme", "mysql://prickle:" + wrongPassword + "@127.0.0.1:3306/prickle", "not a mysql:// URL"},
		{"a closed port", fmt.Sprintf("postgres://prickle:%s@127.0.0.1:%d/prickle?sslmode=disable", wrongPassword, closed), "connection refused"},
		{"a wrong password", c.TCPDSN(name, role, wrongPassword), "password authentication failed"},
		{"a wrong password parameter", fmt.Sprintf("postgres://127.0.0.1:%d/%s?sslmode=disable&user=%s&password=%s",
			c.Port, name, role, wrongPassword), "password authentication failed"},
	} {
		for _, args := range [][]string{
			{"--addr", "127.0.0.1:0", "--db", tc.dsn},
			{"token", "issue", "--db", tc.dsn, "--agent", "maya/builder"},
			{"token", "rotate", "--db", tc.dsn, "--agent", "maya/builder"},
		} {
			stdout, stderr, code := execBinary(t.TempDir(), args...)
			cmd := "prickled"
			if args[0] == "token" {
				cmd += " token " + args[1]
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], cmd+": ") || !strings.Contains(lines[0], tc.why) {
				t.Errorf("%s, %s: exit %d, stderr\n%s\nwant exit 1 and one line %q... saying %q", cmd, tc.what, code, stderr, cmd+": ", tc.why)
			}
			if out := stdout + stderr; strings.Contains(out, wrongPassword) || strings.Contains(out, "goroutine ") {
				t.Errorf("%s, %s: the password or a stack trace shown:\n%s", cmd, tc.what, out)
			}
		}
	}
}

// TestPostgresPasswordNeverShown: two replicas whose database URLs hold
// the password (in the user part, and as a parameter), a call, prickled
// token issue and rotate with them, and the help texts: no output, log
// line or file shows the password; where a URL is shown it is redacted.
func TestPostgresPasswordNeverShown(t *testing.T) {
	c := pgtest.Start(t)
	name := c.NewDatabase(t)
	if err := c.Exec("ALTER DATABASE " + name + " OWNER TO " + pgtest.PasswordRole); err != nil {
		t.Fatal(err)
	}
	pw := pgtest.PasswordRolePassword
	userDSN := c.TCPDSN(name, pgtest.PasswordRole, pw)
	paramDSN := fmt.Sprintf("postgres://127.0.0.1:%d/%s?sslmode=disable&user=%s&password=%s", c.Port, name, pgtest.PasswordRole, pw)
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "tokens.json")
	p := start(t, "--addr", "127.0.0.1:0", "--db", userDSN, "--tokens-out", tokFile)
	q := start(t, "--addr", "127.0.0.1:0", "--db", paramDSN)
	runner := tokenOf(t, readTokens(t, tokFile), store.KindRunner, seed.BuilderAgent)
	if rep := claimCall(newHTTPClient(t), q.url(), runner, seed.TaskID, "k"); !rep.ok() {
		t.Fatalf("claim: %s", rep)
	}
	var outputs []string
	for _, args := range [][]string{
		{"token", "issue", "--db", paramDSN, "--agent", seed.BuilderAgent},
		{"token", "rotate", "--db", userDSN, "--agent", seed.BuilderAgent},
		{"token", "issue", "--db", userDSN, "--agent", seed.BuilderAgent, "--runner", seed.RunnerID}, // exists: the rotate command is suggested
		{"--db", userDSN, "-h"},
		{"token", "issue", "--db", paramDSN, "-h"},
	} {
		stdout, stderr, code := execBinary(dir, args...)
		if want := map[bool]int{true: 0, false: 1}[args[len(args)-1] != seed.RunnerID]; args[len(args)-1] != "-h" && code != want {
			t.Errorf("%v: exit %d, want %d; stderr:\n%s", args[:2], code, want, stderr)
		}
		outputs = append(outputs, stdout+stderr)
	}
	for _, r := range []*proc{p, q} {
		r.signal(syscall.SIGTERM)
		if code := r.wait(); code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, r.stderr.String())
		}
		outputs = append(outputs, r.stdout.String(), r.stderr.String())
	}
	all := strings.Join(outputs, "\n")
	if strings.Contains(all, pw) {
		t.Errorf("the password is shown:\n%s", all)
	}
	// Where a URL is shown, it is redacted: the listening lines, the
	// second replica's token commands, the runner's that exists.
	for _, want := range []string{
		`"db":"postgres://prickle_password:xxxxx@127.0.0.1:`, // the user part
		`password=xxxxx`, // the parameter
		"prickled token issue --db 'postgres://127.0.0.1:",                         // the second replica's suggestion
		"prickled token rotate --db 'postgres://prickle_password:xxxxx@127.0.0.1:", // the runner's, which exists
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no output holds %q:\n%s", want, all)
		}
	}
}

// TestPostgresTokenCommand: prickled token issue and rotate on the
// database of a running replica. An issued token works on the replica at
// once, next to the earlier ones; a rotated-out token is refused (401) by
// the replica at once, not after a cache's time: no principal is cached
// on PostgreSQL. The agent's tokens and a runner's alike.
func TestPostgresTokenCommand(t *testing.T) {
	c := pgtest.Start(t)
	dsn := c.NewDSN(t)
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "tokens.json")
	p := start(t, "--addr", "127.0.0.1:0", "--db", dsn, "--tokens-out", tokFile)
	toks := readTokens(t, tokFile)
	agentTok, runnerTok := tokenOf(t, toks, store.KindAgent, seed.BuilderAgent), tokenOf(t, toks, store.KindRunner, seed.BuilderAgent)
	token := func(args ...string) string {
		t.Helper()
		stdout, stderr, code := execBinary(dir, append([]string{"token"}, append(args, "--db", dsn, "--agent", seed.BuilderAgent)...)...)
		tok := tokenRe.FindString(stdout)
		if code != 0 || tok == "" {
			t.Fatalf("token %v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		return tok
	}
	want := func(tok string, status int, what string) {
		t.Helper()
		if got := initializeStatus(t, p.url(), tok); got != status {
			t.Errorf("%s: initialize answered %d, want %d", what, got, status)
		}
	}
	want(agentTok, http.StatusOK, "the seed's agent token")
	issued := token("issue")
	want(issued, http.StatusOK, "the issued agent token")
	want(agentTok, http.StatusOK, "the seed's agent token, after issue")
	rotated := token("rotate")
	want(agentTok, http.StatusUnauthorized, "the seed's agent token, right after rotate")
	want(issued, http.StatusUnauthorized, "the issued agent token, right after rotate")
	want(rotated, http.StatusOK, "the rotated agent token")

	box := token("issue", "--runner", "maya-box")
	want(box, http.StatusOK, "a new runner's token")
	want(runnerTok, http.StatusOK, "the seed's runner token")
	laptop := token("rotate", "--runner", seed.RunnerID)
	want(runnerTok, http.StatusUnauthorized, "the seed's runner token, right after rotate")
	want(laptop, http.StatusOK, "the runner's rotated token")
	if rep := claimCall(newHTTPClient(t), p.url(), laptop, seed.TaskID, "rotated"); !rep.ok() {
		t.Errorf("a claim with the rotated runner token: %s", rep)
	}
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	for _, tok := range []string{issued, rotated, box, laptop} {
		if strings.Contains(p.stderr.String(), tok) {
			t.Error("a token the command issued is in the server's log")
		}
	}
}
