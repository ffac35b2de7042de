package server_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

// Tokens from testdata/world.json.
const (
	fxBuilderAgent  = "prk_fixture-agent-maya-builder-0001"
	fxTheoAgent     = "prk_fixture-agent-theo-reviewer-0001"
	fxBuilderRunner = "prk_fixture-runner-maya-laptop-0001"
	fxCriticRunner  = "prk_fixture-runner-maya-critic-0001"
	fxScoutRunner   = "prk_fixture-runner-maya-scout-0001"
	fxTheoRunner    = "prk_fixture-runner-theo-desktop-0001"
)

// impostor is what a caller adds to its arguments to pretend to be someone
// else. The input schemas allow additional properties, so these arrive at
// the server; they must change nothing.
func impostor(args map[string]any, agent, runner string) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		out[k] = v
	}
	out["agent"] = agent
	out["agent_id"] = agent
	out["caller"] = agent
	out["runner"] = runner
	out["runner_id"] = runner
	out["owner"] = strings.Split(agent, "/")[0]
	out["token"] = "prk_not-a-real-token-0000"
	return out
}

// TestIdentityOnlyFromBearerToken: arguments naming another agent or runner
// are ignored; identity comes from the bearer token alone.
func TestIdentityOnlyFromBearerToken(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	theoRunner := e.connect(fxTheoRunner)
	mayaRunner := e.connect(fxBuilderRunner)
	theoAgent := e.connect(fxTheoAgent)

	// theo's runner cannot claim maya's task by naming maya's agent/runner.
	r := theoRunner.refused(api.ToolClaimTask,
		impostor(claimTaskArgs("example-task-id", "k-impostor"), "maya/builder", "maya-laptop"), store.CodeNotRouted)
	if !strings.Contains(r.Message, "theo/reviewer") {
		t.Errorf("not_routed message does not name the caller's own agent: %q", r.Message)
	}
	// ... nor claim a discussion in maya's private room.
	theoRunner.refused(api.ToolClaimDiscussion,
		impostor(discussionArgs("wake-solo", "k-impostor", 2), "maya/builder", "maya-laptop"), store.CodeNotYourRoom)
	// theo's agent cannot see ines's project by naming ines's agent.
	theoAgent.refused(api.ToolDiscoverTeamAgents, impostor(discoverArgs("mobile-app"), "ines/helper", ""),
		store.CodeProjectNotVisible)

	// maya's runner naming theo acts as maya: the claim is maya's.
	out, _ := callOK[api.ClaimTaskOutput](mayaRunner, api.ToolClaimTask,
		impostor(claimTaskArgs("example-task-id", "k-maya"), "theo/reviewer", "theo-desktop"))
	// The same key without the extra arguments replays the same attempt:
	// the extras did not move the claim to another runner.
	again := mayaRunner.claimTask("example-task-id", "k-maya")
	if again.Attempt.AttemptID != out.Attempt.AttemptID {
		t.Fatalf("replay without impostor arguments: attempt %s, want %s", again.Attempt.AttemptID, out.Attempt.AttemptID)
	}
	// theo's runner with maya's key gets nothing of maya's.
	theoRunner.refused(api.ToolClaimTask, claimTaskArgs("example-task-id", "k-maya"), store.CodeNotRouted)
	// The credential acts for maya/builder only: it sees website-v2, not
	// mobile-app, whatever it claims to be.
	cred := e.connect(again.ExecutionCredential.Token)
	cred.discover("website-v2")
	cred.refused(api.ToolDiscoverTeamAgents, impostor(discoverArgs("mobile-app"), "ines/helper", ""), store.CodeProjectNotVisible)

	// The log names the token's agent, never the argument's.
	for _, l := range callLines(t, e.logs.String()) {
		if l.Caller == "" {
			t.Errorf("log line without caller: %+v", l)
		}
		if api.ToolName(l.Tool) == api.ToolClaimTask && l.Outcome == "ok" && l.Caller != "maya/builder" {
			t.Errorf("claim logged for %q, want maya/builder", l.Caller)
		}
	}
}

