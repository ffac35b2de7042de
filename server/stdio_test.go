package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/gen/rt"
	"github.com/prickle-dev/prickle/server/store"
)

// stdioClient serves e over an in-memory transport as the holder of token
// (what --stdio does with PRICKLE_TOKEN) and connects a client to it.
func stdioClient(t *testing.T, e *env, token string) *api.Client {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.ServeStdio(ctx, token, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return api.NewClient(cs)
}

// TestServeStdio: the three tools over stdio, identity from the token the
// server was started with; the token is checked on every call, so a
// credential expires mid-session.
func TestServeStdio(t *testing.T) {
	e := newEnv(t, envOpts{fixture: "world.json"})
	ctx := context.Background()
	if err := e.srv.ServeStdio(ctx, "prk_unknown-token-000000", &mcp.StdioTransport{}); !errors.Is(err, store.ErrUnknownToken) {
		t.Fatalf("ServeStdio with an unknown token: %v", err)
	}

	runner := stdioClient(t, e, fxBuilderRunner)
	if _, err := runner.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "website-v2"}); err != nil {
		t.Fatal(err)
	}
	task, err := runner.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: "example-task-id", IdempotencyKey: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	two := int64(2)
	disc, err := runner.ClaimDiscussion(ctx, &api.ClaimDiscussionInput{MessageID: "wake-solo", IdempotencyKey: "stdio", Harness: &two})
	if err != nil {
		t.Fatal(err)
	}
	if disc.Role != "draft" || !disc.Lead {
		t.Errorf("discussion = %+v", disc)
	}
	_, err = runner.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: "task-theo", IdempotencyKey: "stdio"})
	if te, ok := rt.AsToolError(err); !ok || te.Code != store.CodeNotRouted {
		t.Errorf("claim of theo's task over stdio: %v", err)
	}

	agent := stdioClient(t, e, fxBuilderAgent)
	_, err = agent.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: "example-task-id", IdempotencyKey: "stdio"})
	if te, ok := rt.AsToolError(err); !ok || te.Code != store.CodeNotRunner {
		t.Errorf("agent claim over stdio: %v", err)
	}

	cred := stdioClient(t, e, task.ExecutionCredential.Token)
	if _, err := cred.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "website-v2"}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(store.DefaultLaunchTimeout + time.Millisecond)
	_, err = cred.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "website-v2"})
	if te, ok := rt.AsToolError(err); !ok || te.Code != store.CodeUnauthenticated {
		t.Errorf("expired credential over stdio: %v", err)
	}

	for _, l := range callLines(t, e.logs.String()) {
		// (A call refused before its caller is attached, not_runner or
		// unauthenticated, is logged without a caller over stdio.)
		if (l.Outcome == "ok" || l.Code == store.CodeNotRouted) && l.Caller != "maya/builder" {
			t.Errorf("stdio call logged without its caller: %+v", l)
		}
	}
}
