package validation

import "testing"

// TestStrict: documents decoders read differently are refused at the
// pointer of the member or string; I-JSON passes.
func TestStrict(t *testing.T) {
	for _, c := range []struct{ doc, pointer string }{
		{`{"a":1,"a":2}`, "/a"},
		{`{"a":{"b":1,"\u0062":2}}`, "/a/b"},
		{`[{"a":"\ud800"}]`, "/0/a"},
		{`{"a":"x\udc00y"}`, "/a"},
		{"{\"a\":[\"x\xff\"]}", "/a/0"},
		{"\"\xed\xa0\x80\"", ""}, // a surrogate encoded as UTF-8
	} {
		v := Strict([]byte(c.doc))
		if v == nil || v.Pointer != c.pointer || v.Keyword != "json" {
			t.Errorf("Strict(%q) = %+v, want a violation at %q", c.doc, v, c.pointer)
		}
	}
	for _, doc := range []string{`{"a":1,"A":2}`, `{"a":"é\ud83d\ude00"}`, `[1,1]`, `{"a":{"a":{}}}`} {
		if v := Strict([]byte(doc)); v != nil {
			t.Errorf("Strict(%q) = %+v, want nil", doc, v)
		}
	}
}
