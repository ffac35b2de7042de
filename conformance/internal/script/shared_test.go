package script

import (
	"testing"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
)

// TestRefusalsOnly: only a seed-world script whose every call it asserts
// refused (or tools/list) may share a server.
func TestRefusalsOnly(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"# x\ncall -as agent:maya/builder claim_task '{}'\nrefused invalid_arguments\nstdout '/task_id'\n", true},
		{"# x\ntools -as agent:maya/builder\nstdout '^claim_task$'\n", true},
		{"# x\ndeny -as none discover_team_agents '{}'\n[reference] stdout 'HTTP 401'\n", true},
		{"# x\n[reference] call -as runner:maya/builder claim_discussion '{}'\n[reference] refused harness_unsupported\n", true},
		{"# x\n\n# a comment\ncall -as agent:maya/builder claim_task '{}'\n\nrefused\n! stdout secret\n", true},
		{"# x\ncall -as runner:maya/builder claim_task '{}'\nok\n", false},
		{"# x\ncall -as runner:maya/builder claim_task '{}'\naccepted /task_id\n", false},
		{"# x\ncall -as runner:maya/builder claim_task '{}'\n! refused\n", false},
		{"# x\ncall -as runner:maya/builder claim_task '{}'\njson attempt.task_id == t\n", false},
		{"# x\n[reference] call -as runner:maya/builder claim_task '{}'\n[core] refused\n", false},
		{"# x\ncall -as runner:maya/builder claim_task '{}'\n", false},
		{"# x\ncall -as agent:maya/builder claim_task '{}'\nrefused\n-- fixture.json --\n{}\n", false},
	} {
		s, err := suite.ParseScript("case", []byte(c.src), false)
		if err != nil {
			t.Fatal(err)
		}
		if got := RefusalsOnly(s); got != c.want {
			t.Errorf("RefusalsOnly = %v, want %v:\n%s", got, c.want, c.src)
		}
	}
}
