package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

// TestClaimTaskRouting: a runner claims only tasks routed to its agent;
// tasks in projects its owner cannot see look like missing ones.
func TestClaimTaskRouting(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json", fileDB: true})
	maya := e.connect(fxBuilderRunner)
	theo := e.connect(fxTheoRunner)

	out := maya.claimTask("example-task-id", "route-1")
	if out.Attempt.TaskID != "example-task-id" || !out.Attempt.ClaimedAt.Equal(t0) {
		t.Errorf("attempt = %+v", out.Attempt)
	}
	theo.claimTask("task-theo", "route-1")
	maya.refused(api.ToolClaimTask, claimTaskArgs("task-theo", "route-2"), store.CodeNotRouted)
	theo.refused(api.ToolClaimTask, claimTaskArgs("example-task-id", "route-2"), store.CodeNotRouted)
	missing := maya.refused(api.ToolClaimTask, claimTaskArgs("no-such-task", "route-3"), store.CodeTaskNotFound)
	invisible := maya.refused(api.ToolClaimTask, claimTaskArgs("task-mobile", "route-3"), store.CodeTaskNotFound)
	if strings.ReplaceAll(missing.Message, "no-such-task", "X") != strings.ReplaceAll(invisible.Message, "task-mobile", "X") {
		t.Errorf("missing and invisible tasks are told apart: %q vs %q", missing.Message, invisible.Message)
	}
	// Two answered claims (one earlier attempt in the world): the
	// refusals left nothing behind.
	if n := e.count("attempts"); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
}

// TestClaimTaskReplayFreshCredential: the same key returns the same attempt
// with a fresh credential; the earlier credential stops working (401).
func TestClaimTaskReplayFreshCredential(t *testing.T) {
	for _, proto := range []string{protoDraft, protoTS} {
		t.Run("protocol="+proto, func(t *testing.T) {
			e := newEnv(t, envOpts{})
			runner, err := e.dial(e.token(store.KindRunner, seed.BuilderAgent), proto)
			if err != nil {
				t.Fatal(err)
			}
			first := runner.claimTask(seed.TaskID, "replay")
			cred1, err := e.dial(first.ExecutionCredential.Token, proto)
			if err != nil {
				t.Fatal(err)
			}
			cred1.discover(seed.Project)

			e.clock.Advance(3 * time.Minute)
			second := runner.claimTask(seed.TaskID, "replay")
			if second.Attempt != first.Attempt {
				t.Fatalf("replay attempt %+v, want %+v", second.Attempt, first.Attempt)
			}
			if second.ExecutionCredential.Token == first.ExecutionCredential.Token {
				t.Fatal("replay returned the same credential")
			}
			if want := t0.Add(3*time.Minute + store.DefaultLaunchTimeout); !second.ExecutionCredential.ExpiresAt.Equal(want) {
				t.Errorf("fresh credential expires %v, want %v", second.ExecutionCredential.ExpiresAt, want)
			}
			// The earlier credential is revoked: on its open session, and for
			// anyone presenting it.
			if _, _, err := cred1.call(api.ToolDiscoverTeamAgents, discoverArgs(seed.Project)); err == nil {
				t.Fatal("revoked credential still answered on its session")
			}
			if !cred1.wire.sawStatus(401) {
				t.Error("revoked credential's session did not see a 401")
			}
			e.want401(first.ExecutionCredential.Token)
			// The fresh one works.
			cred2, err := e.dial(second.ExecutionCredential.Token, proto)
			if err != nil {
				t.Fatal(err)
			}
			cred2.discover(seed.Project)
		})
	}
}

// TestClaimTaskWorldAttempt: an earlier claim described by a world
// replays (same id and claimed_at) and blocks another key while live.
func TestClaimTaskWorldAttempt(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	maya := e.connect(fxBuilderRunner)
	maya.refused(api.ToolClaimTask, claimTaskArgs("task-unbound", "another-key"), store.CodeAttemptInProgress)
	out := maya.claimTask("task-unbound", "earlier-key")
	if want := time.Date(2026, 5, 1, 11, 55, 0, 0, time.UTC); out.Attempt.AttemptID != "att-earlier" || !out.Attempt.ClaimedAt.Equal(want) {
		t.Errorf("the world's attempt replays as %+v, want att-earlier claimed %v", out.Attempt, want)
	}
}

