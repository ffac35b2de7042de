package rt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prickle-dev/prickle/internal/ecmaregex"
)

func TestConvertOutput(t *testing.T) {
	type in struct{}
	refused := Refuse("no", "no")
	for _, c := range []struct {
		out     *int
		err     error
		want    *string
		wantErr error
	}{
		{out: ptr(7), want: ptr("7")},
		{out: ptr(7), err: refused, wantErr: refused}, // an error wins over an output
		{err: refused, wantErr: refused},
		{}, // no output and no error: Handle reports that
	} {
		h := ConvertOutput(func(context.Context, *in) (*int, error) { return c.out, c.err }, strconv.Itoa)
		got, err := h(context.Background(), &in{})
		if !errors.Is(err, c.wantErr) || (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("ConvertOutput(%v, %v) = %v, %v; want %v, %v", c.out, c.err, got, err, c.want, c.wantErr)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// The text content and the structured content carry the same JSON, the
// output exactly as validated, without HTML escaping.
func TestHandleResultJSON(t *testing.T) {
	type out struct {
		Name string `json:"name"`
	}
	tool := &Tool{
		Name:   "echo",
		Input:  schemaValidator("echo/input", `{"type":"object"}`),
		Output: schemaValidator("echo/output", `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}
	h := Handle(tool, func(context.Context, *struct{}) (*out, error) { return &out{Name: "<a&b>"}, nil }, nil)
	res, err := h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Arguments: json.RawMessage(`{}`)}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	sc, ok := res.StructuredContent.(json.RawMessage)
	if !ok || string(sc) != `{"name":"<a&b>"}` {
		t.Fatalf("structured content %#v", res.StructuredContent)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != string(sc) {
		t.Errorf("text %q, structured content %s", text, sc)
	}
}

// Arguments whose validation does not complete (a pattern match that
// times out: here regexp2's clock is starved) are neither valid nor
// invalid: the call is an internal error, never invalid_arguments, and the
// handler does not run.
func TestValidationTimeoutIsInternalError(t *testing.T) {
	tool := &Tool{
		Name:   "slug",
		Input:  schemaValidator("slug/input", `{"type":"object","properties":{"project":{"type":"string","pattern":"^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$"}}}`),
		Output: schemaValidator("slug/output", `{"type":"object"}`),
	}
	ran := false
	var info CallInfo
	h := Handle(tool, func(context.Context, *struct{}) (*struct{}, error) { ran = true; return &struct{}{}, nil },
		&RegisterOptions{Logger: slog.New(slog.DiscardHandler), OnCall: func(_ context.Context, i CallInfo) { info = i }})
	call := func(project string) (*mcp.CallToolResult, error) {
		return h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Arguments: json.RawMessage(`{"project":"` + project + `"}`)}})
	}
	if res, err := call("website-v2"); err != nil || res.IsError || !ran {
		t.Fatalf("healthy clock: %v %+v", err, res)
	}
	ran = false
	restore := ecmaregex.StarveClock(-1)
	res, err := call("website-v3") // a value the match cache has not seen
	restore()
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || res != nil || ran {
		t.Errorf("starved clock: %+v, %v (handler ran: %v); want a JSON-RPC internal error", res, err, ran)
	}
	if info.Outcome != OutcomeInternalError {
		t.Errorf("outcome %q, want %q", info.Outcome, OutcomeInternalError)
	}
}

// A tool in RepeatedOutputs still never sends an output that fails its
// schema, however often the handler returns it.
func TestHandleRepeatedOutputsStillValidated(t *testing.T) {
	type out struct {
		Name int `json:"name"`
	}
	tool := &Tool{
		Name:   "echo",
		Input:  schemaValidator("echo/input", `{"type":"object"}`),
		Output: schemaValidator("echo/output", `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}
	h := Handle(tool, func(context.Context, *struct{}) (*out, error) { return &out{Name: 7}, nil },
		&RegisterOptions{Logger: slog.New(slog.DiscardHandler), RepeatedOutputs: []string{"echo"}})
	for range 3 {
		res, err := h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Arguments: json.RawMessage(`{}`)}})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || res != nil {
			t.Fatalf("invalid output: %+v, %v; want an internal error", res, err)
		}
	}
}

// A handler's failure is answered "internal error", saying nothing of
// it, unless it is (or wraps) a JSON-RPC error of the handler's choosing,
// which is answered as it is; from the Before hook alike. Both are logged
// whole, as internal errors.
func TestHandleOwnRPCErrors(t *testing.T) {
	tool := &Tool{
		Name:   "t",
		Input:  schemaValidator("t/input", `{"type":"object"}`),
		Output: schemaValidator("t/output", `{"type":"object"}`),
	}
	own := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the database is unavailable; retry later"}
	secret := errors.New("a detail for the log alone")
	for _, c := range []struct {
		name           string
		before, handle error
		want           string
	}{
		{"handler", nil, secret, "internal error"},
		{"handler's own", nil, fmt.Errorf("%w: %w", own, secret), own.Message},
		{"before", secret, nil, "internal error"},
		{"before's own", fmt.Errorf("%w: %w", own, secret), nil, own.Message},
	} {
		var info CallInfo
		var logged bytes.Buffer
		h := Handle(tool, func(context.Context, *struct{}) (*struct{}, error) { return nil, c.handle },
			&RegisterOptions{Logger: slog.New(slog.NewTextHandler(&logged, nil)), OnCall: func(_ context.Context, i CallInfo) { info = i },
				Before: func(ctx context.Context, _ string, _ *mcp.CallToolRequest) (context.Context, error) {
					return ctx, c.before
				}})
		res, err := h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Arguments: json.RawMessage(`{}`)}})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || rpcErr.Message != c.want || res != nil {
			t.Errorf("%s: %+v, %v; want JSON-RPC internal error %q", c.name, res, err, c.want)
		}
		if info.Outcome != OutcomeInternalError || !strings.Contains(logged.String(), secret.Error()) {
			t.Errorf("%s: outcome %q, log %q", c.name, info.Outcome, logged.String())
		}
	}
}
