package server_test

// The bounds on what a caller can make the server hold: sessions,
// connections, slow requests, requests in flight per caller.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

// sessionIDs returns the ids of the server's open MCP sessions.
func (e *env) sessionIDs() []string {
	var ids []string
	for ss := range e.srv.MCP().Sessions() {
		if id := ss.ID(); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// eventually polls cond until it holds, or fails after 30 s: a guard
// against a hang, not a timing target (it returns at the first success;
// under a loaded CI machine 5 s was not always enough).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after 30s", what)
		}
	}
}

// ping pings on session and returns the HTTP status.
func (e *env) ping(token, session string) int {
	return e.post(token, session, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)).status
}

// TestSessionsPerCaller: one caller holds at most MaxSessionsPerPrincipal
// sessions, however many it opens without closing them: each new one ends
// its least recently used; another caller's sessions are not touched.
func TestSessionsPerCaller(t *testing.T) {
	const limit = 3
	e := newEnv(t, envOpts{config: func(c *server.Config) { c.MaxSessionsPerPrincipal = limit }})
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	runner := e.token(store.KindRunner, seed.BuilderAgent)
	other := e.session(runner)
	first := e.session(agent)
	var last []string
	for i := range 200 {
		s := e.session(agent)
		last = append(last, s)
		// Its initialized notification is answered 202 before it is
		// handled, and handling it is a use: the ping answered on s says
		// it was, so that first's ping below is the latest use.
		if got := e.ping(agent, s); got != http.StatusOK {
			t.Fatalf("a new session answers %d", got)
		}
		if got := e.ping(agent, first); got != http.StatusOK { // kept in use, never the least recently used
			t.Fatalf("after %d sessions: the caller's session in use was ended (%d)", i+1, got)
		}
	}
	eventually(t, "down to the limit", func() bool { return len(e.sessionIDs()) == limit+1 })
	ids := e.sessionIDs()
	for _, want := range []string{other, first, last[len(last)-1], last[len(last)-2]} {
		if !slices.Contains(ids, want) {
			t.Errorf("session %s was ended", want)
		}
	}
	if got := e.ping(agent, last[0]); got != http.StatusNotFound {
		t.Errorf("an evicted session answers %d, want 404", got)
	}
	if got := e.ping(runner, other); got != http.StatusOK {
		t.Errorf("another caller's session answers %d", got)
	}
}

// TestSessionsTotal: beyond MaxSessions an initialize is answered 503 with
// a JSON-RPC error; a session that closes makes room.
func TestSessionsTotal(t *testing.T) {
	e := newEnv(t, envOpts{config: func(c *server.Config) { c.MaxSessions = 2 }})
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	runner := e.token(store.KindRunner, seed.BuilderAgent)
	a := e.session(agent)
	e.session(runner)
	got := e.post(agent, "", initializeBody)
	if got.status != http.StatusServiceUnavailable || got.Error == nil || got.Error.Code != -32001 || string(got.ID) != "1" {
		t.Fatalf("initialize beyond the limit: %d %+v", got.status, got.Error)
	}
	req, _ := http.NewRequest(http.MethodDelete, e.url(), nil)
	req.Header.Set("Authorization", "Bearer "+agent)
	req.Header.Set("Mcp-Session-Id", a)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	eventually(t, "room for a session", func() bool { return e.post(agent, "", initializeBody).status == http.StatusOK })
}

// TestSessionIdleTimeout: a session without requests ends after
// SessionIdleTimeout.
func TestSessionIdleTimeout(t *testing.T) {
	e := newEnv(t, envOpts{config: func(c *server.Config) { c.SessionIdleTimeout = 100 * time.Millisecond }})
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	s := e.session(agent)
	eventually(t, "ended", func() bool { return !slices.Contains(e.sessionIDs(), s) })
	if got := e.ping(agent, s); got != http.StatusNotFound {
		t.Errorf("an idle session answers %d, want 404", got)
	}
}

