package server

import (
	"slices"
	"testing"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/server/store"
)

func TestAllowed(t *testing.T) {
	agent := &store.Principal{Kind: store.KindAgent, Agent: "maya/builder"}
	runner := &store.Principal{Kind: store.KindRunner, Agent: "maya/builder", RunnerID: "r"}
	exec := &store.Principal{Kind: store.KindExecution, AllowedTools: names(executionTools)}
	disc := &store.Principal{Kind: store.KindDiscussion, AllowedTools: names(discussionTools)}
	cases := []struct {
		p    *store.Principal
		tool api.ToolName
		code string
	}{
		{agent, api.ToolDiscoverTeamAgents, ""},
		{agent, api.ToolPostMessage, ""},
		{agent, api.ToolClaimTask, store.CodeNotRunner},
		{agent, api.ToolClaimDiscussion, store.CodeNotRunner},
		{runner, api.ToolClaimTask, ""},
		{runner, api.ToolClaimDiscussion, ""},
		{runner, api.ToolDiscoverTeamAgents, ""},
		{runner, api.ToolPostMessage, store.CodeToolNotAllowed},
		{exec, api.ToolReturnResult, ""},
		{exec, api.ToolCheckpoint, ""},
		{exec, api.ToolDiscoverTeamAgents, ""},
		{exec, api.ToolClaimTask, store.CodeNotRunner},
		{exec, api.ToolAcceptResult, store.CodeToolNotAllowed},
		{disc, api.ToolReadRoom, ""},
		{disc, api.ToolPostMessage, ""},
		{disc, api.ToolCheckpoint, store.CodeToolNotAllowed},
		{disc, api.ToolReturnResult, store.CodeToolNotAllowed},
		{disc, api.ToolDiscoverTeamAgents, store.CodeToolNotAllowed},
		{disc, api.ToolClaimDiscussion, store.CodeNotRunner},
		{agent, "rm_rf", store.CodeUnknownTool},
		{nil, api.ToolReadRoom, store.CodeUnauthenticated},
	}
	for _, c := range cases {
		te := allowed(c.p, c.tool)
		switch {
		case c.code == "" && te != nil:
			t.Errorf("allowed(%v, %s) = %v, want nil", c.p, c.tool, te)
		case c.code != "" && (te == nil || te.Code != c.code):
			t.Errorf("allowed(%v, %s) = %v, want %s", c.p, c.tool, te, c.code)
		}
	}
	for _, tl := range slices.Concat(executionTools, discussionTools) {
		if slices.Contains(runnerOnlyTools, tl) || !tl.Valid() {
			t.Errorf("credential tool %q is runner-only or outside the catalog", tl)
		}
	}
	for _, run := range []api.ToolName{api.ToolClaimTask, api.ToolCheckpoint, api.ToolReturnResult, api.ToolHandoff, api.ToolUpdatePulse, api.ToolRequestStep} {
		if slices.Contains(discussionTools, run) {
			t.Errorf("discussion credential carries run tool %s", run)
		}
	}
}
