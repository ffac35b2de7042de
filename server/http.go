package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/prickle-dev/prickle/server/store"
)

// Paths served over HTTP.
const (
	PathMCP      = "/mcp"
	PathHealth   = "/healthz"
	PathMetadata = "/.well-known/oauth-protected-resource"
)

// Handler returns the HTTP handler: MCP streamable HTTP at /mcp behind
// an Origin check and bearer-token authentication (503 while the database
// that checks tokens is unavailable: verifyFirst), GET /healthz, and the
// protected-resource metadata that the 401 answers' WWW-Authenticate
// header points to.
//
// Before the go-sdk sees a POST, the server reads the whole body and
// checks it (readMessages): malformed JSON-RPC never reaches the go-sdk.
// The go-sdk does the other protocol checks: a POST without Content-Type
// application/json is 415, and a localhost listener refuses a foreign
// Host header (DNS rebinding).
func (s *Server) Handler() http.Handler {
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: s.cfg.MaxBodyBytes, Logger: s.log, SessionTimeout: s.cfg.SessionIdleTimeout,
			Stateless: s.cfg.Stateless})
	bearer := auth.RequireBearerToken(s.verified, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL:    s.cfg.BaseURL + PathMetadata,
		AllowMissingExpiration: true, // the store checks expiry on its own clock
	})
	mux := http.NewServeMux()
	mux.Handle(PathMCP, s.checkOrigin(s.verifyFirst(bearer(s.limitCallers(s.frontDoor(streamable))))))
	mux.HandleFunc("GET "+PathHealth, s.health)
	mux.Handle(PathMetadata, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               s.cfg.BaseURL + PathMCP,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Prickle reference server",
	}))
	var h http.Handler = mux
	if s.cfg.WrapHTTP != nil {
		h = s.cfg.WrapHTTP(h)
	}
	return s.watchBodies(h)
}

// verifyFirst verifies a request's bearer token before the go-sdk's
// bearer check does (auth.RequireBearerToken, which asks verified), so
// that a database that is unavailable is answered here: 503, with
// Retry-After, saying so and nothing more. The go-sdk would answer 500,
// with the store's error, which names the database's user, name and host.
func (s *Server) verifyFirst(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fields := strings.Fields(r.Header.Get("Authorization"))
		if len(fields) == 2 && strings.EqualFold(fields[0], "bearer") { // as the go-sdk reads it
			ti, err := s.verify(r.Context(), fields[1], r)
			if errors.Is(err, store.ErrUnavailable) {
				s.log.LogAttrs(r.Context(), slog.LevelError, "authenticate: "+unavailableMessage, slog.String("err", err.Error()))
				w.Header().Set("Retry-After", "1")
				http.Error(w, unavailableMessage, http.StatusServiceUnavailable)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), verifiedKey{}, verifiedToken{ti, err}))
		}
		h.ServeHTTP(w, r)
	})
}

// verifiedKey carries verifyFirst's verifiedToken in a request's context.
type verifiedKey struct{}

// verifiedToken is what verify said of a request's token.
type verifiedToken struct {
	ti  *auth.TokenInfo
	err error
}

// verified is the go-sdk's verifier: what verifyFirst found, or verify.
func (s *Server) verified(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
	if v, ok := ctx.Value(verifiedKey{}).(verifiedToken); ok {
		return v.ti, v.err
	}
	return s.verify(ctx, token, r)
}

// checkOrigin answers 403 to a request whose Origin header names another
// origin than the server's own (the Host the request was sent to) or one
// of cfg.AllowedOrigins: the MCP transport requires servers to validate
// Origin, so that a web page in a browser cannot call a local server. A
// request without Origin (every non-browser client) passes.
func (s *Server) checkOrigin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, scheme, r.Host, s.cfg.AllowedOrigins) {
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed", origin), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// originAllowed reports whether origin is the server's own, scheme://host
// as the request reached it (same scheme, host and port, default ports
// filled in), or one of allowed (compared without regard to case). Behind
// a proxy that terminates TLS the server's own origin is https while the
// request it sees is http: list it in allowed.
func originAllowed(origin, scheme, host string, allowed []string) bool {
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || !strings.EqualFold(u.Scheme, scheme) || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	port := map[string]string{"http": "80", "https": "443"}[scheme]
	oh, op := splitHostPort(u.Host, port)
	hh, hp := splitHostPort(host, port)
	return strings.EqualFold(oh, hh) && op == hp
}

// splitHostPort splits "host[:port]", with port def when there is none.
func splitHostPort(hostport, def string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), def
}

