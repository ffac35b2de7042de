package world

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/prickle-dev/prickle/internal/jsonpointer"
)

// Error is a problem of a world document, at the value it names.
type Error struct {
	// Pointer is the JSON pointer (RFC 6901) of the value, "/agents/1/id";
	// Path is the same place as a JSON path, "$.agents[1].id".
	Pointer, Path string
	// Line and Column (1-based, columns in bytes) locate the value in the
	// document's text; both are 0 when it is not known.
	Line, Column int
	// Err is the problem.
	Err error
}

// Error returns "fixture: PATH: problem": the format's older name, with
// which a world's errors have always begun.
func (e *Error) Error() string { return "fixture: " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the problem.
func (e *Error) Unwrap() error { return e.Err }

// document is the text a world was read from, to place a JSON pointer in
// it. Its index is built when an error first needs it.
type document struct {
	data []byte
	once sync.Once
	idx  jsonpointer.Index
}

// errAt returns an *Error at the value at ptr; doc may be nil.
func (doc *document) errAt(ptr string, err error) *Error {
	e := &Error{Pointer: ptr, Path: dollarPath(ptr), Err: err}
	if doc == nil {
		return e
	}
	doc.once.Do(func() { doc.idx, _ = jsonpointer.NewIndex(doc.data) })
	if doc.idx != nil {
		e.Line, e.Column = doc.position(doc.idx.Offset(ptr))
	}
	return e
}

// position returns the line and column (1-based, in bytes) of offset off.
func (doc *document) position(off int) (line, column int) {
	before := doc.data[:min(max(off, 0), len(doc.data))]
	return bytes.Count(before, []byte{'\n'}) + 1, len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
}

// syntaxError returns nil when the text is one JSON value, otherwise an
// *Error at the byte where reading it stopped, so that an editor can jump
// there (a schema's violations need a document to point into).
func (doc *document) syntaxError() *Error {
	if jsontext.Value(doc.data).IsValid() {
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(doc.data))
	_, err := dec.ReadValue()
	off := int(dec.InputOffset())
	if err == nil {
		rest := doc.data[off:]
		off += len(rest) - len(bytes.TrimLeft(rest, " \t\r\n")) // the second value's first byte
		if _, err = dec.ReadToken(); err == io.EOF {
			return nil
		} else if err == nil {
			err = errors.New("more than one JSON value")
		}
	}
	e := &Error{Path: "$", Err: err}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		e.Pointer, e.Err, off = string(se.JSONPointer), se.Err, int(se.ByteOffset)
		e.Path = dollarPath(e.Pointer)
	}
	if errors.Is(e.Err, io.ErrUnexpectedEOF) {
		e.Err = errors.New("the JSON ends early (unexpected end of file)")
	}
	e.Err = fmt.Errorf("invalid JSON: %w", e.Err)
	e.Line, e.Column = doc.position(off)
	return e
}

// dollarPath writes a JSON pointer into a world as the JSON path its
// errors name: "/agents/1/id" is "$.agents[1].id". Every array of a world
// holds objects whose member names are words, so a token of digits is an
// index.
func dollarPath(ptr string) string {
	toks, err := jsonpointer.Split(ptr)
	if err != nil {
		return "$" + ptr
	}
	var b strings.Builder
	b.WriteString("$")
	for _, t := range toks {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
		} else {
			b.WriteString("." + t)
		}
	}
	return b.String()
}

// decodeOptions read integers by value, as the schema's "integer" means
// them (2.0 is 2; the schema bounds every integer of a world to a few
// units, which a float64 holds exactly), and refuse members the format
// does not have.
var decodeOptions = json.JoinOptions(json.RejectUnknownMembers(true),
	json.WithUnmarshalers(json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *int) error {
		if dec.PeekKind() != '0' {
			return errors.ErrUnsupported
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		f, err := tok.Float()
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return fmt.Errorf("%s is not an integer the format allows", tok.String())
		}
		*v = int(f)
		return nil
	})))

