package rt

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Unmarshal decodes the JSON value data into v, reading it as the
// validators do, so that a value that validated is the value a handler
// gets:
//
//   - member names match struct fields exactly (encoding/json also matches
//     them case-insensitively, so a later "TASK_ID" would replace a
//     validated "task_id");
//   - a member name twice in one object, invalid UTF-8 and lone
//     surrogates are errors (encoding/json keeps the last name and folds
//     bad text into U+FFFD);
//   - a number is an integer when its value is one, whatever its form
//     (2.0, 2e0 and 1e2 decode into integer fields, as JSON Schema's
//     "integer" accepts them);
//   - data is one JSON value: anything after it is an error.
//
// Members no field names are ignored: the schema decides whether they are
// allowed. Generated types decode nested values with Unmarshal too, so the
// rules hold at every depth. Errors are *json.SemanticError or
// *jsontext.SyntacticError, both carrying the JSON pointer; DecodeViolations
// words them for a caller.
func Unmarshal(data []byte, v any) error {
	return json.Unmarshal(data, v, decodeOptions)
}

// decodeOptions are Unmarshal's options: encoding/json/v2's defaults
// (exact names, duplicate names and invalid UTF-8 refused) and integers
// by value.
var decodeOptions = json.WithUnmarshalers(json.UnmarshalFromFunc(unmarshalInteger))

// unmarshalInteger decodes a JSON number into a Go integer of any kind
// (named types too) when the number's value is an integer in the type's
// range; every other value falls through to the default decoding.
func unmarshalInteger(dec *jsontext.Decoder, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || dec.PeekKind() != '0' {
		return errors.ErrUnsupported
	}
	e := rv.Elem()
	var signed bool
	switch e.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		signed = true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return errors.ErrUnsupported
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	lit := tok.String()
	digits, ok := integerDigits(lit)
	if !ok {
		return &integerError{Literal: lit}
	}
	bits := e.Type().Bits()
	if signed {
		n, err := strconv.ParseInt(digits, 10, bits)
		if err != nil {
			limit := int64(math.MaxInt64 >> (64 - bits))
			return &integerError{Literal: lit, Min: fmt.Sprint(-limit - 1), Max: fmt.Sprint(limit)}
		}
		e.SetInt(n)
		return nil
	}
	n, err := strconv.ParseUint(digits, 10, bits)
	if err != nil {
		return &integerError{Literal: lit, Min: "0", Max: fmt.Sprint(uint64(math.MaxUint64) >> (64 - bits))}
	}
	e.SetUint(n)
	return nil
}

// maxIntegerDigits bounds the integers integerDigits writes out: more
// digits than any Go integer holds is out of range however it is written
// (so 1e999999999 costs nothing).
const maxIntegerDigits = 21

// integerDigits returns a JSON number literal that has an integer value
// as plain decimal digits (with a leading '-' when negative), ok false
// when its value is not an integer. A value too long for any Go integer
// comes back as maxIntegerDigits+1 nines, which no parse accepts.
func integerDigits(lit string) (string, bool) {
	neg := strings.HasPrefix(lit, "-")
	lit = strings.TrimPrefix(lit, "-")
	mant, exp := lit, 0
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		mant = lit[:i]
		e, err := strconv.Atoi(strings.TrimPrefix(lit[i+1:], "+"))
		if err != nil { // beyond int: as large or as small as it gets
			e = math.MaxInt32
			if strings.HasPrefix(lit[i+1:], "-") {
				e = math.MinInt32
			}
		}
		exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	ds := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	if ds == "" {
		return "0", true
	}
	// Trailing zeros of the digits move into the exponent.
	trimmed := strings.TrimRight(ds, "0")
	exp += len(ds) - len(trimmed)
	ds = trimmed
	if exp < 0 {
		return "", false // a nonzero digit after the decimal point
	}
	if len(ds)+exp > maxIntegerDigits {
		ds, exp = strings.Repeat("9", maxIntegerDigits+1), 0
	}
	ds += strings.Repeat("0", exp)
	if neg {
		ds = "-" + ds
	}
	return ds, true
}

// integerError is a JSON number that does not fit an integer field: a
// value with a fraction (Min and Max empty), or an integer beyond
// [Min, Max].
type integerError struct {
	Literal  string
	Min, Max string
}

func (e *integerError) Error() string {
	if e.Min == "" {
		return fmt.Sprintf("%s is not an integer", e.Literal)
	}
	return fmt.Sprintf("%s is outside the integers this server holds, %s to %s", e.Literal, e.Min, e.Max)
}

// DecodeViolations words an error of Unmarshal as violations: the JSON
// pointer of the value and what it breaks, never a Go type. A value the
// input schema accepted fails to decode only when the server cannot hold
// it (an integer beyond 64 bits, a date-time beyond Go's years); the
// violation's keyword is then "type" or "format".
func DecodeViolations(err error) []Violation {
	var ie *integerError
	var te *time.ParseError
	var se *json.SemanticError
	var sy *jsontext.SyntacticError
	v := Violation{Keyword: "type", Message: "the server cannot hold this value"}
	switch {
	case errors.As(err, &sy):
		v.Pointer, v.Keyword, v.Message = string(sy.JSONPointer), "json", "invalid JSON: "+sy.Err.Error()
		return []Violation{v}
	case errors.As(err, &se):
		v.Pointer = string(se.JSONPointer)
	}
	switch {
	case errors.As(err, &ie):
		v.Message = ie.Error()
	case errors.As(err, &te):
		v.Keyword, v.Message = "format", "not a date-time this server can hold (RFC 3339, years 0000 to 9999)"
	case se != nil && se.JSONKind != 0:
		v.Message = "the server cannot hold this " + kindName(se.JSONKind)
	}
	return []Violation{v}
}

// kindName names a JSON kind as JSON Schema's "type" does.
func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}
