package server

import (
	"context"
	"fmt"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/server/store"
)

// handler implements api.Handler on the store. The caller comes from the
// context (authorize put it there from the bearer token), never from an
// argument. The store answers discover_team_agents, claim_task's attempt
// and claim_discussion's quoted draft in the generated output types
// already; what the handler still converts is what the store keeps as its
// own (server/README.md, "One shape for the data"): a claim's role and
// its credential's allowed tools, as enums. It embeds
// api.UnimplementedHandler: a tool whose page is added before the server
// implements it is served and refused as not_implemented (prickled logs
// which at start-up).
type handler struct {
	api.UnimplementedHandler
	store *store.Store
}

var _ api.Handler = (*handler)(nil)

// enum converts a value the store keeps into a generated enum type. A value
// outside the documented ones is a server bug (bad data), answered as an
// internal error: it is never sent.
func enum[T interface {
	~string
	Valid() bool
}](field, s string) (T, error) {
	v := T(s)
	if !v.Valid() {
		return v, fmt.Errorf("server: %s %q is not one of the documented values", field, s)
	}
	return v, nil
}

// toolNames converts a credential's allowed tools, as enum does.
func toolNames(names []string) ([]api.ToolName, error) {
	out := make([]api.ToolName, len(names))
	for i, n := range names {
		t, err := enum[api.ToolName]("allowed tool", n)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// ClaimTask implements api.Handler.
func (h *handler) ClaimTask(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
	var wake *string
	if in.Wake != nil {
		wake = &in.Wake.MessageID
	}
	r, err := h.store.ClaimTask(ctx, principal(ctx), in.TaskID, in.IdempotencyKey, wake)
	if err != nil {
		return nil, toolError(err)
	}
	tools, err := toolNames(r.ExecutionCredential.AllowedTools)
	if err != nil {
		return nil, err
	}
	return &api.ClaimTaskOutput{
		Attempt: r.Attempt,
		ExecutionCredential: api.ClaimTaskOutputExecutionCredential{
			Token:        r.ExecutionCredential.Token,
			ExpiresAt:    r.ExecutionCredential.ExpiresAt,
			AllowedTools: tools,
		},
	}, nil
}

// ClaimDiscussion implements api.Handler.
func (h *handler) ClaimDiscussion(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
	var harness *int
	if in.Harness != nil {
		n := int(*in.Harness)
		harness = &n
	}
	r, err := h.store.ClaimDiscussion(ctx, principal(ctx), in.MessageID, in.IdempotencyKey, harness)
	if err != nil {
		return nil, toolError(err)
	}
	role, err := enum[api.ClaimDiscussionOutputRole]("role", r.Role)
	if err != nil {
		return nil, err
	}
	tools, err := toolNames(r.DiscussionCredential.AllowedTools)
	if err != nil {
		return nil, err
	}
	return &api.ClaimDiscussionOutput{
		Project:     r.Project,
		OwnRoom:     &r.OwnRoom,
		RepliesLeft: int64(r.RepliesLeft),
		Lead:        r.Lead,
		Role:        role,
		Reviewing:   r.Reviewing,
		DiscussionCredential: api.ClaimDiscussionOutputDiscussionCredential{
			Token:        r.DiscussionCredential.Token,
			ExpiresAt:    r.DiscussionCredential.ExpiresAt,
			AllowedTools: tools,
		},
	}, nil
}

// DiscoverTeamAgents implements api.Handler: the store answers in the
// output's own type.
func (h *handler) DiscoverTeamAgents(ctx context.Context, in *api.DiscoverTeamAgentsInput) (*api.DiscoverTeamAgentsOutput, error) {
	out, err := h.store.DiscoverTeamAgents(ctx, principal(ctx), in.Project)
	if err != nil {
		return nil, toolError(err)
	}
	return &out, nil
}
