package api_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/rt"
)

// directory is a Handler that implements discover_team_agents. It embeds
// UnimplementedHandler, so it implements every other documented tool too:
// as a refusal, until it has a method of its own for it.
type directory struct {
	api.UnimplementedHandler
}

func (directory) DiscoverTeamAgents(_ context.Context, in *api.DiscoverTeamAgentsInput) (*api.DiscoverTeamAgentsOutput, error) {
	if in.Project != "website-v2" {
		return nil, rt.Refuse("project_not_visible", "no project %s", in.Project)
	}
	return &api.DiscoverTeamAgentsOutput{
		People: []api.DiscoverTeamAgentsOutputPerson{{Handle: "maya", DisplayName: "Maya Okafor", Color: 2}},
		Agents: []api.DiscoverTeamAgentsOutputAgent{{
			AgentID: "maya/builder", Owner: "maya", Name: "builder", Model: "claude-sonnet-4-5", Client: "claude-code",
			Capabilities: []api.DiscoverTeamAgentsOutputAgentCapability{},
			Availability: api.DiscoverTeamAgentsOutputAgentAvailabilityOnline,
			TrustLevel:   api.DiscoverTeamAgentsOutputAgentTrustLevelOwnerVerified,
		}},
	}, nil
}

// serve serves h on an MCP server and returns a client session of it,
// both in memory.
func serve(ctx context.Context, h api.Handler) (*mcp.ClientSession, error) {
	server := mcp.NewServer(&mcp.Implementation{Name: "directory", Version: "1"}, nil)
	api.Register(server, h, nil)
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, serverEnd, nil); err != nil {
		return nil, err
	}
	return mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, clientEnd, nil)
}

// A server registers a Handler: every documented tool is served with its
// documented schemas, the ones the handler does not implement too.
func ExampleRegister() {
	ctx := context.Background()
	session, err := serve(ctx, directory{})
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	served := 0
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			log.Fatal(err)
		}
		if tool.Name == string(api.ToolDiscoverTeamAgents) {
			fmt.Println(tool.Name, "requires", tool.InputSchema.(map[string]any)["required"])
		}
		served++
	}
	fmt.Println("every documented tool is served:", served == len(api.Tools()))
	// Output:
	// discover_team_agents requires [project]
	// every documented tool is served: true
}

// A client calls the tools with Go values: the arguments and the answer
// are checked against the documented schemas, and a refusal is an
// *rt.ToolError with its code.
func ExampleClient() {
	ctx := context.Background()
	session, err := serve(ctx, directory{})
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	client := api.NewClient(session)

	team, err := client.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "website-v2"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(team.Agents[0].AgentID, team.Agents[0].Availability)

	var refusal *rt.ToolError
	_, err = client.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "billing-api"})
	if errors.As(err, &refusal) {
		fmt.Println("refused:", refusal.Code)
	}
	_, err = client.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: "example-task-id", IdempotencyKey: "key-1"})
	if errors.As(err, &refusal) {
		fmt.Println("refused:", refusal.Code)
	}
	_, err = client.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "Not A Slug"})
	if errors.As(err, &refusal) {
		fmt.Println("refused:", refusal.Code)
	}
	// Output:
	// maya/builder online
	// refused: project_not_visible
	// refused: not_implemented
	// refused: invalid_arguments
}
