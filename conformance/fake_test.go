package conformance_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/world"
)

// fakeServer is another server than the reference one: stateless, JSON
// responses instead of event streams, no argument validation at all, and
// a fixed answer. The suite must work with it, and catch what it gets
// wrong.
func fakeServer(t *testing.T, sp *spec.Spec, tokens map[string]bool) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "0"}, nil)
	for _, tool := range sp.Tools {
		name := tool.Name
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: tool.InputSchema.JSON, OutputSchema: tool.OutputSchema.JSON},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if name != "discover_team_agents" {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "not implemented"}}}, nil
				}
				out := json.RawMessage(`{"people":[{"handle":"maya","display_name":"Maya","avatar_url":null,"color":2,"away":false}],"agents":[]}`)
				return &mcp.CallToolResult{StructuredContent: out, Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}, nil
			})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")] {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func TestFakeServer(t *testing.T) {
	sp, scripts := loadSuite(t)
	target := &conformance.HandlerTarget{
		Name: "fake",
		New: func(ctx context.Context, fixture []byte) (http.Handler, func(), error) {
			w, err := world.Decode(fixture)
			if err != nil {
				return nil, nil, err
			}
			valid := map[string]bool{}
			for _, tk := range w.Tokens() {
				valid[tk.Token] = true
			}
			return fakeServer(t, sp, valid), nil, nil
		},
	}
	rep, err := conformance.Run(context.Background(), scripts, conformance.Options{
		Target: target, Profile: conformance.Core, Spec: sp,
		Run: regexp.MustCompile(`^(spec\.tools|spec\.discover_team_agents\.(example|project\.pattern)|discover_team_agents_seed|discover_team_agents_invisible|claim_task_runner_only)$`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]report.Status{
		"spec.tools":                                report.Pass, // the documented schemas, served verbatim
		"spec.discover_team_agents.example":         report.Pass,
		"spec.discover_team_agents.project.pattern": report.Fail, // it validates nothing
		"discover_team_agents_seed":                 report.Fail, // a made-up team
		"discover_team_agents_invisible":            report.Fail, // it shows every project
		"claim_task_runner_only":                    report.Fail, // it refuses every claim
	}
	for _, r := range rep.Results {
		if r.Status != want[r.Name] {
			t.Errorf("%s: %s, want %s\n%s", r.Name, r.Status, want[r.Name], r.Log)
		}
	}
	if len(rep.Results) != len(want) {
		t.Errorf("ran %d scripts", len(rep.Results))
	}
}
