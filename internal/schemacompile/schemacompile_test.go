package schemacompile

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/validation"
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
}

// A pattern match that cannot finish (a starved regexp2 clock) leaves the
// value neither valid nor invalid: Validate returns a timeout error, never
// a *validation.ValidationError, and never accepts a value because a match it
// depends on timed out (not, patternProperties).
func TestStarvedClockIsNotAVerdict(t *testing.T) {
	const la = `^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$`
	schemas := map[string]string{
		"pattern":           `{"type":"string","pattern":"` + la + `"}`,
		"not pattern":       `{"not":{"type":"string","pattern":"` + la + `"}}`,
		"patternProperties": `{"type":"object","patternProperties":{"` + la + `":{"type":"integer"}},"additionalProperties":false}`,
	}
	instances := map[string][2]string{ // one for each clock: a remembered match meets no clock
		"pattern": {`"website-v2"`, `"website-v3"`}, "not pattern": {`"-x"`, `"-y"`},
		"patternProperties": {`{"website-v2":1}`, `{"website-v3":1}`},
	}
	for name, src := range schemas {
		sch, err := Compile("https://prickle.invalid/"+strings.ReplaceAll(name, " ", "-")+".json", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		in := instances[name]
		if err := Validate(sch, []byte(in[0])); err != nil {
			t.Fatalf("%s: %s refused with a healthy clock: %v", name, in[0], err)
		}
		restore := ecmaregex.StarveClock(-1)
		err = Validate(sch, []byte(in[1]))
		restore()
		var ve *validation.ValidationError
		if err == nil || errors.As(err, &ve) || !ecmaregex.IsTimeout(err) {
			t.Errorf("%s: starved clock: Validate = %v; want a timeout error", name, err)
		}
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
	var ve *validation.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want a *validation.ValidationError, got %v", err)
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
	var first []validation.Violation
	for i := range 50 {
		var ve *validation.ValidationError
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

// TestBoundWording: a bound's violation says which way it goes (the
// library's "got 0, want 0" for exclusiveMinimum 0 does not).
func TestBoundWording(t *testing.T) {
	s, err := Compile("x", []byte(`{"type":"object","properties":{"a":{"exclusiveMinimum":0},"b":{"maximum":5},"c":{"multipleOf":0.5},"d":{"maxLength":2},"e":{"minItems":2}}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = Validate(s, []byte(`{"a":0,"b":6,"c":0.7,"d":"abc","e":[1]}`))
	for _, want := range []string{
		"/a: exclusiveMinimum: got 0, want more than 0", "/b: maximum: got 6, want at most 5",
		"/c: multipleOf: got 0.7, want a multiple of 0.5", "/d: maxLength: got 3 characters, want at most 2",
		"/e: minItems: got 1 items, want at least 2",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q", err, want)
		}
	}
}

// TestQuotedValuesCut: a violation quotes at most validation.MaxQuoted
// characters of the value, so that a refusal stays small whatever the
// caller sent.
func TestQuotedValuesCut(t *testing.T) {
	s, err := Compile("x", []byte(`{"type":"object","properties":{"a":{"pattern":"^[a-z]+$"},"b":{"format":"date-time"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("Z", 100000)
	err = Validate(s, []byte(`{"a":"`+long+`","b":"`+long+`"}`))
	if err == nil || len(err.Error()) > 1000 || !strings.Contains(err.Error(), strings.Repeat("Z", 64)+"…") {
		t.Errorf("a refusal of %v", err)
	}
}

// A zero-copy instance is done with once Validate returns: violations hold
// copies of what they quote.
func TestValidateZeroCopyViolationsOwnTheirText(t *testing.T) {
	sch, err := Compile("https://prickle.invalid/t.json", []byte(`{"type":"object","properties":{"a":{"enum":["x"]},"b":{"type":"string","pattern":"^z$"}},"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"a":"yyy","b":"www","ccc":1}`)
	err = Validate(sch, raw)
	before := err.Error()
	for i := range raw {
		raw[i] = ' '
	}
	if after := err.Error(); after != before || !strings.Contains(before, "www") || !strings.Contains(before, "ccc") {
		t.Fatalf("violations changed with the input: %s, then %s", before, after)
	}
}
