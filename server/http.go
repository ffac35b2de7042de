package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Paths served over HTTP.
const (
	PathMCP      = "/mcp"
	PathHealth   = "/healthz"
	PathMetadata = "/.well-known/oauth-protected-resource"
)

// Handler returns the HTTP handler: MCP streamable HTTP at /mcp behind
// bearer-token authentication, GET /healthz, and the protected-resource
// metadata that the 401 answers' WWW-Authenticate header points to.
//
// The go-sdk does the protocol checks: a POST without Content-Type
// application/json is 415, a body over cfg.MaxBodyBytes is 413, malformed
// JSON-RPC is a JSON-RPC parse error, and a localhost listener refuses a
// foreign Host header (DNS rebinding).
func (s *Server) Handler() http.Handler {
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: s.cfg.MaxBodyBytes, Logger: s.log})
	bearer := auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL:    s.cfg.BaseURL + PathMetadata,
		AllowMissingExpiration: true, // the store checks expiry on its own clock
	})
	mux := http.NewServeMux()
	mux.Handle(PathMCP, s.countPosts(bearer(s.requireInitialize(streamable))))
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
	return h
}

// countPosts counts the POST requests in flight: the calls that Drain
// waits for. (A GET is a standing event stream, not a call.)
func (s *Server) countPosts(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		s.inflight.add(1)
		defer s.inflight.add(-1)
		h.ServeHTTP(w, r)
	})
}

// Drain is the second half of a graceful shutdown, after
// http.Server.Shutdown has stopped accepting connections: it waits until
// no POST (no call) is in flight, then closes every MCP session, which ends
// the standing event streams that would otherwise keep Shutdown waiting.
func (s *Server) Drain(ctx context.Context) error {
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

// ServeStdio serves MCP over the given stdio transport (mcp.StdioTransport
// for the real thing) with every call made as the holder of token, which
// is authenticated on each call so expiry and revocation apply.
func (s *Server) ServeStdio(ctx context.Context, token string, t mcp.Transport) error {
	if _, err := s.store.Authenticate(ctx, token); err != nil {
		return err
	}
	srv := newMCPServer()
	s.register(srv, func(ctx context.Context) (context.Context, error) {
		p, err := s.store.Authenticate(ctx, token)
		if err != nil {
			return nil, err
		}
		return withPrincipal(ctx, p), nil
	})
	return srv.Run(ctx, t)
}

// isJSON reports whether a Content-Type names application/json.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// beforeInitialize are the methods the go-sdk accepts on a session that
// has not been initialized (requests; notifications always pass).
var beforeInitialize = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "server/discover": true,
}

// protocolVersionMeta marks a request of the sessionless protocol
// (2026-07-28, SEP-2575), which needs no initialize.
const protocolVersionMeta = "io.modelcontextprotocol/protocolVersion"

// requireInitialize answers a request that opens no session yet is not an
// initialize (a tools/call sent first, for instance) with JSON-RPC error
// -32600 (invalid request) and HTTP 400. The go-sdk would answer it with
// error code 0, which no client can interpret. Anything it cannot read as
// one such request (another content type, a body over the size limit, a
// batch, bad JSON) goes to the go-sdk unchanged, which answers it as before.
func (s *Server) requireInitialize(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || !isJSON(r.Header.Get("Content-Type")) {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, s.cfg.MaxBodyBytes+1))
		if err != nil {
			http.Error(w, "cannot read the request body", http.StatusBadRequest)
			return
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if int64(len(body)) > s.cfg.MaxBodyBytes || json.Unmarshal(body, &msg) != nil ||
			len(msg.ID) == 0 || beforeInitialize[msg.Method] || msg.Params.Meta[protocolVersionMeta] != nil {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"jsonrpc": "2.0",
			"id":      msg.ID,
			"error": map[string]any{
				"code":    -32600,
				"message": "no session: send initialize first, then use the Mcp-Session-Id it returns",
			},
		})
	})
}