// TestSessionsEndWithTheirToken: a session ends once the token that opened
// it is revoked (through the store) or expires (on the store's clock).
func TestSessionsEndWithTheirToken(t *testing.T) {
	e := newEnv(t, envOpts{config: func(c *server.Config) { c.SessionCheckInterval = 20 * time.Millisecond }})
	ctx := context.Background()
	extra, err := e.srv.Store().IssueAgentToken(ctx, seed.BuilderAgent)
	if err != nil {
		t.Fatal(err)
	}
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	kept := e.session(agent) // same agent, another token: stays
	revoked := e.session(extra.Token)
	cred := e.connect(e.token(store.KindRunner, seed.BuilderAgent)).claimTask(seed.TaskID, "k").ExecutionCredential.Token
	expiring := e.session(cred)
	time.Sleep(100 * time.Millisecond) // a few checks: nothing to end yet
	if ids := e.sessionIDs(); !slices.Contains(ids, revoked) || !slices.Contains(ids, expiring) {
		t.Fatalf("sessions ended while their tokens were valid: %v", ids)
	}
	if err := e.srv.Store().RevokeToken(ctx, extra.Token); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ended after revocation", func() bool { return !slices.Contains(e.sessionIDs(), revoked) })
	e.clock.Advance(store.DefaultLaunchTimeout)
	eventually(t, "ended after expiry", func() bool { return !slices.Contains(e.sessionIDs(), expiring) })
	if !slices.Contains(e.sessionIDs(), kept) {
		t.Error("a session of a valid token was ended")
	}
}

// serve runs srv.Serve on a fresh listener and returns its address and a
// function that stops it and returns Serve's error and how long it took.
func serve(t *testing.T, e *env) (addr string, stop func() (error, time.Duration)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(ctx, ln) }()
	var stopped bool
	stop = func() (error, time.Duration) {
		start := time.Now()
		cancel()
		err := <-done
		stopped = true
		return err, time.Since(start)
	}
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	return ln.Addr().String(), stop
}

// slowPost opens a connection and sends the headers of a POST to path
// that promises a body of 1000 bytes, and 10 of them.
func slowPost(t *testing.T, addr, path, token string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"",
		path, addr, auth)
	return c
}

// heldPosts keeps one slow POST in flight for each of its tokens. A
// probe sent while their headers are still being read can take the
// caller's last place first and get one of them refused (answered 429,
// then closed), which held nothing from then on: keep sends it again.
type heldPosts struct {
	t      *testing.T
	addr   string
	tokens []string
	conns  []net.Conn
}

func holdPosts(t *testing.T, addr string, tokens ...string) *heldPosts {
	t.Helper()
	h := &heldPosts{t: t, addr: addr, tokens: tokens}
	for _, tok := range tokens {
		h.conns = append(h.conns, slowPost(t, addr, server.PathMCP, tok))
	}
	return h
}

// keep sends again each slow POST the server answered.
func (h *heldPosts) keep() {
	h.t.Helper()
	for i, c := range h.conns {
		if answered(c) {
			c.Close()
			h.conns[i] = slowPost(h.t, h.addr, server.PathMCP, h.tokens[i])
		}
	}
}

// answered reports whether the server wrote to c or closed it: a slow
// POST it holds gets neither.
func answered(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(time.Millisecond))
	defer c.SetReadDeadline(time.Time{})
	var b [1]byte
	n, err := c.Read(b[:])
	var ne net.Error
	return n > 0 || !errors.As(err, &ne) || !ne.Timeout()
}

// closedWithin reports whether the server closes c (after any answer)
// within d.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	return err == nil // EOF: closed by the server; a timeout is an error
}

