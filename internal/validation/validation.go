// Package validation holds what validating a value against the tool
// pages' JSON Schemas means, whoever validates: the decoding of an instance
// (numbers exact, strictness of RFC 7493), violations and their wording,
// and the formats asserted. The generated validators (through package rt)
// and package schemacompile, which validates with santhosh-tekuri/jsonschema,
// both use it, so that a violation reads the same either way.
//
// Generated code links it, so it must not import the schema library, nor
// schemacompile or any product package (gen, api, rt, server, conformance).
package validation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	segjson "github.com/segmentio/encoding/json"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Printer words messages in English, the library's messages included.
var Printer = message.NewPrinter(language.English)

// ecmaRegexp adapts an ECMA-262 pattern to jsonschema.Regexp.
// timeoutPanic carries a *ecmaregex.TimeoutError out of the validator:
// jsonschema.Regexp.MatchString cannot return an error, and a timed-out
// match is neither a match nor a mismatch. recoverTimeout turns it back
// into an error.
// recoverTimeout, deferred, makes a timeoutPanic the function's error.
// NewCompiler returns a compiler for draft 2020-12 with the ECMAScript
// regexp engine and format assertion. A schema it compiles is applied with
// ValidateValue, which turns a timed-out pattern match into an error.
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
// hasScheme reports whether u starts with an RFC 3986 scheme and a colon.
// SchemaError reports a schema that is not valid JSON Schema 2020-12.
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
	return "invalid: " + Join(e.Violations)
}

// Join joins violations as an error message does: "; " between them.
func Join(vs []Violation) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, "; ")
}

// Violations flattens a jsonschema validation error into sorted leaves.
// Any other error becomes a single violation at the root.
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
// syntaxViolation is the violation of a document that does not parse.
func syntaxViolation(err error) Violation {
	return Violation{Keyword: "json", Message: "invalid JSON: " + err.Error()}
}

// DocumentViolation returns what a validation finds wrong with raw before
// any schema applies: JSON that does not parse (a violation at the root,
// keyword "json") or a document that is not I-JSON (Strict); nil when raw
// is one I-JSON value.
func DocumentViolation(raw []byte) *Violation {
	_, v := Instance(raw)
	return v
}

// Instance decodes raw as Unmarshal does for a validation, without
// copying: the strings and numbers of the value point into raw, which must
// not change while the value is in use (a violation copies what it
// quotes). v is DocumentViolation's finding, and the value is nil with it.
func Instance(raw []byte) (_ any, v *Violation) {
	inst, err := unmarshal(raw, segjson.UseNumber|segjson.ZeroCopy)
	if err != nil {
		sv := syntaxViolation(err)
		return nil, &sv
	}
	if v := Strict(raw); v != nil {
		return nil, v
	}
	return inst, nil
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
// Compact returns raw with insignificant white space removed, keeping key
// order and number literals exactly as written.
func Compact(raw []byte) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