// TestClaimTaskCauseBinding: a task its owner asked for binds that Task
// request; wake.message_id may only repeat it, and a mention is refused.
func TestClaimTaskCauseBinding(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	runner := e.connect(e.token(store.KindRunner, seed.BuilderAgent))

	runner.refused(api.ToolClaimTask, claimTaskWake(seed.TaskID, "cause", seed.MentionID), store.CodeMentionNotCause)
	r := runner.refused(api.ToolClaimTask, claimTaskWake(seed.TaskID, "cause", seed.MessageID), store.CodeCauseMismatch)
	if !strings.Contains(r.Message, seed.TaskRequestID) {
		t.Errorf("cause_mismatch does not name the task's request: %q", r.Message)
	}
	runner.refused(api.ToolClaimTask, claimTaskWake(seed.TaskID, "cause", "no-such-message"), store.CodeCauseMismatch)
	if n := e.count("attempts"); n != 0 {
		t.Fatalf("refused claims left %d attempts", n)
	}
	// Repeating the request is fine, and so is no wake at all (the
	// request binds itself); both with the same key replay one attempt.
	withWake, _ := callOK[api.ClaimTaskOutput](runner, api.ToolClaimTask, claimTaskWake(seed.TaskID, "cause", seed.TaskRequestID))
	noWake := runner.claimTask(seed.TaskID, "cause")
	if withWake.Attempt != noWake.Attempt {
		t.Errorf("wake and no wake gave different attempts: %+v vs %+v", withWake.Attempt, noWake.Attempt)
	}
	// A replay naming another message is still refused.
	runner.refused(api.ToolClaimTask, claimTaskWake(seed.TaskID, "cause", seed.MentionID), store.CodeMentionNotCause)
	if n := e.count("attempts"); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}

	// A task nobody asked for (a handoff) takes no wake at all.
	f := newEnv(t, envOpts{world: "world.json"})
	maya := f.connect(fxBuilderRunner)
	f.clock.Advance(time.Hour) // let the world's earlier attempt expire
	maya.refused(api.ToolClaimTask, claimTaskWake("task-unbound", "k", "req-1"), store.CodeCauseMismatch)
	maya.refused(api.ToolClaimTask, claimTaskWake("task-unbound", "k", "mention-1"), store.CodeMentionNotCause)
	maya.claimTask("task-unbound", "k")
}

// TestClaimTaskCredentialExpiresWithLaunchTimeout: the credential lives
// exactly the launch timeout on the injected clock; after it, HTTP 401.
// An expired attempt no longer blocks a new key, and its key is then
// superseded.
func TestClaimTaskCredentialExpiresWithLaunchTimeout(t *testing.T) {
	const launch = 7 * time.Minute
	for _, proto := range []string{protoDraft, protoTS} {
		t.Run("protocol="+proto, func(t *testing.T) {
			e := newEnv(t, envOpts{launch: launch})
			runner, err := e.dial(e.token(store.KindRunner, seed.BuilderAgent), proto)
			if err != nil {
				t.Fatal(err)
			}
			out := runner.claimTask(seed.TaskID, "expiry")
			if got := out.ExecutionCredential.ExpiresAt.Sub(out.Attempt.ClaimedAt); got != launch {
				t.Fatalf("credential lives %v, want the launch timeout %v", got, launch)
			}
			cred, err := e.dial(out.ExecutionCredential.Token, proto)
			if err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(launch - time.Millisecond)
			cred.discover(seed.Project) // one millisecond left
			runner.refused(api.ToolClaimTask, claimTaskArgs(seed.TaskID, "expiry-2"), store.CodeAttemptInProgress)

			e.clock.Advance(time.Millisecond)
			if _, _, err := cred.call(api.ToolDiscoverTeamAgents, discoverArgs(seed.Project)); err == nil {
				t.Fatal("expired credential still answered on its session")
			}
			if !cred.wire.sawStatus(401) {
				t.Error("expired credential's session did not see a 401")
			}
			e.want401(out.ExecutionCredential.Token)

			next := runner.claimTask(seed.TaskID, "expiry-2")
			if next.Attempt.AttemptID == out.Attempt.AttemptID {
				t.Fatal("a new key after expiry returned the old attempt")
			}
			runner.refused(api.ToolClaimTask, claimTaskArgs(seed.TaskID, "expiry"), store.CodeAttemptSuperseded)
		})
	}
}

// TestClaimTaskDefaultLaunchTimeout: without a setting, 15 minutes.
func TestClaimTaskDefaultLaunchTimeout(t *testing.T) {
	e := newEnv(t, envOpts{})
	out := e.connect(e.token(store.KindRunner, seed.BuilderAgent)).claimTask(seed.TaskID, "default")
	if got := out.ExecutionCredential.ExpiresAt.Sub(out.Attempt.ClaimedAt); got != 15*time.Minute || store.DefaultLaunchTimeout != 15*time.Minute {
		t.Fatalf("default launch timeout %v (store default %v), want 15m", got, store.DefaultLaunchTimeout)
	}
}
