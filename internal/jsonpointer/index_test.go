package jsonpointer

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prickle-dev/prickle/internal/testkit"
)

func TestIndex(t *testing.T) {
	raw := []byte("{\n  \"a\": [1, {\"b/c\": true}],\n  \"d\": \"x\"\n}")
	idx, err := NewIndex(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"":          "{",
		"/a":        "[",
		"/a/0":      "1",
		"/a/1":      "{",
		"/a/1/b~1c": "t",
		"/d":        "\"",
	}
	for p, c := range want {
		off, ok := idx[p]
		if !ok {
			t.Errorf("%q not indexed", p)
			continue
		}
		if got := string(raw[off]); got != c {
			t.Errorf("%q at %d starts with %q, want %q", p, off, got, c)
		}
	}
	if got := idx.Offset("/a/1/missing"); got != idx["/a/1"] {
		t.Errorf("Offset of a missing member = %d, want its parent %d", got, idx["/a/1"])
	}
	if _, err := NewIndex([]byte(`{"a": [}`)); err == nil {
		t.Error("malformed JSON indexed without error")
	}
}

// indexDocs reach the index's edges: names written twice, escapes and
// invalid UTF-8 in names, white space, nested arrays, scalars at the top.
var indexDocs = []string{
	`{}`, `[]`, `1`, `"s"`, `null`, ` { "a" : [ 1 , [ 2 , [ ] ] , { } ] } `,
	`{"a": 1, "a": {"b": 2}}`, `{"a": {"x": 1}, "a": {"y": 2}}`, `{"c\u00e9~/": [2, {"": 3}]}`,
	"{\"a\xffb\": 1}", "{\"a\": \"\xff\"}", `{"\ud800": 1}`, `[[[[1]]], {"a": {"b": {"c": [true, false]}}}]`,
	`{}00`, `{} {}`, `[1] x`, ``,
}

// Every value of a document is indexed at the offset where it is written:
// the value the pointer names (jsonpointer.Lookup, which reads with
// encoding/json) starts there, and no pointer is missing or extra.
func TestIndexAsLookup(t *testing.T) {
	for _, doc := range append(indexDocs, testkit.PageFences(t, "../..")...) {
		checkIndex(t, doc)
	}
}

func checkIndex(t *testing.T, doc string) {
	t.Helper()
	idx, err := NewIndex([]byte(doc))
	var v any
	uerr := json.Unmarshal([]byte(doc), &v)
	if (err == nil) != (uerr == nil) {
		t.Fatalf("%.80q: NewIndex error %v, json.Unmarshal error %v", doc, err, uerr)
	}
	if err != nil {
		return
	}
	for ptr, off := range idx {
		raw, err := Lookup([]byte(doc), ptr)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				continue // under a name written twice, whose last value holds no such member
			}
			t.Fatalf("%.80q: Lookup(%q): %v", doc, ptr, err)
		}
		if !bytes.HasPrefix([]byte(doc[off:]), raw) {
			t.Errorf("%.80q: %q indexed at %d, where %.20q is; Lookup gives %.20q", doc, ptr, off, doc[off:], raw)
		}
	}
	want := map[string]bool{}
	pointers(v, "", want)
	for ptr := range want {
		if _, ok := idx[ptr]; !ok {
			t.Errorf("%.80q: %q not indexed", doc, ptr)
		}
	}
	if strict := jsontext.Value(doc).IsValid(); strict && len(idx) != len(want) {
		t.Errorf("%.80q: %d pointers indexed, the document has %d", doc, len(idx), len(want))
	}
}

// pointers adds the pointer of every value of v, decoded by encoding/json.
func pointers(v any, ptr string, out map[string]bool) {
	out[ptr] = true
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			pointers(e, Append(ptr, k), out)
		}
	case []any:
		for i, e := range v {
			pointers(e, AppendIndex(ptr, i), out)
		}
	}
}

func FuzzIndex(f *testing.F) {
	for _, doc := range indexDocs {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if len(doc) > 0 && (doc[0] == '{' || doc[0] == '[') {
			checkIndex(t, doc)
		}
	})
}
