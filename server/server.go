// Package server is the reference Prickle server: the generated api.Handler
// implemented on the SQLite store (package server/store), served over MCP
// streamable HTTP at /mcp or over stdio. server/README.md records how it answers
// every question the tool pages leave open.
//
// It imports the generated api, its runtime rt, its store and the ground
// floor of internal/; it must not import the generator, the conformance
// suite or a command.
package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/internal/cmdline"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/server/store"
)

// Defaults of the Config limits (server/README.md, "Limits", says why).
const (
	// DefaultMaxBodyBytes bounds one HTTP request body and one stdio line:
	// the largest valid call is a few kilobytes.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultSessionIdleTimeout ends an MCP session that has had no POST
	// for this long.
	DefaultSessionIdleTimeout = 30 * time.Minute
	// DefaultMaxSessionsPerPrincipal bounds the sessions of one caller
	// (an agent, or a runner with the credentials it minted): a new one
	// ends the least recently used.
	DefaultMaxSessionsPerPrincipal = 32
	// DefaultMaxSessions bounds the sessions of all callers: beyond it an
	// initialize is answered 503.
	DefaultMaxSessions = 4096
	// DefaultSessionCheckInterval is how often the sessions' tokens are
	// checked: a session whose token was revoked or expired ends.
	DefaultSessionCheckInterval = 10 * time.Second
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds reading a whole request, body included.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds writing a response (a GET event stream
	// excepted: it lives as long as its session).
	DefaultWriteTimeout = 60 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection idle this long.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultMaxConns bounds the open HTTP connections: a new one takes
	// the place of one that holds no request, else waits to be accepted.
	DefaultMaxConns = 1024
	// DefaultMaxRequestsPerPrincipal bounds the POSTs of one caller being
	// read or run at once, well under DefaultMaxConns: one token sending
	// bodies slowly cannot hold every connection.
	DefaultMaxRequestsPerPrincipal = 64
	// DefaultMaxBatch bounds the messages of one JSON-RPC batch, so that
	// one POST cannot carry thousands of calls past the bound above.
	DefaultMaxBatch = 16
	// DefaultMaxNumberDigits bounds a number in a message, written out in
	// full (1e3000000 has 3000001 digits), before anything parses it:
	// float64's whole range needs at most 325 (5e-324), and a number
	// within it parses in microseconds, where a million digits took
	// seconds.
	DefaultMaxNumberDigits = 400
	// DefaultShutdownGrace bounds how long a shutdown waits for calls in
	// flight.
	DefaultShutdownGrace = 10 * time.Second
	// DefaultDBConns bounds the connections to PostgreSQL of one server.
	DefaultDBConns = store.DefaultMaxConns
	// DefaultDBTimeout bounds one operation on PostgreSQL: a database
	// that is down fails a call within it.
	DefaultDBTimeout = store.DefaultTimeout
)

// Config configures a Server. The zero value is an in-memory server with
// the seed world.
type Config struct {
	// DB is the database: a SQLite file path, ":memory:" (the default),
	// or a PostgreSQL URL (postgres:// or postgresql://), which several
	// servers may share as replicas (store.Open).
	DB string
	// World, if set, is a world (see spec/world/FIXTURE.md) added to the
	// database instead of seeding an empty one; an id it shares with the
	// world already there is an error (store.ErrExists), and the very
	// world loaded already (by an earlier start, or another replica) is
	// not loaded again (WorldLoadedBefore).
	World io.Reader
	// Fixture is World under its older name, read when World is nil.
	//
	// Deprecated: set World.
	Fixture io.Reader
	// LaunchTimeout is how long an execution credential lives
	// (store.DefaultLaunchTimeout when zero).
	LaunchTimeout time.Duration
	// Now is the clock (time.Now when nil); tests inject their own.
	Now func() time.Time
	// Logger receives one line per call and the server's own events
	// (slog.Default() when nil). Tokens never reach it.
	Logger *slog.Logger
	// MaxBodyBytes bounds an HTTP request body (DefaultMaxBodyBytes when
	// zero); a larger body is answered 413. It bounds a stdio line too.
	MaxBodyBytes int64
	// AllowedOrigins are the browser origins ("scheme://host[:port]")
	// allowed to call /mcp besides the server's own (the Host the request
	// names). A request with any other Origin header is answered 403.
	AllowedOrigins []string

	// The bounds on what a caller can make the server hold; zero means
	// the Default of the same name.
	SessionIdleTimeout      time.Duration
	MaxSessionsPerPrincipal int
	MaxSessions             int
	SessionCheckInterval    time.Duration
	ReadHeaderTimeout       time.Duration
	ReadTimeout             time.Duration
	WriteTimeout            time.Duration
	IdleTimeout             time.Duration
	MaxConns                int
	MaxRequestsPerPrincipal int
	MaxBatch                int
	MaxNumberDigits         int
	ShutdownGrace           time.Duration
	DBConns                 int
	DBTimeout               time.Duration
	// Stateless serves MCP's streamable HTTP without sessions: every
	// POST stands alone, so that any replica answers any request (the
	// go-sdk's stateless mode; server/README.md, "Replicas on PostgreSQL").
	Stateless bool
	// BaseURL is the server's public base URL (e.g. http://127.0.0.1:8080),
	// used to make the protected-resource metadata absolute; when empty
	// they are paths.
	BaseURL string
	// WrapHandler, if set, wraps the tool handler: middleware for tests and
	// embedders (the conformance suite builds its mutants this way).
	WrapHandler func(api.Handler) api.Handler
	// WrapHTTP, if set, wraps the whole HTTP handler.
	WrapHTTP func(http.Handler) http.Handler
	// WrapAuthenticate, if set, wraps how a bearer token, by its hash,
	// resolves to its principal (the store's AuthenticateHash) on every
	// HTTP request and in the sessions' checks: middleware for tests and
	// embedders, like WrapHandler (the conformance suite's replica
	// mutants keep principals in a cache of their own this way).
	WrapAuthenticate func(func(context.Context, store.TokenHash) (*store.Principal, error)) func(context.Context, store.TokenHash) (*store.Principal, error)
}

// Server is a running reference server.
type Server struct {
	store *store.Store
	mcp   *mcp.Server
	log   *slog.Logger
	cfg   Config

	inflight inflight  // HTTP calls in flight, for Drain
	callers  callers   // HTTP POSTs in flight per caller
	bodies   bodies    // HTTP request bodies being read, cut off by Drain
	sessions *sessions // the MCP sessions over HTTP, and their bounds

	stop func()         // ends the background work (session checks)
	bg   sync.WaitGroup // the background work

	loadedBefore bool // cfg.World was in the database already

	// authenticate resolves a token's hash to its principal: the store's
	// AuthenticateHash, as Config.WrapAuthenticate wraps it.
	authenticate func(context.Context, store.TokenHash) (*store.Principal, error)
}

// WorldLoadedBefore reports whether Config.World was not loaded because
// the database held it already: an earlier start, or another replica,
// loaded it (and issued its tokens).
func (s *Server) WorldLoadedBefore() bool { return s.loadedBefore }

// New opens the database, adds cfg.World to it or seeds it when it is
// empty, and builds the MCP server. issued holds the agent and runner
// tokens created now, in plaintext: they are shown once and cannot be
// recovered. It is empty when a database that already held a world got no
// world to add.
func New(ctx context.Context, cfg Config) (s *Server, issued []store.IssuedToken, err error) {
	if cfg.DB == "" {
		cfg.DB = ":memory:"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.World == nil {
		cfg.World = cfg.Fixture
	}
	cfg.withDefaults()
	// Compile the validators' patterns now: the first caller should not pay
	// for it, and a pattern that does not compile should stop the server
	// at start.
	if err := api.CompileSchemas(); err != nil {
		return nil, nil, fmt.Errorf("compile schemas: %w", err)
	}
	st, err := store.Open(ctx, cfg.DB, store.Options{Now: cfg.Now, LaunchTimeout: cfg.LaunchTimeout,
		ExecutionTools: names(executionTools), DiscussionTools: names(discussionTools),
		Timeout: cfg.DBTimeout, MaxConns: cfg.DBConns, Logger: cfg.Logger})
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	// The seed fills an empty database only, so a restart (or another
	// replica) keeps the world and issues no new tokens. cfg.World is
	// added to whatever world is there, unless the database holds that
	// very world already: an id it shares with another world is an
	// error. (The error's words are prickled's since its flag was
	// --fixture, and stay as they were.)
	var loadedBefore bool
	has, err := st.HasWorld(ctx)
	switch {
	case err != nil:
		return nil, nil, err
	case cfg.World != nil:
		issued, err = st.LoadWorld(ctx, cfg.World)
		if has && errors.Is(err, store.ErrExists) {
			err = fmt.Errorf("%w; the database already held a world, which a fixture adds to: to serve that world, start without the fixture; to serve the fixture's world alone, start on a new database", err)
		}
		if errors.Is(err, store.ErrLoaded) {
			loadedBefore, err = true, nil
		}
	case !has:
		issued, err = st.SeedDefault(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	s = &Server{store: st, log: cfg.Logger, cfg: cfg, loadedBefore: loadedBefore, authenticate: st.AuthenticateHash}
	if cfg.WrapAuthenticate != nil {
		s.authenticate = cfg.WrapAuthenticate(s.authenticate)
	}
	s.sessions = newSessions(cfg.MaxSessionsPerPrincipal, cfg.MaxSessions, cfg.Logger)
	s.mcp = newMCPServer()
	s.mcp.AddReceivingMiddleware(s.sessions.middleware)
	s.register(s.mcp, nil)
	bctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.bg.Go(func() { every(bctx, cfg.SessionCheckInterval, func() { s.sessions.check(bctx, s.authenticate) }) })
	return s, issued, nil
}

// limit is one bound of Config: its field, its default and its
// command-line flag. limits is the one list of them, read by withDefaults
// and LimitFlags.
type limit struct {
	flag, usage string
	field       func(*Config) any // *int, *int64 or *time.Duration
	def         any               // of the field's type
}

var limits = []limit{
	{"max-body-bytes", "largest HTTP request body and stdio line, in bytes",
		func(c *Config) any { return &c.MaxBodyBytes }, int64(DefaultMaxBodyBytes)},
	{"session-idle-timeout", "end an MCP session after this long without a request",
		func(c *Config) any { return &c.SessionIdleTimeout }, DefaultSessionIdleTimeout},
	{"max-sessions-per-caller", "sessions one caller may hold; a new one ends its least recently used",
		func(c *Config) any { return &c.MaxSessionsPerPrincipal }, DefaultMaxSessionsPerPrincipal},
	{"max-sessions", "sessions all callers may hold; beyond it initialize is answered 503",
		func(c *Config) any { return &c.MaxSessions }, DefaultMaxSessions},
	{"session-check", "how often sessions whose token was revoked or expired are ended",
		func(c *Config) any { return &c.SessionCheckInterval }, DefaultSessionCheckInterval},
	{"read-header-timeout", "time to read a request's headers",
		func(c *Config) any { return &c.ReadHeaderTimeout }, DefaultReadHeaderTimeout},
	{"read-timeout", "time to read a whole request",
		func(c *Config) any { return &c.ReadTimeout }, DefaultReadTimeout},
	{"write-timeout", "time to write a response (not the event stream)",
		func(c *Config) any { return &c.WriteTimeout }, DefaultWriteTimeout},
	{"idle-timeout", "close a keep-alive connection idle this long",
		func(c *Config) any { return &c.IdleTimeout }, DefaultIdleTimeout},
	{"max-conns", "open HTTP connections; a new one replaces one that holds no request (unauthenticated first), else waits",
		func(c *Config) any { return &c.MaxConns }, DefaultMaxConns},
	{"max-requests-per-caller", "POSTs one caller may have in flight (body being read or call running); beyond it 429",
		func(c *Config) any { return &c.MaxRequestsPerPrincipal }, DefaultMaxRequestsPerPrincipal},
	{"max-batch", "JSON-RPC messages in one POST or stdio line (a batch: MCP 2025-03-26 only); beyond it -32600",
		func(c *Config) any { return &c.MaxBatch }, DefaultMaxBatch},
	{"max-number-digits", "digits of a number in a message, written out in full (1e3000000 has 3000001); beyond it -32602",
		func(c *Config) any { return &c.MaxNumberDigits }, DefaultMaxNumberDigits},
	{"shutdown-grace", "how long a shutdown waits for calls in flight",
		func(c *Config) any { return &c.ShutdownGrace }, DefaultShutdownGrace},
	{"db-conns", "PostgreSQL: connections to the database (one more listens for the other replicas' changes)",
		func(c *Config) any { return &c.DBConns }, DefaultDBConns},
	{"db-timeout", "PostgreSQL: how long one call may wait for the database before it fails",
		func(c *Config) any { return &c.DBTimeout }, DefaultDBTimeout},
}

// withDefaults sets every limit that is zero or less to its default.
func (cfg *Config) withDefaults() {
	for _, l := range limits {
		switch p := l.field(cfg).(type) {
		case *int:
			*p = orDefault(*p, l.def.(int))
		case *int64:
			*p = orDefault(*p, l.def.(int64))
		case *time.Duration:
			*p = orDefault(*p, l.def.(time.Duration))
		}
	}
	// One caller's requests and sessions (each holds at most one event
	// stream) stay a share of the connection budget, whatever the flags
	// say: at most a quarter and an eighth of MaxConns. A caller (a runner
	// with its credentials) held all 48 connections of --max-conns 48
	// under the default 64 and 32, which the default 1024 leaves as they
	// are.
	cfg.MaxRequestsPerPrincipal = min(cfg.MaxRequestsPerPrincipal, max(1, cfg.MaxConns/4))
	cfg.MaxSessionsPerPrincipal = min(cfg.MaxSessionsPerPrincipal, max(1, cfg.MaxConns/8))
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// LimitFlags defines on fs a flag for every limit of cfg (--max-sessions,
// --read-timeout, ...), with its default.
func (cfg *Config) LimitFlags(fs *flag.FlagSet) {
	for _, l := range limits {
		switch p := l.field(cfg).(type) {
		case *int:
			fs.IntVar(p, l.flag, l.def.(int), l.usage)
		case *int64:
			fs.Int64Var(p, l.flag, l.def.(int64), l.usage)
		case *time.Duration:
			fs.DurationVar(p, l.flag, l.def.(time.Duration), l.usage)
		}
	}
}

func newMCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "prickled", Title: "Prickle reference server", Version: cmdline.Version()},
		&mcp.ServerOptions{Instructions: "Prickle reference server. Identity comes from the bearer token, never from a tool argument."})
	srv.AddReceivingMiddleware(errorCodes)
	return srv
}

// errorCodes gives a JSON-RPC error code to the errors the go-sdk returns
// as plain Go errors (a second initialize, params it cannot decode), which
// it would write with code 0, a code no client can read: invalid request
// (-32600), or internal error (-32603) for a tools/call, where they come
// from a handler.
func errorCodes(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var je *jsonrpc.Error
		if err != nil && !errors.As(err, &je) {
			code := int64(jsonrpc.CodeInvalidRequest)
			if method == "tools/call" {
				code = jsonrpc.CodeInternalError
			}
			return res, &jsonrpc.Error{Code: code, Message: err.Error()}
		}
		return res, err
	}
}

// register adds the tools to srv. identify, when set, authenticates each
// call (stdio); otherwise the HTTP layer has, and the caller is in the
// request's token info.
func (s *Server) register(srv *mcp.Server, identify func(context.Context) (context.Context, error)) {
	var h api.Handler = &handler{store: s.store}
	if s.cfg.WrapHandler != nil {
		h = s.cfg.WrapHandler(h)
	}
	before := func(ctx context.Context, tool string, req *mcp.CallToolRequest) (context.Context, error) {
		if identify != nil {
			nctx, err := identify(ctx)
			if errors.Is(err, store.ErrUnavailable) {
				return nil, toolError(err)
			}
			if err != nil {
				return nil, rt.Refuse(store.CodeUnauthenticated, "%v", err)
			}
			return s.authorize(nctx, principal(nctx), tool)
		}
		return s.authorize(ctx, requestPrincipal(ctx), tool)
	}
	// discover_team_agents answers every caller who may see a project the
	// same bytes until its directory changes; the claims' outputs hold a
	// fresh credential each time.
	api.Register(srv, h, &rt.RegisterOptions{Logger: s.log, Before: before, OnCall: s.logCall,
		RepeatedOutputs: []string{string(api.ToolDiscoverTeamAgents)}})
}

// logUnimplemented says, when the server starts serving, which documented
// tools it does not implement.
func (s *Server) logUnimplemented() {
	for _, tool := range Unimplemented() {
		s.log.Warn("documented tool not implemented: served, and its calls refused with not_implemented", "tool", string(tool))
	}
}

// Unimplemented lists the documented tools the server does not implement
// (yet): it serves them, listed by tools/list, and refuses their calls
// with not_implemented (rt.CodeNotImplemented).
func Unimplemented() []api.ToolName { return api.Unimplemented(&handler{}) }

// Store returns the server's store (for admin commands and tests).
func (s *Server) Store() *store.Store { return s.store }

// MCP returns the underlying MCP server.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Close stops the background work (session checks) and closes the
// database.
func (s *Server) Close() error {
	s.stop()
	s.bg.Wait()
	return s.store.Close()
}

// principalKey carries the authenticated *store.Principal in a context.
type principalKey struct{}

func withPrincipal(ctx context.Context, p *store.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principal returns the caller, or nil.
func principal(ctx context.Context) *store.Principal {
	p, _ := ctx.Value(principalKey{}).(*store.Principal)
	return p
}

// requestPrincipal is the caller of an HTTP call, as verify found it: in
// the token info rt.Handle put on top of ctx, found at once (principal
// walks the whole context of an HTTP call to miss).
func requestPrincipal(ctx context.Context) *store.Principal {
	ti := rt.TokenInfoFrom(ctx)
	if ti == nil {
		return nil
	}
	p, _ := ti.Extra[principalExtra].(*store.Principal)
	return p
}

// authorize runs before every call with the caller p, from the bearer
// token (verified by the HTTP layer, or for stdio by stdioToken), and
// refuses a tool the caller may not call.
func (s *Server) authorize(ctx context.Context, p *store.Principal, tool string) (context.Context, error) {
	if p == nil {
		return nil, rt.Refuse(store.CodeUnauthenticated, "no caller identity: send a bearer token")
	}
	ctx = withPrincipal(ctx, p)
	if te := allowed(p, api.ToolName(tool)); te != nil {
		return ctx, te // the context still names the caller for the log
	}
	return ctx, nil
}

// logCall writes the one line per call: tool, caller, outcome, latency.
func (s *Server) logCall(ctx context.Context, info rt.CallInfo) {
	var buf [6]slog.Attr // typed attributes, on the stack
	attrs := append(buf[:0], slog.String("tool", info.Tool), slog.String("outcome", string(info.Outcome)),
		slog.Duration("latency", info.Duration))
	if info.Code != "" {
		attrs = append(attrs, slog.String("code", info.Code))
	}
	if p := principal(ctx); p != nil {
		attrs = append(attrs, slog.String("caller", p.Agent), slog.String("caller_kind", string(p.Kind)))
	}
	level := slog.LevelInfo
	if info.Outcome == rt.OutcomeInternalError {
		level = slog.LevelError
	}
	s.log.LogAttrs(ctx, level, "call", attrs...)
}

// toolError turns a store refusal into the tool error the client sees,
// and a database that is unavailable into errUnavailable; anything else
// stays an error (an internal error for the client).
func toolError(err error) error {
	var r *store.Refusal
	if errors.As(err, &r) {
		return rt.Refuse(r.Code, "%s", r.Message)
	}
	if errors.Is(err, store.ErrUnavailable) {
		return fmt.Errorf("%w: %w", errUnavailable, err) // the client gets errUnavailable, the log the cause
	}
	return err
}

// unavailableMessage says that the database is unavailable
// (store.ErrUnavailable), naming nothing of it: the server is up, and the
// same call may succeed later.
const unavailableMessage = "the database is unavailable; retry later"

// errUnavailable answers a call that failed because the database is
// unavailable.
var errUnavailable = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: unavailableMessage}

// Keys of auth.TokenInfo.Extra, which is made anew for each request: the
// principal, the caller its bounds count against (callerOf), the hash of
// its token (the session bounds re-check it) and an initialize's place
// among the sessions.
const (
	principalExtra = "prickle.principal"
	callerExtra    = "prickle.caller"
	tokenHashExtra = "prickle.token_hash"
	// reservationExtra holds an initialize's *reservation (see sessions).
	reservationExtra = "prickle.reservation"
)

// verify is the bearer-token verifier for auth.RequireBearerToken.
func (s *Server) verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	h := store.HashToken(token)
	p, err := s.authenticate(ctx, h)
	if err != nil {
		return nil, s.tokenRefused(ctx, err)
	}
	// Expiry is the store's business (on its own clock); the SDK's check
	// uses the wall clock, so no Expiration is set here. UserID is the
	// principal: the go-sdk serves a session to the principal that opened
	// it alone.
	return &auth.TokenInfo{
		UserID: string(p.Kind) + ":" + p.Agent + ":" + p.RunnerID + ":" + p.Scope.AttemptID + p.Scope.DiscussionID,
		Extra:  map[string]any{principalExtra: p, callerExtra: callerOf(p), tokenHashExtra: h},
	}, nil
}

