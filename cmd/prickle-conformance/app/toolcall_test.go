package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prickle-dev/prickle/api"
)

// TestCall: one call as a given caller, with its answer printed and
// checked, against prickled: a runner's claim (from the tokens file, or
// from the world's own tokens), an agent refused, a token nobody issued.
func TestCall(t *testing.T) {
	fixture, err := filepath.Abs("../../../server/testdata/world.json")
	if err != nil {
		t.Fatal(err)
	}
	addr, tokens := startPrickled(t, "--fixture", fixture)
	url := "http://" + addr
	claim := `{"task_id":"example-task-id","idempotency_key":"call-1"}`
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"runner from the tokens file", []string{"--url", url, "--tokens", tokens, "--as", "runner:maya/builder", "claim_task", claim}, 0,
			[]string{"claim_task: ok\n", `"attempt_id": "`, "checked: claim_task's documented output schema and the wire checks of the core profile (spec "}},
		{"runner from the world, by id", []string{"--url", url, "--world", fixture, "--as", "runner:maya-laptop", "claim_task", claim}, 0,
			[]string{"claim_task: ok\n"}},
		{"agent refused", []string{"--url", url, "--tokens", tokens, "--as", "agent:maya/builder", "--profile", "reference", "claim_task", claim}, 1,
			[]string{"claim_task: refused not_runner\n", "text: not_runner: "}},
		{"token nobody issued", []string{"--url", url + "/mcp", "--token", "prk_nobody", "discover_team_agents", `{"project":"website-v2"}`}, 1,
			[]string{"discover_team_agents: no tool result: HTTP 401: "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"call"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	code, out, _ := runCLI(t, "call", "--url", url, "--tokens", tokens, "--as", "runner:maya/builder", "--json", "claim_task", claim)
	var res struct {
		IsError    bool            `json:"is_error"`
		Structured json.RawMessage `json:"structured_content"`
		Problems   []string        `json:"problems"`
		Response   json.RawMessage `json:"response"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.IsError || len(res.Problems) > 0 ||
		!strings.Contains(string(res.Structured), `"attempt"`) || !strings.Contains(string(res.Response), `"jsonrpc"`) {
		t.Errorf("--json: exit %d, %v:\n%s", code, err, out)
	}
}

// TestCallChecksTheAnswer: an answer whose structuredContent breaks the
// page's output schema is reported, naming the broken place, and fails.
func TestCallChecksTheAnswer(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "wrong", Version: "0"}, nil)
	tool := api.Tool(api.ToolDiscoverTeamAgents)
	srv.AddTool(tool.MCP(),
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}, StructuredContent: json.RawMessage(`{"people":"everyone","agents":[]}`)}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	code, out, errOut := runCLI(t, "call", "--url", ts.URL, "--token", "any", "discover_team_agents", `{"project":"website-v2"}`)
	if code != 1 || !strings.Contains(out, "discover_team_agents: ok\n") || !strings.Contains(out, ": 1 problem\n") || !strings.Contains(out, "/people") {
		t.Errorf("exit %d, want 1 and the broken place named:\n%s%s", code, out, errOut)
	}
}

func TestCallUsage(t *testing.T) {
	t.Setenv("PRICKLE_TOKEN", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"call"}, "call needs TOOL"},
		{[]string{"call", "claim_task"}, "say who calls: --token TOKEN"},
		{[]string{"call", "--as", "agent:maya/builder", "claim_task"}, "--as needs --tokens FILE or --world FILE"},
		{[]string{"call", "--token", "t", "claim_task", "{"}, "the arguments are not JSON"},
		{[]string{"call", "--token", "t", "--as", "agent:x", "claim_task"}, "--token excludes --as"},
	} {
		code, out, errOut := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q (stdout %q); want 2 and %q", c.args, code, errOut, out, c.want)
		}
	}
}
