package specdiff

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/spec"
)

// specOf builds a spec with one tool "t" whose input and output schemas
// are given (an empty string leaves the default object schema).
func specOf(input, output string) *spec.Spec {
	if input == "" {
		input = `{"type":"object"}`
	}
	if output == "" {
		output = `{"type":"object"}`
	}
	return &spec.Spec{
		Format:  spec.FormatVersion,
		Catalog: []spec.CatalogEntry{{Name: "t", Documented: true}},
		Tools: []*spec.Tool{{
			Name:         "t",
			InputSchema:  &spec.JSONBlock{JSON: json.RawMessage(input)},
			OutputSchema: &spec.JSONBlock{JSON: json.RawMessage(output)},
		}},
	}
}

// lines renders changes as "side pointer kind breaking".
func lines(r Report) []string {
	out := []string{}
	for _, c := range r.Changes {
		b := "ok"
		if c.Breaking {
			b = "BREAKING"
		}
		out = append(out, fmt.Sprintf("%s %s %s %s", c.Side, c.Pointer, c.Kind, b))
	}
	return out
}

// obj wraps properties (and the rest) in an object schema.
func obj(props string, rest ...string) string {
	s := `{"type":"object","properties":{` + props + `}`
	for _, r := range rest {
		s += "," + r
	}
	return s + "}"
}

type schemaCase struct {
	name     string
	old, new string
	input    []string // expected on the input side
	output   []string // expected on the output side
}

