package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/internal/cmdline"
	"github.com/prickle-dev/prickle/internal/fsx"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/spec/world"
)

// Outputs are the fixed answers of a bare server: each documented tool's
// output as JSON.
type Outputs map[string]json.RawMessage

// recordOps are the operations whose answers Record keeps, one per tool.
var recordOps = []string{OpClaimReplay, OpDiscussion, OpDiscover}

// Record calls each documented tool once on the server at endpoint (the
// replayed claims and discover_team_agents of world) and returns what it
// answered, so that a bare server can answer the same bytes.
func Record(ctx context.Context, endpoint, runnerToken, agentToken, protocol string, world World) (Outputs, error) {
	args, err := world.fixedArgs()
	if err != nil {
		return nil, err
	}
	out := Outputs{}
	for _, op := range recordOps {
		tok := agentToken
		if asRunner(op) {
			tok = runnerToken
		}
		cs, err := connect(ctx, endpoint, tok, protocol)
		if err != nil {
			return nil, err
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: string(opTool[op]), Arguments: args[op]})
		cs.Close()
		switch {
		case err != nil:
			return nil, fmt.Errorf("record %s: %w", op, err)
		case res.IsError:
			return nil, fmt.Errorf("record %s: refused: %s", op, resultText(res))
		}
		out[string(opTool[op])] = json.RawMessage(resultText(res))
	}
	return out, out.check()
}

// RecordReference returns the answers of an in-process prickled on the seed
// world: what a bare server answers when given no outputs.
func RecordReference(ctx context.Context) (Outputs, error) {
	world, tokens, err := Fixture(0)
	if err != nil {
		return nil, err
	}
	srv, _, err := server.New(ctx, server.Config{
		World:  bytes.NewReader(world),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, fmt.Errorf("reference server: %w", err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	runner, agent, err := SelectTokens(tokens, "", "")
	if err != nil {
		return nil, err
	}
	return Record(ctx, ts.URL+server.PathMCP, runner, agent, "", DefaultWorld())
}

// check requires a valid output for every tool the load operations call
// (the tools of Ops), and that every output is a documented tool's, valid
// against its output schema. Other documented tools may lack one: a bare
// server refuses them, as a server that does not implement them would.
func (o Outputs) check() error {
	for _, op := range Ops {
		if _, ok := o[string(opTool[op])]; !ok {
			return fmt.Errorf("outputs: no output for %s", opTool[op])
		}
	}
	for name, raw := range o {
		t := api.Tool(api.ToolName(name))
		if t == nil {
			return fmt.Errorf("outputs: %s is not a documented tool", name)
		}
		if err := t.Output.Validate(raw); err != nil {
			return fmt.Errorf("outputs: %s: %w", name, err)
		}
	}
	return nil
}

// redactTokens replaces the value of every "token" member (a recorded
// credential) with a random token of the same length, so that a bare
// server never hands out a real server's credential yet answers as many
// bytes.
func (o Outputs) redactTokens() (Outputs, error) {
	out := Outputs{}
	for name, raw := range o {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("outputs: %s: %w", name, err)
		}
		for _, tok := range tokenValues(v, nil) {
			repl := world.NewToken()
			for len(repl) < len(tok) {
				repl += repl
			}
			q, _ := json.Marshal(tok)
			r, _ := json.Marshal(repl[:len(tok)])
			raw = bytes.ReplaceAll(raw, q, r)
		}
		out[name] = raw
	}
	return out, out.check()
}

// tokenValues returns the string values of members named "token" in v.
func tokenValues(v any, acc []string) []string {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "token" {
				acc = append(acc, s)
				continue
			}
			acc = tokenValues(e, acc)
		}
	case []any:
		for _, e := range v {
			acc = tokenValues(e, acc)
		}
	}
	return acc
}

// ReadOutputs reads outputs written by WriteOutputs.
func ReadOutputs(file string) (Outputs, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var texts map[string]string
	if err := json.Unmarshal(b, &texts); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	o := Outputs{}
	for name, text := range texts {
		o[name] = json.RawMessage(text)
	}
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return o, nil
}

// WriteOutputs writes o to file (mode 0600: recorded answers hold
// credentials): a JSON object of each tool's output as a string, so that
// the bytes are kept exactly (white space included).
func WriteOutputs(file string, o Outputs) error {
	texts := map[string]string{}
	for name, raw := range o {
		texts[name] = string(raw)
	}
	return fsx.WriteJSON(file, texts, 0o600)
}

// BareOptions configures a bare server.
type BareOptions struct {
	// Logger receives the SDK's own log lines (nil: discarded).
	Logger *slog.Logger
}

// Bare returns the HTTP handler of a bare server: the go-sdk's streamable
// HTTP handler at /mcp, behind the go-sdk's bearer-token middleware with a
// verifier that accepts any token (no lookup, no identity), serving the
// documented tools (api.Tools: same names, descriptions and schemas, the
// low-level AddTool) whose handlers answer outputs[tool] as
// structuredContent and as text, without reading the arguments (a tool
// without an output is refused as not_implemented); and GET
// /healthz. The same body limit as prickled; no validation, no state, no
// log line per call. It is the floor a Prickle server is measured against:
// what the SDK costs for the same calls and the same answers. Recorded
// credentials in outputs are replaced by random tokens of the same length.
func Bare(outputs Outputs, opts *BareOptions) (http.Handler, error) {
	if err := outputs.check(); err != nil {
		return nil, err
	}
	outputs, err := outputs.redactTokens()
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.DiscardHandler)
	if opts != nil && opts.Logger != nil {
		logger = opts.Logger
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "prickle-load-bare", Version: cmdline.Version()}, &mcp.ServerOptions{Logger: logger})
	for _, tool := range api.Tools() {
		out, ok := outputs[tool.Name]
		text := string(out)
		refusal := rt.NotImplemented(tool.Name).Result()
		s.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if !ok {
				return refusal, nil
			}
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: text}},
				StructuredContent: out,
			}, nil
		})
	}
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: server.DefaultMaxBodyBytes, Logger: logger})
	anyToken := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: "bare"}, nil
	}
	bearer := auth.RequireBearerToken(anyToken, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	mux := http.NewServeMux()
	mux.Handle(server.PathMCP, bearer(streamable))
	mux.HandleFunc("GET "+server.PathHealth, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	return mux, nil
}

// ReadTokensFile reads a tokens file's entries, for SelectTokens.
func ReadTokensFile(file string) ([]world.Token, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	toks, err := world.ReadTokens(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return toks, nil
}
