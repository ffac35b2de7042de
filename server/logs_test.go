package server_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

// logLine is one "call" line of the JSON log.
type logLine struct {
	Msg        string   `json:"msg"`
	Level      string   `json:"level"`
	Tool       string   `json:"tool"`
	Outcome    string   `json:"outcome"`
	Code       string   `json:"code"`
	Caller     string   `json:"caller"`
	CallerKind string   `json:"caller_kind"`
	Latency    *float64 `json:"latency"`
}

// callLines parses the JSON log and returns its "call" lines. Every line
// of the log must be JSON.
func callLines(t *testing.T, logs string) []logLine {
	t.Helper()
	var out []logLine
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, sc.Text())
		}
		if l.Msg == "call" {
			out = append(out, l)
		}
	}
	return out
}

// TestOneLogLinePerCall: every tool call that reaches the server's tools
// leaves exactly one line with tool, caller, outcome and latency (and the
// code of a refusal), whatever the outcome.
func TestOneLogLinePerCall(t *testing.T) {
	e := newEnv(t, envOpts{})
	runnerTok := e.token(store.KindRunner, seed.BuilderAgent)
	agentTok := e.token(store.KindAgent, seed.BuilderAgent)
	runner := e.connect(runnerTok)
	agent := e.connect(agentTok)

	type want struct {
		tool                        api.ToolName
		outcome, code, caller, kind string
	}
	var wants []want
	task := runner.claimTask(seed.TaskID, "log-1")
	wants = append(wants, want{api.ToolClaimTask, "ok", "", seed.BuilderAgent, "runner"})
	runner.refused(api.ToolClaimTask, claimTaskArgs("no-such-task", "log-2"), store.CodeTaskNotFound)
	wants = append(wants, want{api.ToolClaimTask, "refused", store.CodeTaskNotFound, seed.BuilderAgent, "runner"})
	runner.refused(api.ToolClaimTask, `{"task_id":"bad id","idempotency_key":"k"}`, "invalid_arguments")
	wants = append(wants, want{api.ToolClaimTask, "invalid_arguments", "invalid_arguments", seed.BuilderAgent, "runner"})
	agent.refused(api.ToolClaimTask, claimTaskArgs(seed.TaskID, "log-3"), store.CodeNotRunner)
	wants = append(wants, want{api.ToolClaimTask, "refused", store.CodeNotRunner, seed.BuilderAgent, "agent"})
	agent.discover(seed.Project)
	wants = append(wants, want{api.ToolDiscoverTeamAgents, "ok", "", seed.BuilderAgent, "agent"})
	agent.refused(api.ToolDiscoverTeamAgents, discoverArgs("billing-api"), store.CodeProjectNotVisible)
	wants = append(wants, want{api.ToolDiscoverTeamAgents, "refused", store.CodeProjectNotVisible, seed.BuilderAgent, "agent"})
	runner.refused(api.ToolClaimDiscussion, discussionArgs(seed.MessageID, "log-4", nil), store.CodeHarnessOutdated)
	wants = append(wants, want{api.ToolClaimDiscussion, "refused", store.CodeHarnessOutdated, seed.BuilderAgent, "runner"})
	disc, _ := runner.claimDiscussion(seed.MessageID, "log-5")
	wants = append(wants, want{api.ToolClaimDiscussion, "ok", "", seed.BuilderAgent, "runner"})
	cred := e.connect(task.ExecutionCredential.Token)
	cred.discover(seed.Project)
	wants = append(wants, want{api.ToolDiscoverTeamAgents, "ok", "", seed.BuilderAgent, "execution_credential"})
	dcred := e.connect(disc.DiscussionCredential.Token)
	dcred.refused(api.ToolDiscoverTeamAgents, discoverArgs(seed.Project), store.CodeToolNotAllowed)
	wants = append(wants, want{api.ToolDiscoverTeamAgents, "refused", store.CodeToolNotAllowed, seed.BuilderAgent, "discussion_credential"})

	lines := callLines(t, e.logs.String())
	if len(lines) != len(wants) {
		t.Fatalf("%d call lines for %d calls:\n%s", len(lines), len(wants), e.logs.String())
	}
	for i, w := range wants {
		l := lines[i]
		got := want{api.ToolName(l.Tool), l.Outcome, l.Code, l.Caller, l.CallerKind}
		if got != w {
			t.Errorf("line %d = %+v, want %+v", i, got, w)
		}
		if l.Latency == nil || *l.Latency < 0 {
			t.Errorf("line %d: latency missing or negative: %+v", i, l)
		}
		if l.Level != "INFO" {
			t.Errorf("line %d: level %s, want INFO", i, l.Level)
		}
	}
}