// frontDoor stands between authentication and the go-sdk:
//
//   - a GET (the session's event stream) lives as long as its session, so
//     the HTTP server's read and write deadlines are lifted for it;
//   - a POST with a Content-Encoding (but identity) is answered 415:
//     the server decodes none;
//   - a POST's body is read whole (at most cfg.MaxBodyBytes, else 413)
//     and checked by readMessages (a parse error or invalid request is
//     answered here, HTTP 400), a batch of more than cfg.MaxBatch
//     messages too;
//   - unless the server is stateless (cfg.Stateless), a request that
//     opens no session and is not an initialize (a tools/call sent
//     first) is answered JSON-RPC -32600 and HTTP 400 (the go-sdk alone
//     would answer code 0, which no client can read), each message of a
//     batch alike; and an initialize (of any protocol: the go-sdk refuses
//     the sessionless one's, and the reservation is then given back)
//     while cfg.MaxSessions sessions are open or about to open is
//     answered 503;
//   - the POST is then handed to the go-sdk with the very bytes that were
//     checked. It counts as in flight (Drain waits for it) from the start.
func (s *Server) frontDoor(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet:
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Time{})
			_ = rc.SetWriteDeadline(time.Time{})
			h.ServeHTTP(w, r)
			return
		case r.Method == http.MethodPost && !unencoded(r.Header):
			w.Header().Set("Accept-Encoding", "identity")
			http.Error(w, "unsupported Content-Encoding: send the body unencoded", http.StatusUnsupportedMediaType)
			return
		case r.Method != http.MethodPost || !isJSON(r.Header.Get("Content-Type")):
			h.ServeHTTP(w, r) // the go-sdk answers (405, 415, DELETE)
			return
		}
		s.inflight.add(1) // a shutdown waits for it (its body for at most shutdownBodyGrace)
		defer s.inflight.add(-1)
		body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1))
		switch {
		case errors.Is(err, errShuttingDown):
			http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
			return
		case err != nil:
			http.Error(w, "cannot read the request body", http.StatusBadRequest)
			return
		case int64(len(body)) > s.cfg.MaxBodyBytes:
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", s.cfg.MaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		msgs, rerr := s.readMessages(body)
		if rerr == nil {
			rerr = refuseBatch(body, r.Header.Get("Mcp-Protocol-Version"))
		}
		if rerr != nil {
			rerr.write(w)
			return
		}
		if !s.cfg.Stateless && r.Header.Get("Mcp-Session-Id") == "" {
			// Every message of a batch, as of a single message: a batch
			// must not open a session that a single initialize could not.
			// (A stateless server opens none: every POST stands alone.)
			reserved := false
			for i := range msgs {
				m := &msgs[i]
				if m.needsSession() {
					invalidRequest(m.ID, "no session: send initialize first, then use the Mcp-Session-Id it returns").write(w)
					return
				}
				if reserved || !isInitialize(*m) {
					continue
				}
				res := s.sessions.reserve()
				if res == nil {
					w.Header().Set("Retry-After", "60")
					(&rpcError{id: m.ID, code: codeTooManySessions, status: http.StatusServiceUnavailable,
						message: fmt.Sprintf("too many sessions (%d): close one (DELETE) or retry later", s.cfg.MaxSessions)}).write(w)
					return
				}
				// The session, once tracked, takes the place over: the
				// answer may reach the client before this handler returns.
				if ti := auth.TokenInfoFromContext(r.Context()); ti != nil && ti.Extra != nil {
					ti.Extra[reservationExtra] = res
				}
				reserved = true
				defer s.sessions.release(res)
			}
		}
		if body, msgs = uncancelled(body, msgs); body == nil {
			w.WriteHeader(http.StatusAccepted) // notifications are never answered
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		jw := &rpcErrors{ResponseWriter: w, calls: slices.ContainsFunc(msgs, func(m envelope) bool { return m.isCall() })}
		if len(msgs) == 1 {
			jw.id = msgs[0].ID
		}
		h.ServeHTTP(jw, r)
		jw.finish()
	})
}

