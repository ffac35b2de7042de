package jsonschema_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/internal/schemacompile"
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
	// Each folder alone: a folder's tools may have pages in another
	// (testdata/grow/README.txt).
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
				compiled, err := schemacompile.Compile(tool.Name, b.JSON)
				if err != nil {
					t.Fatal(err)
				}
				if err := schemacompile.Validate(compiled, raw); err != nil {
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

func root(t *testing.T, src string) *jsonschema.Schema {
	t.Helper()
	d, err := jsonschema.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return d.Root()
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestMinimal: the smallest valid value leaves out every optional
// property and every item minItems does not ask for; scalars are
// Instance's.
func TestMinimal(t *testing.T) {
	for src, want := range map[string]string{
		`{"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer", "minimum": 2}}, "required": ["b"]}`: `{"b":2}`,
		`{"type": "object", "properties": {"a": {"type": "object", "properties": {"x": {"type": "string"}}}}}`:                   `{}`,
		`{"type": "array", "items": {"type": "string", "pattern": "^[0-9]{2}$"}}`:                                                `[]`,
		`{"type": "array", "items": {"const": "x"}, "minItems": 3}`:                                                              `["x","x","x"]`,
		`{"type": "object", "properties": {"a": {"type": "boolean"}}, "minProperties": 1}`:                                       `{"a":true}`,
		`{"enum": ["b", "c"]}`: `"b"`,
	} {
		got, err := root(t, src).Minimal()
		if err != nil || compact(got) != want {
			t.Errorf("Minimal(%s) = %s, %v; want %s", src, compact(got), err, want)
		}
	}
	for _, src := range []string{
		`{"type": "array", "minItems": 1}`,
		`{"type": "array", "items": {"type": "integer"}, "minItems": 2, "uniqueItems": true}`,
		`{"type": "object", "required": ["a"]}`,
	} {
		if got, err := root(t, src).Minimal(); err == nil {
			t.Errorf("Minimal(%s) = %s, want an error", src, compact(got))
		}
	}
}

// TestAddProperties: named properties first, in the order of their
// names, then the names the schema allows without naming them; an error
// once it allows no more.
func TestAddProperties(t *testing.T) {
	s := root(t, `{"type": "object", "properties": {"z": {"type": "integer"}, "b": {"type": "string", "minLength": 2}},
		"patternProperties": {"^p[0-9]$": {"type": "boolean"}}, "additionalProperties": false}`)
	obj := map[string]any{"z": 1}
	if err := s.AddProperties(obj, 3); err != nil || compact(obj) != `{"b":"example","p0":true,"z":1}` {
		t.Errorf("AddProperties(3) = %s, %v", compact(obj), err)
	}
	if err := s.AddProperties(obj, 20); err == nil {
		t.Errorf("AddProperties(20) = %s, want an error", compact(obj))
	}
}

// TestDistinctItems: enough distinct valid items, each where the schema
// allows it; false when there are not enough.
func TestDistinctItems(t *testing.T) {
	for _, c := range []struct {
		src, start string
		n          int
		want       string
		ok         bool
	}{
		{`{"enum": ["a", "b", "c"]}`, `["b"]`, 3, `["b","a","c"]`, true},
		{`{"enum": ["a", "b"]}`, `[]`, 3, `["a","b"]`, false},
		{`{"type": "integer", "minimum": 4, "maximum": 6}`, `[5]`, 3, `[5,4,6]`, true},
		{`{"type": "integer", "minimum": 4, "maximum": 5}`, `[]`, 3, `[4,5]`, false},
	} {
		var start []any
		json.Unmarshal([]byte(c.start), &start)
		got, ok := root(t, c.src).DistinctItems(start, c.n)
		if ok != c.ok || ok && compact(got) != c.want {
			t.Errorf("DistinctItems(%s, %s, %d) = %s, %v; want %s, %v", c.src, c.start, c.n, compact(got), ok, c.want, c.ok)
		}
	}
	// Strings: each matches the pattern within the length bounds.
	s := root(t, `{"type": "string", "pattern": "^[a-z][a-z0-9]*$", "maxLength": 4}`)
	got, ok := s.DistinctItems(nil, 12)
	seen := map[any]bool{}
	for _, v := range got {
		str, _ := v.(string)
		if seen[v] || !s.MatchesPattern(str) || !s.FitsLength(str) {
			t.Errorf("string item %q: repeated, or not valid", str)
		}
		seen[v] = true
	}
	if !ok || len(got) != 12 {
		t.Errorf("DistinctItems(strings, 12) = %d items, %v", len(got), ok)
	}
}

// TestPatternAndLength: a match is decided only when the pattern compiles
// and the match finishes; lengths count characters, not bytes.
func TestPatternAndLength(t *testing.T) {
	s := root(t, `{"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 3}`)
	for v, want := range map[string][2]bool{"ab": {true, true}, "Ab": {false, true}} {
		if ok, decided := s.MatchPattern(v); ok != want[0] || decided != want[1] {
			t.Errorf("MatchPattern(%q) = %v, %v", v, ok, decided)
		}
	}
	if ok, decided := root(t, `{"pattern": "(["}`).MatchPattern("x"); ok || decided {
		t.Errorf("a pattern that does not compile decided %v", ok)
	}
	for v, want := range map[string]bool{"a": false, "ab": true, "äöü": true, "abcd": false} {
		if got := s.FitsLength(v); got != want {
			t.Errorf("FitsLength(%q) = %v", v, got)
		}
	}
}
