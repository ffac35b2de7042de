// Package schemalib compiles the JSON Schemas of the tool pages with
// santhosh-tekuri/jsonschema/v6 and applies them the way the docs mean
// them: JSON Schema 2020-12, ECMA-262 regular expressions (compiled by
// internal/ecmaregex), and "format" asserted rather than treated as an
// annotation; violations are worded as package schemax words them. Lint,
// the conformance suite's wire checks and world fixtures use it, and it is
// the oracle the generated validators are tested against; a program that
// only validates with generated code does not link it.
package schemalib

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/schemax"
)

type ecmaRegexp struct{ re *ecmaregex.Regexp }

type timeoutPanic struct{ err error }

func recoverTimeout(err *error) {
	if p := recover(); p != nil {
		tp, ok := p.(timeoutPanic)
		if !ok {
			panic(p)
		}
		*err = fmt.Errorf("validation did not complete: %w", tp.err)
	}
}

func (r ecmaRegexp) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	if err != nil {
		panic(timeoutPanic{err})
	}
	return ok
}

func (r ecmaRegexp) String() string { return r.re.String() }

func ecmaEngine(s string) (jsonschema.Regexp, error) {
	re, err := ecmaregex.Compile(s)
	if err != nil {
		return nil, err
	}
	return ecmaRegexp{re}, nil
}

func NewCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseRegexpEngine(ecmaEngine)
	c.AssertFormat()
	return c
}

func Compile(url string, raw []byte) (_ *jsonschema.Schema, err error) {
	defer recoverTimeout(&err) // the meta-schema's patterns
	if !hasScheme(url) {
		url = "prickle:" + url
	}
	doc, err := schemax.Unmarshal(raw)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	c := NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		var sve *jsonschema.SchemaValidationError
		if errors.As(err, &sve) {
			return nil, &SchemaError{URL: url, Violations: Violations(sve.Err)}
		}
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	return s, nil
}

func hasScheme(u string) bool {
	for i, r := range u {
		switch {
		case r == ':':
			return i > 0
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return false
}

type SchemaError struct {
	URL        string
	Violations []schemax.Violation // Pointer is a location inside the schema
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("schema %s is not valid JSON Schema 2020-12: %s", e.URL, schemax.Join(e.Violations))
}

func Violations(err error) []schemax.Violation {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []schemax.Violation{{Pointer: "", Keyword: "", Message: err.Error()}}
	}
	var out []schemax.Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			kp := e.ErrorKind.KeywordPath()
			kw := ""
			if len(kp) > 0 {
				kw = kp[len(kp)-1]
			}
			loc := keywordLocation(e)
			out = append(out, schemax.Violation{
				Pointer:         jsonpointer.Join(e.InstanceLocation),
				Keyword:         kw,
				Message:         wording(e.ErrorKind),
				KeywordLocation: loc,
			})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	schemax.SortViolations(out)
	return out
}

func wording(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return schemax.TypeMessage(k.Got, k.Want)
	case *kind.Const:
		return schemax.ConstMessage(k.Want)
	case *kind.Enum:
		return schemax.EnumMessage(k.Want)
	case *kind.Format:
		if got, ok := k.Got.(string); ok {
			return schemax.FormatMessage(got, k.Want, k.Err)
		}
	case *kind.Pattern:
		return schemax.PatternMessage(k.Got, k.Want)
	case *kind.Minimum:
		return schemax.MinimumMessage(k.Got, k.Want)
	case *kind.Maximum:
		return schemax.MaximumMessage(k.Got, k.Want)
	case *kind.ExclusiveMinimum:
		return schemax.ExclusiveMinimumMessage(k.Got, k.Want)
	case *kind.ExclusiveMaximum:
		return schemax.ExclusiveMaximumMessage(k.Got, k.Want)
	case *kind.MultipleOf:
		return schemax.MultipleOfMessage(k.Got, k.Want)
	case *kind.MinLength:
		return schemax.MinLengthMessage(k.Got, k.Want)
	case *kind.MaxLength:
		return schemax.MaxLengthMessage(k.Got, k.Want)
	case *kind.MinItems:
		return schemax.MinItemsMessage(k.Got, k.Want)
	case *kind.MaxItems:
		return schemax.MaxItemsMessage(k.Got, k.Want)
	case *kind.MinProperties:
		return schemax.MinPropertiesMessage(k.Got, k.Want)
	case *kind.MaxProperties:
		return schemax.MaxPropertiesMessage(k.Got, k.Want)
	case *kind.Required:
		return schemax.RequiredMessage(k.Missing)
	case *kind.DependentRequired:
		return schemax.DependentRequiredMessage(k.Prop, k.Missing)
	case *kind.AdditionalProperties:
		return schemax.AdditionalPropertiesMessage(k.Properties)
	case *kind.PropertyNames:
		return schemax.PropertyNamesMessage(k.Property)
	case *kind.UniqueItems:
		return schemax.UniqueItemsMessage(k.Duplicates[0], k.Duplicates[1])
	case *kind.Contains:
		return schemax.ContainsMessage()
	case *kind.MinContains:
		return schemax.MinContainsMessage(k.Got, k.Want)
	case *kind.MaxContains:
		return schemax.MaxContainsMessage(k.Got, k.Want)
	case *kind.OneOf:
		if len(k.Subschemas) == 2 {
			return schemax.OneOfMessage(k.Subschemas[0], k.Subschemas[1])
		}
	case *kind.Not:
		return schemax.NotMessage()
	case *kind.FalseSchema:
		return schemax.FalseMessage()
	}
	return k.LocalizedString(schemax.Printer)
}

func keywordLocation(e *jsonschema.ValidationError) string {
	frag := ""
	if i := strings.IndexByte(e.SchemaURL, '#'); i >= 0 {
		frag = e.SchemaURL[i+1:]
		if dec, err := url.PathUnescape(frag); err == nil {
			frag = dec
		}
	}
	return frag + jsonpointer.Join(e.ErrorKind.KeywordPath())
}

func Validate(s *jsonschema.Schema, raw []byte) error {
	// The instance lives only as long as this call (violations copy what
	// they quote), so it may point into raw.
	inst, err := Instance(raw)
	if err != nil {
		return err
	}
	return ValidateValue(s, inst)
}

// Instance decodes raw as Validate does, for ValidateValue: its strings
// may point into raw, which must not change while the value is in use. A
// document that is not one I-JSON value is a *schemax.ValidationError.
func Instance(raw []byte) (any, error) {
	inst, v := schemax.Instance(raw)
	if v != nil {
		return nil, &schemax.ValidationError{Violations: []schemax.Violation{*v}}
	}
	return inst, nil
}

func ValidateValue(s *jsonschema.Schema, inst any) (err error) {
	defer recoverTimeout(&err)
	if err := s.Validate(inst); err != nil {
		return &schemax.ValidationError{Violations: Violations(err)}
	}
	return nil
}
