package schemacompile

import (
	"errors"
	"testing"

	"github.com/prickle-dev/prickle/internal/validation"
)

func violationsOf(t *testing.T, schema, doc string) []validation.Violation {
	t.Helper()
	s, err := Compile("prickle:t", []byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	var ve *validation.ValidationError
	if err := Validate(s, []byte(doc)); !errors.As(err, &ve) {
		t.Fatalf("%s: %v, want a *ValidationError", doc, err)
	}
	return ve.Violations
}

// The names additionalProperties refuses are listed in byte order, every
// time: the library gathers them from a map.
func TestAdditionalPropertiesInByteOrder(t *testing.T) {
	const want = "additional properties 'a', 'b', 'c', 'd' not allowed"
	for range 20 {
		vs := violationsOf(t, `{"type":"object","additionalProperties":false}`, `{"d":1,"b":2,"c":3,"a":4}`)
		if len(vs) != 1 || vs[0].Message != want {
			t.Fatalf("%v, want %q", vs, want)
		}
	}
}

// A keyword location is a JSON pointer, not the library's URL fragment
// (which percent-encodes ^ and other characters).
func TestKeywordLocationIsAPointer(t *testing.T) {
	vs := violationsOf(t, `{"type":"object","patternProperties":{"^x-":{"type":"string"}}}`, `{"x-a":1}`)
	if len(vs) != 1 || vs[0].KeywordLocation != "/patternProperties/^x-/type" {
		t.Fatalf("%+v, want keyword location /patternProperties/^x-/type", vs)
	}
}