// tokenRefused is the answer to a token that does not authenticate:
// auth.ErrInvalidToken ("invalid token") whether it was never issued,
// expired or revoked, so that whoever holds a leaked string does not
// learn that it was once real; the log says which (a once-real token at
// info, a never-issued one at debug). Any other error is returned as it
// is.
func (s *Server) tokenRefused(ctx context.Context, err error) error {
	if !notAuthenticated(err) {
		return err
	}
	level := slog.LevelInfo
	if errors.Is(err, store.ErrUnknownToken) {
		level = slog.LevelDebug
	}
	s.log.LogAttrs(ctx, level, "token refused", slog.String("reason", err.Error()))
	return auth.ErrInvalidToken
}

// notAuthenticated reports whether err is the store's refusal of a token:
// unknown, expired or revoked.
func notAuthenticated(err error) bool {
	return errors.Is(err, store.ErrUnknownToken) || errors.Is(err, store.ErrExpiredToken) || errors.Is(err, store.ErrRevokedToken)
}

// callerOf is who p's requests and sessions count against for the
// per-caller bounds: an agent (whichever of its tokens), or a runner
// together with the credentials its claims minted, so that minting
// credentials does not multiply a runner's bounds.
func callerOf(p *store.Principal) string {
	if p.RunnerID != "" {
		return "runner:" + p.Agent + ":" + p.RunnerID
	}
	return "agent:" + p.Agent
}

// callerFrom returns the caller of a request's token info, or "".
func callerFrom(ti *auth.TokenInfo) string {
	if ti == nil {
		return ""
	}
	c, _ := ti.Extra[callerExtra].(string)
	return c
}