// rpcErrors is the go-sdk's ResponseWriter for a POST the front door let
// through. The go-sdk refuses some requests before running them (an
// unknown method, a notification method with an id, a method without its
// params) with a plain-text 400; rpcErrors answers that as the JSON-RPC
// error it is instead, and a POST of notifications (and responses) alone
// with 202 and no body: a notification is never answered.
type rpcErrors struct {
	http.ResponseWriter
	id      jsontext.Value // the request's id, when the POST is one message
	calls   bool           // the POST holds a request with an id
	refused bool           // the go-sdk wrote a plain-text 400
	text    bytes.Buffer   // its text
}

func (w *rpcErrors) WriteHeader(code int) {
	if code == http.StatusBadRequest && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.refused = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *rpcErrors) Write(p []byte) (int, error) {
	if w.refused {
		return w.text.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection (the event
// stream flushes through it).
func (w *rpcErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the answer of a refusal the go-sdk wrote in plain text.
func (w *rpcErrors) finish() {
	if !w.refused {
		return
	}
	w.Header().Del("X-Content-Type-Options")
	if !w.calls {
		w.Header().Del("Content-Type")
		w.ResponseWriter.WriteHeader(http.StatusAccepted)
		return
	}
	text := strings.TrimSpace(w.text.String())
	(&rpcError{id: exactID(w.id), code: sdkRefusalCode(text), message: text, status: http.StatusBadRequest}).write(w.ResponseWriter)
}

// sdkRefusalCode is the JSON-RPC code of the go-sdk's plain-text refusal
// of a request, read off its text (the error of its checkRequest): an
// unknown method is jsonrpc2.ErrNotHandled, missing params invalid params,
// anything else about the request invalid request.
// TestErrorsAreJSONRPC holds these to the go-sdk's texts.
func sdkRefusalCode(text string) int64 {
	switch {
	case strings.HasPrefix(text, "JSON RPC not handled"):
		return jsonrpc.CodeMethodNotFound
	case strings.Contains(text, `missing required "params"`):
		return jsonrpc.CodeInvalidParams
	}
	return jsonrpc.CodeInvalidRequest
}

// limitCallers answers 429 to a POST of a caller that already has
// cfg.MaxRequestsPerPrincipal POSTs in flight, before its body is read (so
// its connection closes). A caller is callerOf the token's principal, as
// for the sessions: an agent, or a runner with its credentials.
func (s *Server) limitCallers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := callerFrom(auth.TokenInfoFromContext(r.Context()))
		if caller != "" {
			markAuthenticated(r)
		}
		if r.Method != http.MethodPost || caller == "" {
			h.ServeHTTP(w, r)
			return
		}
		if !s.callers.acquire(caller, s.cfg.MaxRequestsPerPrincipal) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("too many requests in flight for this caller (%d)", s.cfg.MaxRequestsPerPrincipal), http.StatusTooManyRequests)
			return
		}
		defer s.callers.release(caller)
		h.ServeHTTP(w, r)
	})
}

// callers counts the POSTs in flight per caller.
type callers struct {
	mu sync.Mutex
	n  map[string]int
}

// acquire counts one more POST of caller, unless it has max already.
func (c *callers) acquire(caller string, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[caller] >= max {
		return false
	}
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[caller]++
	return true
}

func (c *callers) release(caller string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[caller]--; c.n[caller] <= 0 {
		delete(c.n, caller)
	}
}

// codeTooManySessions is the JSON-RPC error of an initialize refused
// because cfg.MaxSessions sessions are open (a server error code of
// JSON-RPC 2.0's reserved range).
const codeTooManySessions = -32001

// readMessages is readMessages with the bounds of cfg: a number's
// digits, a batch's messages.
func (s *Server) readMessages(b []byte) ([]envelope, *rpcError) {
	msgs, rerr := readMessages(b, s.cfg.MaxNumberDigits)
	if rerr == nil && len(msgs) > s.cfg.MaxBatch {
		return nil, invalidRequest(nil, "invalid request: a batch holds at most %d messages", s.cfg.MaxBatch)
	}
	return msgs, rerr
}

// needsSession reports whether m is a request the go-sdk refuses on a
// session that has not been initialized (the sessionless protocol's
// requests need none).
func (m *envelope) needsSession() bool {
	return m.isCall() && !beforeInitialize[m.Method] && !m.sessionless()
}

