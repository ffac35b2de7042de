package jsonpointer

import (
	"errors"
	"slices"
	"testing"
)

func TestEscapeRoundTrip(t *testing.T) {
	for _, tok := range []string{"", "a", "a/b", "~", "~1", "a~/b", "/~0", "é/~"} {
		esc := Escape(tok)
		if got := Unescape(esc); got != tok {
			t.Errorf("Unescape(Escape(%q)) = %q", tok, got)
		}
		ptr := Append("/x", tok)
		toks, err := Split(ptr)
		if err != nil || !slices.Equal(toks, []string{"x", tok}) {
			t.Errorf("Split(%q) = %q, %v; want [x %q]", ptr, toks, err, tok)
		}
		if Last(ptr) != tok || Parent(ptr) != "/x" {
			t.Errorf("Last/Parent(%q) = %q, %q", ptr, Last(ptr), Parent(ptr))
		}
	}
	if got := Escape("a~b/c"); got != "a~0b~1c" {
		t.Errorf("Escape = %q, want a~0b~1c", got)
	}
	// "~01" is "~1" escaped, not "/": order of replacement matters.
	if got := Unescape("~01"); got != "~1" {
		t.Errorf("Unescape(~01) = %q, want ~1", got)
	}
	if _, err := Split("a/b"); err == nil {
		t.Error("Split of a pointer without a leading / succeeded")
	}
	if got := Join([]string{"properties", "a/b", "enum"}); got != "/properties/a~1b/enum" {
		t.Errorf("Join = %q", got)
	}
}

func TestFromFragment(t *testing.T) {
	for frag, want := range map[string]string{
		"#":                "",
		"#/$defs/a%20b":    "/$defs/a b",
		"/properties/a~1b": "/properties/a~1b",
	} {
		if got, err := FromFragment(frag); err != nil || got != want {
			t.Errorf("FromFragment(%q) = %q, %v; want %q", frag, got, err, want)
		}
	}
	for _, bad := range []string{"#anchor", "#/%zz"} {
		if _, err := FromFragment(bad); err == nil {
			t.Errorf("FromFragment(%q) succeeded", bad)
		}
	}
}

func TestLookup(t *testing.T) {
	doc := []byte(`{"a": [1, {"b/c": {"~": true}}], "d": "x", "": 0}`)
	for ptr, want := range map[string]string{
		"":             string(doc),
		"/a/0":         "1",
		"/a/1/b~1c/~0": "true",
		"/d":           `"x"`,
		"/":            "0",
		"/a/1/b~1c":    `{"~": true}`,
	} {
		got, err := Lookup(doc, ptr)
		if err != nil || string(got) != want {
			t.Errorf("Lookup(%q) = %s, %v; want %s", ptr, got, err, want)
		}
	}
	for _, ptr := range []string{"/nope", "/a/2", "/a/-1", "/a/01", "/d/x", "/a/x"} {
		if _, err := Lookup(doc, ptr); !errors.Is(err, ErrNotFound) {
			t.Errorf("Lookup(%q) = %v, want ErrNotFound", ptr, err)
		}
	}
}
