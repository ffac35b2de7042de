package jsonschema_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/internal/schemax"
	"github.com/prickle-dev/prickle/spec"
)

// Every schema of every page the repository has (the bundled pages, the
// generator corpus, the pages that grow the reference in tests) gets an
// instance that its validator accepts.
func TestInstanceOfEveryPage(t *testing.T) {
	var dirs []string
	for _, glob := range []string{"../../spec/reference", "../../testdata/gen/*", "../../testdata/grow", "../../testdata/pages/good"} {
		m, _ := filepath.Glob(glob)
		dirs = append(dirs, m...)
	}
	n := 0
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		srcs, err := spec.ReadPaths([]string{dir})
		if err != nil {
			continue // a folder without pages
		}
		sp, _, err := spec.LoadLinted(srcs)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, tool := range sp.Tools {
			for _, b := range []*spec.JSONBlock{tool.InputSchema, tool.OutputSchema} {
				inst, err := b.Schema().Root().Instance()
				if err != nil {
					t.Errorf("%s %s: %v", dir, tool.Name, err)
					continue
				}
				raw, err := json.Marshal(inst)
				if err != nil {
					t.Fatal(err)
				}
				compiled, err := schemax.Compile(tool.Name, b.JSON)
				if err != nil {
					t.Fatal(err)
				}
				if err := schemax.Validate(compiled, raw); err != nil {
					t.Errorf("%s %s: instance %s: %v", dir, tool.Name, raw, err)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no schemas found")
	}
}

func TestInstanceBounds(t *testing.T) {
	for src, want := range map[string]string{
		`{"type": "integer", "minimum": 3, "maximum": 7}`:                           `3`,
		`{"type": "integer", "exclusiveMinimum": 3}`:                                `4`,
		`{"type": "integer", "maximum": -2}`:                                        `-2`,
		`{"type": "number", "multipleOf": 0.5, "minimum": 1.2}`:                     `1.5`,
		`{"type": "string", "minLength": 9}`:                                        `"exampleaa"`,
		`{"type": "string", "maxLength": 3}`:                                        `"exa"`,
		`{"type": "string", "pattern": "^[0-9]{3}$"}`:                               `"000"`,
		`{"type": "string", "format": "date-time"}`:                                 `"2026-01-15T09:30:00Z"`,
		`{"enum": [null, "b"]}`:                                                     `"b"`,
		`{"type": "array", "items": {"const": 1}, "minItems": 2}`:                   `[1,1]`,
		`{"anyOf": [{"type": "null"}, {"type": "boolean"}]}`:                        `true`,
		`{"$ref": "#/$defs/a", "$defs": {"a": {"type": "string", "maxLength": 2}}}`: `"ex"`,
		// Properties that patternProperties allows, named by its pattern.
		`{"type": "object", "minProperties": 2, "patternProperties": {"^[a-z_]+$": {"type": "string"}}, "additionalProperties": false}`:           `{"a":"example","aa":"example"}`,
		`{"type": "object", "required": ["x-1"], "patternProperties": {"^x-": {"type": "integer", "minimum": 5}}, "additionalProperties": false}`: `{"x-1":5}`,
		`{"type": "object", "minProperties": 1, "patternProperties": {"^k": {"type": "boolean"}}, "additionalProperties": {"type": "integer"}}`:   `{"k":true}`,
		`{"type": "object", "minProperties": 1, "patternProperties": {"^[0-9]$": false}, "additionalProperties": {"type": "integer"}}`:            `{"key1":1}`,
	} {
		d, err := jsonschema.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		inst, err := d.Root().Instance()
		got, _ := json.Marshal(inst)
		if err != nil || string(got) != want {
			t.Errorf("Instance(%s) = %s, %v; want %s", src, got, err, want)
		}
	}
	for _, src := range []string{
		`false`,
		`{"type": "integer", "minimum": 5, "maximum": 4}`,
		`{"type": "string", "minLength": 5, "maxLength": 4}`,
		`{"type": "string", "pattern": "^a$", "minLength": 2}`,
		`{"type": "object", "required": ["a"], "additionalProperties": false}`,
	} {
		d, _ := jsonschema.Parse([]byte(src))
		if inst, err := d.Root().Instance(); err == nil {
			t.Errorf("Instance(%s) = %v, want an error", src, inst)
		}
	}
}
