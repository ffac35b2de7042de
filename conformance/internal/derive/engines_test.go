package derive

import (
	"strings"
	"testing"
)

// TestEngineDifferences: a page the derivation has never seen gets, for
// each pattern, a case for every engine difference that changes the
// verdict near its valid value, and none where it does not.
func TestEngineDifferences(t *testing.T) {
	page := strings.ReplaceAll(`# MCP tool reference

Identity comes from the agent’s token, never from a tool argument.

## tag_item

Tag an item.

### Example input

~~~json
{"code": "123", "word": "abc", "pair": "a b", "dot": "a-b", "slug": "abc", "free": "abc"}
~~~

### Input schema

~~~json
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "code": {"type": "string", "pattern": "^\\d{3}$"},
    "word": {"type": "string", "pattern": "^\\w+$"},
    "pair": {"type": "string", "pattern": "^a\\sb$"},
    "dot": {"type": "string", "pattern": "^a.b$"},
    "slug": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
    "free": {"type": "string", "pattern": "b"}
  },
  "required": ["code"],
  "additionalProperties": false
}
~~~

### Output schema

~~~json
{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
~~~

[Read online](https://app.useprickle.dev/docs/reference/mcp-tools?tool=tag_item)
`, "~~~", "```")
	got := map[string]string{}
	for _, s := range derivePage(t, "tag_item.md", page) {
		if strings.Contains(s.Name, ".pattern-") {
			got[strings.TrimPrefix(s.Name, "spec.tag_item.")] = string(s.Archive)
		}
	}
	want := []string{
		"code.pattern-newline-end", "code.pattern-newline-start", "code.pattern-unicode-digit",
		"word.pattern-newline-end", "word.pattern-unicode-word",
		"pair.pattern-unicode-space", "dot.pattern-dot-terminator",
		"slug.pattern-case-fold", "slug.pattern-newline-end",
	}
	for _, w := range want {
		if got[w] == "" {
			t.Errorf("no case %s", w)
		}
	}
	// Where no reading changes the verdict there is no case: \d does not
	// appear in the slug's pattern, and an unanchored pattern takes a
	// final newline in every engine; digits have no case.
	for _, no := range []string{"slug.pattern-unicode-digit", "free.pattern-newline-end", "code.pattern-case-fold"} {
		if got[no] != "" {
			t.Errorf("case %s, where no engine reads the pattern otherwise:\n%s", no, got[no])
		}
	}
	if !strings.Contains(got["code.pattern-newline-end"], `"123\n"`) {
		t.Errorf("the newline case is not the valid value and a newline:\n%s", got["code.pattern-newline-end"])
	}
	// The example's "abc" is at the slug's maxLength: the case starts from
	// a shorter valid value, so that only the pattern breaks.
	if !strings.Contains(got["slug.pattern-newline-end"], `"slug":"a\n"`) {
		t.Errorf("the slug's newline case:\n%s", got["slug.pattern-newline-end"])
	}
}
