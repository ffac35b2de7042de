package rt_test

import (
	"context"
	"encoding/json"
	"math/big"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/internal/validation"
	"github.com/prickle-dev/prickle/rt"
)

// fuzzTool is one documented tool's input, handled by rt.Handle with a
// handler that records what it got.
type fuzzTool struct {
	name   string
	schema string
	call   func(args []byte) (got any, res *mcp.CallToolResult)
}

func newFuzzTool[In any](tool api.ToolName, schema string) fuzzTool {
	name := string(tool)
	t := &rt.Tool{Name: name, Input: api.Tool(tool).Input, Output: api.Tool(tool).Output}
	return fuzzTool{name: name, schema: schema, call: func(args []byte) (any, *mcp.CallToolResult) {
		var got *In
		h := rt.Handle(t, func(_ context.Context, in *In) (*struct{}, error) {
			got = in
			return nil, rt.Refuse("recorded", "recorded")
		}, nil)
		res, err := h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Arguments: args}})
		if err != nil {
			panic(err) // a JSON-RPC error: Handle failed, not the arguments
		}
		if got == nil {
			return nil, res
		}
		return got, res
	}}
}

var fuzzTools = []fuzzTool{
	newFuzzTool[api.ClaimTaskInput](api.ToolClaimTask, api.ClaimTaskInputSchema),
	newFuzzTool[api.ClaimDiscussionInput](api.ToolClaimDiscussion, api.ClaimDiscussionInputSchema),
	newFuzzTool[api.DiscoverTeamAgentsInput](api.ToolDiscoverTeamAgents, api.DiscoverTeamAgentsInputSchema),
}

// FuzzValidateDecode: the validators against the decoding, for the
// documented tools' inputs. Arguments the validator refuses never reach
// the handler (they are refused with invalid_arguments); arguments it
// accepts reach it, decoded to the very value that was validated: every
// property the schema names, at every depth, with the same value (numbers
// by value), and nothing else.
func FuzzValidateDecode(f *testing.F) {
	for _, s := range []string{
		`{"task_id":"example-task-id","idempotency_key":"k"}`,
		`{"task_id":"example-task-id","idempotency_key":"k","wake":{"message_id":"m"}}`,
		`{"task_id":"a","idempotency_key":"k","TASK_ID":"b","Wake":{"message_id":"../x"}}`,
		`{"task_id":"a","task_id":"b","idempotency_key":"k"}`,
		`{"message_id":"m","idempotency_key":"k","harness":2}`,
		`{"message_id":"m","idempotency_key":"k","harness":2.0,"HARNESS":99999999999}`,
		`{"message_id":"m","idempotency_key":"k","harness":1e2}`,
		`{"message_id":"m","idempotency_key":"k\ud800","harness":2e0}`,
		"{\"message_id\":\"m\",\"idempotency_key\":\"k\xff\"}",
		`{"project":"website-v2"}`, `{"project":"website-v2","Project":"x"}`, `{"project":"a--b"}`,
		`{}`, `[]`, `null`, `{"a":`, `{"project":"x"} {}`,
	} {
		for i := range fuzzTools {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		tool := fuzzTools[int(which)%len(fuzzTools)]
		verr := validate(tool, args)
		got, res := tool.call(args)
		te := rt.ToolErrorFromResult(res)
		if verr != nil {
			if got != nil {
				t.Fatalf("%s %q: the validator refused (%v), yet the handler got %+v", tool.name, args, verr, got)
			}
			if te == nil || te.Code != rt.CodeInvalidArguments {
				t.Fatalf("%s %q: refused by the validator, answered %+v", tool.name, args, te)
			}
			return
		}
		if got == nil {
			// Only a value the server cannot hold (none in these schemas).
			t.Fatalf("%s %q: valid, yet the handler was not called: %+v", tool.name, args, te)
		}
		var schema map[string]any
		if err := json.Unmarshal([]byte(tool.schema), &schema); err != nil {
			t.Fatal(err)
		}
		inst, err := validation.Unmarshal(args)
		if err != nil {
			t.Fatal(err)
		}
		out, err := rt.MarshalJSON(got)
		if err != nil {
			t.Fatalf("%s: marshal the decoded value: %v", tool.name, err)
		}
		dec, err := validation.Unmarshal(out)
		if err != nil {
			t.Fatal(err)
		}
		want, have := canonical(project(inst, schema)), canonical(dec)
		if !reflect.DeepEqual(want, have) {
			t.Fatalf("%s %q: validated %v, the handler got %v", tool.name, args, want, have)
		}
	})
}

func validate(tool fuzzTool, args []byte) error {
	return api.Tool(api.ToolName(tool.name)).Input.Validate(args)
}

// project keeps, of a validated instance, what the schema's properties
// name, at every depth: what a decoded Go value holds.
func project(inst any, schema map[string]any) any {
	obj, ok := inst.(map[string]any)
	props, hasProps := schema["properties"].(map[string]any)
	if !ok || !hasProps {
		return inst
	}
	out := map[string]any{}
	for k, v := range obj {
		if ps, ok := props[k].(map[string]any); ok {
			out[k] = project(v, ps)
		}
	}
	return out
}

// canonical replaces every number by its exact value as a fraction, so
// that 2, 2.0 and 2e0 compare equal.
func canonical(v any) any {
	switch x := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return "bad number " + string(x)
		}
		return r.RatString()
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = canonical(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonical(e)
		}
		return out
	}
	return v
}
