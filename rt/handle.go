package rt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is one documented tool as a generated package describes it.
type Tool struct {
	Name        string
	Description string
	// InputSchema and OutputSchema are the documented schemas, byte for byte
	// as the page writes them.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// Input and Output validate against those schemas.
	Input  *Validator
	Output *Validator
}

// MCP returns the tool as the SDK serves it on tools/list, with the
// documented schemas as json.RawMessage. encoding/json compacts a
// RawMessage it marshals, so the wire carries the documented JSON with
// insignificant white space removed: key order and number literals kept.
func (t *Tool) MCP() *mcp.Tool {
	return &mcp.Tool{
		Name:         t.Name,
		Description:  t.Description,
		InputSchema:  t.InputSchema,
		OutputSchema: t.OutputSchema,
	}
}

// Outcome is how a call ended, as CallInfo reports it.
type Outcome string

// The outcomes of a call.
const (
	OutcomeOK               Outcome = "ok"
	OutcomeRefused          Outcome = "refused"           // a *ToolError from Before or the handler
	OutcomeInvalidArguments Outcome = "invalid_arguments" // arguments fail the input schema
	OutcomeInternalError    Outcome = "internal_error"    // a handler error, panic or invalid output
)

// CallInfo describes one finished call, for metrics and audit logs.
type CallInfo struct {
	Tool    string
	Outcome Outcome
	// Code is the refusal's code (CodeInvalidArguments for bad arguments);
	// empty for OutcomeOK and OutcomeInternalError.
	Code     string
	Duration time.Duration
}

// RegisterOptions configures the registration of a generated package's
// tools. A nil *RegisterOptions is the zero value.
type RegisterOptions struct {
	// Logger receives server bugs: handler errors and panics, and output
	// that fails the output schema. Nil means slog.Default(). Tokens and
	// output values are never logged, only tools, pointers and keywords.
	Logger *slog.Logger
	// Before runs first on every call, before the arguments are validated:
	// authentication and identity. It may return a new context (e.g. with
	// a principal attached), also together with an error so that OnCall
	// sees it; a *ToolError refuses the call, any other error is an
	// internal error.
	Before func(ctx context.Context, tool string, req *mcp.CallToolRequest) (context.Context, error)
	// OnCall runs after every call with how it ended.
	OnCall func(ctx context.Context, info CallInfo)
	// RepeatedOutputs names the tools whose outputs repeat byte for byte
	// (the same for every caller until the data behind them changes):
	// their outputs are checked with Validator.ValidateRemembered, so the
	// same bytes are validated once. Never a tool whose output holds a
	// credential.
	RepeatedOutputs []string
}

// repeated reports whether tool is one of RepeatedOutputs.
func (o *RegisterOptions) repeated(tool string) bool {
	return o != nil && slices.Contains(o.RepeatedOutputs, tool)
}

func (o *RegisterOptions) logger() *slog.Logger {
	if o != nil && o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

type tokenInfoKey struct{}

// WithTokenInfo returns ctx carrying ti, as TokenInfoFrom reads it.
func WithTokenInfo(ctx context.Context, ti *auth.TokenInfo) context.Context {
	return context.WithValue(ctx, tokenInfoKey{}, ti)
}

// TokenInfoFrom returns the caller's bearer-token info: what the
// registration took from the request (req.Extra.TokenInfo) or what Before
// put there with WithTokenInfo; else what auth.RequireBearerToken left in
// ctx; else nil (stdio, or no authentication).
func TokenInfoFrom(ctx context.Context) *auth.TokenInfo {
	if ti, ok := ctx.Value(tokenInfoKey{}).(*auth.TokenInfo); ok && ti != nil {
		return ti
	}
	return auth.TokenInfoFromContext(ctx)
}

// internalError is the JSON-RPC answer to a server bug: it says nothing
// about the bug to the caller.
func internalError() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
}

// AddTool registers t on s with the low-level (*mcp.Server).AddTool: the
// documented schemas are served as they are, and Handle does the
// validation.
func AddTool[In, Out any](s *mcp.Server, t *Tool, h func(context.Context, *In) (*Out, error), opts *RegisterOptions) {
	s.AddTool(t.MCP(), Handle(t, h, opts))
}

