package load

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/spec/world"
)

func TestParseMix(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Weighted
		err  string
	}{
		{in: "claim_task", want: []Weighted{{OpClaimReplay, 1}}},
		{in: "claim_task:3, discover_team_agents", want: []Weighted{{OpClaimReplay, 3}, {OpDiscover, 1}}},
		{in: "claim_task_fresh:2,claim_discussion:1", want: []Weighted{{OpClaimFresh, 2}, {OpDiscussion, 1}}},
		{in: "", err: `mix item 1 "": unknown operation`},
		{in: "claim_task,read_room", err: `mix item 2 "read_room": unknown operation`},
		{in: "claim_task:0", err: `mix item 1 "claim_task:0": weight must be a positive integer`},
		{in: "claim_task:x", err: `weight must be a positive integer`},
		{in: "claim_task:-1", err: `weight must be a positive integer`},
		{in: "claim_task,claim_task:2", err: `mix item 2 "claim_task:2": claim_task appears twice`},
	} {
		got, err := ParseMix(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseMix(%q) error %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseMix(%q) = %v, %v; want %v", c.in, got, err, c.want)
			continue
		}
		if back, err := ParseMix(FormatMix(got)); err != nil || !slices.Equal(back, got) {
			t.Errorf("FormatMix(%v) = %q does not parse back: %v %v", got, FormatMix(got), back, err)
		}
	}
}

func TestScheduleFollowsWeights(t *testing.T) {
	mix := []Weighted{{OpClaimReplay, 3}, {OpDiscover, 1}, {OpDiscussion, 2}}
	s := schedule(mix)
	if len(s) != 6 {
		t.Fatalf("schedule %v: want 6 entries", s)
	}
	for _, w := range mix {
		if n := countOf(s, w.Op); n != w.Weight {
			t.Errorf("schedule %v: %s %d times, want %d", s, w.Op, n, w.Weight)
		}
	}
	// Spread, not blocked: no operation of weight 3 of 6 runs three times
	// in a row (counting around the cycle).
	cyc := append(slices.Clone(s), s...)
	for i := range s {
		if cyc[i] == cyc[i+1] && cyc[i+1] == cyc[i+2] {
			t.Errorf("schedule %v runs %s three times in a row", s, cyc[i])
		}
	}
}

func countOf(s []string, op string) int {
	n := 0
	for _, x := range s {
		if x == op {
			n++
		}
	}
	return n
}

func TestArgumentsAreValidInputs(t *testing.T) {
	w := DefaultWorld()
	args, err := w.fixedArgs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		OpClaimReplay: `{"task_id":"example-task-id","idempotency_key":"runner-claim-example-1"}`,
		OpDiscussion:  `{"message_id":"example-message-id","idempotency_key":"runner-discussion-example-1","harness":2}`,
		OpDiscover:    `{"project":"website-v2"}`,
	}
	for op, js := range want {
		if string(args[op]) != js {
			t.Errorf("%s arguments %s, want %s", op, args[op], js)
		}
	}
	validate := map[string]func([]byte) error{
		OpClaimReplay: api.ValidateClaimTaskInput, OpDiscussion: api.ValidateClaimDiscussionInput, OpDiscover: api.ValidateDiscoverTeamAgentsInput,
	}
	for op, v := range validate {
		if err := v(args[op]); err != nil {
			t.Errorf("%s arguments %s: %v", op, args[op], err)
		}
	}
	a, b := w.freshArgs(7, "run1"), w.freshArgs(7, "run2")
	if err := api.ValidateClaimTaskInput(a); err != nil {
		t.Errorf("fresh arguments %s: %v", a, err)
	}
	var in api.ClaimTaskInput
	if err := json.Unmarshal(a, &in); err != nil {
		t.Fatal(err)
	}
	if in.TaskID != "load-task-7" || !strings.Contains(in.IdempotencyKey, "run1") {
		t.Errorf("fresh arguments %s: want task load-task-7 and a key naming the run", a)
	}
	if bytes.Equal(a, b) {
		t.Errorf("two runs claim a task with the same key %s: a rerun would replay instead of being refused", a)
	}
}

func TestSelectTokens(t *testing.T) {
	// As prickled writes them (with "runner"), plus a second runner, and
	// an agent-only entry without "runner" as server/README shows them.
	file := `[
	  {"kind": "agent", "agent": "maya/builder", "token": "A-maya"},
	  {"kind": "agent", "agent": "theo/reviewer", "token": "A-theo"},
	  {"kind": "runner", "agent": "maya/builder", "runner": "maya-laptop", "token": "R-maya"},
	  {"kind": "runner", "agent": "theo/reviewer", "runner": "theo-box", "token": "R-theo"}
	]`
	toks, err := world.ReadTokens(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		runner, agent   string
		wantR, wantA    string
		wantErrContains string
	}{
		{"", "", "R-maya", "A-maya", ""},
		{"theo-box", "", "R-theo", "A-theo", ""},
		{"theo/reviewer", "", "R-theo", "A-theo", ""},
		{"maya-laptop", "theo/reviewer", "R-maya", "A-theo", ""},
		{"nobody", "", "", "", `no runner "nobody"`},
		{"", "rin/analyst", "", "", `no agent "rin/analyst"`},
	} {
		r, a, err := SelectTokens(toks, c.runner, c.agent)
		if c.wantErrContains != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErrContains) {
				t.Errorf("SelectTokens(%q, %q) error %v, want %q", c.runner, c.agent, err, c.wantErrContains)
			}
			continue
		}
		if err != nil || r != c.wantR || a != c.wantA {
			t.Errorf("SelectTokens(%q, %q) = %q, %q, %v; want %q, %q", c.runner, c.agent, r, a, err, c.wantR, c.wantA)
		}
	}
	// Agents only: no runner token, the first agent's.
	r, a, err := SelectTokens(toks[:2], "", "")
	if err != nil || r != "" || a != "A-maya" {
		t.Errorf("agents only: %q, %q, %v", r, a, err)
	}
}