// TestSlowRequestsTimeOut: a request whose body never completes is cut off
// after ReadTimeout, authenticated or not, and a connection that sends
// nothing after ReadHeaderTimeout; both were held forever.
func TestSlowRequestsTimeOut(t *testing.T) {
	e := newEnv(t, envOpts{config: func(c *server.Config) {
		c.ReadTimeout, c.ReadHeaderTimeout = 300*time.Millisecond, 300*time.Millisecond
	}})
	addr, _ := serve(t, e)
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	for _, c := range []net.Conn{slowPost(t, addr, server.PathMCP, agent), slowPost(t, addr, server.PathMCP, ""), slowPost(t, addr, "/nowhere", "")} {
		if !closedWithin(c, 3*time.Second) {
			t.Error("a slow body is still held after 3s")
		}
	}
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if !closedWithin(idle, 3*time.Second) {
		t.Error("a connection that sends nothing is still held after 3s")
	}
}

// TestEventStreamOutlivesTimeouts: the GET event stream of a session is
// not cut by the read and write timeouts; it ends with its session.
func TestEventStreamOutlivesTimeouts(t *testing.T) {
	e := newEnv(t, envOpts{config: func(c *server.Config) {
		c.ReadTimeout, c.WriteTimeout, c.IdleTimeout = 100*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
	}})
	addr, _ := serve(t, e)
	e.ts.URL = "http://" + addr // e.post and e.session go to Serve
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	s := e.session(agent)
	req, _ := http.NewRequest(http.MethodGet, e.url(), nil)
	for k, v := range map[string]string{"Authorization": "Bearer " + agent, "Accept": "text/event-stream", "Mcp-Session-Id": s, "Mcp-Protocol-Version": protoTS} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream: %s", resp.Status)
	}
	ended := make(chan struct{})
	go func() { io.Copy(io.Discard, resp.Body); close(ended) }()
	select {
	case <-ended:
		t.Fatal("the event stream ended within the read and write timeouts' span")
	case <-time.After(600 * time.Millisecond):
	}
	if got := e.ping(agent, s); got != http.StatusOK {
		t.Fatalf("ping on the session: %d", got)
	}
	req, _ = http.NewRequest(http.MethodDelete, e.url(), nil)
	req.Header.Set("Authorization", "Bearer "+agent)
	req.Header.Set("Mcp-Session-Id", s)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the event stream outlived its session")
	}
}

// TestMaxConns: at most MaxConns connections are served at once; with
// every one of them in a request, the next waits until one closes.
func TestMaxConns(t *testing.T) {
	var posts atomic.Int64 // POSTs whose handler runs
	e := newEnv(t, envOpts{config: func(c *server.Config) {
		c.MaxConns = 2
		c.WrapHTTP = func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					posts.Add(1)
					defer posts.Add(-1)
				}
				h.ServeHTTP(w, r)
			})
		}
	}})
	addr, _ := serve(t, e)
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	if err := health(addr, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	runner := e.token(store.KindRunner, seed.BuilderAgent) // one caller holds at most a quarter of MaxConns
	held := []net.Conn{slowPost(t, addr, server.PathMCP, agent), slowPost(t, addr, server.PathMCP, runner)}
	eventually(t, "both POSTs in their handler", func() bool { return posts.Load() == 2 })
	if err := health(addr, 300*time.Millisecond); err == nil {
		t.Fatal("a third connection was served beside two in a request")
	}
	for _, c := range held {
		if closedWithin(c, 10*time.Millisecond) {
			t.Fatal("a connection in a request was closed to make room")
		}
	}
	held[0].Close()
	eventually(t, "served", func() bool { return health(addr, 300*time.Millisecond) == nil })
}

// health GETs /healthz on a connection of its own.
func health(addr string, timeout time.Duration) error {
	c := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + addr + server.PathHealth)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// TestConnectionsWithoutATokenGiveWay: a connection that holds no
