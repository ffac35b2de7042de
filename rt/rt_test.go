package rt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prickle-dev/prickle/internal/ecmaregex"
)

func TestToolErrorRoundTrip(t *testing.T) {
	te := Refuse("not_runner", "only a paired runner can claim")
	res := te.Result()
	if !res.IsError || res.StructuredContent != nil || res.Meta["code"] != "not_runner" {
		t.Fatalf("result %+v", res)
	}
	if got := ToolErrorFromResult(res); *got != *te {
		t.Errorf("read back %+v", got)
	}
	for _, c := range []struct {
		res  *mcp.CallToolResult
		want ToolError
	}{
		// The code from the text prefix when _meta has none.
		{&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "turn_over: the turn ended"}}}, ToolError{"turn_over", "the turn ended"}},
		// No code anywhere: the text is the message.
		{&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Something: broke"}}}, ToolError{"", "Something: broke"}},
		// _meta wins over a prefix that disagrees.
		{&mcp.CallToolResult{IsError: true, Meta: mcp.Meta{"code": "a"}, Content: []mcp.Content{&mcp.TextContent{Text: "b: c"}}}, ToolError{"a", "b: c"}},
	} {
		if got := ToolErrorFromResult(c.res); got == nil || *got != c.want {
			t.Errorf("ToolErrorFromResult = %+v, want %+v", got, c.want)
		}
	}
	if ToolErrorFromResult(&mcp.CallToolResult{}) != nil {
		t.Error("a success is not an error")
	}
	wrapped := errors.Join(errors.New("x"), te)
	if got, ok := AsToolError(wrapped); !ok || got != te {
		t.Error("AsToolError misses a wrapped ToolError")
	}
}

func TestNullable(t *testing.T) {
	type T struct {
		A Nullable[int64]    `json:"a,omitzero"`
		B Nullable[[]string] `json:"b,omitzero"`
		C Nullable[string]   `json:"c,omitzero"`
	}
	b, err := json.Marshal(T{A: Some[int64](3), B: Null[[]string]()})
	if err != nil || string(b) != `{"a":3,"b":null}` {
		t.Fatalf("%s %v", b, err)
	}
	var v T
	if err := json.Unmarshal([]byte(`{"a":null,"b":["x"]}`), &v); err != nil {
		t.Fatal(err)
	}
	if !v.A.Set || !v.A.Null || v.C.Set {
		t.Errorf("%+v", v)
	}
	if got, ok := v.B.Get(); !ok || got[0] != "x" {
		t.Errorf("%+v", v.B)
	}
}

func TestCheckConst(t *testing.T) {
	for _, c := range []struct {
		got, want string
		ok        bool
	}{
		{`"circle"`, `"circle"`, true},
		{`"square"`, `"circle"`, false},
		{`1.0`, `1`, true},
		{`1e0`, `1`, true},
		{`2`, `1`, false},
		{`{"b":[1,2],"a":null}`, `{"a":null,"b":[1,2.0]}`, true},
		{`[1]`, `[1,2]`, false},
		{`true`, `"true"`, false},
	} {
		err := CheckConst("T", []byte(c.got), c.want)
		if (err == nil) != c.ok {
			t.Errorf("CheckConst(%s, %s) = %v", c.got, c.want, err)
		}
	}
}

type in struct {
	A string `json:"a"`
}
type out struct {
	B string `json:"b"`
}

