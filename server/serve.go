package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
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
// connections: more wait in the listen queue until one closes.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.logUnimplemented()
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(limitListener(ln, s.cfg.MaxConns)) }()
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

// limitListener accepts at most n connections at a time: Accept waits
// until one of them closes.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limitedListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
