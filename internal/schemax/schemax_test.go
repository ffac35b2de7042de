package schemax

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// The documented project pattern uses lookahead: RE2 rejects it, the
// ECMAScript engine must accept it and judge it right.
func TestLookaheadPattern(t *testing.T) {
	sch, err := Compile("https://prickle.invalid/t.json", []byte(`{"type":"string","pattern":"^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$"}`))
	if err != nil {
		t.Fatal(err)
	}
	for in, ok := range map[string]bool{`"website-v2"`: true, `"a"`: true, `"-a"`: false, `"a-"`: false, `"a--b"`: false} {
		if err := Validate(sch, []byte(in)); (err == nil) != ok {
			t.Errorf("%s: valid=%v, want %v (%v)", in, err == nil, ok, err)
		}
	}
	re, err := CompileRegexp("^a(?=b)")
	if err != nil {
		t.Fatal(err)
	}
	if re.MatchTimeout != MatchTimeout {
		t.Errorf("MatchTimeout = %v, want %v", re.MatchTimeout, MatchTimeout)
	}
}

func TestInvalidPatternIsASchemaError(t *testing.T) {
	_, err := Compile("https://prickle.invalid/t.json", []byte(`{"type":"string","pattern":"[z-a]"}`))
	var se *SchemaError
	if !errors.As(err, &se) || len(se.Violations) == 0 || se.Violations[0].Pointer != "/pattern" {
		t.Fatalf("want a *SchemaError at /pattern, got %v", err)
	}
}

func TestFormatAsserted(t *testing.T) {
	sch, err := Compile("https://prickle.invalid/t.json", []byte(`{"type":"object","properties":{"at":{"type":"string","format":"date-time"},"u":{"type":"string","format":"uri"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(sch, []byte(`{"at":"2026-11-29T23:00:00Z","u":"https://x.example/a"}`)); err != nil {
		t.Errorf("valid instance refused: %v", err)
	}
	err = Validate(sch, []byte(`{"at":"yesterday","u":"not a uri"}`))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want a *ValidationError, got %v", err)
	}
	var ptrs []string
	for _, v := range ve.Violations {
		ptrs = append(ptrs, v.Pointer+" "+v.Keyword)
	}
	if want := []string{"/at format", "/u format"}; !slices.Equal(ptrs, want) {
		t.Errorf("violations %v, want %v", ptrs, want)
	}
}

// The library reports errors in a random order; ours are sorted, so the
// same input gives the same list every time.
func TestViolationsDeterministic(t *testing.T) {
	sch, err := Compile("https://prickle.invalid/t.json", []byte(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"},"d":{"type":"integer"}},"required":["e"]}`))
	if err != nil {
		t.Fatal(err)
	}
	in := []byte(`{"a":"x","b":"x","c":"x","d":"x"}`)
	var first []Violation
	for i := range 50 {
		var ve *ValidationError
		if !errors.As(Validate(sch, in), &ve) {
			t.Fatal("invalid instance accepted")
		}
		if i == 0 {
			first = ve.Violations
			if len(first) != 5 {
				t.Fatalf("want 5 violations, got %v", first)
			}
			continue
		}
		if !slices.Equal(ve.Violations, first) {
			t.Fatalf("run %d: %v, first run: %v", i, ve.Violations, first)
		}
	}
}

// Remembered matches give the answers the matcher gives, the second time
// as the first, and the cache stays bounded.
func TestMatchCache(t *testing.T) {
	eng, err := ecmaEngine("^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$")
	if err != nil {
		t.Fatal(err)
	}
	r := eng.(ecmaRegexp)
	long := "a" + string(make([]byte, matchCacheMaxLen)) // not remembered
	for range 2 {
		for in, want := range map[string]bool{"website-v2": true, "a": true, "-a": false, "a-": false, "a--b": false, long: false} {
			if got := r.MatchString(in); got != want {
				t.Errorf("MatchString(%.20q) = %v, want %v", in, got, want)
			}
		}
	}
	if _, hit := r.matches.get("website-v2"); !hit {
		t.Error("a match was not remembered")
	}
	if _, hit := r.matches.get(long); hit {
		t.Error("a string over matchCacheMaxLen was remembered")
	}
	for i := range matchCacheEntries + 10 {
		r.MatchString(fmt.Sprintf("p%d", i))
	}
	r.matches.mu.RLock()
	n := len(r.matches.m)
	r.matches.mu.RUnlock()
	if n > matchCacheEntries {
		t.Errorf("cache holds %d entries, want at most %d", n, matchCacheEntries)
	}
}

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
