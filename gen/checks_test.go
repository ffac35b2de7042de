package gen

import (
	"errors"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/spec"
)

// checkPage is a page whose input schema has one more property, prop.
func checkPage(prop string) spec.Source {
	return spec.Source{File: "odd_check.md", Src: []byte(`# Corpus reference

Pages that exercise the generator. Identity comes from the token.

## odd_check

Check what the validators cannot.

### Example input

` + "```json" + `
{
  "id": "x"
}
` + "```" + `

### Input schema

` + "```json" + `
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "id": {
      "type": "string"
    },
    "odd": ` + prop + `
  },
  "required": [
    "id"
  ],
  "$defs": {
    "a": {
      "$ref": "#/$defs/b"
    },
    "b": {
      "allOf": [
        {
          "$ref": "#/$defs/a"
        }
      ]
    }
  }
}
` + "```" + `

### Output schema

` + "```json" + `
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object"
}
` + "```" + `

[Read online](https://example.com/docs/tools?tool=odd_check)
`)}
}

// A keyword the generated validators cannot check stops generation with
// an error naming the page (file:line:col of the keyword), the tool, the
// schema, the pointer and the keyword; none is ever left unchecked.
func TestUncheckableKeywords(t *testing.T) {
	for _, c := range []struct {
		prop, ptr, kw string
	}{
		{`{"type": "object", "unevaluatedProperties": false}`, "/properties/odd/unevaluatedProperties", "unevaluatedProperties"},
		{`{"type": "array", "unevaluatedItems": false}`, "/properties/odd/unevaluatedItems", "unevaluatedItems"},
		{`{"$dynamicRef": "#meta"}`, "/properties/odd/$dynamicRef", "$dynamicRef"},
		{`{"dependencies": {"a": ["b"]}}`, "/properties/odd/dependencies", "dependencies"},
		{`{"$ref": "https://example.com/other.json"}`, "/properties/odd/$ref", "$ref"},
		{`{"$ref": "#/$defs/a"}`, "/$defs/a", "$ref"},
		{`{"$id": "https://example.com/inner", "type": "string"}`, "/properties/odd/$id", "$id"},
	} {
		s, _, err := spec.LoadUnlinted([]spec.Source{checkPage(c.prop)})
		if err != nil {
			t.Fatalf("%s: %v", c.prop, err)
		}
		_, _, err = Generate(s, Options{Package: "x"})
		var ue *UncheckableError
		if !errors.As(err, &ue) {
			t.Errorf("%s: err = %v, want an *UncheckableError", c.prop, err)
			continue
		}
		if ue.Pointer != c.ptr || ue.Keyword != c.kw || ue.Tool != "odd_check" || ue.Section != "input" ||
			ue.Pos.File != "odd_check.md" || ue.Pos.Line == 0 {
			t.Errorf("%s: %+v", c.prop, ue)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, ue.Pos.String()+": ") || !strings.Contains(msg, c.kw) || !strings.Contains(msg, c.ptr) {
			t.Errorf("%s: message %q", c.prop, msg)
		}
	}
}
