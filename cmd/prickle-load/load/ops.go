package load

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/spec/seed"
)

// The operations the generator can mix. Each is one tools/call; the name is
// what reports and -mix use.
const (
	// OpClaimReplay is claim_task replaying one idempotency key: the same
	// attempt, a fresh execution credential each time.
	OpClaimReplay = "claim_task"
	// OpClaimFresh is claim_task on a task not claimed before, with a new
	// key: a new attempt each time (World.FreshPrefix).
	OpClaimFresh = "claim_task_fresh"
	// OpDiscover is discover_team_agents on World.Project.
	OpDiscover = "discover_team_agents"
	// OpDiscussion is claim_discussion replaying one idempotency key on
	// World.Message with harness 2.
	OpDiscussion = "claim_discussion"
)

// Ops lists every operation, in report order.
var Ops = []string{OpClaimReplay, OpClaimFresh, OpDiscussion, OpDiscover}

// opTool is the tool each operation calls.
var opTool = map[string]api.ToolName{
	OpClaimReplay: api.ToolClaimTask,
	OpClaimFresh:  api.ToolClaimTask,
	OpDiscussion:  api.ToolClaimDiscussion,
	OpDiscover:    api.ToolDiscoverTeamAgents,
}

// asRunner reports whether an operation is made with the runner's token
// (the claims are runner-only); the others use the agent's.
func asRunner(op string) bool { return op != OpDiscover }

// World names what the calls refer to. DefaultWorld is the standard seed
// world (what prickled seeds on an empty database, conformance's
// package seed), which a fixture from Fixture extends with the fresh
// tasks.
type World struct {
	Project       string // discover_team_agents
	Task          string // claim_task replays
	ReplayKey     string
	Message       string // claim_discussion replays
	DiscussionKey string
	// Fresh claims take tasks FreshPrefix+N for N in [FreshFirst,
	// FreshFirst+FreshCount); each is claimed once.
	FreshPrefix string
	FreshFirst  int
	FreshCount  int
}

// FreshTaskPrefix starts the ids of the tasks Fixture adds.
const FreshTaskPrefix = "load-task-"

// freshKeyPrefix starts the idempotency keys of fresh claims, followed by
// a random id per run: a task an earlier run claimed is then refused
// (attempt_in_progress) instead of silently replayed.
const freshKeyPrefix = "prickle-load-"

// DefaultWorld is the seed world. The keys are the tool pages' example
// keys, so that replays join the attempt and discussion claim that the
// pages' examples (and conformance's seed-world scripts) make.
func DefaultWorld() World {
	return World{
		Project:       seed.Project,
		Task:          seed.TaskID,
		ReplayKey:     "runner-claim-example-1",
		Message:       seed.MessageID,
		DiscussionKey: "runner-discussion-example-1",
		FreshPrefix:   FreshTaskPrefix,
	}
}

// FreshTaskID is the id of fresh task n.
func FreshTaskID(prefix string, n int) string { return prefix + strconv.Itoa(n) }

// fixedArgs returns the arguments of every operation but the fresh claim,
// which freshArgs makes per call.
func (w World) fixedArgs() (map[string]json.RawMessage, error) {
	harness := int64(2)
	ins := map[string]any{
		OpClaimReplay: api.ClaimTaskInput{TaskID: w.Task, IdempotencyKey: w.ReplayKey},
		OpDiscussion:  api.ClaimDiscussionInput{MessageID: w.Message, IdempotencyKey: w.DiscussionKey, Harness: &harness},
		OpDiscover:    api.DiscoverTeamAgentsInput{Project: w.Project},
	}
	out := map[string]json.RawMessage{}
	for op, in := range ins {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s arguments: %w", op, err)
		}
		out[op] = b
	}
	return out, nil
}

// freshArgs returns the arguments of fresh claim n in run runID.
func (w World) freshArgs(n int, runID string) json.RawMessage {
	b, _ := json.Marshal(api.ClaimTaskInput{
		TaskID:         FreshTaskID(w.FreshPrefix, n),
		IdempotencyKey: freshKeyPrefix + runID + "-" + strconv.Itoa(n),
	})
	return b
}

// Weighted is one operation of a mix and its share of the calls.
type Weighted struct {
	Op     string
	Weight int
}

// ParseMix reads a mix: comma-separated operations, each optionally
// followed by :WEIGHT (a positive integer, default 1), for example
// "claim_task:3,discover_team_agents". An operation may appear once.
func ParseMix(s string) ([]Weighted, error) {
	var mix []Weighted
	seen := map[string]bool{}
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		name, weight, hasWeight := strings.Cut(part, ":")
		w := Weighted{Op: name, Weight: 1}
		if _, ok := opTool[name]; !ok {
			return nil, fmt.Errorf("mix item %d %q: unknown operation (one of %s)", i+1, part, strings.Join(Ops, ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("mix item %d %q: %s appears twice", i+1, part, name)
		}
		seen[name] = true
		if hasWeight {
			n, err := strconv.Atoi(weight)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("mix item %d %q: weight must be a positive integer", i+1, part)
			}
			w.Weight = n
		}
		mix = append(mix, w)
	}
	return mix, nil
}

// FormatMix is the inverse of ParseMix.
func FormatMix(mix []Weighted) string {
	parts := make([]string, len(mix))
	for i, w := range mix {
		parts[i] = w.Op + ":" + strconv.Itoa(w.Weight)
	}
	return strings.Join(parts, ",")
}

// schedule expands a mix into the cycle of operations a worker makes:
// each operation as many times as its weight, spread so that a cycle
// interleaves them (weights 2 and 1 give a, b, a).
func schedule(mix []Weighted) []string {
	total := 0
	for _, w := range mix {
		total += w.Weight
	}
	// Smooth weighted round robin: deterministic, and every operation's
	// share of any cycle matches its weight.
	cur := make([]int, len(mix))
	out := make([]string, 0, total)
	for range total {
		best := 0
		for i, w := range mix {
			cur[i] += w.Weight
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		out = append(out, mix[best].Op)
	}
	return out
}
