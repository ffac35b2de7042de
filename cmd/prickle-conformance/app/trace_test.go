package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestTrace(t *testing.T) {
	code, out, errOut := runCLI(t, "trace")
	problems := onlyUnimplemented(t, "neither covered", errOut)
	if (code == 0) != (problems == 0) {
		t.Fatalf("exit %d with %d problems\n%s", code, problems, errOut)
	}
	for _, want := range []string{
		"claim_task#fa24cf09  A mention is never a run's cause.\n    tested by: claim_task_cause",
		"discover_team_agents#33fcd84b",
		"not testable from outside:",
		fmt.Sprintf("%d problems", problems),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("trace lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, "trace", "--json")
	var m struct {
		Sentences []struct {
			ID      string   `json:"id"`
			Scripts []string `json:"scripts"`
		} `json:"sentences"`
		Problems []string `json:"problems"`
	}
	if (code == 0) != (problems == 0) || json.Unmarshal([]byte(out), &m) != nil || len(m.Sentences) < 20 || len(m.Problems) != problems {
		t.Errorf("trace --json: exit %d\n%s", code, out)
	}
}
