package rt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNoStructuredContent is returned by Call when a successful result
// carries neither structuredContent nor a JSON text content.
var ErrNoStructuredContent = errors.New("tool result has no structured content")

// Call calls tool t over cs with in (marshalled as the arguments; the
// server validates them) and returns the typed output. The result is
// checked before it is trusted:
//
//   - a JSON-RPC error comes back as the SDK returns it (wrapped, so
//     errors.As finds a *jsonrpc.Error);
//   - an isError result comes back as a *ToolError;
//   - structuredContent (or, when a server sends none, the JSON of the
//     text content) is validated against the output schema: a violation is
//     a *ValidationError.
//
// The SDK decodes structuredContent into Go maps with float64 numbers
// before Call sees it; Call then decodes the text content instead when it
// holds the same JSON, so that integers beyond 2^53 keep their precision
// (a server that sends only structuredContent loses it).
func Call[Out any](ctx context.Context, cs *mcp.ClientSession, t *Tool, in any) (*Out, error) {
	args, err := MarshalJSON(in)
	if err != nil {
		return nil, fmt.Errorf("%s: marshal arguments: %w", t.Name, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: t.Name, Arguments: json.RawMessage(args)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	return DecodeResult[Out](t, res)
}

// DecodeResult checks a tool result as Call does and decodes its output.
func DecodeResult[Out any](t *Tool, res *mcp.CallToolResult) (*Out, error) {
	if te := ToolErrorFromResult(res); te != nil {
		return nil, te
	}
	raw, err := structured(res)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	if err := t.Output.Validate(raw); err != nil {
		return nil, err
	}
	out := new(Out)
	if err := Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("%s: decode output: %w", t.Name, err)
	}
	return out, nil
}

// structured returns the result's output JSON: structuredContent, or the
// JSON of a text content when there is none.
func structured(res *mcp.CallToolResult) ([]byte, error) {
	if res == nil {
		return nil, ErrNoStructuredContent
	}
	switch sc := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		return sc, nil
	case []byte:
		return sc, nil
	default:
		b, err := json.Marshal(sc)
		if err != nil {
			return nil, err
		}
		if exact := sameText(res, b); exact != nil {
			return exact, nil
		}
		return b, nil
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok && json.Valid([]byte(tc.Text)) {
			return []byte(tc.Text), nil
		}
	}
	return nil, ErrNoStructuredContent
}

// sameText returns the JSON of a text content that says the same as
// structured (the SDK's float64 decoding of structuredContent, marshalled
// again), or nil. Servers write the text content from the same JSON as
// the structured content (prickled does), so its numbers are exact where
// the SDK's decoding rounded them: integers beyond 2^53 survive.
func sameText(res *mcp.CallToolResult, structured []byte) []byte {
	var want any
	if json.Unmarshal(structured, &want) != nil {
		return nil
	}
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		var got any
		if json.Unmarshal([]byte(tc.Text), &got) == nil && reflect.DeepEqual(got, want) {
			return []byte(tc.Text)
		}
	}
	return nil
}