// Decode reads a world as it is written before it is materialized: its
// times may be relative, and the schema is not checked (a server checks
// it; see Schema.Parse). A document that is not JSON, not an object, or
// has a member the format does not know is an *Error.
func Decode(data []byte) (*World, error) {
	doc := &document{data: data}
	if e := doc.syntaxError(); e != nil {
		return nil, e
	}
	return doc.decode()
}

// decode decodes a document that is one JSON value.
func (doc *document) decode() (*World, error) {
	if k := jsontext.Value(bytes.TrimSpace(doc.data)).Kind(); k != '{' {
		return nil, doc.errAt("", errors.New("not a JSON object"))
	}
	w, err := decode(doc.data)
	if err != nil {
		var se *json.SemanticError
		switch {
		case errors.As(err, &se) && se.Err != nil:
			return nil, doc.errAt(string(se.JSONPointer), se.Err)
		case se != nil && se.GoType != nil:
			return nil, doc.errAt(string(se.JSONPointer), fmt.Errorf("a JSON %s where the format has %s", jsonKind(se.JSONKind), goKind(se.GoType)))
		}
		return nil, doc.errAt("", err)
	}
	w.doc = doc
	return w, nil
}

func decode(data []byte) (*World, error) {
	w := new(World)
	if err := json.Unmarshal(data, w, decodeOptions); err != nil {
		return nil, err
	}
	return w, nil
}

// jsonKind names the kind of a JSON value.
func jsonKind(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

// goKind names the JSON kind a Go type of the format is written as.
func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice:
		return "an array"
	case reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return goKind(t.Elem()) + " or null"
	}
	return t.String()
}

// Errorf returns an *Error at the value field points at (see Pointer),
// placed in the text w was read from.
func (w *World) Errorf(field any, format string, args ...any) error {
	return w.doc.errAt(w.Pointer(field), fmt.Errorf(format, args...))
}

// Pointer returns the JSON pointer of the value field points at: w
// itself, a section, an entry, or a field of an entry, at any depth
// (&w.Agents[1].Token is "/agents/1/token"); "" for w itself or for a
// value that is not part of w. The names come from the types' JSON tags,
// so that no caller spells them.
func (w *World) Pointer(field any) string {
	p := reflect.ValueOf(field)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return ""
	}
	ptr, _ := locate(reflect.ValueOf(w).Elem(), p.Pointer(), p.Type().Elem())
	return ptr
}

// locate finds the value of type t at address addr within v, an
// addressable value, and returns its pointer relative to v.
func locate(v reflect.Value, addr uintptr, t reflect.Type) (string, bool) {
	if v.Type() == t && v.UnsafeAddr() == addr {
		return "", true
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "" || name == "-" {
				continue
			}
			if p, ok := locate(v.Field(i), addr, t); ok {
				return "/" + jsonpointer.Escape(name) + p, true
			}
		}
	case reflect.Slice:
		// An entry of this slice, or a value inside an entry's own
		// slices (a turn's agents, an agent's capabilities).
		size := v.Type().Elem().Size()
		if base := v.Pointer(); v.Len() > 0 && addr >= base && addr < base+uintptr(v.Len())*size {
			i := int((addr - base) / size)
			if p, ok := locate(v.Index(i), addr, t); ok {
				return "/" + strconv.Itoa(i) + p, true
			}
			return "", false
		}
		if !hasSlice(v.Type().Elem()) {
			return "", false
		}
		for i := range v.Len() {
			if p, ok := locate(v.Index(i), addr, t); ok {
				return "/" + strconv.Itoa(i) + p, true
			}
		}
	}
	return "", false
}

// hasSlice reports whether a value of struct type t holds a slice.
func hasSlice(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		if t.Field(i).Type.Kind() == reflect.Slice {
			return true
		}
	}
	return false
}
