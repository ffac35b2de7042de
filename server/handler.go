package server

import (
	"context"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/server/store"
)

// handler implements api.Handler on the store. The caller comes from the
// context (authorize put it there from the bearer token), never from an
// argument.
type handler struct {
	store *store.Store
}

var _ api.Handler = (*handler)(nil)

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
	return &api.ClaimTaskOutput{
		Attempt: api.ClaimTaskOutputAttempt{
			AttemptID: r.Attempt.AttemptID,
			TaskID:    r.Attempt.TaskID,
			ClaimedAt: r.Attempt.ClaimedAt,
		},
		ExecutionCredential: api.ClaimTaskOutputExecutionCredential{
			Token:        r.ExecutionCredential.Token,
			ExpiresAt:    r.ExecutionCredential.ExpiresAt,
			AllowedTools: toolNames(r.ExecutionCredential.AllowedTools),
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
	out := &api.ClaimDiscussionOutput{
		Project:     r.Project,
		OwnRoom:     &r.OwnRoom,
		RepliesLeft: int64(r.RepliesLeft),
		Lead:        r.Lead,
		Role:        api.ClaimDiscussionOutputRole(r.Role),
		DiscussionCredential: api.ClaimDiscussionOutputDiscussionCredential{
			Token:        r.DiscussionCredential.Token,
			ExpiresAt:    r.DiscussionCredential.ExpiresAt,
			AllowedTools: toolNames(r.DiscussionCredential.AllowedTools),
		},
	}
	if q := r.Reviewing; q != nil {
		out.Reviewing = &api.ClaimDiscussionOutputReviewing{
			MessageID:        q.MessageID,
			Author:           q.Author,
			Body:             q.Body,
			Provenance:       api.ClaimDiscussionOutputReviewingProvenance(q.Provenance),
			ProvenanceStatus: api.ClaimDiscussionOutputReviewingProvenanceStatus(q.ProvenanceStatus),
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
			caps = append(caps, api.DiscoverTeamAgentsOutputAgentCapability{
				Kind: api.DiscoverTeamAgentsOutputAgentCapabilityKind(c.Kind),
				Name: c.Name,
			})
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
			Availability: api.DiscoverTeamAgentsOutputAgentAvailability(a.Availability),
			TrustLevel:   api.DiscoverTeamAgentsOutputAgentTrustLevel(a.TrustLevel),
			LastSeenAt:   a.LastSeenAt,
		})
	}
	return out, nil
}

func toolNames(names []string) []api.ToolName {
	out := make([]api.ToolName, len(names))
	for i, n := range names {
		out[i] = api.ToolName(n)
	}
	return out
}
