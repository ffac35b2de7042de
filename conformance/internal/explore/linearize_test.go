package explore

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/spec/world"
)

// raceModel is the model of a world with one task, routed to maya/a,
// whose runner is r1.
func raceModel(profile suite.Profile) *model {
	w := &world.World{
		Version:     world.Version,
		Projects:    []world.Project{{Slug: "p"}},
		People:      []world.Person{{Handle: "maya", DisplayName: "Maya"}},
		Memberships: []world.Membership{{Project: "p", Person: "maya"}},
		Agents:      []world.Agent{{ID: "maya/a", Model: "m", Client: "c", Availability: "online", TrustLevel: "trusted"}},
		Runners:     []world.Runner{{ID: "r1", Agent: "maya/a"}},
		Tasks:       []world.Task{{ID: "t", Project: "p", Agent: "maya/a"}},
	}
	return newModel(w, profile, time.Now(), nil)
}

// claimOp is a claim of task t under key, answered with attempt id (a
// refusal with code if id is ""), between start and end.
func claimOp(step int, key, id, code string, start, end time.Time) *op {
	st := &stepRun{cmd: &command{p: principal{kind: "runner", id: "r1"}, tool: "claim_task", args: map[string]any{"task_id": "t", "idempotency_key": key}, group: 1},
		ans: &answer{step: step, start: start, end: end}}
	var tools []any
	for _, x := range referenceExecutionTools {
		tools = append(tools, x)
	}
	if id == "" {
		st.ans.refused, st.ans.code = true, code
	} else {
		st.ans.structured = map[string]any{
			"attempt": map[string]any{"attempt_id": id, "task_id": "t", "claimed_at": start.Truncate(time.Second).UTC().Format(time.RFC3339Nano)},
			"execution_credential": map[string]any{"token": fmt.Sprintf("tok-%d", step), "expires_at": start.Add(15 * time.Minute).UTC().Format(time.RFC3339Nano),
				"allowed_tools": tools},
		}
	}
	o := &op{st: st, step: step}
	steps := []*stepRun{st}
	o.judge = func(m *model) []failure { return judgeIn(m, o.st, steps) }
	return o
}

func TestLinearize(t *testing.T) {
	t0 := time.Now().Truncate(time.Second)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, c := range []struct {
		name    string
		profile suite.Profile
		ops     []*op
		ok      bool
	}{
		{"same key, one attempt", suite.Core, []*op{claimOp(0, "k", "a1", "", at(0), at(5)), claimOp(1, "k", "a1", "", at(1), at(6))}, true},
		{"same key, two attempts", suite.Core, []*op{claimOp(0, "k", "a1", "", at(0), at(5)), claimOp(1, "k", "a2", "", at(1), at(6))}, false},
		{"two keys, two attempts (core leaves it open)", suite.Core, []*op{claimOp(0, "k1", "a1", "", at(0), at(5)), claimOp(1, "k2", "a2", "", at(1), at(6))}, true},
		{"two keys, two attempts (reference: one live)", suite.Reference, []*op{claimOp(0, "k1", "a1", "", at(0), at(5)), claimOp(1, "k2", "a2", "", at(1), at(6))}, false},
		{"two keys, one refused", suite.Reference, []*op{claimOp(0, "k1", "", "attempt_in_progress", at(0), at(5)), claimOp(1, "k2", "a2", "", at(1), at(6))}, true},
		// Real time: the refusal returned before the claim began, so no
		// order puts the claim first.
		{"refused before any claim", suite.Reference, []*op{claimOp(0, "k1", "", "attempt_in_progress", at(0), at(1)), claimOp(1, "k2", "a2", "", at(2), at(6))}, false},
	} {
		res := linearize([]*model{raceModel(c.profile)}, c.ops)
		if got := len(res.states) > 0; got != c.ok || res.unknown {
			t.Errorf("%s: linearizable %t (unknown %t), want %t: %v", c.name, got, res.unknown, c.ok, res.fails)
		}
		if c.ok != (len(res.order) == len(c.ops)) {
			t.Errorf("%s: the order accepted is %v", c.name, res.order)
		}
	}
	// The order a shrink sends the calls in is one the model accepts:
	// the claim that got the attempt before the one refused for it.
	res := linearize([]*model{raceModel(suite.Reference)}, []*op{claimOp(0, "k1", "", "attempt_in_progress", at(0), at(5)), claimOp(1, "k2", "a2", "", at(1), at(6))})
	if !slices.Equal(res.order, []int{1, 0}) {
		t.Errorf("the order accepted is %v, want [1 0]", res.order)
	}
}

// TestLinearizeBudget: a search past its budget is unknown, not a pass.
func TestLinearizeBudget(t *testing.T) {
	defer func(b int) { searchBudget = b }(searchBudget)
	searchBudget = 3
	t0 := time.Now()
	var ops []*op
	for i := range 4 {
		ops = append(ops, claimOp(i, "k", "a1", "", t0, t0.Add(time.Second)))
	}
	if res := linearize([]*model{raceModel(suite.Core)}, ops); !res.unknown {
		t.Fatalf("a search of %d nodes with a budget of 3 is not unknown", res.nodes)
	}
}
