package script

import (
	"slices"
	"testing"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
)

// TestCalledTools: the tools a script calls, whatever the command
// (call, ! call, deny, race), its conditions and its principal.
func TestCalledTools(t *testing.T) {
	s := &suite.Script{Name: "x", Archive: []byte(`# a script
call -as agent:maya/builder discover_team_agents '{"project":"website-v2"}'
ok
[reference] call -as runner:maya/builder claim_task '{}'
! call claim_task '{}'
deny -as none read_room '{}'
race -as runner:maya/builder claim_discussion '{}'
concurrently
json agents len 2
# call commented_out
tools -as agent:maya/builder
-- fixture.json --
call not_a_command
`)}
	got := CalledTools(s)
	if want := []string{"claim_discussion", "claim_task", "discover_team_agents", "read_room"}; !slices.Equal(got, want) {
		t.Errorf("CalledTools = %v, want %v", got, want)
	}
}
