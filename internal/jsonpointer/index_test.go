package jsonpointer

import "testing"

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