// Each case is run with the schemas on the input side and again on the
// output side: the grading must follow the direction.
var schemaCases = []schemaCase{
	{
		name: "unchanged",
		old:  obj(`"a":{"type":"string"}`), new: obj(`"a":{"type":"string"}`),
	},
	{
		name: "formatting and number literals are not changes",
		old:  obj(`"a":{"type":"integer","maximum":10,"enum":[1,2]}`),
		new:  obj(`"a":{"enum":[1.0,2],"maximum":1e1,"type":"integer"}`),
	},
	{
		name:   "new required property",
		old:    obj(`"a":{"type":"string"}`),
		new:    obj(`"a":{"type":"string"},"b":{"type":"string"}`, `"required":["b"]`),
		input:  []string{"input /properties/b field-required-added BREAKING"},
		output: []string{"output /properties/b field-required-added ok"},
	},
	{
		name:   "new optional property",
		old:    obj(`"a":{"type":"string"}`, `"additionalProperties":false`),
		new:    obj(`"a":{"type":"string"},"b":{"type":"string"}`, `"additionalProperties":false`),
		input:  []string{"input /properties/b field-added ok"},
		output: []string{"output /properties/b field-added BREAKING"},
	},
	{
		name:   "new optional property in an open object",
		old:    obj(`"a":{"type":"string"}`),
		new:    obj(`"a":{"type":"string"},"b":{"type":"string"}`),
		input:  []string{"input /properties/b field-added ok"},
		output: []string{"output /properties/b field-added ok"},
	},
	{
		name:   "property removed from an open object",
		old:    obj(`"a":{"type":"string"},"b":{"type":"string"}`),
		new:    obj(`"a":{"type":"string"}`),
		input:  []string{"input /properties/b field-removed ok"},
		output: []string{"output /properties/b field-removed BREAKING"},
	},
	{
		name:   "property removed from a closed object",
		old:    obj(`"a":{"type":"string"},"b":{"type":"string"}`, `"additionalProperties":false`),
		new:    obj(`"a":{"type":"string"}`, `"additionalProperties":false`),
		input:  []string{"input /properties/b field-removed BREAKING"},
		output: []string{"output /properties/b field-removed BREAKING"},
	},
	{
		name:   "property removed from an object whose other properties must match a schema",
		old:    obj(`"a":{"type":"integer"}`, `"additionalProperties":{"type":"string"}`),
		new:    obj(``, `"additionalProperties":{"type":"string"}`),
		input:  []string{"input /properties/a field-removed BREAKING"},
		output: []string{"output /properties/a field-removed BREAKING"},
	},
	{
		name:   "the same changed reference at two sites is reported at both",
		old:    obj(`"a":{"$ref":"#/$defs/long"},"b":{"$ref":"#/$defs/long"}`, `"$defs":{"long":{"type":"string","maxLength":64},"short":{"type":"string","maxLength":8}}`),
		new:    obj(`"a":{"$ref":"#/$defs/short"},"b":{"$ref":"#/$defs/short"}`, `"$defs":{"long":{"type":"string","maxLength":64},"short":{"type":"string","maxLength":8}}`),
		input:  []string{"input /$defs/short/maxLength constraint-narrowed BREAKING", "input /$defs/short/maxLength constraint-narrowed BREAKING"},
		output: []string{"output /$defs/short/maxLength constraint-narrowed ok", "output /$defs/short/maxLength constraint-narrowed ok"},
	},
	{
		name:   "required property removed is reported once",
		old:    obj(`"a":{"type":"string"},"b":{"type":"string"}`, `"required":["a","b"]`),
		new:    obj(`"a":{"type":"string"}`, `"required":["a"]`),
		input:  []string{"input /properties/b field-removed ok"},
		output: []string{"output /properties/b field-removed BREAKING"},
	},
	{
		name:   "optional becomes required",
		old:    obj(`"a":{"type":"string"},"b":{"type":"string"}`, `"required":["a"]`),
		new:    obj(`"a":{"type":"string"},"b":{"type":"string"}`, `"required":["a","b"]`),
		input:  []string{"input /required/1 field-became-required BREAKING"},
		output: []string{"output /required/1 field-became-required ok"},
	},
	{
		name:   "required becomes optional",
		old:    obj(`"a":{"type":"string"},"b":{"type":"string"}`, `"required":["a","b"]`),
		new:    obj(`"a":{"type":"string"},"b":{"type":"string"}`, `"required":["a"]`),
		input:  []string{"input /required/1 field-became-optional ok"},
		output: []string{"output /required/1 field-became-optional BREAKING"},
	},
	{
		name:   "type changed",
		old:    obj(`"a":{"type":"string"}`),
		new:    obj(`"a":{"type":"integer"}`),
		input:  []string{"input /properties/a/type type-changed BREAKING"},
		output: []string{"output /properties/a/type type-changed BREAKING"},
	},
	{
		name:   "integer widened to number",
		old:    obj(`"a":{"type":"integer"}`),
		new:    obj(`"a":{"type":"number"}`),
		input:  []string{"input /properties/a/type type-widened ok"},
		output: []string{"output /properties/a/type type-widened BREAKING"},
	},
	{
		name:   "type narrowed",
		old:    obj(`"a":{"type":["string","integer"]}`),
		new:    obj(`"a":{"type":"string"}`),
		input:  []string{"input /properties/a/type type-narrowed BREAKING"},
		output: []string{"output /properties/a/type type-narrowed ok"},
	},
	{
		// Without a type, null is valid too: said explicitly.
		name:   "type removed",
		old:    obj(`"a":{"type":"string"}`),
		new:    obj(`"a":{}`),
		input:  []string{"input /properties/a nullable-added ok", "input /properties/a/type type-widened ok"},
		output: []string{"output /properties/a nullable-added BREAKING", "output /properties/a/type type-widened BREAKING"},
	},
	{
		name:   "type gains null",
		old:    obj(`"a":{"type":"string"}`),
		new:    obj(`"a":{"type":["string","null"]}`),
		input:  []string{"input /properties/a nullable-added ok"},
		output: []string{"output /properties/a nullable-added BREAKING"},
	},
	{
		name:   "type loses null",
		old:    obj(`"a":{"type":["string","null"]}`),
		new:    obj(`"a":{"type":"string"}`),
		input:  []string{"input /properties/a nullable-removed BREAKING"},
		output: []string{"output /properties/a nullable-removed ok"},
	},
	{
		name:   "anyOf gains a null variant",
		old:    obj(`"a":{"type":"string","maxLength":5}`),
		new:    obj(`"a":{"anyOf":[{"type":"string","maxLength":5},{"type":"null"}]}`),
		input:  []string{"input /properties/a nullable-added ok"},
		output: []string{"output /properties/a nullable-added BREAKING"},
	},
	{
		name:   "nullable union gets a narrower variant",
		old:    obj(`"a":{"anyOf":[{"type":"string","maxLength":5},{"type":"null"}]}`),
		new:    obj(`"a":{"anyOf":[{"type":"null"},{"type":"string","maxLength":4}]}`),
		input:  []string{"input /properties/a/anyOf/1/maxLength constraint-narrowed BREAKING"},
		output: []string{"output /properties/a/anyOf/1/maxLength constraint-narrowed ok"},
	},
	{
		name:   "a reference becomes nullable",
		old:    obj(`"a":{"$ref":"#/$defs/s"}`, `"$defs":{"s":{"type":"string"}}`),
		new:    obj(`"a":{"anyOf":[{"$ref":"#/$defs/s"},{"type":"null"}]}`, `"$defs":{"s":{"type":"string"}}`),
		input:  []string{"input /properties/a nullable-added ok"},
		output: []string{"output /properties/a nullable-added BREAKING"},
	},
	{
		name: "type array rewritten as anyOf is no change",
		old:  obj(`"a":{"type":["string","null"]}`),
		new:  obj(`"a":{"anyOf":[{"type":"string"},{"type":"null"}]}`),
	},
	{
		name:   "enum value added",
		old:    obj(`"a":{"type":"string","enum":["x","y"]}`),
		new:    obj(`"a":{"type":"string","enum":["x","y","z"]}`),
		input:  []string{"input /properties/a/enum/2 enum-value-added ok"},
		output: []string{"output /properties/a/enum/2 enum-value-added BREAKING"},
	},
	{
		name:   "enum value removed",
		old:    obj(`"a":{"type":"string","enum":["x","y","z"]}`),
		new:    obj(`"a":{"type":"string","enum":["x","z"]}`),
		input:  []string{"input /properties/a/enum/1 enum-value-removed BREAKING"},
		output: []string{"output /properties/a/enum/1 enum-value-removed ok"},
	},
	{
		name:   "enum added and removed",
		old:    obj(`"a":{"type":"string"},"b":{"type":"string","enum":["x"]}`),
		new:    obj(`"a":{"type":"string","enum":["x"]},"b":{"type":"string"}`),
		input:  []string{"input /properties/a/enum enum-added BREAKING", "input /properties/b/enum enum-removed ok"},
		output: []string{"output /properties/a/enum enum-added ok", "output /properties/b/enum enum-removed BREAKING"},
	},
	{
		name:   "enum gains null: nullability only",
		old:    obj(`"a":{"enum":["x"]}`),
		new:    obj(`"a":{"enum":["x",null]}`),
		input:  []string{"input /properties/a nullable-added ok"},
		output: []string{"output /properties/a nullable-added BREAKING"},
	},
	{
		name:   "const added, changed, removed",
		old:    obj(`"a":{"type":"string"},"b":{"const":"x"},"c":{"const":1}`),
		new:    obj(`"a":{"type":"string","const":"x"},"b":{"const":"y"},"c":{}`),
		input:  []string{"input /properties/a/const const-added BREAKING", "input /properties/b/const const-changed BREAKING", "input /properties/c nullable-added ok", "input /properties/c/const const-removed ok"},
		output: []string{"output /properties/a/const const-added ok", "output /properties/b/const const-changed BREAKING", "output /properties/c nullable-added BREAKING", "output /properties/c/const const-removed BREAKING"},
	},
	{
		name:   "format added, changed, removed",
		old:    obj(`"a":{"type":"string"},"b":{"type":"string","format":"date"},"c":{"type":"string","format":"uri"}`),
		new:    obj(`"a":{"type":"string","format":"date-time"},"b":{"type":"string","format":"date-time"},"c":{"type":"string"}`),
		input:  []string{"input /properties/a/format format-added BREAKING", "input /properties/b/format format-changed BREAKING", "input /properties/c/format format-removed ok"},
		output: []string{"output /properties/a/format format-added ok", "output /properties/b/format format-changed BREAKING", "output /properties/c/format format-removed BREAKING"},
	},
	{
		name:   "pattern added, changed, removed",
		old:    obj(`"a":{"type":"string"},"b":{"type":"string","pattern":"^a"},"c":{"type":"string","pattern":"^c"}`),
		new:    obj(`"a":{"type":"string","pattern":"^a"},"b":{"type":"string","pattern":"^b"},"c":{"type":"string"}`),
		input:  []string{"input /properties/a/pattern pattern-added BREAKING", "input /properties/b/pattern pattern-changed BREAKING", "input /properties/c/pattern pattern-removed ok"},
		output: []string{"output /properties/a/pattern pattern-added ok", "output /properties/b/pattern pattern-changed BREAKING", "output /properties/c/pattern pattern-removed BREAKING"},
	},
	{
		name: "pattern widened, narrowed, rewritten, unknown",
		old:  obj(`"w":{"type":"string","pattern":"^[a-z]+$"},"n":{"type":"string","pattern":"^[a-z_]+$"},"r":{"type":"string","pattern":"^[0-9]+$"},"u":{"type":"string","pattern":"^a(?=b)"}`),
		new:  obj(`"w":{"type":"string","pattern":"^[a-z.]+$"},"n":{"type":"string","pattern":"^[a-z]+$"},"r":{"type":"string","pattern":"^\\d+$"},"u":{"type":"string","pattern":"^a(?=c)"}`),
		input: []string{
			"input /properties/n/pattern pattern-narrowed BREAKING", "input /properties/r/pattern pattern-rewritten ok",
			"input /properties/u/pattern pattern-unknown ok", "input /properties/w/pattern pattern-widened ok",
		},
		output: []string{
			"output /properties/n/pattern pattern-narrowed ok", "output /properties/r/pattern pattern-rewritten ok",
			"output /properties/u/pattern pattern-unknown ok", "output /properties/w/pattern pattern-widened BREAKING",
		},
	},
	{
		name: "bounds narrowed",
		old:  obj(`"s":{"type":"string","minLength":1,"maxLength":64},"n":{"type":"number","minimum":0},"l":{"type":"array"}`),
		new:  obj(`"s":{"type":"string","minLength":2,"maxLength":32},"n":{"type":"number","minimum":0.5},"l":{"type":"array","maxItems":3}`),
		input: []string{
			"input /properties/l/maxItems constraint-narrowed BREAKING",
			"input /properties/n/minimum constraint-narrowed BREAKING",
			"input /properties/s/maxLength constraint-narrowed BREAKING",
			"input /properties/s/minLength constraint-narrowed BREAKING",
		},
		output: []string{
			"output /properties/l/maxItems constraint-narrowed ok",
			"output /properties/n/minimum constraint-narrowed ok",
			"output /properties/s/maxLength constraint-narrowed ok",
			"output /properties/s/minLength constraint-narrowed ok",
		},
	},
	{
		name: "bounds widened",
		old:  obj(`"s":{"type":"string","minLength":2,"maxLength":32},"n":{"type":"integer","exclusiveMaximum":10},"l":{"type":"array","minItems":1}`),
		new:  obj(`"s":{"type":"string","minLength":1,"maxLength":64},"n":{"type":"integer"},"l":{"type":"array","minItems":0}`),
		input: []string{
			"input /properties/l/minItems constraint-widened ok",
			"input /properties/n/exclusiveMaximum constraint-widened ok",
			"input /properties/s/maxLength constraint-widened ok",
			"input /properties/s/minLength constraint-widened ok",
		},
		output: []string{
			"output /properties/l/minItems constraint-widened BREAKING",
			"output /properties/n/exclusiveMaximum constraint-widened BREAKING",
			"output /properties/s/maxLength constraint-widened BREAKING",
			"output /properties/s/minLength constraint-widened BREAKING",
		},
	},
	{
		name:   "multipleOf and uniqueItems",
		old:    obj(`"a":{"type":"number","multipleOf":2},"b":{"type":"number","multipleOf":4},"c":{"type":"number","multipleOf":2},"d":{"type":"array"}`),
		new:    obj(`"a":{"type":"number","multipleOf":4},"b":{"type":"number","multipleOf":2},"c":{"type":"number","multipleOf":3},"d":{"type":"array","uniqueItems":true}`),
		input:  []string{"input /properties/a/multipleOf constraint-narrowed BREAKING", "input /properties/b/multipleOf constraint-widened ok", "input /properties/c/multipleOf constraint-changed BREAKING", "input /properties/d/uniqueItems constraint-narrowed BREAKING"},
		output: []string{"output /properties/a/multipleOf constraint-narrowed ok", "output /properties/b/multipleOf constraint-widened BREAKING", "output /properties/c/multipleOf constraint-changed BREAKING", "output /properties/d/uniqueItems constraint-narrowed ok"},
	},
	{
		name:   "additionalProperties becomes false",
		old:    obj(`"a":{"type":"string"}`),
		new:    obj(`"a":{"type":"string"}`, `"additionalProperties":false`),
		input:  []string{"input /additionalProperties additional-properties-closed BREAKING"},
		output: []string{"output /additionalProperties additional-properties-closed ok"},
	},
	{
		name:   "additionalProperties no longer false",
		old:    obj(`"a":{"type":"object","unevaluatedProperties":false}`),
		new:    obj(`"a":{"type":"object"}`),
		input:  []string{"input /properties/a/unevaluatedProperties additional-properties-opened ok"},
		output: []string{"output /properties/a/unevaluatedProperties additional-properties-opened BREAKING"},
	},
	{
		name:   "map values change type",
		old:    obj(`"m":{"type":"object","additionalProperties":{"type":"string"}}`),
		new:    obj(`"m":{"type":"object","additionalProperties":{"type":"integer"}}`),
		input:  []string{"input /properties/m/additionalProperties/type type-changed BREAKING"},
		output: []string{"output /properties/m/additionalProperties/type type-changed BREAKING"},
	},
	{
		name:   "nested array of objects",
		old:    obj(`"list":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string","maxLength":9}},"required":["x"]}}`),
		new:    obj(`"list":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string","maxLength":8},"y":{"type":"string"}},"required":["x","y"]}}`),
		input:  []string{"input /properties/list/items/properties/x/maxLength constraint-narrowed BREAKING", "input /properties/list/items/properties/y field-required-added BREAKING"},
		output: []string{"output /properties/list/items/properties/x/maxLength constraint-narrowed ok", "output /properties/list/items/properties/y field-required-added ok"},
	},
	{
		name:   "items becomes false",
		old:    obj(`"l":{"type":"array"}`),
		new:    obj(`"l":{"type":"array","items":false}`),
		input:  []string{"input /properties/l/items schema-narrowed BREAKING"},
		output: []string{"output /properties/l/items schema-narrowed ok"},
	},
	{
		name:   "a definition changes where it is defined",
		old:    obj(`"a":{"$ref":"#/$defs/id"},"b":{"$ref":"#/$defs/id"}`, `"$defs":{"id":{"type":"string","maxLength":64}}`),
		new:    obj(`"a":{"$ref":"#/$defs/id"},"b":{"$ref":"#/$defs/id"}`, `"$defs":{"id":{"type":"string","maxLength":32}}`),
		input:  []string{"input /$defs/id/maxLength constraint-narrowed BREAKING"},
		output: []string{"output /$defs/id/maxLength constraint-narrowed ok"},
	},
	{
		name:   "a reference changes target",
		old:    obj(`"a":{"$ref":"#/$defs/long"}`, `"$defs":{"long":{"type":"string","maxLength":64},"short":{"type":"string","maxLength":8}}`),
		new:    obj(`"a":{"$ref":"#/$defs/short"}`, `"$defs":{"long":{"type":"string","maxLength":64},"short":{"type":"string","maxLength":8}}`),
		input:  []string{"input /$defs/short/maxLength constraint-narrowed BREAKING"},
		output: []string{"output /$defs/short/maxLength constraint-narrowed ok"},
	},
	{
		name:   "an inline schema moved into a definition is no change",
		old:    obj(`"a":{"type":"string","maxLength":8}`),
		new:    obj(`"a":{"$ref":"#/$defs/s"}`, `"$defs":{"s":{"type":"string","maxLength":8}}`),
		input:  []string{"input /$defs/s definition-added ok"},
		output: []string{"output /$defs/s definition-added ok"},
	},
	{
		name:   "recursive definitions terminate",
		old:    obj(`"tree":{"$ref":"#/$defs/a"}`, `"$defs":{"a":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/a"}}}},"b":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/b"}}}}}`),
		new:    obj(`"tree":{"$ref":"#/$defs/b"}`, `"$defs":{"a":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/a"}}}},"b":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/b"}}}}}`),
		input:  nil,
		output: nil,
	},
	{
		name:   "remote reference changed",
		old:    obj(`"a":{"$ref":"https://example.com/a.json"}`),
		new:    obj(`"a":{"$ref":"https://example.com/b.json"}`),
		input:  []string{"input /properties/a/$ref schema-changed BREAKING"},
		output: []string{"output /properties/a/$ref schema-changed BREAKING"},
	},
	{
		name: "oneOf variants matched by discriminator",
		old: obj(`"pet":{"oneOf":[` +
			`{"type":"object","properties":{"kind":{"const":"cat"},"lives":{"type":"integer"}}},` +
			`{"type":"object","properties":{"kind":{"const":"dog"}}}]}`),
		new: obj(`"pet":{"oneOf":[` +
			`{"type":"object","properties":{"kind":{"const":"dog"}}},` +
			`{"type":"object","properties":{"kind":{"const":"cat"},"lives":{"type":"integer","maximum":9}}},` +
			`{"type":"object","properties":{"kind":{"const":"fish"}}}]}`),
		input:  []string{"input /properties/pet/oneOf/1/properties/lives/maximum constraint-narrowed BREAKING", "input /properties/pet/oneOf/2 variant-added ok"},
		output: []string{"output /properties/pet/oneOf/1/properties/lives/maximum constraint-narrowed ok", "output /properties/pet/oneOf/2 variant-added BREAKING"},
	},
	{
		name:   "anyOf variant removed",
		old:    obj(`"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}`),
		new:    obj(`"v":{"anyOf":[{"type":"string"}]}`),
		input:  []string{"input /properties/v/anyOf/1 variant-removed BREAKING"},
		output: []string{"output /properties/v/anyOf/1 variant-removed ok"},
	},
	{
		name:   "a type becomes a union",
		old:    obj(`"v":{"type":"string"}`),
		new:    obj(`"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}`),
		input:  []string{"input /properties/v/anyOf/1 variant-added ok"},
		output: []string{"output /properties/v/anyOf/1 variant-added BREAKING"},
	},
	{
		name:   "anyOf becomes oneOf",
		old:    obj(`"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}`),
		new:    obj(`"v":{"oneOf":[{"type":"string"},{"type":"integer"}]}`),
		input:  []string{"input /properties/v/oneOf schema-changed BREAKING"},
		output: []string{"output /properties/v/oneOf schema-changed BREAKING"},
	},
	{
		name:   "allOf entry added",
		old:    obj(`"v":{"allOf":[{"type":"string"}]}`),
		new:    obj(`"v":{"allOf":[{"type":"string"},{"minLength":1}]}`),
		input:  []string{"input /properties/v/allOf/1 schema-narrowed BREAKING"},
		output: []string{"output /properties/v/allOf/1 schema-narrowed ok"},
	},
	{
		name:   "unsupported keyword",
		old:    obj(`"a":{"type":"string"}`),
		new:    obj(`"a":{"type":"string","not":{"const":"x"}}`),
		input:  []string{"input /properties/a/not schema-changed BREAKING"},
		output: []string{"output /properties/a/not schema-changed BREAKING"},
	},
	{
		name:   "annotations",
		old:    obj(`"a":{"type":"string","description":"old"}`),
		new:    obj(`"a":{"type":"string","description":"new","deprecated":true}`),
		input:  []string{"input /properties/a/deprecated annotation-changed ok", "input /properties/a/description annotation-changed ok"},
		output: []string{"output /properties/a/deprecated annotation-changed ok", "output /properties/a/description annotation-changed ok"},
	},
	{
		name:   "default changed and added",
		old:    obj(`"a":{"type":"integer","default":1},"b":{"type":"integer"}`),
		new:    obj(`"a":{"type":"integer","default":2},"b":{"type":"integer","default":3}`),
		input:  []string{"input /properties/a/default default-changed BREAKING", "input /properties/b/default default-added ok"},
		output: []string{"output /properties/a/default default-changed ok", "output /properties/b/default default-added ok"},
	},
	{
		name:   "property names with slash and tilde are escaped",
		old:    obj(`"a/b~c":{"type":"string"}`),
		new:    obj(`"a/b~c":{"type":"integer"}`),
		input:  []string{"input /properties/a~1b~0c/type type-changed BREAKING"},
		output: []string{"output /properties/a~1b~0c/type type-changed BREAKING"},
	},
}

