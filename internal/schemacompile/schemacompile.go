// Package schemacompile compiles the JSON Schemas of the tool pages with
// santhosh-tekuri/jsonschema/v6 and validates with them the way the docs
// mean them: JSON Schema 2020-12, ECMA-262 regular expressions (compiled by
// internal/ecmaregex), and "format" asserted rather than treated as an
// annotation; violations are worded as package validation words them.
// Lint, world fixtures and the conformance suite's wire checks use it, and
// it is the oracle the generated validators are tested against.
//
// It must not import a product package (gen, api, rt, server,
// conformance), and neither rt nor generated code may import it: a program
// that only validates with generated code does not link the library.
package schemacompile

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/validation"
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
	doc, err := validation.Unmarshal(raw)
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
	Violations []validation.Violation // Pointer is a location inside the schema
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("schema %s is not valid JSON Schema 2020-12: %s", e.URL, validation.Join(e.Violations))
}

func Violations(err error) []validation.Violation {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []validation.Violation{{Pointer: "", Keyword: "", Message: err.Error()}}
	}
	var out []validation.Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			kp := e.ErrorKind.KeywordPath()
			kw := ""
			if len(kp) > 0 {
				kw = kp[len(kp)-1]
			}
			loc := keywordLocation(e)
			out = append(out, validation.Violation{
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
	validation.SortViolations(out)
	return out
}

func wording(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return validation.TypeMessage(k.Got, k.Want)
	case *kind.Const:
		return validation.ConstMessage(k.Want)
	case *kind.Enum:
		return validation.EnumMessage(k.Want)
	case *kind.Format:
		if got, ok := k.Got.(string); ok {
			return validation.FormatMessage(got, k.Want, k.Err)
		}
	case *kind.Pattern:
		return validation.PatternMessage(k.Got, k.Want)
	case *kind.Minimum:
		return validation.MinimumMessage(k.Got, k.Want)
	case *kind.Maximum:
		return validation.MaximumMessage(k.Got, k.Want)
	case *kind.ExclusiveMinimum:
		return validation.ExclusiveMinimumMessage(k.Got, k.Want)
	case *kind.ExclusiveMaximum:
		return validation.ExclusiveMaximumMessage(k.Got, k.Want)
	case *kind.MultipleOf:
		return validation.MultipleOfMessage(k.Got, k.Want)
	case *kind.MinLength:
		return validation.MinLengthMessage(k.Got, k.Want)
	case *kind.MaxLength:
		return validation.MaxLengthMessage(k.Got, k.Want)
	case *kind.MinItems:
		return validation.MinItemsMessage(k.Got, k.Want)
	case *kind.MaxItems:
		return validation.MaxItemsMessage(k.Got, k.Want)
	case *kind.MinProperties:
		return validation.MinPropertiesMessage(k.Got, k.Want)
	case *kind.MaxProperties:
		return validation.MaxPropertiesMessage(k.Got, k.Want)
	case *kind.Required:
		return validation.RequiredMessage(k.Missing)
	case *kind.DependentRequired:
		return validation.DependentRequiredMessage(k.Prop, k.Missing)
	case *kind.AdditionalProperties:
		return validation.AdditionalPropertiesMessage(k.Properties)
	case *kind.PropertyNames:
		return validation.PropertyNamesMessage(k.Property)
	case *kind.UniqueItems:
		return validation.UniqueItemsMessage(k.Duplicates[0], k.Duplicates[1])
	case *kind.Contains:
		return validation.ContainsMessage()
	case *kind.MinContains:
		return validation.MinContainsMessage(k.Got, k.Want)
	case *kind.MaxContains:
		return validation.MaxContainsMessage(k.Got, k.Want)
	case *kind.OneOf:
		if len(k.Subschemas) == 2 {
			return validation.OneOfMessage(k.Subschemas[0], k.Subschemas[1])
		}
	case *kind.Not:
		return validation.NotMessage()
	case *kind.FalseSchema:
		return validation.FalseMessage()
	}
	return k.LocalizedString(validation.Printer)
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
// document that is not one I-JSON value is a *validation.ValidationError.
func Instance(raw []byte) (any, error) {
	inst, v := validation.Instance(raw)
	if v != nil {
		return nil, &validation.ValidationError{Violations: []validation.Violation{*v}}
	}
	return inst, nil
}

func ValidateValue(s *jsonschema.Schema, inst any) (err error) {
	defer recoverTimeout(&err)
	if err := s.Validate(inst); err != nil {
		return &validation.ValidationError{Violations: Violations(err)}
	}
	return nil
}
