package server

import (
	"context"
	"fmt"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/server/store"
)

// handler implements api.Handler on the store. The caller comes from the
// context (authorize put it there from the bearer token), never from an
// argument. It embeds api.UnimplementedHandler: a tool whose page is added
// before the server implements it is served and refused as not_implemented
// (prickled logs which at start-up).
type handler struct {
	api.UnimplementedHandler
	store *store.Store
}

var _ api.Handler = (*handler)(nil)

// enum converts a value the store read into a generated enum type. A value
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
		Attempt: api.ClaimTaskOutputAttempt{
			AttemptID: r.Attempt.AttemptID,
			TaskID:    r.Attempt.TaskID,
			ClaimedAt: r.Attempt.ClaimedAt,
		},
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
	out := &api.ClaimDiscussionOutput{
		Project:     r.Project,
		OwnRoom:     &r.OwnRoom,
		RepliesLeft: int64(r.RepliesLeft),
		Lead:        r.Lead,
		Role:        role,
		DiscussionCredential: api.ClaimDiscussionOutputDiscussionCredential{
			Token:        r.DiscussionCredential.Token,
			ExpiresAt:    r.DiscussionCredential.ExpiresAt,
			AllowedTools: tools,
		},
	}
	if q := r.Reviewing; q != nil {
		prov, err := enum[api.ClaimDiscussionOutputReviewingProvenance]("provenance", q.Provenance)
		if err != nil {
			return nil, err
		}
		status, err := enum[api.ClaimDiscussionOutputReviewingProvenanceStatus]("provenance status", q.ProvenanceStatus)
		if err != nil {
			return nil, err
		}
		out.Reviewing = &api.ClaimDiscussionOutputReviewing{
			MessageID:        q.MessageID,
			Author:           q.Author,
			Body:             q.Body,
			Provenance:       prov,
			ProvenanceStatus: status,
		}
	}
	return out, nil
}

// DiscoverTeamAgents implements api.Handler.
func (h *handler) DiscoverTeamAgents(ctx context.Context, in *api.DiscoverTeamAgentsInput) (*api.DiscoverTeamAgentsOutput, error) {
	r, err := h.store.DiscoverTeamAgents(ctx, principal(ctx), in.Project)
	if err != nil {
		return nil, toolError(err)
	}
	out := &api.DiscoverTeamAgentsOutput{
		People: make([]api.DiscoverTeamAgentsOutputPerson, 0, len(r.People)),
		Agents: make([]api.DiscoverTeamAgentsOutputAgent, 0, len(r.Agents)),
	}
	for _, p := range r.People {
		out.People = append(out.People, api.DiscoverTeamAgentsOutputPerson{
			Handle:      p.Handle,
			DisplayName: p.DisplayName,
			AvatarURL:   p.AvatarURL,
			Color:       int64(p.Color),
			Away:        p.Away,
		})
	}
	for _, a := range r.Agents {
		caps := make([]api.DiscoverTeamAgentsOutputAgentCapability, 0, len(a.Capabilities))
		for _, c := range a.Capabilities {
			kind, err := enum[api.DiscoverTeamAgentsOutputAgentCapabilityKind]("capability kind", c.Kind)
			if err != nil {
				return nil, err
			}
			caps = append(caps, api.DiscoverTeamAgentsOutputAgentCapability{Kind: kind, Name: c.Name})
		}
		avail, err := enum[api.DiscoverTeamAgentsOutputAgentAvailability]("availability", a.Availability)
		if err != nil {
			return nil, err
		}
		trust, err := enum[api.DiscoverTeamAgentsOutputAgentTrustLevel]("trust level", a.TrustLevel)
		if err != nil {
			return nil, err
		}
		out.Agents = append(out.Agents, api.DiscoverTeamAgentsOutputAgent{
			AgentID:      a.AgentID,
			Owner:        a.Owner,
			Name:         a.Name,
			AvatarURL:    a.AvatarURL,
			Model:        a.Model,
			Client:       a.Client,
			Role:         a.Role,
			Capabilities: caps,
			Availability: avail,
			TrustLevel:   trust,
			LastSeenAt:   a.LastSeenAt,
		})
	}
	return out, nil
}
