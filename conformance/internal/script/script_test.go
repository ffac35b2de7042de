package script

import (
	"testing"

	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/spec/world"
)

func TestLookup(t *testing.T) {
	v, _ := wire.Decode([]byte(`{"agents":[{"agent_id":"maya/builder","caps":[1,2]},{"agent_id":"theo/reviewer","x":null}],"a.b":{"c":3}}`))
	for _, c := range []struct {
		path  string
		want  string
		found bool
	}{
		{".", "", true},
		{"agents.0.agent_id", `"maya/builder"`, true},
		{"agents[1].agent_id", `"theo/reviewer"`, true},
		{"agents[agent_id=theo/reviewer].x", "null", true},
		{"agents[agent_id=maya/builder].caps", "[1,2]", true},
		{"agents[agent_id=nobody].x", "", false},
		{"agents.7", "", false},
		{"/a.b/c", "3", true},
		{"missing", "", false},
	} {
		got, found, err := lookup(v, c.path)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if found != c.found || (c.want != "" && wire.Compact(got) != c.want) {
			t.Errorf("%s: got %s (found %v), want %s (found %v)", c.path, wire.Compact(got), found, c.want, c.found)
		}
	}
}

func TestResolvePrincipal(t *testing.T) {
	toks := []world.Token{{Kind: world.KindAgent, Agent: "maya/builder", Token: "A"}, {Kind: world.KindRunner, Agent: "maya/builder", Runner: "maya-laptop", Token: "R"}}
	for in, want := range map[string]string{"agent:maya/builder": "A", "runner:maya/builder": "R", "runner:maya-laptop": "R", "none": "", "prk_literal": "prk_literal"} {
		got, err := ResolvePrincipal(toks, in)
		if err != nil || got != want {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
	if _, err := ResolvePrincipal(toks, "agent:theo/reviewer"); err == nil {
		t.Error("an unknown agent resolved")
	}
}
