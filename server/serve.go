package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Serve serves Handler on ln until ctx is done, then shuts down
// gracefully: it stops accepting connections, cuts off request bodies
// still being read, lets the calls in flight finish (for at most
// cfg.ShutdownGrace), closes the MCP sessions and returns nil. An error
// of the listener is returned at once.
//
// The HTTP server has cfg's read-header, read, write and idle timeouts
// (the GET event stream of a session is exempt from the read and write
// ones: it lasts as long as its session) and holds at most cfg.MaxConns
// connections (see conns: a new one takes the place of one that holds no
// request, else waits until one closes).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.logUnimplemented()
	cs := newConns(ln, s.cfg.MaxConns)
	hs := &http.Server{
		Handler:           markBusy(s.Handler()),
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnState:         cs.state,
		ConnContext:       func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(cs) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing in-flight calls", "grace", s.cfg.ShutdownGrace)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownGrace)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- hs.Shutdown(sctx) }() // stop accepting; wait for active requests
	s.Drain(sctx)                             // bodies cut off, calls finish, then sessions (and their event streams) close
	if err := <-done; err != nil {
		s.log.Warn("shutdown grace exceeded: closing open connections", "grace", s.cfg.ShutdownGrace)
		hs.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// conns holds the open HTTP connections, at most max of them. A
// connection arriving when max are open takes the place of one that
// holds no request: idle on keep-alive, or not yet through its headers
// (none is ever closed while a handler runs or a response is written).
// Of those, one that never carried an authenticated request goes first
// (see victimLocked): a caller who proved nothing cannot hold the budget,
// and an authenticated caller's requests are bounded by caller. When
// every connection is in a request, the new one waits.
type conns struct {
	ln  net.Listener
	max int

	mu      sync.Mutex
	open    map[*conn]struct{}
	closed  bool
	changed chan struct{} // closed when a connection closes or stops holding a request; nil when nobody waits
}

// conn is one accepted connection.
type conn struct {
	net.Conn
	cs   *conns
	once sync.Once

	// Guarded by cs.mu.
	active        bool      // in a request: its headers read (StateActive), not idle again
	busy          bool      // a request is being handled or answered (StateActive past its headers)
	answering     bool      // busy, its handler returned: the answer is being written, or the connection closes
	served        bool      // a request's handler ran on it
	authenticated bool      // a request on it passed the bearer check
	since         time.Time // when it last began to hold no request
}

func newConns(ln net.Listener, max int) *conns {
	return &conns{ln: ln, max: max, open: map[*conn]struct{}{}}
}

// Accept accepts the next connection and gives it a place, closing a
// connection that holds no request when all are taken, or waiting until
// one is free.
func (cs *conns) Accept() (net.Conn, error) {
	nc, err := cs.ln.Accept()
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, cs: cs}
	for {
		cs.mu.Lock()
		if cs.closed {
			cs.mu.Unlock()
			nc.Close()
			return nil, net.ErrClosed
		}
		if len(cs.open) < cs.max {
			c.since = time.Now()
			cs.open[c] = struct{}{}
			cs.mu.Unlock()
			return c, nil
		}
		victim := cs.victimLocked()
		if victim != nil {
			delete(cs.open, victim) // its place is the new connection's now
		}
		if cs.changed == nil {
			cs.changed = make(chan struct{})
		}
		changed := cs.changed
		cs.mu.Unlock()
		if victim != nil {
			victim.Conn.Close()
			continue
		}
		<-changed
	}
}

// victimLocked returns the connection to close for a new one, or nil when
// the new one must wait. Of the connections that hold no request, one idle
// after requests that proved nothing goes first (a GET /healthz kept
// alive), then one that has sent no request yet (a client still sending
// its headers, or one that never does), then one idle after authenticated
// requests; in each class the one waiting longest. A connection still
// answering will soon be idle or closed: while one is, the new connection
// waits rather than displace one that may be about to send its request.
func (cs *conns) victimLocked() *conn {
	class := func(c *conn) int {
		switch {
		case c.served && !c.authenticated:
			return 0
		case !c.served:
			return 1
		}
		return 2
	}
	var v *conn
	settling := false
	for c := range cs.open {
		if c.busy {
			settling = settling || c.answering
			continue
		}
		if v == nil || class(c) < class(v) || class(c) == class(v) && c.since.Before(v.since) {
			v = c
		}
	}
	if v != nil && class(v) > 0 && settling {
		return nil
	}
	return v
}

// Close stops accepting: an Accept waiting for a place returns. The
// server is shutting down (or closing), so it also closes every
// connection that is not in a request: net/http serves no request read
// from now on, yet would wait for a connection that has sent none (a
// proxy's spare, dialled ahead) until it is 5 s old, holding the
// shutdown.
func (cs *conns) Close() error {
	err := cs.ln.Close()
	cs.mu.Lock()
	cs.closed = true
	cs.signalLocked()
	var unused []*conn
	for c := range cs.open {
		if !c.active {
			unused = append(unused, c)
		}
	}
	cs.mu.Unlock()
	for _, c := range unused {
		c.Close()
	}
	return err
}

func (cs *conns) Addr() net.Addr { return cs.ln.Addr() }

func (cs *conns) signalLocked() {
	if cs.changed != nil {
		close(cs.changed)
		cs.changed = nil
	}
}

// state follows http.Server.ConnState: a connection is active from its
// request's headers, and busy from the start of its handler (see busy),
// until it is idle again.
func (cs *conns) state(nc net.Conn, st http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	switch st {
	case http.StateActive:
		cs.mu.Lock()
		c.active = true
		cs.mu.Unlock()
	case http.StateIdle:
		cs.mu.Lock()
		c.active, c.busy, c.answering, c.since = false, false, false, time.Now()
		cs.signalLocked()
		cs.mu.Unlock()
	case http.StateHijacked, http.StateClosed:
		c.release()
	}
}

// Close closes the connection and gives its place back.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

func (c *conn) release() {
	c.once.Do(func() {
		c.cs.mu.Lock()
		delete(c.cs.open, c)
		c.cs.signalLocked()
		c.cs.mu.Unlock()
	})
}

// connKey carries a request's *conn in its context (http.Server's
// ConnContext).
type connKey struct{}

// markBusy marks the request's connection busy: its handler runs, so it
// is never closed to make room. A connection reading its headers is not
// busy yet.
func markBusy(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := r.Context().Value(connKey{}).(*conn)
		if ok {
			c.cs.mu.Lock()
			c.busy, c.served, c.answering = true, true, false
			c.cs.mu.Unlock()
		}
		h.ServeHTTP(w, r)
		if ok {
			c.cs.mu.Lock()
			c.answering = true
			c.cs.mu.Unlock()
		}
	})
}

// markAuthenticated records that a request on the connection passed the
// bearer check: its connection gives way after those of callers who
// proved nothing.
func markAuthenticated(r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(*conn); ok {
		c.cs.mu.Lock()
		c.authenticated = true
		c.cs.mu.Unlock()
	}
}