// request (idle on keep-alive after a GET /healthz, or still sending its
// headers, or sending nothing) gives its place to a new connection once
// MaxConns are open, those that never authenticated first. MaxConns of
// them locked out every client until their idle or header timeout.
func TestConnectionsWithoutATokenGiveWay(t *testing.T) {
	const limit = 6
	e := newEnv(t, envOpts{config: func(c *server.Config) { c.MaxConns = limit }})
	addr, _ := serve(t, e)
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	var idle []net.Conn
	for i := range limit {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		switch i % 3 {
		case 0: // a request answered, then idle on keep-alive
			fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", server.PathHealth, addr)
			if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
				t.Fatal(err)
			}
		case 1: // headers begun, never finished
			fmt.Fprintf(c, "GET %s HTTP/1.1\r\n", server.PathHealth)
		}
		idle = append(idle, c)
	}
	time.Sleep(50 * time.Millisecond)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range limit {
		req := mcpPost("http://"+addr+server.PathMCP, agent, "", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("an authenticated client's call %d beside %d connections without a token: %v", i, limit, err)
		}
		resp.Body.Close()
	}
	closed := 0
	for _, c := range idle {
		if closedWithin(c, 200*time.Millisecond) {
			closed++
		}
	}
	if closed == 0 {
		t.Error("no connection without a token was closed, yet the calls were served")
	}
}

// TestShutdownDoesNotWaitForSlowBodies: a connection sending its body
// slowly holds a shutdown for shutdownBodyGrace (1s) at most, not for the
// whole ShutdownGrace; calls in flight still finish.
func TestShutdownDoesNotWaitForSlowBodies(t *testing.T) {
	e := newEnv(t, envOpts{config: func(c *server.Config) { c.ShutdownGrace = 20 * time.Second }})
	addr, stop := serve(t, e)
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	e.ts.URL = "http://" + addr
	e.session(agent) // an open session: the shutdown closes it
	slow := slowPost(t, addr, server.PathMCP, agent)
	unauth := slowPost(t, addr, server.PathMCP, "")
	time.Sleep(50 * time.Millisecond)
	err, took := stop()
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if took > 5*time.Second {
		t.Fatalf("shutdown took %v with a slow body open", took)
	}
	for _, c := range []net.Conn{slow, unauth} {
		if !closedWithin(c, time.Second) {
			t.Error("a slow connection is open after the shutdown")
		}
	}

}

// TestShutdownClosesUnusedConnections: a connection that has sent no
// request (a spare that a proxy dialled ahead, say) does not hold a
// shutdown: it is closed as the shutdown begins, while a call in flight
// runs on and is answered. net/http alone serves no request that arrives
// once it shuts down, yet waits for such a connection until it is 5 s
// old: past a shorter grace, which then cut the call in flight off.
func TestShutdownClosesUnusedConnections(t *testing.T) {
	inHandler, release := make(chan struct{}), make(chan struct{})
	e := newEnv(t, envOpts{config: func(c *server.Config) {
		c.ShutdownGrace = 3 * time.Second // under the 5 s of net/http
		c.WrapHTTP = func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/held" {
					close(inHandler)
					<-release
					io.WriteString(w, "answered")
					return
				}
				h.ServeHTTP(w, r)
			})
		}
	}})
	addr, stop := serve(t, e)
	// Dialled first, so accepted first: the server holds it once the
	// held request's handler runs.
	unused, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer unused.Close()
	answer := make(chan string, 1)
	go func() {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Get("http://" + addr + "/held")
		if err != nil {
			answer <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			answer <- err.Error()
			return
		}
		answer <- string(b)
	}()
	<-inHandler
	stopped := make(chan error, 1)
	go func() { err, _ := stop(); stopped <- err }()
	// The unused connection closes (EOF; a read deadline would be an
	// error) before the call in flight ends.
	unused.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err = io.Copy(io.Discard, unused)
	close(release)
	if err != nil {
		t.Errorf("the unused connection: %v", err)
	}
	if a := <-answer; a != "answered" {
		t.Errorf("the call in flight during the shutdown: %s", a)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if strings.Contains(e.logs.String(), "shutdown grace exceeded") {
		t.Errorf("the shutdown outlasted its grace:\n%s", e.logs.String())
	}
}

