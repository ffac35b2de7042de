// Package schemax compiles and applies the JSON Schemas of the tool pages the
// way the docs mean them: JSON Schema 2020-12, ECMA-262 regular expressions
// (compiled by internal/ecmaregex), and `format` asserted rather than
// treated as an annotation.
package schemax

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	segjson "github.com/segmentio/encoding/json"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// ecmaRegexp adapts an ECMA-262 pattern to jsonschema.Regexp.
type ecmaRegexp struct{ re *ecmaregex.Regexp }

// timeoutPanic carries a *ecmaregex.TimeoutError out of the validator:
// jsonschema.Regexp.MatchString cannot return an error, and a timed-out
// match is neither a match nor a mismatch. recoverTimeout turns it back
// into an error.
type timeoutPanic struct{ err error }

// recoverTimeout, deferred, makes a timeoutPanic the function's error.
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

// NewCompiler returns a compiler for draft 2020-12 with the ECMAScript
// regexp engine and format assertion. A schema it compiles is applied with
// ValidateValue, which turns a timed-out pattern match into an error.
func NewCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseRegexpEngine(ecmaEngine)
	c.AssertFormat()
	return c
}

// Unmarshal decodes JSON for the validator, keeping numbers exact: objects
// are map[string]any, arrays []any, numbers json.Number (the literal as
// written), strings string (invalid UTF-8 replaced by U+FFFD), booleans
// bool and null nil, as jsonschema.UnmarshalJSON decodes them. One JSON
// value and white space only; anything else is an error worded as
// encoding/json words it.
func Unmarshal(raw []byte) (any, error) {
	return unmarshal(raw, segjson.UseNumber)
}

// maxNestingDepth is the deepest nesting encoding/json decodes; deeper
// documents are a syntax error there.
const maxNestingDepth = 10000

// unmarshal decodes raw with segmentio/encoding/json, about twice as fast
// as encoding/json into the same values, and falls back on
// jsonschema.UnmarshalJSON (encoding/json) for what the fast decoder
// refuses, so that errors read as they always have, and for documents that
// might nest deeper than encoding/json allows (the fast decoder has no
// limit). flags may add segjson.ZeroCopy: strings and numbers then point
// into raw, which must not change while the value is in use.
func unmarshal(raw []byte, flags segjson.ParseFlags) (any, error) {
	if len(raw) <= maxNestingDepth || bytes.Count(raw, []byte{'['})+bytes.Count(raw, []byte{'{'}) <= maxNestingDepth {
		var v any
		if rest, err := segjson.Parse(raw, &v, flags); err == nil && len(rest) == 0 {
			return v, nil
		}
	}
	return unmarshalStd(raw)
}

// unmarshalStd decodes raw with encoding/json, numbers as json.Number, as
// jsonschema.UnmarshalJSON does: one value, then nothing but white space.
func unmarshalStd(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

// Compile compiles one schema document, named url, from its raw bytes.
// A schema that is not valid against the 2020-12 meta-schema yields a
// *SchemaError listing the violations by JSON pointer into the schema.
//
// A url without a scheme (e.g. "claim_task/Input schema") is made absolute
// as "prickle:" + url: the library resolves a relative URL against the
// working directory as a file, so a local "$ref" would fail to load.
func Compile(url string, raw []byte) (_ *jsonschema.Schema, err error) {
	defer recoverTimeout(&err) // the meta-schema's patterns
	if !hasScheme(url) {
		url = "prickle:" + url
	}
	doc, err := Unmarshal(raw)
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

// hasScheme reports whether u starts with an RFC 3986 scheme and a colon.
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

// SchemaError reports a schema that is not valid JSON Schema 2020-12.
type SchemaError struct {
	URL        string
	Violations []Violation // Pointer is a location inside the schema
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("schema %s is not valid JSON Schema 2020-12: %s", e.URL, joinViolations(e.Violations))
}

// Violation is one reason an instance fails a schema.
type Violation struct {
	// Pointer is the JSON pointer (RFC 6901) of the offending value.
	Pointer string `json:"pointer"`
	// Keyword is the schema keyword that failed, e.g. "pattern".
	Keyword string `json:"keyword"`
	// Message says what is wrong, in English.
	Message string `json:"message"`
	// KeywordLocation is the keyword's JSON pointer inside the schema.
	KeywordLocation string `json:"keywordLocation,omitempty"`
}

func (v Violation) String() string {
	p := v.Pointer
	if p == "" {
		p = "/"
	}
	return fmt.Sprintf("%s: %s (%s)", p, v.Message, v.Keyword)
}

// ValidationError is a failed validation: its violations sorted by pointer,
// then keyword location, then message, so that output is deterministic
// (the library's own order changes from run to run).
type ValidationError struct {
	Violations []Violation
}

func (e *ValidationError) Error() string {
	return "invalid: " + joinViolations(e.Violations)
}

func joinViolations(vs []Violation) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, "; ")
}

