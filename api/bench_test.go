package api

// Benchmarks of the validation path every tool call takes in rt.Handle, on
// the bundled schemas and realistic values (the seed world, which
// server/bench_test.go loads too):
//
//	go test ./api/ -run '^$' -bench . -benchmem -count 5
//
// BenchmarkValidate/TOOL/{input,output}: the validator alone, on JSON bytes.
// BenchmarkMarshal/TOOL: the output marshalled as Handle marshals it.
// BenchmarkHandle/TOOL: a whole call through rt.Handle, as Register
// registers it, with a handler that returns a ready output: input
// validation, decoding, output marshalling and validation, the result.
// BenchmarkCall/TOOL: a call from an MCP client to a server that serves
// Register over in-memory transports: Handle plus the SDK on both
// sides, in the same process.
//
// Besides ns/op (wall time), cpu-ns/op is the CPU time the process spent
// per call, garbage collection included: on a busy machine it varies far
// less than wall time.

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prickle-dev/prickle/rt"
)

var (
	benchClaimTaskInput = []byte(`{"task_id":"example-task-id","idempotency_key":"runner-claim-example-1"}`)
	benchDiscoverInput  = []byte(`{"project":"website-v2"}`)
)

// benchClaimTaskOutput is what prickled answers a claim: the attempt and an
// execution credential with the 13 execution tools.
func benchClaimTaskOutput() *ClaimTaskOutput {
	now := time.Date(2026, 5, 1, 12, 0, 0, 123e6, time.UTC)
	return &ClaimTaskOutput{
		Attempt: ClaimTaskOutputAttempt{AttemptID: "att_5f0c2e7d9a41b3c8e6d2f019", TaskID: "example-task-id", ClaimedAt: now},
		ExecutionCredential: ClaimTaskOutputExecutionCredential{
			Token:     "prk_q7Vw3nK0pZ8xYb2Lr5sT1uE9cH4gJ6mA0dF3iO7kN2w",
			ExpiresAt: now.Add(15 * time.Minute),
			AllowedTools: []ToolName{
				ToolDiscoverTeamAgents, ToolGetProjectContext, ToolReadRoom, ToolPostMessage,
				ToolWaitForMention, ToolHandoff, ToolCheckInbox, ToolCheckpoint,
				ToolReturnResult, ToolUpdatePulse, ToolRequestCapability, ToolWaitForUpdates,
				ToolRequestStep,
			},
		},
	}
}

// benchDiscoverOutput is the seed world's website-v2 as a project with
// three people and three agents.
func benchDiscoverOutput() *DiscoverTeamAgentsOutput {
	str := func(s string) *string { return &s }
	seen := time.Date(2026, 5, 1, 11, 58, 0, 0, time.UTC)
	return &DiscoverTeamAgentsOutput{
		People: []DiscoverTeamAgentsOutputPerson{
			{Handle: "maya", DisplayName: "Maya Okafor", AvatarURL: str("https://avatars.example.com/maya.png"), Color: 2},
			{Handle: "theo", DisplayName: "Theo Lindqvist", Color: 5, Away: true},
			{Handle: "rin", DisplayName: "Rin Sato", Color: 6},
		},
		Agents: []DiscoverTeamAgentsOutputAgent{
			{
				AgentID: "maya/builder", Owner: "maya", Name: "builder", AvatarURL: str("https://avatars.example.com/maya-builder.png"),
				Model: "claude-sonnet-4-5", Client: "claude-code", Role: "Builds website features",
				Capabilities: []DiscoverTeamAgentsOutputAgentCapability{
					{Kind: DiscoverTeamAgentsOutputAgentCapabilityKindRepo, Name: "prickle-dev/website-v2"},
					{Kind: DiscoverTeamAgentsOutputAgentCapabilityKindDeploy, Name: "preview-deploys"},
				},
				Availability: DiscoverTeamAgentsOutputAgentAvailabilityOnline,
				TrustLevel:   DiscoverTeamAgentsOutputAgentTrustLevelOwnerVerified,
				LastSeenAt:   &seen,
			},
			{
				AgentID: "theo/reviewer", Owner: "theo", Name: "reviewer",
				Model: "gpt-5", Client: "codex-cli", Role: "Reviews pull requests",
				Capabilities: []DiscoverTeamAgentsOutputAgentCapability{
					{Kind: DiscoverTeamAgentsOutputAgentCapabilityKindRepo, Name: "prickle-dev/website-v2"},
				},
				Availability: DiscoverTeamAgentsOutputAgentAvailabilityAway,
				TrustLevel:   DiscoverTeamAgentsOutputAgentTrustLevelUnverified,
			},
			{
				AgentID: "rin/analyst", Owner: "rin", Name: "analyst",
				Model: "gemini-2.5-pro", Client: "gemini-cli",
				Availability: DiscoverTeamAgentsOutputAgentAvailabilityOffline,
				TrustLevel:   DiscoverTeamAgentsOutputAgentTrustLevelUnverified,
			},
		},
	}
}