// TestNoTokenInLogs runs a whole session (seed tokens, claims minting
// credentials, replays, refusals, bad arguments carrying tokens, 401s for
// unknown, revoked and expired tokens, both protocol versions) with the
// logger at debug level, and finds none of the tokens in the log.
func TestNoTokenInLogs(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	secrets := []string{fxBuilderAgent, fxTheoAgent, fxBuilderRunner, fxCriticRunner, fxScoutRunner, fxTheoRunner}
	for _, it := range e.tokens {
		secrets = append(secrets, it.Token)
	}
	// The same keys under both protocols: the second round replays.
	const key = "nolog"
	var live string // the newest execution credential
	for _, proto := range []string{protoDraft, protoTS} {
		runner, err := e.dial(fxBuilderRunner, proto)
		if err != nil {
			t.Fatal(err)
		}
		first := runner.claimTask("example-task-id", key)
		again := runner.claimTask("example-task-id", key) // replay: fresh credential, first revoked
		secrets = append(secrets, first.ExecutionCredential.Token, again.ExecutionCredential.Token)
		d1, _ := runner.claimDiscussion("wake-solo", key)
		d2, _ := runner.claimDiscussion("wake-solo", key)
		secrets = append(secrets, d1.DiscussionCredential.Token, d2.DiscussionCredential.Token)

		// Refusals, and tokens smuggled into arguments.
		runner.refused(api.ToolClaimTask, claimTaskArgs("task-theo", again.ExecutionCredential.Token), store.CodeNotRouted)
		runner.refused(api.ToolClaimTask, claimTaskArgs(again.ExecutionCredential.Token, "k"), store.CodeTaskNotFound)
		runner.refused(api.ToolClaimTask, map[string]any{"task_id": again.ExecutionCredential.Token + "!", "idempotency_key": fxTheoRunner},
			"invalid_arguments")
		runner.refused(api.ToolClaimDiscussion, discussionArgs("wake-solo", "x", 1), store.CodeHarnessOutdated)
		runner.refused(api.ToolClaimTask, impostor(claimTaskArgs("example-task-id", "other"), "theo/reviewer", fxTheoRunner),
			store.CodeAttemptInProgress)
		cred, err := e.dial(again.ExecutionCredential.Token, proto)
		if err != nil {
			t.Fatal(err)
		}
		cred.discover("website-v2")
		cred.refused(api.ToolClaimTask, claimTaskArgs("example-task-id", key), store.CodeNotRunner)
		dcred, err := e.dial(d2.DiscussionCredential.Token, proto)
		if err != nil {
			t.Fatal(err)
		}
		dcred.refused(api.ToolDiscoverTeamAgents, discoverArgs("website-v2"), store.CodeToolNotAllowed)
		if _, _, err := runner.call("no_such_tool", map[string]any{"token": fxBuilderAgent}); err == nil {
			t.Fatal("unknown tool answered")
		}

		// 401s: revoked (replaced by the replay), unknown, malformed.
		e.want401(first.ExecutionCredential.Token)
		e.want401(d1.DiscussionCredential.Token)
		e.want401("prk_" + strings.Repeat("A", 43))
		e.want401(fxBuilderRunner + "x")
		live = again.ExecutionCredential.Token
		runner.close()
		cred.close()
		dcred.close()
	}
	// 401 for an expired credential, then a claim after expiry supersedes
	// the old attempt.
	e.clock.Advance(e.srv.Store().LaunchTimeout())
	e.want401(live)
	runner := e.connect(fxBuilderRunner)
	fresh := runner.claimTask("example-task-id", "nolog-after-expiry")
	secrets = append(secrets, fresh.ExecutionCredential.Token)
	runner.refused(api.ToolClaimTask, claimTaskArgs("example-task-id", key), store.CodeAttemptSuperseded)

	logs := e.logs.String()
	if len(callLines(t, logs)) < 20 {
		t.Fatalf("the session logged too few calls to prove anything:\n%s", logs)
	}
	for _, s := range secrets {
		if s == "" {
			t.Fatal("empty secret")
		}
		if strings.Contains(logs, s) {
			t.Errorf("a token appears in the log: %s...", s[:8])
		}
		// Even a long fragment of a token is a leak.
		if len(s) > 24 && strings.Contains(logs, s[len(s)-20:]) {
			t.Errorf("a token's tail appears in the log: %s...", s[:8])
		}
	}
	if strings.Contains(logs, store.TokenPrefix) {
		t.Errorf("%q appears in the log:\n%s", store.TokenPrefix, logs)
	}
}