func TestSchemaCases(t *testing.T) {
	for _, tc := range schemaCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, side := range []string{SideInput, SideOutput} {
				var old, new *spec.Spec
				want := tc.input
				if side == SideInput {
					old, new = specOf(tc.old, ""), specOf(tc.new, "")
				} else {
					old, new = specOf("", tc.old), specOf("", tc.new)
					want = tc.output
				}
				if want == nil {
					want = []string{}
				}
				r := Compare(old, new)
				if got := lines(r); !slices.Equal(got, want) {
					t.Errorf("%s side:\ngot  %q\nwant %q", side, got, want)
					for _, c := range r.Changes {
						t.Logf("  %s", c)
					}
				}
			}
		})
	}
}

func TestToolsCatalogAndDoc(t *testing.T) {
	pos := func(file string, line int) spec.Pos { return spec.Pos{File: file, Line: line, Col: 1} }
	old := specOf("", "")
	old.Tools[0].Pos = pos("old/t.md", 3)
	old.Tools[0].Sentences = []spec.Sentence{
		{ID: "t#00000001", Text: "Kept.", Pos: pos("old/t.md", 5)},
		{ID: "t#00000002", Text: "Dropped.", Pos: pos("old/t.md", 5)},
	}
	old.Tools[0].ExampleInput = &spec.JSONBlock{JSON: json.RawMessage(`{"a":1}`), Pos: pos("old/t.md", 10)}
	old.Tools = append(old.Tools, &spec.Tool{Name: "gone", Pos: pos("old/gone.md", 3)})
	old.Catalog = []spec.CatalogEntry{
		{Name: "gone", Documented: true}, {Name: "listed", Pos: pos("old/t.md", 40)}, {Name: "t", Documented: true},
	}

	new := specOf("", "")
	new.Tools[0].Pos = pos("new/t.md", 3)
	new.Tools[0].Sentences = []spec.Sentence{
		{ID: "t#00000001", Text: "Kept.", Pos: pos("new/t.md", 5)},
		{ID: "t#00000003", Text: "Added.", Pos: pos("new/t.md", 6)},
	}
	new.Tools[0].ExampleInput = &spec.JSONBlock{JSON: json.RawMessage(`{"a":2}`), Pos: pos("new/t.md", 11)}
	new.Tools = append(new.Tools, &spec.Tool{Name: "fresh", Pos: pos("new/fresh.md", 3)})
	new.Catalog = []spec.CatalogEntry{
		{Name: "fresh", Documented: true}, {Name: "later", Pos: pos("new/t.md", 41)}, {Name: "t", Documented: true},
	}

	r := Compare(old, new)
	var got []string
	for _, c := range r.Changes {
		got = append(got, c.String())
	}
	want := []string{
		`new/fresh.md:3:1: non-breaking fresh tool: new tool [tool-added]`,
		`old/gone.md:3:1: BREAKING gone tool: tool removed [tool-removed]`,
		`new/t.md:41:1: non-breaking later catalog: catalog name added (no page) [catalog-name-added]`,
		`old/t.md:40:1: BREAKING listed catalog: catalog name removed [catalog-name-removed]`,
		`new/t.md:11:1: non-breaking t tool: example input changed [doc-example-changed]`,
		`new/t.md:6:1: non-breaking t tool: description sentence added: "Added." (t#00000003) [doc-sentence-added]`,
		`new/t.md:3:1: non-breaking t tool: description sentence removed: "Dropped." (t#00000002) [doc-sentence-removed]`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r.Breaking != 2 || r.Summary() != "7 changes, 2 breaking" {
		t.Errorf("breaking %d, summary %q", r.Breaking, r.Summary())
	}
}

func TestSchemaMissing(t *testing.T) {
	old := specOf("", "")
	new := specOf("", "")
	new.Tools[0].OutputSchema = nil
	if got := lines(Compare(old, new)); !slices.Equal(got, []string{"output  schema-changed BREAKING"}) {
		t.Errorf("got %q", got)
	}
}

func TestEmptyReport(t *testing.T) {
	r := Compare(specOf("", ""), specOf("", ""))
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"changes":[],"breaking":0}` {
		t.Errorf("got %s", b)
	}
	if r.Summary() != "0 changes, 0 breaking" {
		t.Errorf("summary %q", r.Summary())
	}
}

func TestChangeJSON(t *testing.T) {
	c := Change{Tool: "t", Side: SideInput, Pointer: "/properties/a", Kind: KindFieldAdded, Message: "m",
		NewPos: spec.Pos{File: "new/t.md", Line: 2, Col: 3}}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tool":"t","side":"input","pointer":"/properties/a","kind":"field-added","breaking":false,"message":"m","new_pos":"new/t.md:2:3"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// TestDeterministic compares repeatedly, and with the tools in another
// order.
func TestDeterministic(t *testing.T) {
	var tc schemaCase
	for _, c := range schemaCases {
		if strings.HasPrefix(c.name, "oneOf variants") { // the most map-driven code
			tc = c
		}
	}
	a := Compare(specOf(tc.old, tc.old), specOf(tc.new, tc.new))
	for range 20 {
		b := Compare(specOf(tc.old, tc.old), specOf(tc.new, tc.new))
		if !slices.Equal(lines(a), lines(b)) {
			t.Fatalf("run to run:\n%q\n%q", lines(a), lines(b))
		}
	}
	if !slices.IsSortedFunc(a.Changes, compareChanges) {
		t.Error("changes not sorted")
	}

	two := func(reversed bool, schema string) *spec.Spec {
		s := specOf(schema, schema)
		u := specOf(schema, schema).Tools[0]
		u.Name = "u"
		s.Tools = append(s.Tools, u)
		if reversed {
			slices.Reverse(s.Tools)
		}
		return s
	}
	x := Compare(two(false, tc.old), two(false, tc.new))
	y := Compare(two(true, tc.old), two(false, tc.new))
	z := Compare(two(false, tc.old), two(true, tc.new))
	if len(x.Changes) != 2*len(a.Changes) || !slices.Equal(x.Changes, y.Changes) || !slices.Equal(x.Changes, z.Changes) {
		t.Errorf("tool order matters:\n%v\n%v\n%v", x.Changes, y.Changes, z.Changes)
	}
}

// TestDocTable checks that doc.go's grading table is Kinds.
func TestDocTable(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^//\t([a-z-]+) +(BREAKING(?: \(1\))?|non-breaking) +(BREAKING(?: \(1\))?|non-breaking)$`)
	var got []string
	for _, m := range row.FindAllStringSubmatch(string(src), -1) {
		got = append(got, m[1]+" "+m[2]+" "+m[3])
	}
	var want []string
	show := func(g Grade) string {
		switch g {
		case Breaking:
			return "BREAKING"
		case BreakingIfClosed:
			return "BREAKING (1)"
		}
		return "non-breaking"
	}
	for _, k := range Kinds {
		want = append(want, k.Kind+" "+show(k.Input)+" "+show(k.Output))
	}
	if !slices.Equal(got, want) {
		t.Errorf("doc.go table:\n%s\nKinds:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOddSchemas: malformed or unusual schemas never panic or loop, and a
// difference is never silently dropped.
func TestOddSchemas(t *testing.T) {
	odd := []string{
		`{"type":5}`,
		`{"type":"object","enum":"x","const":[1]}`,
		`{"type":"object","properties":[],"required":"a"}`,
		`{"type":"object","properties":{"a":7}}`,
		`{"type":"array","items":[{"type":"string"}]}`,
		`{"$ref":"#/nowhere"}`,
		`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
		`{"$ref":"#","properties":{"a":{"$ref":"#"}}}`,
		`{"anyOf":[],"oneOf":[true,false]}`,
		`{"anyOf":"x"}`,
		`{"maxLength":"ten","multipleOf":0,"minimum":true}`,
		`{"allOf":{"a":1},"prefixItems":3,"$defs":[]}`,
		`{"additionalProperties":7,"items":null}`,
		`true`, `false`, `[]`, `"x"`, `null`, `{}`,
	}
	for _, a := range odd {
		for _, b := range odd {
			r := Compare(specOf(a, a), specOf(b, b))
			same := canon(json.RawMessage(a)) == canon(json.RawMessage(b)) ||
				(a == "true" && b == "{}") || (a == "{}" && b == "true") // the same schema
			if !same && len(r.Changes) == 0 {
				t.Errorf("%s -> %s: no change reported", a, b)
			}
		}
	}
}
