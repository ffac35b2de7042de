package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

// rawObjects decodes the named array of a raw discover answer into raw
// objects, so that null and absent can be told apart.
func rawObjects(t *testing.T, raw []byte, key string) []map[string]json.RawMessage {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	var out []map[string]json.RawMessage
	if err := json.Unmarshal(top[key], &out); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return out
}

// TestDiscoverTeamAgents: the seed world as the page describes it; every
// required field present, nullable ones null (not absent), empty lists [].
func TestDiscoverTeamAgents(t *testing.T) {
	e := newEnv(t, envOpts{})
	maya := e.connect(e.token(store.KindAgent, seed.BuilderAgent))
	out, raw := maya.discover(seed.Project)
	if len(out.People) != 2 || out.People[0].Handle != "maya" || out.People[1].Handle != "theo" {
		t.Fatalf("people = %+v", out.People)
	}
	if len(out.Agents) != 2 || out.Agents[0].AgentID != seed.BuilderAgent || out.Agents[1].AgentID != seed.ReviewerAgent {
		t.Fatalf("agents = %+v", out.Agents)
	}
	people, agents := rawObjects(t, raw, "people"), rawObjects(t, raw, "agents")
	if got := string(people[1]["avatar_url"]); got != "null" {
		t.Errorf("theo's avatar_url on the wire = %q, want null", got)
	}
	if got := string(people[0]["avatar_url"]); got == "null" || got == "" {
		t.Errorf("maya's avatar_url on the wire = %q", got)
	}
	for _, k := range []string{"avatar_url", "last_seen_at"} {
		if got := string(agents[1][k]); got != "null" {
			t.Errorf("theo/reviewer %s on the wire = %q, want null", k, got)
		}
	}
	if seen := time.Date(2026, 1, 15, 9, 30, 0, 0, time.UTC); out.Agents[0].LastSeenAt == nil || !out.Agents[0].LastSeenAt.Equal(seen) {
		t.Errorf("maya/builder last_seen_at = %v, want the seed world's %v", out.Agents[0].LastSeenAt, seen)
	}
	if out.Agents[0].Owner != "maya" || out.Agents[0].Name != "builder" || len(out.Agents[0].Capabilities) != 3 {
		t.Errorf("maya/builder = %+v", out.Agents[0])
	}
	// A runner and an execution credential see what their agent sees.
	runner := e.connect(e.token(store.KindRunner, seed.BuilderAgent))
	_, rraw := runner.discover(seed.Project)
	task := runner.claimTask(seed.TaskID, "disc")
	_, craw := e.connect(task.ExecutionCredential.Token).discover(seed.Project)
	if !bytes.Equal(raw, rraw) || !bytes.Equal(raw, craw) {
		t.Errorf("agent, runner and credential see different answers:\n%s\n%s\n%s", raw, rraw, craw)
	}

	// rin/analyst has no capabilities: [] on the wire, not null.
	rin := e.connect(e.token(store.KindAgent, "rin/analyst"))
	_, raw = rin.discover("billing-api")
	if got := string(rawObjects(t, raw, "agents")[0]["capabilities"]); got != "[]" {
		t.Errorf("rin/analyst capabilities on the wire = %q, want []", got)
	}
}

// TestDiscoverWorldNullsAndEmptyLists: an agent of a world with every
// optional field left out.
func TestDiscoverWorldNullsAndEmptyLists(t *testing.T) {
	e := newEnv(t, envOpts{world: "quiet.json"})
	bot := e.connect("prk_fixture-agent-solo-bot-0001")
	_, raw := bot.discover("quiet")
	person := rawObjects(t, raw, "people")[0]
	agent := rawObjects(t, raw, "agents")[0]
	for k, want := range map[string]string{"avatar_url": "null", "color": "0", "away": "false"} {
		if got := string(person[k]); got != want {
			t.Errorf("person %s = %q, want %s", k, got, want)
		}
	}
	for k, want := range map[string]string{"avatar_url": "null", "last_seen_at": "null", "capabilities": "[]", "role": `""`} {
		if got := string(agent[k]); got != want {
			t.Errorf("agent %s = %q, want %s", k, got, want)
		}
	}
	// "empty" exists but has nobody: nobody can see it, and it is refused
	// exactly like a project that does not exist.
	a := bot.refused(api.ToolDiscoverTeamAgents, discoverArgs("empty"), store.CodeProjectNotVisible)
	b := bot.refused(api.ToolDiscoverTeamAgents, discoverArgs("nope"), store.CodeProjectNotVisible)
	if *a != *b {
		t.Errorf("empty vs nope: %+v vs %+v", a, b)
	}
}

// TestDiscoverEmptyListsOnWire: with the visibility rule a visible project
// always lists the caller's agent and its owner, so an empty answer cannot
// come from a real world; a handler that answers with no people and no
// agents (nil slices) still goes out as [] and [], never null.
func TestDiscoverEmptyListsOnWire(t *testing.T) {
	e := newEnv(t, envOpts{wrap: func(h api.Handler) api.Handler { return emptyDiscover{h} }})
	c := e.connect(e.token(store.KindAgent, seed.BuilderAgent))
	_, raw := c.discover(seed.Project)
	if !bytes.Contains(raw, []byte(`"agents":[]`)) || !bytes.Contains(raw, []byte(`"people":[]`)) {
		t.Fatalf("empty lists on the wire: %s", raw)
	}
}

// emptyDiscover answers discover_team_agents with nothing, after the real
// handler has checked the caller.
type emptyDiscover struct{ api.Handler }

func (h emptyDiscover) DiscoverTeamAgents(ctx context.Context, in *api.DiscoverTeamAgentsInput) (*api.DiscoverTeamAgentsOutput, error) {
	if _, err := h.Handler.DiscoverTeamAgents(ctx, in); err != nil {
		return nil, err
	}
	return &api.DiscoverTeamAgentsOutput{}, nil
}

// TestDiscoverInvisibleEqualsNonexistent: a project the caller cannot see
// and one that does not exist get byte-identical answers, for every kind
// of caller.
func TestDiscoverInvisibleEqualsNonexistent(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	maya := e.connect(fxBuilderRunner)
	task := maya.claimTask("example-task-id", "vis")
	for _, tok := range []string{fxBuilderAgent, fxTheoAgent, fxBuilderRunner, task.ExecutionCredential.Token} {
		c := e.connect(tok)
		c.discover("website-v2")
		var answers [][]byte
		for _, project := range []string{"mobile-app", "no-such-project", "x"} {
			c.refused(api.ToolDiscoverTeamAgents, discoverArgs(project), store.CodeProjectNotVisible)
			answers = append(answers, c.wire.last().result)
		}
		for _, a := range answers[1:] {
			if !bytes.Equal(a, answers[0]) {
				t.Errorf("invisible and nonexistent projects answered differently:\n%s\n%s", answers[0], a)
			}
		}
		c.close()
	}
	// A syntactically impossible slug is a schema error, named by pointer.
	r := maya.refused(api.ToolDiscoverTeamAgents, discoverArgs("Not_A_Slug"), "invalid_arguments")
	if !bytes.Contains([]byte(r.Message), []byte("/project")) {
		t.Errorf("invalid slug: %q", r.Message)
	}
}