// beforeInitialize are the methods the go-sdk accepts on a session that
// has not been initialized (requests; notifications always pass).
var beforeInitialize = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "server/discover": true,
}

// unencoded reports whether the body of a request with header h has no
// Content-Encoding but identity: the server decodes none (RFC 9110
// §8.4), and a gzip body read as JSON is not the body that was sent.
func unencoded(h http.Header) bool {
	for _, v := range h.Values("Content-Encoding") {
		for _, coding := range strings.Split(v, ",") {
			if c := strings.TrimSpace(coding); c != "" && !strings.EqualFold(c, "identity") {
				return false
			}
		}
	}
	return true
}

// isJSON reports whether a Content-Type names application/json.
func isJSON(contentType string) bool {
	if contentType == "application/json" { // what clients send; parsing it allocates
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// errShuttingDown ends the read of a request body when the server shuts
// down.
var errShuttingDown = errors.New("the server is shutting down")

// watchBodies keeps the request bodies being read where a shutdown can
// cut them off (bodies.abort), so that a client sending its body slowly
// cannot hold a shutdown for its whole grace. A body that is still unread
// when the handler returns (refused before reading, or too large) is not
// waited for: the connection closes instead of draining it.
func (s *Server) watchBodies(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		b := &watchedBody{ReadCloser: r.Body, rc: http.NewResponseController(w)}
		if !s.bodies.add(b) {
			http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
			return
		}
		r.Body = b
		h.ServeHTTP(w, r)
		s.bodies.remove(b)
		if !b.done() {
			w.Header().Set("Connection", "close")
			_ = b.rc.SetReadDeadline(time.Now())
		}
	})
}

// watchedBody is a request body that a shutdown can cut off.
type watchedBody struct {
	io.ReadCloser
	rc *http.ResponseController

	mu      sync.Mutex
	eof     bool
	aborted bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case err == io.EOF:
		b.eof = true
		if b.aborted {
			// The body made it in time: its call runs, and the
			// connection's read deadline no longer hurries it.
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	case err != nil && b.aborted:
		return n, errShuttingDown
	}
	return n, err
}

func (b *watchedBody) done() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.eof
}

// shutdownBodyGrace is how long a request still sending its body when a
// shutdown starts has to finish it.
const shutdownBodyGrace = time.Second

// abort gives a read still in progress shutdownBodyGrace to end; then its
// connection's read deadline passes. A body read to its end is left alone
// (its request is a call in flight, which a shutdown lets finish).
func (b *watchedBody) abort() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.eof {
		return
	}
	b.aborted = true
	_ = b.rc.SetReadDeadline(time.Now().Add(shutdownBodyGrace))
}

// bodies are the request bodies being read.
type bodies struct {
	mu     sync.Mutex
	closed bool
	set    map[*watchedBody]struct{}
}

func (bs *bodies) add(b *watchedBody) bool {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.closed {
		return false
	}
	if bs.set == nil {
		bs.set = map[*watchedBody]struct{}{}
	}
	bs.set[b] = struct{}{}
	return true
}

func (bs *bodies) remove(b *watchedBody) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	delete(bs.set, b)
}

// abort cuts off every body being read (after shutdownBodyGrace), and
// refuses every body from now on.
func (bs *bodies) abort() {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	bs.closed = true
	for b := range bs.set {
		b.abort()
	}
}

// Drain is the second half of a graceful shutdown, after
// http.Server.Shutdown has stopped accepting connections: it cuts off the
// request bodies still being read (after shutdownBodyGrace: a client
// sending its body slowly cannot hold the shutdown for its whole grace),
// waits until no POST to /mcp is in flight, then closes every MCP
// session, which ends the standing event streams that would otherwise keep
// Shutdown waiting.
func (s *Server) Drain(ctx context.Context) error {
	s.bodies.abort()
	err := s.inflight.wait(ctx)
	for ss := range s.mcp.Sessions() {
		ss.Close()
	}
	return err
}

// inflight counts requests and tells when there are none.
type inflight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil when nobody waits
}

func (f *inflight) add(d int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n += d
	if f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

func (f *inflight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return nil
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// health answers 200 while the database answers.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if _, err := s.store.SchemaVersion(r.Context()); err != nil {
		http.Error(w, "database unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}
