package server

import (
	"context"
	"net/http"

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
	mux.Handle(PathMCP, bearer(streamable))
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
