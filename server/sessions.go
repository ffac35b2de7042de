package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prickle-dev/prickle/server/store"
)

// sessions bounds the MCP sessions of the streamable HTTP transport. The
// go-sdk ends a session that has had no POST for SessionIdleTimeout; on
// top of that, sessions knows who opened each one (the caller, callerOf
// its principal, and the hash of its token), so that
//
//   - one caller (an agent, or a runner with its credentials) holds at
//     most perPrincipal sessions: its next initialize ends its least
//     recently used one;
//   - all principals together hold at most max: beyond it, the HTTP layer
//     answers an initialize 503 (see reserve);
//   - a session whose token was revoked or expired is ended by check.
type sessions struct {
	perPrincipal, max int
	log               *slog.Logger

	mu          sync.Mutex
	tick        uint64 // a clock for least recently used
	reserved    int    // places taken by initializes not yet answered
	all         map[*mcp.ServerSession]*session
	byPrincipal map[string]map[*mcp.ServerSession]*session
}

// session is one tracked MCP session.
type session struct {
	ss        *mcp.ServerSession
	principal string          // the caller (callerOf): an agent, or a runner with its credentials
	token     store.TokenHash // the token that opened it
	used      uint64          // tick of its latest request
}

func newSessions(perPrincipal, max int, log *slog.Logger) *sessions {
	return &sessions{perPrincipal: perPrincipal, max: max, log: log,
		all: map[*mcp.ServerSession]*session{}, byPrincipal: map[string]map[*mcp.ServerSession]*session{}}
}

// A reservation is the place an initialize holds from before the go-sdk
// runs it until its session is tracked (add) or it is answered without
// one (release), whichever comes first: the places held and the sessions
// open never exceed max, however many initializes arrive at once, and a
// session is never counted twice.
type reservation struct{ done bool }

// reserve takes a place, or returns nil when there is none.
func (t *sessions) reserve() *reservation {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.all)+t.reserved >= t.max {
		return nil
	}
	t.reserved++
	return &reservation{}
}

// release gives back r's place unless its session took it.
func (t *sessions) release(r *reservation) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.releaseLocked(r)
}

func (t *sessions) releaseLocked(r *reservation) {
	if r != nil && !r.done {
		r.done = true
		t.reserved--
	}
}

// count returns the number of tracked sessions.
func (t *sessions) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.all)
}

// middleware tracks every session that an authenticated initialize
// opens, and marks a session used on each of its requests.
func (t *sessions) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss == nil {
			return next(ctx, method, req)
		}
		if method != "initialize" {
			t.touch(ss)
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		if err == nil && ss.ID() != "" {
			if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
				if h, ok := extra.TokenInfo.Extra[tokenHashExtra].(store.TokenHash); ok {
					r, _ := extra.TokenInfo.Extra[reservationExtra].(*reservation)
					t.add(ss, callerFrom(extra.TokenInfo), h, r)
				}
			}
		}
		return res, err
	}
}

func (t *sessions) touch(ss *mcp.ServerSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.all[ss]; s != nil {
		t.tick++
		s.used = t.tick
	}
}

// add tracks ss, opened by principal with the token hashed as h in place
// of reservation r, and ends the principal's least recently used sessions
// beyond perPrincipal.
func (t *sessions) add(ss *mcp.ServerSession, principal string, h store.TokenHash, r *reservation) {
	t.mu.Lock()
	t.releaseLocked(r)
	if t.all[ss] != nil {
		t.mu.Unlock()
		return
	}
	t.tick++
	s := &session{ss: ss, principal: principal, token: h, used: t.tick}
	t.all[ss] = s
	mine := t.byPrincipal[principal]
	if mine == nil {
		mine = map[*mcp.ServerSession]*session{}
		t.byPrincipal[principal] = mine
	}
	mine[ss] = s
	var evict []*session
	for len(mine) > t.perPrincipal {
		var lru *session
		for _, o := range mine {
			if lru == nil || o.used < lru.used {
				lru = o
			}
		}
		t.removeLocked(lru.ss)
		evict = append(evict, lru)
	}
	t.mu.Unlock()
	for _, o := range evict {
		t.log.Debug("session ended: the caller opened more than the sessions allowed per caller",
			"session", o.ss.ID(), "limit", t.perPrincipal)
		o.ss.Close()
	}
	// Forget the session when it ends, whoever ends it (DELETE, the idle
	// timeout, an eviction, a shutdown).
	go func() {
		ss.Wait()
		t.remove(ss)
	}()
}

func (t *sessions) remove(ss *mcp.ServerSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.removeLocked(ss)
}

func (t *sessions) removeLocked(ss *mcp.ServerSession) {
	s := t.all[ss]
	if s == nil {
		return
	}
	delete(t.all, ss)
	mine := t.byPrincipal[s.principal]
	delete(mine, ss)
	if len(mine) == 0 {
		delete(t.byPrincipal, s.principal)
	}
}

// check ends every session whose token no longer authenticates (revoked,
// expired, unknown). A failure to ask the store keeps the session.
func (t *sessions) check(ctx context.Context, authenticate func(context.Context, store.TokenHash) (*store.Principal, error)) {
	t.mu.Lock()
	list := make([]*session, 0, len(t.all))
	for _, s := range t.all {
		list = append(list, s)
	}
	t.mu.Unlock()
	for _, s := range list {
		_, err := authenticate(ctx, s.token)
		if notAuthenticated(err) {
			t.log.Info("session ended: its token no longer authenticates", "session", s.ss.ID(), "reason", err)
			t.remove(s.ss)
			s.ss.Close()
		}
	}
}

// every runs fn every interval until ctx is done.
func every(ctx context.Context, interval time.Duration, fn func()) {
	tk := time.NewTicker(interval)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
			fn()
		}
	}
}