func TestHandleTokenInfoFromRequest(t *testing.T) {
	tool := &Tool{Name: "t",
		Input:  schemaValidator("t/in", `{"type":"object"}`),
		Output: schemaValidator("t/out", `{"type":"object","required":["b"]}`),
	}
	var seen *auth.TokenInfo
	h := Handle(tool, func(ctx context.Context, _ *in) (*out, error) {
		seen = TokenInfoFrom(ctx)
		return &out{B: "ok"}, nil
	}, nil)
	ti := &auth.TokenInfo{UserID: "u1"}
	res, err := h(context.Background(), &mcp.CallToolRequest{
		Params: &mcp.CallToolParamsRaw{Name: "t"}, // no arguments: {}
		Extra:  &mcp.RequestExtra{TokenInfo: ti},
	})
	if err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	if seen != ti {
		t.Errorf("TokenInfoFrom = %v", seen)
	}
	if string(res.StructuredContent.(json.RawMessage)) != `{"b":"ok"}` || res.Content[0].(*mcp.TextContent).Text != `{"b":"ok"}` {
		t.Errorf("result %+v", res)
	}
	if TokenInfoFrom(context.Background()) != nil {
		t.Error("token info from nowhere")
	}
}

// DecodeResult keeps integers beyond 2^53 exact when the text content says
// the same as the structuredContent the SDK decoded with float64 numbers,
// and trusts structuredContent when the text says something else.
func TestDecodeResultExactIntegers(t *testing.T) {
	tool := &Tool{
		Name:   "big",
		Input:  schemaValidator("big/input", `{"type":"object"}`),
		Output: schemaValidator("big/output", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
	}
	type out struct {
		N uint64 `json:"n"`
	}
	const big = 12345678901234567891
	for _, c := range []struct {
		text string
		want uint64
	}{
		{`{"n":12345678901234567891}`, big},
		{`{"n": 12345678901234567891 }`, big},
		{`{"n":1}`, 12345678901234567000}, // another value: structuredContent wins, as float64 rounded it
		{`not json`, 12345678901234567000},
	} {
		res := &mcp.CallToolResult{
			StructuredContent: map[string]any{"n": float64(big)},
			Content:           []mcp.Content{&mcp.TextContent{Text: c.text}},
		}
		got, err := DecodeResult[out](tool, res)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		if got.N != c.want {
			t.Errorf("text %s: n = %d, want %d", c.text, got.N, c.want)
		}
	}
}

// ValidateRemembered validates a document once: the same bytes, found
// valid, are not validated again (no work, no allocation); invalid
// documents and validations that did not complete are never remembered,
// and the memory is bounded.
func TestValidateRemembered(t *testing.T) {
	v := schemaValidator("remember", `{"type":"object","properties":{"s":{"type":"string","pattern":"^(?=x)"}},"required":["s"]}`)
	doc := []byte(`{"s":"xyz"}`)
	if err := v.ValidateRemembered(doc); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() {
		if err := v.ValidateRemembered(doc); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a remembered document costs %v allocations, want 0 (not validated again)", n)
	}
	bad := []byte(`{"s":"abc"}`)
	for range 2 {
		var ve *ValidationError
		if err := v.ValidateRemembered(bad); !errors.As(err, &ve) {
			t.Fatalf("invalid document: %v, want a validation error every time", err)
		}
	}
	restore := ecmaregex.StarveClock(-1)
	unfinished := v.ValidateRemembered([]byte(`{"s":"x-unfinished"}`))
	restore()
	if unfinished == nil {
		t.Fatal("a validation with a starved clock succeeded")
	}
	if v.valid.has([]byte(`{"s":"x-unfinished"}`)) || v.valid.has(bad) {
		t.Error("a document that was not found valid is remembered")
	}
	for i := range memoEntries + 5 {
		if err := v.ValidateRemembered(fmt.Appendf(nil, `{"s":"x%d"}`, i)); err != nil {
			t.Fatal(err)
		}
		if n := len(v.valid.set); n > memoEntries {
			t.Fatalf("%d documents remembered, bound %d", n, memoEntries)
		}
	}
	big := fmt.Appendf(nil, `{"s":"x%s"}`, strings.Repeat("y", memoMaxBytes))
	if err := v.ValidateRemembered(big); err != nil || v.valid.has(big) {
		t.Errorf("a document over %d bytes: %v, remembered %v", memoMaxBytes, err, v.valid.has(big))
	}
}