// Handle turns a typed handler into an mcp.ToolHandler:
//
//  1. the context gets req.Extra.TokenInfo (see TokenInfoFrom), then
//     opts.Before runs;
//  2. the arguments are validated against the input schema: a failure is an
//     isError result with code invalid_arguments naming every JSON pointer
//     (sorted), and _meta.violations listing them; a validation that does
//     not complete (a pattern match that timed out) is logged and answered
//     as a JSON-RPC internal error, never as invalid arguments;
//  3. they are decoded into In with Unmarshal, so the value that validated
//     is the value h gets (a valid value the server cannot hold is refused
//     like an invalid one, naming its pointer), and h runs; a *ToolError
//     becomes an isError result; an error that is or wraps a
//     *jsonrpc.Error (h's answer to a failure it can name: the server's
//     database is down) is logged and answered as that error; any other
//     error or a panic is logged and answered as a JSON-RPC internal
//     error (-32603), which says nothing of it (opts.Before's errors
//     alike);
//  4. the output is marshalled (MarshalJSON) and the bytes validated
//     against the output schema before they leave (bytes of a tool in
//     opts.RepeatedOutputs that were found valid before are not validated
//     again): a violation is a server bug, logged and answered as an
//     internal error, never sent;
//  5. a valid output goes out as structuredContent (the JSON bytes) and as
//     a text content with the same JSON.
func Handle[In, Out any](t *Tool, h func(context.Context, *In) (*Out, error), opts *RegisterOptions) mcp.ToolHandler {
	log := opts.logger()
	validateOutput := t.Output.Validate
	if opts.repeated(t.Name) {
		validateOutput = t.Output.ValidateRemembered
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		growStack(0)
		c := &call{ctx: ctx, log: log, start: time.Now(), info: CallInfo{Tool: t.Name}}
		defer c.end(opts, &res, &err)
		if res, err := c.before(req, opts); res != nil || err != nil {
			return res, err
		}
		in := new(In)
		if res, err := c.decode(t.Input, req, in); res != nil || err != nil {
			return res, err
		}
		out, err := h(c.ctx, in)
		if err != nil {
			if te, ok := AsToolError(err); ok {
				return c.refuse(te)
			}
			return c.failWith("prickle: tool handler failed", err)
		}
		if out == nil {
			return c.fail("prickle: tool handler returned no output and no error")
		}
		return c.answer(out, validateOutput)
	}
}

// call is one tool call as Handle answers it: its context, which the
// steps extend, and what opts.OnCall is told of it. A step returns nil,
// nil when the call goes on, else the call's answer.
type call struct {
	ctx   context.Context
	log   *slog.Logger
	start time.Time
	info  CallInfo
}

// end, deferred, answers a panic as an internal error, then tells
// opts.OnCall how the call went.
func (c *call) end(opts *RegisterOptions, res **mcp.CallToolResult, err *error) {
	if p := recover(); p != nil {
		c.log.ErrorContext(c.ctx, "prickle: tool handler panicked", "tool", c.info.Tool, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		*res, *err = nil, internalError()
		c.info.Outcome, c.info.Code = OutcomeInternalError, ""
	}
	if opts != nil && opts.OnCall != nil {
		c.info.Duration = time.Since(c.start)
		opts.OnCall(c.ctx, c.info)
	}
}

func (c *call) refuse(te *ToolError) (*mcp.CallToolResult, error) {
	c.info.Outcome, c.info.Code = OutcomeRefused, te.Code
	return te.Result(), nil
}

func (c *call) fail(msg string, args ...any) (*mcp.CallToolResult, error) {
	c.log.ErrorContext(c.ctx, msg, append([]any{"tool", c.info.Tool}, args...)...)
	c.info.Outcome = OutcomeInternalError
	return nil, internalError()
}

// failWith is fail for an error of Before or the handler, which may carry
// the JSON-RPC error to answer.
func (c *call) failWith(msg string, err error) (*mcp.CallToolResult, error) {
	res, ierr := c.fail(msg, "error", err)
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return res, je
	}
	return res, ierr
}

// before gives the context the caller's token, then runs opts.Before.
func (c *call) before(req *mcp.CallToolRequest, opts *RegisterOptions) (*mcp.CallToolResult, error) {
	if req != nil && req.Extra != nil && req.Extra.TokenInfo != nil {
		c.ctx = WithTokenInfo(c.ctx, req.Extra.TokenInfo)
	}
	if opts == nil || opts.Before == nil {
		return nil, nil
	}
	nctx, err := opts.Before(c.ctx, c.info.Tool, req)
	if nctx != nil {
		c.ctx = nctx // kept on refusal too, so OnCall sees who was refused
	}
	if err != nil {
		if te, ok := AsToolError(err); ok {
			return c.refuse(te)
		}
		return c.failWith("prickle: before-call hook failed", err)
	}
	return nil, nil
}

