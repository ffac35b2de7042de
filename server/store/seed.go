package store

import (
	"context"
	"fmt"

	json "github.com/go-json-experiment/json"
)

// Names in the default world (SeedDefault), so that every example input of
// the tool pages works as written.
const (
	SeedProject        = "website-v2"
	SeedTaskID         = "example-task-id"
	SeedMessageID      = "example-message-id"
	SeedTaskRequestID  = "example-task-request-id"
	SeedMentionID      = "example-mention-id"
	SeedRunnerID       = "maya-laptop"
	SeedBuilderAgent   = "maya/builder"
	SeedReviewerAgent  = "theo/reviewer"
	SeedGeneralRoomID  = "website-v2-general"
	SeedPrivateRoomID  = "maya-private"
	seedOutsideProject = "billing-api"
)

func ptr[T any](v T) *T { return &v }

// seedWorld is the documented default world.
func (s *Store) seedWorld() fixtureWorld {
	now := s.Now()
	return fixtureWorld{
		Version: FixtureVersion,
		Projects: []fxProject{
			{Slug: SeedProject, Name: "Website v2"},
			{Slug: seedOutsideProject, Name: "Billing API"},
		},
		People: []fxPerson{
			{Handle: "maya", DisplayName: "Maya Okafor", AvatarURL: ptr("https://avatars.useprickle.dev/maya.png"), Color: 2},
			{Handle: "theo", DisplayName: "Theo Lindqvist", Color: 5, Away: true},
			{Handle: "rin", DisplayName: "Rin Sato", Color: 6},
		},
		Memberships: []fxMembership{
			{Project: SeedProject, Person: "maya"},
			{Project: SeedProject, Person: "theo"},
			{Project: seedOutsideProject, Person: "rin"},
		},
		Agents: []fxAgent{
			{
				ID: SeedBuilderAgent, AvatarURL: ptr("https://avatars.useprickle.dev/maya-builder.png"),
				Model: "claude-sonnet-4-5", Client: "claude-code", Role: "Builds and ships website features",
				Capabilities: []Capability{{Kind: "repo", Name: "prickle-dev/website-v2"}, {Kind: "deploy", Name: "preview-deploys"}, {Kind: "mcp", Name: "github"}},
				Availability: "online", TrustLevel: "owner_verified", LastSeenAt: &now,
			},
			{
				ID: SeedReviewerAgent, Model: "gpt-5", Client: "codex-cli", Role: "Reviews pull requests",
				Capabilities: []Capability{{Kind: "repo", Name: "prickle-dev/website-v2"}},
				Availability: "idle", TrustLevel: "unverified",
			},
			{
				ID: "rin/analyst", Model: "gemini-2.5-pro", Client: "gemini-cli", Role: "Billing data analysis",
				Capabilities: []Capability{}, Availability: "offline", TrustLevel: "unverified",
			},
		},
		Runners: []fxRunner{{ID: SeedRunnerID, Agent: SeedBuilderAgent, Name: "Maya's laptop"}},
		Rooms: []fxRoom{
			{ID: SeedGeneralRoomID, Project: SeedProject, Kind: "general", Name: "general"},
			{ID: SeedPrivateRoomID, Project: SeedProject, Kind: "private", Owner: ptr("maya"), Name: "maya"},
		},
		Messages: []fxMessage{
			{ID: SeedTaskRequestID, Room: SeedPrivateRoomID, Kind: "task_request", Author: "maya",
				Body: "Task request: add a pricing page to website-v2."},
			{ID: SeedMentionID, Room: SeedGeneralRoomID, Kind: "mention", Author: "theo",
				Body: "@maya/builder can you look at the footer links?"},
			{ID: SeedMessageID, Room: SeedPrivateRoomID, Kind: "room_message", Author: "maya",
				Body: "What should the pricing page say about the free tier?"},
		},
		Turns: []fxTurn{{Message: SeedMessageID, State: TurnWaiting, Agents: []fxTurnAgent{{Agent: SeedBuilderAgent}}}},
		Tasks: []fxTask{{ID: SeedTaskID, Project: SeedProject, Agent: SeedBuilderAgent, Title: "Add a pricing page",
			RequestMessage: ptr(SeedTaskRequestID)}},
	}
}

// SeedDefault seeds the documented default world into an empty database
// and returns the new agent and runner tokens (plaintext, shown once). On a
// database that already holds a project it does nothing and returns nil.
//
// The world: project website-v2 with people maya and theo (theo away, no
// avatar); agents maya/builder (online, owner_verified) and theo/reviewer
// (no avatar, never seen); runner maya-laptop paired to maya/builder; the
// general room website-v2-general and maya's private room maya-private;
// task example-task-id routed to maya/builder and bound to its task request
// example-task-request-id; message example-message-id in maya-private
// whose turn waits on maya/builder; the mention example-mention-id in the
// general room. A second project billing-api (person rin, agent
// rin/analyst) exists so that "cannot see" can be tried.
func (s *Store) SeedDefault(ctx context.Context) ([]IssuedToken, error) {
	// The seed goes the way of every fixture: checked by the fixture
	// schema, then loaded.
	data, err := json.Marshal(s.seedWorld())
	if err != nil {
		return nil, fmt.Errorf("store: seed: %w", err)
	}
	issued, err := s.loadFixture(ctx, data, true)
	if err != nil {
		return nil, fmt.Errorf("store: seed: %w", err)
	}
	return issued, nil
}

// HasWorld reports whether the database already holds a world (seeded or
// loaded from a fixture).
func (s *Store) HasWorld(ctx context.Context) (bool, error) {
	var has bool
	err := s.inReadTx(ctx, func(tx *txn) error {
		var err error
		has, err = exists(ctx, tx, `SELECT 1 FROM projects LIMIT 1`)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	return has, nil
}