// Violations flattens a jsonschema validation error into sorted leaves.
// Any other error becomes a single violation at the root.
func Violations(err error) []Violation {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Pointer: "", Keyword: "", Message: err.Error()}}
	}
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			kp := e.ErrorKind.KeywordPath()
			kw := ""
			if len(kp) > 0 {
				kw = kp[len(kp)-1]
			}
			loc := keywordLocation(e)
			out = append(out, Violation{
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
	SortViolations(out)
	return out
}

// rat writes a number of a bound's message: an integer exactly, else the
// nearest float64.
func rat(r *big.Rat) string {
	if r.IsInt() {
		return Cut(r.Num().String())
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// wording words a violation of the library's kind k with the words of
// this package (wording.go), which the generated validators use too.
func wording(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return TypeMessage(k.Got, k.Want)
	case *kind.Const:
		return ConstMessage(k.Want)
	case *kind.Enum:
		return EnumMessage(k.Want)
	case *kind.Format:
		if got, ok := k.Got.(string); ok {
			return FormatMessage(got, k.Want, k.Err)
		}
	case *kind.Pattern:
		return PatternMessage(k.Got, k.Want)
	case *kind.Minimum:
		return MinimumMessage(k.Got, k.Want)
	case *kind.Maximum:
		return MaximumMessage(k.Got, k.Want)
	case *kind.ExclusiveMinimum:
		return ExclusiveMinimumMessage(k.Got, k.Want)
	case *kind.ExclusiveMaximum:
		return ExclusiveMaximumMessage(k.Got, k.Want)
	case *kind.MultipleOf:
		return MultipleOfMessage(k.Got, k.Want)
	case *kind.MinLength:
		return MinLengthMessage(k.Got, k.Want)
	case *kind.MaxLength:
		return MaxLengthMessage(k.Got, k.Want)
	case *kind.MinItems:
		return MinItemsMessage(k.Got, k.Want)
	case *kind.MaxItems:
		return MaxItemsMessage(k.Got, k.Want)
	case *kind.MinProperties:
		return MinPropertiesMessage(k.Got, k.Want)
	case *kind.MaxProperties:
		return MaxPropertiesMessage(k.Got, k.Want)
	case *kind.Required:
		return RequiredMessage(k.Missing)
	case *kind.DependentRequired:
		return DependentRequiredMessage(k.Prop, k.Missing)
	case *kind.AdditionalProperties:
		return AdditionalPropertiesMessage(k.Properties)
	case *kind.PropertyNames:
		return PropertyNamesMessage(k.Property)
	case *kind.UniqueItems:
		return UniqueItemsMessage(k.Duplicates[0], k.Duplicates[1])
	case *kind.Contains:
		return ContainsMessage()
	case *kind.MinContains:
		return MinContainsMessage(k.Got, k.Want)
	case *kind.MaxContains:
		return MaxContainsMessage(k.Got, k.Want)
	case *kind.OneOf:
		if len(k.Subschemas) == 2 {
			return OneOfMessage(k.Subschemas[0], k.Subschemas[1])
		}
	case *kind.Not:
		return NotMessage()
	case *kind.FalseSchema:
		return FalseMessage()
	}
	return k.LocalizedString(printer)
}

// MaxQuoted bounds the characters of a value a refusal quotes, so that a
// refusal stays small whatever the caller sent.
const MaxQuoted = 64

// Cut shortens s to MaxQuoted characters, marking the cut.
func Cut(s string) string {
	n := 0
	for i := range s {
		if n == MaxQuoted {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// keywordLocation is the failing keyword's location in the schema, a JSON
// pointer: the absolute schema URL's fragment, which the library
// percent-encodes as a URL's fragment, decoded.
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

// SortViolations sorts in the deterministic order used everywhere.
func SortViolations(vs []Violation) {
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if a.Pointer != b.Pointer {
			return a.Pointer < b.Pointer
		}
		if a.KeywordLocation != b.KeywordLocation {
			return a.KeywordLocation < b.KeywordLocation
		}
		return a.Message < b.Message
	})
}

// Validate validates raw JSON against s. It returns nil, a
// *ValidationError (a JSON syntax error is a violation at the root, and a
// document that is not I-JSON, see Strict, is a violation, keyword "json",
// at the pointer of the offending member or string), or, when a pattern
// match did not finish in time, an error wrapping an
// *ecmaregex.TimeoutError: the value was neither accepted nor refused, and
// callers answer an internal error (or try again), never "invalid".
func Validate(s *jsonschema.Schema, raw []byte) error {
	// The instance lives only as long as this call (violations copy what
	// they quote), so it may point into raw.
	inst, err := unmarshal(raw, segjson.UseNumber|segjson.ZeroCopy)
	if err != nil {
		return &ValidationError{Violations: []Violation{syntaxViolation(err)}}
	}
	if v := Strict(raw); v != nil {
		return &ValidationError{Violations: []Violation{*v}}
	}
	return ValidateValue(s, inst)
}

// syntaxViolation is the violation of a document that does not parse.
func syntaxViolation(err error) Violation {
	return Violation{Keyword: "json", Message: "invalid JSON: " + err.Error()}
}

// DocumentViolation returns what Validate finds wrong with raw before any
// schema applies: JSON that does not parse (a violation at the root,
// keyword "json") or a document that is not I-JSON (Strict); nil when raw
// is one I-JSON value.
func DocumentViolation(raw []byte) *Violation {
	if _, err := unmarshal(raw, segjson.UseNumber|segjson.ZeroCopy); err != nil {
		v := syntaxViolation(err)
		return &v
	}
	return Strict(raw)
}

// Strict returns nil when raw is one JSON value that every decoder reads
// the same way: I-JSON (RFC 7493), that is, no member name twice in one
// object, strings of valid UTF-8 without lone surrogates (escaped or not).
// Otherwise it returns the first reason, keyword "json", at the pointer of
// the offending member or string. Decoders disagree on exactly these
// documents (encoding/json keeps the last of two equal names and folds
// invalid UTF-8 into U+FFFD, others differ), so a value validated from
// such a document need not be the value a handler decodes.
func Strict(raw []byte) *Violation {
	if jsontext.Value(raw).IsValid() {
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	_, err := dec.ReadValue()
	if err == nil {
		_, err = dec.ReadToken()
		if err == io.EOF {
			return nil // IsValid and the decoder disagree: not ours to refuse
		}
	}
	v := &Violation{Keyword: "json", Message: "invalid JSON: " + err.Error()}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		v.Pointer = string(se.JSONPointer)
		v.Message = strictMessage(se.Err)
	}
	return v
}

// strictMessage words a jsontext syntax error without the package prefix.
func strictMessage(err error) string {
	switch {
	case errors.Is(err, jsontext.ErrDuplicateName):
		return "member name appears twice in one object (RFC 7493)"
	case errors.Is(err, jsontext.ErrNonStringName):
		return "object member name is not a string"
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "UTF-8"):
		return "string is not valid UTF-8"
	case strings.Contains(msg, "surrogate"):
		return "string holds a lone UTF-16 surrogate (\\uD800-\\uDFFF), which is not a Unicode character"
	}
	return "invalid JSON: " + msg
}

// ValidateValue validates a decoded instance (from Unmarshal) against s,
// with Validate's results.
func ValidateValue(s *jsonschema.Schema, inst any) (err error) {
	defer recoverTimeout(&err)
	if err := s.Validate(inst); err != nil {
		return &ValidationError{Violations: Violations(err)}
	}
	return nil
}

// Compact returns raw with insignificant white space removed, keeping key
// order and number literals exactly as written.
func Compact(raw []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
