package rt

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
		Input:  NewValidator("echo/input", []byte(`{"type":"object"}`)),
		Output: NewValidator("echo/output", []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)),
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