// TestReplaysHoldNothing: a caller replaying a claim makes the server
// hold nothing more: the claim keeps its one credential, and no token
// row is written.
func TestReplaysHoldNothing(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	c := e.connect(e.token(store.KindRunner, seed.BuilderAgent))
	base := e.count("tokens")
	for range 50 {
		c.claimTask(seed.TaskID, "k")
	}
	if n := e.count("tokens"); n != base {
		t.Fatalf("%d token rows after 50 replays, want %d", n, base)
	}
	if n := e.count("attempts"); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
}

// TestLimitFlags: every limit of Config has a flag whose default is the
// limit's default, and a value given on the command line reaches Config.
func TestLimitFlags(t *testing.T) {
	var cfg server.Config
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	cfg.LimitFlags(fs)
	if err := fs.Parse([]string{"-max-sessions", "5", "-read-timeout", "3s"}); err != nil {
		t.Fatal(err)
	}
	if cfg.MaxSessions != 5 || cfg.ReadTimeout != 3*time.Second || cfg.SessionIdleTimeout != server.DefaultSessionIdleTimeout ||
		cfg.MaxBodyBytes != server.DefaultMaxBodyBytes || cfg.ShutdownGrace != server.DefaultShutdownGrace {
		t.Errorf("config after flags: %+v", cfg)
	}
	// Every duration and count of Config but LaunchTimeout is a limit with
	// a flag.
	n := 0
	ct := reflect.TypeFor[server.Config]()
	for i := range ct.NumField() {
		f := ct.Field(i)
		switch f.Type {
		case reflect.TypeFor[time.Duration](), reflect.TypeFor[int](), reflect.TypeFor[int64]():
			if f.Name != "LaunchTimeout" {
				n++
			}
		}
	}
	flags := 0
	fs.VisitAll(func(*flag.Flag) { flags++ })
	if flags != n {
		t.Errorf("%d limit flags for %d limits of Config", flags, n)
	}
}