// reportCPU starts measuring CPU time; the function it returns reports it
// per iteration as cpu-ns/op.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if start > 0 && b.N > 0 {
			b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func mustMarshal(b *testing.B, v any) []byte {
	b.Helper()
	out, err := rt.MarshalJSON(v)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func BenchmarkValidate(b *testing.B) {
	cases := []struct {
		name     string
		validate func([]byte) error
		raw      []byte
	}{
		{"claim_task/input", ValidateClaimTaskInput, benchClaimTaskInput},
		{"claim_task/output", ValidateClaimTaskOutput, mustMarshal(b, benchClaimTaskOutput())},
		{"discover_team_agents/input", ValidateDiscoverTeamAgentsInput, benchDiscoverInput},
		{"discover_team_agents/output", ValidateDiscoverTeamAgentsOutput, mustMarshal(b, benchDiscoverOutput())},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if err := c.validate(c.raw); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				if err := c.validate(c.raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchHandle(b *testing.B, h mcp.ToolHandler, args []byte) {
	b.Helper()
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Arguments: json.RawMessage(args)}}
	ctx := context.Background()
	res, err := h(ctx, req)
	if err != nil || res.IsError {
		b.Fatalf("call failed: %v %+v", err, res)
	}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := h(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHandle calls the handlers that Register registers: rt.Handle
// over the generated tools, with the output converted to its wire form.
func BenchmarkHandle(b *testing.B) {
	b.Run("claim_task", func(b *testing.B) {
		// A replayed claim: the same attempt, a credential that expires a
		// millisecond later every call (so expires_at is a string the
		// validator has not seen before, as in production).
		out := benchClaimTaskOutput()
		h := func(context.Context, *ClaimTaskInput) (*ClaimTaskOutput, error) {
			o := *out
			o.ExecutionCredential.ExpiresAt = out.ExecutionCredential.ExpiresAt.Add(time.Millisecond)
			out.ExecutionCredential.ExpiresAt = o.ExecutionCredential.ExpiresAt
			return &o, nil
		}
		benchHandle(b, rt.Handle(claimTaskTool, rt.ConvertOutput(h, ClaimTaskOutput.wire), nil), benchClaimTaskInput)
	})
	b.Run("discover_team_agents", func(b *testing.B) {
		out := benchDiscoverOutput()
		h := func(context.Context, *DiscoverTeamAgentsInput) (*DiscoverTeamAgentsOutput, error) {
			return out, nil
		}
		benchHandle(b, rt.Handle(discoverTeamAgentsTool, rt.ConvertOutput(h, DiscoverTeamAgentsOutput.wire), nil), benchDiscoverInput)
	})
	// As prickled registers it: the same output bytes for every caller
	// are validated once (rt.RegisterOptions.RepeatedOutputs).
	b.Run("discover_team_agents/repeated", func(b *testing.B) {
		out := benchDiscoverOutput()
		h := func(context.Context, *DiscoverTeamAgentsInput) (*DiscoverTeamAgentsOutput, error) {
			return out, nil
		}
		opts := &rt.RegisterOptions{RepeatedOutputs: []string{string(ToolDiscoverTeamAgents)}}
		benchHandle(b, rt.Handle(discoverTeamAgentsTool, rt.ConvertOutput(h, DiscoverTeamAgentsOutput.wire), opts), benchDiscoverInput)
	})
}

// BenchmarkMarshal marshals an output as Handle does: its wire form; and,
// for comparison, as it would without wire forms (unwiredDiscover).
func BenchmarkMarshal(b *testing.B) {
	for _, c := range []struct {
		name string
		v    any
	}{
		{"claim_task", benchClaimTaskOutput().wire()},
		{"discover_team_agents", benchDiscoverOutput().wire()},
		{"discover_team_agents_without_wire_forms", unwired(benchDiscoverOutput())},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				if _, err := rt.MarshalJSON(c.v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// unwiredDiscover is DiscoverTeamAgentsOutput as the generator would make
// it without wire forms: every struct that must write a nil array as []
// does so in a MarshalJSON of its own, whose result encoding/json scans
// again at each level.
type unwiredDiscover struct {
	People []DiscoverTeamAgentsOutputPerson `json:"people"`
	Agents []unwiredAgent                   `json:"agents"`
}

type unwiredAgent DiscoverTeamAgentsOutputAgent

func (v unwiredDiscover) MarshalJSON() ([]byte, error) {
	type plain unwiredDiscover
	p := plain(v)
	if p.People == nil {
		p.People = []DiscoverTeamAgentsOutputPerson{}
	}
	if p.Agents == nil {
		p.Agents = []unwiredAgent{}
	}
	return json.Marshal(p)
}

func (v unwiredAgent) MarshalJSON() ([]byte, error) {
	type plain unwiredAgent
	p := plain(v)
	if p.Capabilities == nil {
		p.Capabilities = []DiscoverTeamAgentsOutputAgentCapability{}
	}
	return json.Marshal(p)
}

func unwired(v *DiscoverTeamAgentsOutput) unwiredDiscover {
	u := unwiredDiscover{People: v.People}
	for _, a := range v.Agents {
		u.Agents = append(u.Agents, unwiredAgent(a))
	}
	return u
}

// benchHandler answers claim_task with claimTask() and
// discover_team_agents with discover; other tools are not benchmarked.
type benchHandler struct {
	UnimplementedHandler
	claimTask func() *ClaimTaskOutput
	discover  *DiscoverTeamAgentsOutput
}

func (h *benchHandler) ClaimTask(context.Context, *ClaimTaskInput) (*ClaimTaskOutput, error) {
	return h.claimTask(), nil
}

func (h *benchHandler) DiscoverTeamAgents(context.Context, *DiscoverTeamAgentsInput) (*DiscoverTeamAgentsOutput, error) {
	return h.discover, nil
}

func BenchmarkCall(b *testing.B) {
	claim, discover := benchClaimTaskOutput(), benchDiscoverOutput()
	var calls atomic.Int64
	h := &benchHandler{
		claimTask: func() *ClaimTaskOutput {
			o := *claim // a fresh expires_at every call, as in BenchmarkHandle
			o.ExecutionCredential.ExpiresAt = o.ExecutionCredential.ExpiresAt.Add(time.Duration(calls.Add(1)) * time.Millisecond)
			return &o
		},
		discover: discover,
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	Register(s, h, nil)
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct {
		tool ToolName
		args []byte
	}{{ToolClaimTask, benchClaimTaskInput}, {ToolDiscoverTeamAgents, benchDiscoverInput}} {
		b.Run(string(c.tool), func(b *testing.B) {
			params := &mcp.CallToolParams{Name: string(c.tool), Arguments: json.RawMessage(c.args)}
			if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
				b.Fatalf("call failed: %v %+v", err, res)
			}
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
