// Package call makes one tool call on a Prickle server and checks the
// answer as a certification run checks every answer (the command
// "prickle-conformance call"): a tool result with a content array, a
// success's structuredContent valid against the documented output schema,
// a refusal MCP reads as one.
//
// It may import the suite's MCP client and wire checks
// (conformance/internal) and the spec; it must not import the suite's
// runner (package conformance), the reference server or the generator.
package call

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/spec"
)

// Options say which one tool call Do makes, and where.
type Options struct {
	// Endpoint is the server's MCP endpoint (http://HOST:PORT/mcp).
	Endpoint string
	// Token is the caller's bearer token; "" sends no Authorization.
	Token string
	// Tool is the tool to call, with Args its arguments (nil: {}).
	Tool string
	Args json.RawMessage
	// Spec holds the pages the answer is checked against; default the
	// bundled ones.
	Spec *spec.Spec
	// Profile chooses the wire checks, as for a run: conformance.Core
	// (default) or conformance.Reference.
	Profile suite.Profile
	// HTTPClient makes the requests; nil is a client without proxies
	// that gives up after 30 s.
	HTTPClient *http.Client
}

// Result is a tool call's answer, as the suite's wire checks see it.
type Result struct {
	Tool string `json:"tool"`
	// IsError is true for a refusal: a tool result with isError. Code is
	// its machine-readable code (_meta.code), when it carries one.
	IsError bool   `json:"is_error"`
	Code    string `json:"code,omitempty"`
	// Structured is the structuredContent as sent (nil when absent), Text
	// the text content.
	Structured json.RawMessage `json:"structured_content,omitempty"`
	Text       string          `json:"text"`
	// Checked says what the answer was checked against (the tool's
	// documented output schema, and the spec's hash); Problems are what
	// the checks found wrong with it: a success that breaks its output
	// schema, a refusal MCP would not read as one.
	Checked  string   `json:"checked"`
	Problems []string `json:"problems,omitempty"`
	// Response is the JSON-RPC response as received.
	Response json.RawMessage `json:"response"`
}

// ProtocolError is a call answered with no tool result: an HTTP error
// status (Status; 401 for a token the server does not know) or a JSON-RPC
// error (Code).
type ProtocolError struct {
	Status  int    // the HTTP status, for an HTTP error
	Code    int    // the JSON-RPC error code, for a JSON-RPC error
	Message string // what the server said
}

func (e *ProtocolError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message)
}

// Do makes one tool call on the server, opening an MCP session for the
// token first, and checks the answer as a run checks every answer: a tool
// result with a content array; a success carries structuredContent valid
// against the tool's documented output schema; a refusal is an isError
// result. An answer that is no tool result is a *ProtocolError.
func Do(ctx context.Context, o Options) (*Result, error) {
	if o.Spec == nil {
		sp, err := spec.LoadBundled()
		if err != nil {
			return nil, err
		}
		o.Spec = sp
	}
	if o.Profile == "" {
		o.Profile = suite.Core
	}
	if o.Args == nil {
		o.Args = json.RawMessage("{}")
	}
	if !json.Valid(o.Args) {
		return nil, fmt.Errorf("conformance: call %s: the arguments are not JSON", o.Tool)
	}
	ix := wire.NewIndex(o.Spec)
	if _, err := ix.OutputSchema(o.Tool); err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	c := wire.NewClient(o.Endpoint, o.HTTPClient)
	defer c.Close()
	resp, err := c.CallTool(ctx, o.Token, o.Tool, o.Args)
	var he *wire.HTTPError
	switch {
	case errors.As(err, &he):
		return nil, &ProtocolError{Status: he.Status, Message: strings.TrimSpace(he.Body)}
	case err != nil:
		return nil, fmt.Errorf("conformance: call %s: %w", o.Tool, err)
	case resp.Error != nil:
		return nil, &ProtocolError{Code: resp.Error.Code, Message: resp.Error.Message}
	}
	r := &wire.Call{Tool: o.Tool, Args: string(o.Args), Raw: resp.Raw, Result: resp.Result}
	out := &Result{Tool: o.Tool, Response: resp.Raw, Checked: "the wire checks of the " + string(o.Profile) + " profile"}
	if t := o.Spec.Tool(o.Tool); t != nil {
		out.Checked = fmt.Sprintf("%s's documented output schema and the wire checks of the %s profile (spec %s)",
			o.Tool, o.Profile, spec.ShortHash(o.Spec.Hash()))
	}
	for _, ch := range wire.CheckResult(ix, o.Profile, r, r.Result) {
		if !ch.OK {
			out.Problems = append(out.Problems, ch.What)
		}
	}
	out.IsError, out.Code, out.Structured, out.Text = r.IsError, r.Code, r.Structured, r.Text
	return out, nil
}