// pingStatus POSTs a ping with token to the server at addr, on a
// connection of its own, and returns the HTTP status.
func pingStatus(t *testing.T, addr, token string) int {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+server.PathMCP, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestRequestsPerCaller: one caller sending bodies slowly holds at most
// MaxRequestsPerPrincipal of them; its next POST is answered 429 at once,
// while another caller is served. Without the bound one token could hold
// every connection.
func TestRequestsPerCaller(t *testing.T) {
	// The slow bodies outlast the checks, however slow the machine (at the
	// default 30s ReadTimeout they were cut off under -race in CI).
	e := newEnv(t, envOpts{config: func(c *server.Config) { c.MaxRequestsPerPrincipal, c.ReadTimeout = 2, 10*time.Minute }})
	addr, _ := serve(t, e)
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	runner := e.token(store.KindRunner, seed.BuilderAgent)
	status := func(token string) int { return pingStatus(t, addr, token) }
	if got := status(agent); got == http.StatusTooManyRequests {
		t.Fatalf("a caller with nothing in flight: %d", got)
	}
	held := holdPosts(t, addr, agent, agent)
	eventually(t, "the third POST refused", func() bool { held.keep(); return status(agent) == http.StatusTooManyRequests })
	if got := status(runner); got == http.StatusTooManyRequests {
		t.Errorf("another caller: %d", got)
	}
	held.conns[0].Close()
	eventually(t, "served again", func() bool { return status(agent) != http.StatusTooManyRequests })
}

// TestSessionsTotalHolds: MaxSessions holds for an initialize inside a
// batch, and for many initializes at once.
func TestSessionsTotalHolds(t *testing.T) {
	const limit = 6
	e := newEnv(t, envOpts{config: func(c *server.Config) { c.MaxSessions = limit }})
	var tokens []string
	for _, a := range []string{seed.BuilderAgent, seed.ReviewerAgent} {
		tokens = append(tokens, e.token(store.KindAgent, a), e.token(store.KindRunner, seed.BuilderAgent))
	}
	var wg sync.WaitGroup
	for i := range 120 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.post(tokens[i%len(tokens)], "", initializeBody)
		}()
	}
	wg.Wait()
	if n := len(e.sessionIDs()); n > limit {
		t.Errorf("%d sessions opened by concurrent initializes, limit %d", n, limit)
	}
	for len(e.sessionIDs()) < limit {
		e.session(tokens[0])
	}
	batch := []byte(`[` + string(initializeBody) + `,{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	if got := e.post(tokens[1], "", batch); got.status != http.StatusServiceUnavailable {
		t.Errorf("an initialize in a batch beyond the limit: %d, want 503", got.status)
	}
	if n := len(e.sessionIDs()); n > limit {
		t.Errorf("%d sessions, limit %d", n, limit)
	}
}

// TestBatchBound: a batch holds at most MaxBatch messages.
func TestBatchBound(t *testing.T) {
	e := newEnv(t, envOpts{config: func(c *server.Config) { c.MaxBatch = 4 }})
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	session := e.session(agent)
	batch := func(n int) []byte {
		var ms []string
		for i := range n {
			ms = append(ms, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1))
		}
		return []byte("[" + strings.Join(ms, ",") + "]")
	}
	// Without Mcp-Protocol-Version a server assumes 2025-03-26, the one
	// version with batches (the go-sdk refuses them for later ones).
	post := func(body []byte) (int, string) {
		req := mcpPost(e.url(), agent, session, body)
		req.Header.Del("Mcp-Protocol-Version")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := post(batch(4)); status != http.StatusOK || strings.Count(body, `"result"`) != 4 {
		t.Errorf("a batch of 4: %d %s, want 200 and 4 answers", status, body)
	}
	if status, body := post(batch(5)); status != http.StatusBadRequest || !strings.Contains(body, "-32600") || strings.Contains(body, `"result"`) {
		t.Errorf("a batch of 5: %d %s, want 400 -32600 and no call answered", status, body)
	}
}

// TestSessionlessTestIsTheGoSDKs: a request is of the sessionless
// protocol (which needs no initialize and holds no session) only as the
// go-sdk reads one: a call whose _meta protocolVersion is a string naming
// 2026-07-28 or later. With 1, null, {} or "" there, an initialize opened
// a session past --max-sessions (the front door skipped its reservation,
// the go-sdk opened it), and a tools/call without a session got HTTP 200
// with code 0; over stdio, code 0 too.
func TestSessionlessTestIsTheGoSDKs(t *testing.T) {
	const limit = 2
	e := newEnv(t, envOpts{world: "world.json", config: func(c *server.Config) { c.MaxSessions = limit }})
	runner := e.token(store.KindRunner, seed.BuilderAgent)
	metas := []string{`1`, `null`, `{}`, `""`, `"1"`, `"2026-07-28"`, `"2099-01-01"`}
	withMeta := func(body []byte, meta string) []byte {
		return bytes.Replace(body, []byte(`"params":{`), []byte(`"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":`+meta+`},`), 1)
	}
	for len(e.sessionIDs()) < limit {
		e.session(runner)
	}
	for _, meta := range metas {
		a := e.post(runner, "", withMeta(initializeBody, meta))
		if a.Error == nil || a.Error.Code == 0 || a.status < 400 {
			t.Errorf("initialize with _meta protocolVersion %s on a full server: %d %+v, want an error", meta, a.status, a.Error)
		}
		if n := len(e.sessionIDs()); n > limit {
			t.Errorf("initialize with _meta protocolVersion %s: %d sessions, limit %d", meta, n, limit)
		}
		a = e.post(runner, "", withMeta(callBody(7, api.ToolDiscoverTeamAgents, `{"project":"website-v2"}`), meta))
		if a.Error == nil || a.Error.Code == 0 || a.status != http.StatusBadRequest {
			t.Errorf("tools/call with _meta protocolVersion %s and no session: %d %+v, want 400 with a JSON-RPC error", meta, a.status, a.Error)
		}
	}

	var lines []string
	for i, meta := range metas[:5] {
		lines = append(lines, string(withMeta(callBody(10+i, api.ToolDiscoverTeamAgents, `{"project":"website-v2"}`), meta)))
	}
	var out bytes.Buffer
	if err := e.srv.ServeStdio(context.Background(), fxBuilderRunner, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	for _, a := range stdioAnswers(t, out.String()) {
		if a.code != -32600 {
			t.Errorf("stdio tools/call before initialize with an old-protocol _meta, id %s: code %d, want -32600", a.id, a.code)
		}
	}
}

// TestOneCallerLeavesConnections: with MaxConns set below one caller's
// default bounds, a runner sending bodies slowly still leaves
// connections to other callers: its bounds are a share of MaxConns. (With
// --max-conns 48 and the default 64 requests per caller, one runner held
// every connection and nobody else was served until its bodies timed out.)
func TestOneCallerLeavesConnections(t *testing.T) {
	const limit = 8
	var posts atomic.Int64 // POSTs that reached the handler, answered or not
	e := newEnv(t, envOpts{world: "world.json", config: func(c *server.Config) {
		c.MaxConns = limit
		c.ReadTimeout = 10 * time.Minute
		c.WrapHTTP = func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					posts.Add(1)
				}
				h.ServeHTTP(w, r)
			})
		}
	}})
	addr, _ := serve(t, e)
	for range limit {
		slowPost(t, addr, server.PathMCP, fxBuilderRunner)
	}
	eventually(t, "every slow POST read up to its body", func() bool { return posts.Load() == limit })
	// A hang guard, not a timing target: without a place the call waits
	// for the runner's bodies, ten minutes.
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(mcpPost("http://"+addr+server.PathMCP, fxBuilderAgent, "", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)))
	if err != nil {
		t.Fatalf("another caller beside a runner's %d slow bodies, MaxConns %d: %v", limit, limit, err)
	}
	resp.Body.Close()
}

// TestCredentialsCountAgainstTheirRunner: the credentials a runner's
// claims minted share the runner's bounds: its sessions and its requests
// in flight. Each credential counted as a caller of its own, so a runner
// with a few claimed tasks held many times the per-caller bounds (with
// --max-conns 48, all 48 connections).
func TestCredentialsCountAgainstTheirRunner(t *testing.T) {
	// family is the runner's token and the credentials of three claims.
	family := func(e *env) []string {
		runner := e.connect(fxBuilderRunner)
		defer runner.close()
		task := runner.claimTask("example-task-id", "k1")
		solo, _ := runner.claimDiscussion("wake-solo", "k2")
		pair, _ := runner.claimDiscussion("wake-pair", "k3")
		return []string{fxBuilderRunner, task.ExecutionCredential.Token, solo.DiscussionCredential.Token, pair.DiscussionCredential.Token}
	}

	e := newEnv(t, envOpts{world: "world.json", config: func(c *server.Config) { c.MaxSessionsPerPrincipal = 2 }})
	for _, tok := range family(e) {
		e.session(tok)
	}
	if n := len(e.sessionIDs()); n > 2 {
		t.Errorf("a runner and its credentials hold %d sessions, want at most 2", n)
	}
	e.session(fxBuilderAgent)
	if n := len(e.sessionIDs()); n != 3 {
		t.Errorf("the runner's agent, another caller, opened a session: %d sessions, want 3", n)
	}

	e = newEnv(t, envOpts{world: "world.json", config: func(c *server.Config) { c.MaxRequestsPerPrincipal, c.ReadTimeout = 2, 10*time.Minute }})
	tokens := family(e)
	addr, _ := serve(t, e)
	status := func(token string) int { return pingStatus(t, addr, token) }
	held := holdPosts(t, addr, tokens[1], tokens[2])
	for _, tok := range []string{tokens[0], tokens[3]} {
		eventually(t, "a POST of the runner's family refused", func() bool { held.keep(); return status(tok) == http.StatusTooManyRequests })
	}
	if got := status(fxBuilderAgent); got == http.StatusTooManyRequests {
		t.Errorf("the runner's agent, another caller: %d", got)
	}
}
