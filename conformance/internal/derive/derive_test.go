package derive

import (
	"slices"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/spec"
)

// TestDerive: every constraint of every input schema becomes a case, with
// no warning, and each tool has its example case.
func TestDerive(t *testing.T) {
	// Every constraint of the pages as first published becomes a case.
	first, err := spec.ReadPaths([]string{"../../../testdata/pages/snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	fsp, _, err := spec.LoadLinted(first)
	if err != nil {
		t.Fatal(err)
	}
	if _, warns := Scripts(fsp); len(warns) > 0 {
		t.Errorf("warnings on the first published pages:\n%s", strings.Join(warns, "\n"))
	}
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	scripts, warns := Scripts(sp)
	for _, w := range warns {
		t.Logf("warning: %s", w)
	}
	names := map[string]bool{}
	for _, s := range scripts {
		if names[s.Name] {
			t.Errorf("duplicate derived case %s", s.Name)
		}
		names[s.Name] = true
		if !s.Derived || s.OwnFixture {
			t.Errorf("%s: derived cases run against the seed world", s.Name)
		}
	}
	want := []string{
		"spec.tools",
		"spec.claim_task.example", "spec.claim_discussion.example", "spec.discover_team_agents.example",
		"spec.claim_task.task_id.required", "spec.claim_task.task_id.type", "spec.claim_task.task_id.minLength",
		"spec.claim_task.task_id.maxLength", "spec.claim_task.task_id.pattern", "spec.claim_task.wake.type",
		"spec.claim_task.wake.message_id.required", "spec.claim_task.wake.message_id.pattern",
		"spec.claim_discussion.harness.minimum", "spec.claim_discussion.harness.maximum",
		"spec.claim_discussion.harness.type", "spec.claim_discussion.harness.type-fraction",
		"spec.discover_team_agents.project.pattern", "spec.discover_team_agents.project.required",
	}
	for _, w := range want {
		if !names[w] {
			t.Errorf("no derived case %s", w)
		}
	}
	if len(scripts) < 35 {
		t.Errorf("only %d derived cases", len(scripts))
	}
	// The principal: runner for the runner-only pages, agent otherwise.
	for _, tool := range sp.Tools {
		want := SeedAgent
		if strings.HasPrefix(tool.Name, "claim_") {
			want = SeedRunner
		}
		if got := PrincipalFor(tool); got != want {
			t.Errorf("%s is called as %s, want %s", tool.Name, got, want)
		}
	}
}

// TestDeriveNewPage: a page with new constraint kinds gets cases without
// anyone writing a script.
func TestDeriveNewPage(t *testing.T) {
	page := strings.ReplaceAll(`# MCP tool reference

Read the room, hand off a task, and return a result with evidence. These are the tools Prickle exposes to connected agents.

Identity comes from the agent’s token, never from a tool argument. Examples use the seeded website-v2 project and example task IDs.

## post_message

Post a message to a room.

### Example input

~~~json
{
  "room": "website-v2-general",
  "body": "Hello",
  "kind": "note",
  "priority": 2,
  "pinned": false,
  "labels": ["ui"],
  "meta": {"source": "cli"}
}
~~~

### Input schema

~~~json
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "room": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9_-]+$"},
    "body": {"type": "string", "minLength": 1, "maxLength": 8000},
    "kind": {"type": "string", "enum": ["note", "verdict"]},
    "priority": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 5},
    "pinned": {"type": "boolean"},
    "labels": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3, "uniqueItems": true},
    "tags": {"type": "array", "items": {"type": "string", "minLength": 2}, "minItems": 2, "maxItems": 2},
    "meta": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 10}, "minProperties": 1, "maxProperties": 2},
    "code": {"type": "string", "pattern": "^[0-9]{6}$"},
    "step": {"type": "number", "multipleOf": 0.25, "minimum": 0, "maximum": 1},
    "count": {"type": "integer", "multipleOf": 5},
    "filters": {"type": "object", "patternProperties": {"^[a-z_]+$": {"type": "string"}}, "additionalProperties": false, "maxProperties": 2}
  },
  "required": ["room", "body"],
  "additionalProperties": false
}
~~~

### Output schema

~~~json
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {"message_id": {"type": "string"}},
  "required": ["message_id"],
  "additionalProperties": false
}
~~~

[Read online](https://app.useprickle.dev/docs/reference/mcp-tools?tool=post_message)
`, "~~~", "```")
	scripts := derivePage(t, "post_message.md", page)
	var names []string
	for _, s := range scripts {
		names = append(names, s.Name)
	}
	for _, w := range []string{"spec.post_message.example", "spec.post_message.additionalProperties",
		"spec.post_message.kind.enum", "spec.post_message.priority.exclusiveMinimum",
		"spec.post_message.priority.exclusiveMaximum", "spec.post_message.pinned.type", "spec.post_message.room.pattern",
		"spec.post_message.labels.minItems", "spec.post_message.labels.uniqueItems", "spec.post_message.tags.minItems",
		"spec.post_message.tags.maxItems", "spec.post_message.meta.minProperties", "spec.post_message.meta.maxProperties",
		"spec.post_message.labels.maxItems", "spec.post_message.labels.items.type", "spec.post_message.tags.items.minLength",
		"spec.post_message.code.pattern", "spec.post_message.filters.maxProperties", "spec.post_message.filters.additionalProperties",
		// Values of properties the schema does not name.
		"spec.post_message.filters.a.type", "spec.post_message.meta.unexpected_property.maxLength",
		"spec.post_message.step.multipleOf", "spec.post_message.count.multipleOf"} {
		if !slices.Contains(names, w) {
			t.Errorf("no case %s; got %v", w, names)
		}
	}
	for _, s := range scripts {
		if s.Name == "spec.post_message.example" && !strings.Contains(string(s.Archive), "call -as agent:maya/builder post_message") {
			t.Errorf("a page without runner wording is called as the agent:\n%s", s.Archive)
		}
		// The unexpected property must be one the pattern does not allow.
		if s.Name == "spec.post_message.filters.additionalProperties" && strings.Contains(string(s.Archive), "unexpected_property") {
			t.Errorf("the unexpected property matches patternProperties:\n%s", s.Archive)
		}
	}
}

// derivePage returns the derived cases of one page, src in file, which
// must derive without a warning.
func derivePage(t *testing.T, file, src string) []*suite.Script {
	t.Helper()
	sp, _, err := spec.LoadLinted([]spec.Source{{File: file, Src: []byte(src)}})
	if err != nil {
		t.Fatal(err)
	}
	scripts, warns := Scripts(sp)
	for _, w := range warns {
		t.Errorf("warning: %s", w)
	}
	return scripts
}
