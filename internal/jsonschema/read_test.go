package jsonschema

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/internal/testkit"
)

// The one-pass reader models every document as parse does: the same
// schemas at the same pointers, with the same keywords, values and
// subschemas. It is checked on every JSON fence of the repository's pages
// and on documents made to reach its edges.
func TestReadAsParse(t *testing.T) {
	docs := []string{
		`{}`, `true`, `false`, `3`, `[]`, `"s"`, `null`,
		` {"type": "object", "properties": {"a": {"type": "string"}, "b": true, "c": 4}} `,
		`{"allOf": [{"minimum": 1}, false, "x"], "anyOf": {"not": "a list"}, "properties": ["not a map"]}`,
		`{"items": {"items": {"items": {"$ref": "#/items"}}}, "$defs": {"x": {"enum": [1, {"a": [2]}]}}}`,
		`{"properties": {"a\u00e9\"/~b": {"const": {"properties": {"x": 1}}}}, "patternProperties": {"^x$": {}}}`,
		`{"type": "string", "type": "integer"}`,                           // a keyword written twice
		`{"properties": {"a": {"minimum": 1}, "a": {"maximum": 2}}}`,      // a property written twice
		`{"properties": {"a": {"properties": {"x": {}}}, "a": {}}}`,       // the first value's schemas dropped
		"{\"description\": \"\xff\xfe\", \"properties\": {\"\xff\": {}}}", // invalid UTF-8
		`{ "not" : { "type" : [ "string" , "null" ] } , "if" : true }`,
	}
	docs = append(docs, pageDocs(t)...)
	for _, src := range docs {
		fast, err := Parse([]byte(src))
		if err != nil {
			continue // not JSON: neither reads it
		}
		slow := &Document{raw: fast.raw, byPtr: map[string]*Schema{}}
		slow.root = slow.parse("", slow.raw)
		if a, b := dump(fast), dump(slow); a != b {
			t.Errorf("%.80q: one pass:\n%s\nparse:\n%s", src, a, b)
		}
	}
}

// pageDocs returns every JSON fence of the repository's pages.
func pageDocs(t *testing.T) []string { return testkit.PageFences(t, "../..") }

// dump lists every schema the document holds by pointer, with what the
// model says of it.
func dump(d *Document) string {
	ptrs := make([]string, 0, len(d.byPtr))
	for p := range d.byPtr {
		ptrs = append(ptrs, p)
	}
	sort.Strings(ptrs)
	var b strings.Builder
	for _, p := range ptrs {
		s := d.byPtr[p]
		fmt.Fprintf(&b, "%q ptr=%q shape=%d raw=%q root=%v\n", p, s.ptr, s.shape, s.raw, s == d.root)
		for _, k := range s.kws {
			fmt.Fprintf(&b, "  %q ptr=%q value=%q", k.Name, k.Ptr, k.Value)
			if k.schema != nil {
				fmt.Fprintf(&b, " schema=%q", k.schema.ptr)
			}
			for _, c := range k.list {
				fmt.Fprintf(&b, " list=%q", c.ptr)
			}
			for _, m := range k.members {
				fmt.Fprintf(&b, " member=%q:%q", m.Name, m.Schema.ptr)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// A document is safe for concurrent use: At reads a place that is not a
// schema position (a reference may name any) under the document's lock.
func TestAtConcurrent(t *testing.T) {
	d := MustParse([]byte(`{"properties": {"a": {"$ref": "#/x/y"}}, "x": {"y": {"type": "string"}}}`))
	done := make(chan *Schema)
	for range 8 {
		go func() { done <- d.At("/x/y") }()
	}
	first := <-done
	for range 7 {
		if s := <-done; s != first || s == nil {
			t.Fatalf("At gave %p and %p", first, s)
		}
	}
	if typ, _ := first.String("type"); typ != "string" {
		t.Errorf("At(/x/y) type %q", typ)
	}
}

// Parse refuses what is not one JSON value, as json.Valid judges it, now
// that read checks the JSON as it goes.
func TestParseRefusesWhatIsNotJSON(t *testing.T) {
	for _, src := range []string{
		`{"a": 1} x`, `{"a": 1} {}`, `{"a":`, `{"properties": {"a": {"type": "string"},}}`, `[1,]`, `{"not": tru}`,
		`{"allOf": [{}, ]}`, `{"type": "string", "type": }`, `"x`, ``, `{"a": 01}`,
		` {"type": "object"} `, `true`, `{"properties": {"a": {}, "a": {}}}`, "{\"\xff\": 1}",
	} {
		_, err := Parse([]byte(src))
		if (err == nil) != json.Valid([]byte(src)) {
			t.Errorf("%q: Parse error %v, json.Valid %v", src, err, json.Valid([]byte(src)))
		}
	}
}
