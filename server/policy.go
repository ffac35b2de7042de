package server

import (
	"slices"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/server/store"
)

// Who may call which tool: the MCP layer's policy (server/README.md, "Who
// may call what"). The lists name tools by the generated catalog's
// constants, so a tool the pages drop or rename fails to compile here.

// runnerOnlyTools may be called only with a runner token.
var runnerOnlyTools = []api.ToolName{api.ToolClaimTask, api.ToolClaimDiscussion}

// runnerTools are the tools a runner token may call: the claims, and
// discover_team_agents on behalf of its agent.
var runnerTools = []api.ToolName{api.ToolDiscoverTeamAgents, api.ToolClaimTask, api.ToolClaimDiscussion}

// executionTools are the allowed_tools of an execution credential: the run
// tools for one attempt. Never the claims, and not accept_task /
// accept_result / reject_result (a run neither takes new work nor judges
// results).
var executionTools = []api.ToolName{
	api.ToolDiscoverTeamAgents, api.ToolGetProjectContext, api.ToolReadRoom, api.ToolPostMessage,
	api.ToolWaitForMention, api.ToolHandoff, api.ToolCheckInbox, api.ToolCheckpoint, api.ToolReturnResult,
	api.ToolUpdatePulse, api.ToolRequestCapability, api.ToolWaitForUpdates, api.ToolRequestStep,
}

// discussionTools are the allowed_tools of a discussion credential: read the
// one room and post the one reply. Never a run tool.
var discussionTools = []api.ToolName{api.ToolReadRoom, api.ToolPostMessage}

// allowed reports whether p may call tool, as a refusal if not (codes of
// store's table):
// unknown_tool, unauthenticated, not_runner (claim_task / claim_discussion
// by anything but a runner), tool_not_allowed (a runner calling an agent
// tool, or a credential calling a tool outside its allowed_tools). Agent
// tokens may call every tool but the runner-only ones. Expiry is not
// looked at here: authentication checks it.
func allowed(p *store.Principal, tool api.ToolName) *rt.ToolError {
	if !tool.Valid() {
		return rt.Refuse(store.CodeUnknownTool, "%q is not a prickle tool", tool)
	}
	if p == nil {
		return rt.Refuse(store.CodeUnauthenticated, "no caller identity")
	}
	if slices.Contains(runnerOnlyTools, tool) && p.Kind != store.KindRunner {
		return rt.Refuse(store.CodeNotRunner, "only a paired runner can call %s", tool)
	}
	switch p.Kind {
	case store.KindAgent:
		return nil
	case store.KindRunner:
		if slices.Contains(runnerTools, tool) {
			return nil
		}
		return rt.Refuse(store.CodeToolNotAllowed, "a runner token may not call %s", tool)
	case store.KindExecution, store.KindDiscussion:
		if slices.Contains(p.AllowedTools, string(tool)) {
			return nil
		}
		return rt.Refuse(store.CodeToolNotAllowed, "this credential may not call %s", tool)
	default:
		return rt.Refuse(store.CodeUnauthenticated, "unknown caller kind")
	}
}

// names returns tools as the strings the store keeps.
func names(tools []api.ToolName) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = string(t)
	}
	return out
}

// ExecutionTools returns the allowed_tools of the execution credentials
// claim_task mints.
func ExecutionTools() []api.ToolName { return slices.Clone(executionTools) }

// DiscussionTools returns the allowed_tools of the discussion credentials
// claim_discussion mints.
func DiscussionTools() []api.ToolName { return slices.Clone(discussionTools) }