// TestTokenKindsAndAllowedTools: what each kind of token may call, over
// HTTP, with both protocol versions. Runner-only tools refuse agents and
// credentials (not_runner); a credential may call only its allowed_tools
// (tool_not_allowed); a runner calls discover_team_agents for its agent.
func TestTokenKindsAndAllowedTools(t *testing.T) {
	for _, proto := range []string{protoDraft, protoTS} {
		t.Run("protocol="+proto, func(t *testing.T) {
			e := newEnv(t, envOpts{})
			runnerTok := e.token(store.KindRunner, seed.BuilderAgent)
			agentTok := e.token(store.KindAgent, seed.BuilderAgent)
			dial := func(tok string) *conn {
				t.Helper()
				c, err := e.dial(tok, proto)
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				return c
			}
			runner := dial(runnerTok)
			task := runner.claimTask(seed.TaskID, "kinds")
			disc, _ := runner.claimDiscussion(seed.MessageID, "kinds")

			if got, want := task.ExecutionCredential.AllowedTools, server.ExecutionTools(); !slices.Equal(got, want) {
				t.Errorf("execution credential allowed_tools = %v, want %v", got, want)
			}
			if got, want := disc.DiscussionCredential.AllowedTools, server.DiscussionTools(); !slices.Equal(got, want) {
				t.Errorf("discussion credential allowed_tools = %v, want %v", got, want)
			}
			// Neither credential authorizes a claim; a discussion credential
			// never carries a run tool.
			for _, tools := range [][]api.ToolName{task.ExecutionCredential.AllowedTools, disc.DiscussionCredential.AllowedTools} {
				if slices.Contains(tools, api.ToolClaimTask) || slices.Contains(tools, api.ToolClaimDiscussion) {
					t.Errorf("a credential may call a claim: %v", tools)
				}
			}
			for _, run := range []api.ToolName{api.ToolCheckpoint, api.ToolReturnResult, api.ToolDiscoverTeamAgents} {
				if slices.Contains(disc.DiscussionCredential.AllowedTools, run) {
					t.Errorf("a discussion credential may call %s", run)
				}
			}

			args := map[api.ToolName]any{
				api.ToolDiscoverTeamAgents: discoverArgs(seed.Project),
				api.ToolClaimTask:          claimTaskArgs(seed.TaskID, "kinds"),
				api.ToolClaimDiscussion:    discussionArgs(seed.MessageID, "kinds", 2),
			}
			type caller struct {
				name    string
				tok     string
				allowed []api.ToolName // nil: by kind
			}
			callers := []caller{
				{"agent", agentTok, nil},
				{"runner", runnerTok, nil},
				{"execution credential", task.ExecutionCredential.Token, task.ExecutionCredential.AllowedTools},
				{"discussion credential", disc.DiscussionCredential.Token, disc.DiscussionCredential.AllowedTools},
			}
			want := func(c caller, tool api.ToolName) string { // "" means allowed
				switch {
				case tool == api.ToolClaimTask || tool == api.ToolClaimDiscussion:
					if c.name == "runner" {
						return ""
					}
					return store.CodeNotRunner
				case c.allowed != nil && !slices.Contains(c.allowed, tool):
					return store.CodeToolNotAllowed
				}
				return ""
			}
			// The execution credential is used last for claims: a runner
			// replay of "kinds" would revoke it. Order: every caller's
			// discover first, then the claims.
			for _, tool := range []api.ToolName{api.ToolDiscoverTeamAgents, api.ToolClaimTask, api.ToolClaimDiscussion} {
				for _, c := range callers {
					if c.name == "runner" && tool != api.ToolDiscoverTeamAgents {
						continue // a replay would revoke the credentials under test
					}
					cc := dial(c.tok)
					if code := want(c, tool); code != "" {
						cc.refused(tool, args[tool], code)
					} else {
						callOK[api.DiscoverTeamAgentsOutput](cc, tool, args[tool]) // only discover is ever allowed here
					}
					cc.close()
				}
			}
			// Finally the runner's claims (replays) still work.
			runner.claimTask(seed.TaskID, "kinds")
			runner.claimDiscussion(seed.MessageID, "kinds")
		})
	}
}

// TestOneAnswerForEveryRefusedToken: a token never issued, one revoked
// and an expired credential get the same 401, byte for byte, and over
// stdio the same refusal: whoever holds a leaked string does not learn
// that it was once real. (They were "unknown token", "token revoked" and
// "token expired".) The log says which.
func TestOneAnswerForEveryRefusedToken(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	ctx := context.Background()
	runner := e.connect(fxBuilderRunner)
	expired := runner.claimTask("example-task-id", "k").ExecutionCredential.Token
	runner.close()
	issued, err := e.srv.Store().IssueAgentToken(ctx, "maya/builder")
	if err != nil {
		t.Fatal(err)
	}
	revoked := issued.Token
	stdio := stdioClient(t, e, revoked) // authenticated now, revoked below
	if err := e.srv.Store().RevokeToken(ctx, revoked); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(store.DefaultLaunchTimeout + time.Second)

	type answer struct {
		status       int
		header, body string
	}
	var answers []answer
	for _, tok := range []string{"prk_never-issued-000000000000000000000000000", revoked, expired} {
		resp, body := rawPost(t, e.url(), tok, "application/json", initializeBody)
		answers = append(answers, answer{resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(body)})
	}
	for i, a := range answers {
		if a != answers[0] || a.status != http.StatusUnauthorized {
			t.Errorf("refused token %d: %+v; the first: %+v", i, a, answers[0])
		}
	}
	_, err = stdio.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "website-v2"})
	te, ok := rt.AsToolError(err)
	if !ok || te.Code != store.CodeUnauthenticated || te.Message != strings.TrimSpace(answers[0].body) {
		t.Errorf("stdio, revoked token: %v, want unauthenticated: %s", err, answers[0].body)
	}
	for _, reason := range []string{"unknown", "revoked", "expired"} {
		if !strings.Contains(e.logs.String(), reason) {
			t.Errorf("the log does not say %q", reason)
		}
	}
}