// decode validates the call's arguments against the input schema, then
// decodes them into in.
func (c *call) decode(input *Validator, req *mcp.CallToolRequest, in any) (*mcp.CallToolResult, error) {
	var args json.RawMessage
	if req != nil && req.Params != nil {
		args = req.Params.Arguments
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := input.Validate(args); err != nil {
		var ve *ValidationError
		if !errors.As(err, &ve) {
			// The schema does not compile, or a pattern match did not
			// finish: the arguments are neither valid nor invalid.
			return c.fail("prickle: input validation did not complete", "error", err)
		}
		c.info.Outcome, c.info.Code = OutcomeInvalidArguments, CodeInvalidArguments
		return InvalidArguments(ve.Violations), nil
	}
	if err := Unmarshal(args, in); err != nil {
		// Valid against the schema, yet not representable in Go (an
		// integer beyond int64, a date-time Go cannot parse).
		c.info.Outcome, c.info.Code = OutcomeInvalidArguments, CodeInvalidArguments
		return InvalidArguments(DecodeViolations(err)), nil
	}
	return nil, nil
}

// answer marshals the handler's output and validates the bytes before
// they leave: the call's result, or an internal error.
func (c *call) answer(out any, validate func([]byte) error) (*mcp.CallToolResult, error) {
	b, err := MarshalJSON(out)
	if err != nil {
		return c.fail("prickle: tool output does not marshal (server bug)", "error", err)
	}
	if err := validate(b); err != nil {
		var ve *ValidationError
		if !errors.As(err, &ve) {
			return c.fail("prickle: output validation did not complete", "error", err)
		}
		return c.fail("prickle: tool output does not match its output schema (server bug); not sent",
			"violations", violationsForLog(ve.Violations))
	}
	c.info.Outcome = OutcomeOK
	return &mcp.CallToolResult{
		StructuredContent: json.RawMessage(b),
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
	}, nil
}

// InvalidArguments is the isError result for arguments that fail the
// input schema: text "invalid_arguments: " and each violation as
// "pointer: message (keyword)" joined by "; ", _meta {"code":
// "invalid_arguments", "violations": [...]}.
func InvalidArguments(vs []Violation) *mcp.CallToolResult {
	parts := make([]string, len(vs))
	metaVs := make([]any, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
		metaVs[i] = map[string]any{"pointer": v.Pointer, "keyword": v.Keyword, "message": v.Message}
	}
	te := &ToolError{Code: CodeInvalidArguments, Message: strings.Join(parts, "; ")}
	res := te.Result()
	res.Meta["violations"] = metaVs
	return res
}

// violationsForLog names where output failed without quoting values, which
// may hold credentials.
func violationsForLog(vs []Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		p := v.Pointer
		if p == "" {
			p = "/"
		}
		out[i] = p + " (" + v.Keyword + " at " + v.KeywordLocation + ")"
	}
	return out
}

// MarshalJSON marshals v like json.Marshal, without escaping <, > and &
// (a tool's output is not HTML) and without a trailing newline.
func MarshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ConvertOutput returns h with its output passed through conv; when h fails
// or returns no output, so does the returned function (no output, h's
// error). Generated packages register their handlers with it so that Handle
// marshals the wire form of an output: the JSON value its own MarshalJSON
// writes, in one pass, without a MarshalJSON per nested object whose result
// encoding/json would scan again.
func ConvertOutput[In, Out, W any](h func(context.Context, *In) (*Out, error), conv func(Out) W) func(context.Context, *In) (*W, error) {
	return func(ctx context.Context, in *In) (*W, error) {
		out, err := h(ctx, in)
		if err != nil || out == nil {
			return nil, err
		}
		w := conv(*out)
		return &w, nil
	}
}

// growStack grows the calling goroutine's stack once, while it is
// shallow. The MCP SDK runs each call on a goroutine of its own, which
// starts with a small stack; a handler that grows it later, deep in
// validation and the store, pays for each growth by copying and
// adjusting every frame below. One growth at the handler's entry copies
// a few frames instead (BenchmarkHandler under callgrind counts it).
//
//go:noinline
func growStack(i int) byte {
	var b [8 << 10]byte
	b[i] = 1
	return b[len(b)-1-i]
}
