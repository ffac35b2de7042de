package jsonschema

import (
	"fmt"
	"strings"
	"testing"
)

// scanDocs reach the scan's edges: a match in a child written before its
// parent's, matches in data that are not schemas, in every kind of
// subschema keyword, names written with escapes, and what the scan must
// leave to the walk.
var scanDocs = []string{
	`{"items": {"properties": {"a": {"items": {"enum": ["child"]}}}}, "properties": {"a": {"items": {"enum": ["parent"]}}}}`,
	`{"properties": {"a": {"items": {"enum": ["x", "y"], "properties": {"a": {"items": {"enum": ["z"]}}}}}}}`,
	`{"default": {"properties": {"a": {"items": {"enum": ["data"]}}}}, "examples": [{"properties": {"a": {"items": {"enum": ["e"]}}}}]}`,
	`{"const": {"properties": {"a": {"items": {"enum": ["c"]}}}}, "enum": [{"properties": {"a": {"items": {"enum": ["v"]}}}}]}`,
	`{"$defs": {"d": {"properties": {"a": {"items": {"enum": ["defs"]}}}}}, "anyOf": [{"properties": {"a": {"items": {"enum": ["any"]}}}}]}`,
	`{"allOf": [true, {"not": {"properties": {"a": {"items": {"enum": [1, "one"]}}}}}], "if": {"properties": {"a": {"items": {"enum": "not an array"}}}}}`,
	`{"properties": {"a": {"items": true}, "b": {"items": {"enum": ["b"]}}}}`,
	`{"properties": {"a": {"prefixItems": [{"enum": ["p"]}], "items": {"const": "k"}}}}`,
	`{"properties": {"a": {"enum": ["not items"]}}, "patternProperties": {"a": {"items": {"enum": ["pattern"]}}}}`,
	`{"properties": {"\u0061": {"items": {"\u0065num": ["escaped"]}}}, "\u0070roperties": {}}`,
	`{"properties": {"a~/b": {"items": {"enum": ["tilde"]}}, "a": {"items": {"enum": ["q\"~/"]}}}}`,
	`{"properties": ["a"], "items": [{"properties": {"a": {"items": {"enum": ["old items"]}}}}]}`,
	`{"allOf": {"properties": {"a": {"items": {"enum": ["not a list"]}}}}, "properties": {"a": {"items": {"enum": [ "spaced" ] }}}}`,
	`{"properties": {"a": {"items": {"enum": ["x"]}}, "a": {"items": {"enum": ["twice"]}}}}`,
	`{"examples": [{"k": 1, "k": 2}], "properties": {"a": {"items": {"enum": ["dup in data"]}}}}`,
	"{\"description\": \"\xff\", \"properties\": {\"a\": {\"items\": {\"enum\": [\"utf8\"]}}}}",
	`{"properties": {"a": {"items": {"enum": ["x"]}}}} `,
	`true`, `{}`, `[]`, `"a"`,
}

// The scan finds what the walk of the parsed document finds, in the same
// order, at the same pointers, with the same values; it reads the pages'
// schemas itself, never leaving them to the walk.
func TestScanAsWalk(t *testing.T) {
	for _, src := range scanDocs {
		checkScan(t, src, "a")
	}
	scanned := 0
	for _, src := range pageDocs(t) {
		if !strings.Contains(src, "allowed_tools") {
			checkScan(t, src, "allowed_tools")
			continue
		}
		if !checkScan(t, src, "allowed_tools") {
			t.Errorf("%.80q: the scan left a page's schema to the walk", src)
		}
		scanned++
	}
	if scanned < 4 {
		t.Errorf("only %d page schemas name allowed_tools", scanned)
	}
}

// checkScan compares the scan of src with the walk of its model, and
// reports whether the scan read src itself.
func checkScan(t *testing.T, src, name string) (scanned bool) {
	t.Helper()
	d, err := Parse([]byte(src))
	if err != nil {
		return false
	}
	want := keywords(walkPropertyItemsEnums(d, name))
	got := keywords(PropertyItemsEnums([]byte(src), name, func() *Document { return d }))
	if got != want {
		t.Errorf("%.80q: found\n%s\nthe walk finds\n%s", src, got, want)
	}
	found, ok := scanPropertyItemsEnums([]byte(src), name)
	if got := keywords(found); ok && got != want {
		t.Errorf("%.80q: scanned\n%s\nthe walk finds\n%s", src, got, want)
	}
	return ok
}

func keywords(ks []*Keyword) string {
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, "%q %q %q\n", k.Name, k.Ptr, k.Value)
	}
	return b.String()
}

func FuzzPropertyItemsEnums(f *testing.F) {
	for _, src := range scanDocs {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkScan(t, src, "a")
	})
}
