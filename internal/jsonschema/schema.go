// Package jsonschema is the toolchain's one model of a JSON Schema 2020-12
// document: lint, the generator, the diff and the conformance suite read
// schemas through it, so that they agree on what a page means.
//
// A Document is parsed once. Every schema in it is a *Schema that knows
// its JSON pointer, its keywords in the order written (each with its own
// pointer, so that a finding names the place in the page through
// spec.JSONBlock.PointerPos) and its subschemas, as the keyword table
// (Info) says which keywords hold schemas. Local references ("#",
// "#/$defs/...", any JSON pointer in the document) resolve to the schema
// they name (Document.Resolve, Schema.Resolved). Union and nullability
// lifting, which every reader needs and must decide alike, are here too:
// OnlyNull, ConstraintOnly, AcceptsNull, Union, Lift.
//
// The model judges no instance: the validators that gen generates from it
// do, and so does internal/schemacompile on santhosh-tekuri/jsonschema
// (lint, and the oracle of the generated validators). A schema that breaks the
// meta-schema is still modelled as far as it goes (lint reports it): a
// keyword whose value has the wrong form simply has no subschemas, and a
// value that is neither an object nor a boolean is an Invalid schema.
//
// It imports only internal/ecmaregex, internal/jsonpointer and
// internal/regexlang of this module: never the spec, the generator or a
// product, which all read schemas through it.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/jsonpointer"
)

// Document is one schema document, such as a tool's input schema.
type Document struct {
	raw  json.RawMessage
	root *Schema
	// byPtr holds the schemas by pointer; At adds the values it reads as
	// schemas, under mu, so that a document is safe for concurrent use.
	mu    sync.Mutex
	byPtr map[string]*Schema
}

// Parse reads raw, one JSON value, as a schema document. It fails only when
// raw is not JSON.
func Parse(raw []byte) (*Document, error) {
	raw = bytes.TrimSpace(raw)
	d := &Document{raw: raw, byPtr: map[string]*Schema{}}
	root, err := read(d, raw) // which checks the JSON as it goes
	if err == nil {
		d.root = root
		return d, nil
	}
	// A name written twice, or JSON that read and encoding/json judge
	// differently, is parsed the other way; what is not JSON is refused.
	if !json.Valid(raw) {
		var v any
		err := json.Unmarshal(raw, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, fmt.Errorf("schema: %w", err)
	}
	d.byPtr = map[string]*Schema{}
	d.root = d.parse("", raw)
	return d, nil
}

// MustParse is Parse for schemas known to be JSON; it panics otherwise.
func MustParse(raw []byte) *Document {
	d, err := Parse(raw)
	if err != nil {
		panic(err)
	}
	return d
}

// Root returns the document's root schema.
func (d *Document) Root() *Schema { return d.root }

// Raw returns the document's JSON.
func (d *Document) Raw() json.RawMessage { return d.raw }

// At returns the schema at ptr: one the document holds as a schema, or the
// value there read as one (a reference may name any place). It returns nil
// when ptr names nothing.
func (d *Document) At(ptr string) *Schema {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.byPtr[ptr]; ok {
		return s
	}
	raw, err := jsonpointer.Lookup(d.raw, ptr)
	if err != nil {
		return nil
	}
	return d.parse(ptr, raw)
}

// RefError reports a reference the model cannot follow.
type RefError struct {
	Ref string
	// Remote is set for a reference outside the document.
	Remote bool
	Err    error
}

func (e *RefError) Error() string {
	if e.Remote {
		return fmt.Sprintf("reference %q is outside the document", e.Ref)
	}
	return fmt.Sprintf("reference %q: %v", e.Ref, e.Err)
}

func (e *RefError) Unwrap() error { return e.Err }

// Resolve returns the schema a local reference names: "#" is the root,
// "#/json/pointer" any place in the document. Anything else is a
// *RefError.
func (d *Document) Resolve(ref string) (*Schema, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, &RefError{Ref: ref, Remote: true}
	}
	ptr, err := jsonpointer.FromFragment(ref)
	if err != nil {
		return nil, &RefError{Ref: ref, Err: err}
	}
	s := d.At(ptr)
	if s == nil {
		return nil, &RefError{Ref: ref, Err: jsonpointer.ErrNotFound}
	}
	return s, nil
}

// shape tells a schema object from the boolean schemas and from values
// that are no schema at all.
type shape int8

const (
	shapeObject shape = iota
	shapeTrue
	shapeFalse
	shapeInvalid
)

// Schema is one schema of a document, or a view of one (Resolved, Lift,
// Without): views share keywords with the schemas they come from, and each
// keyword keeps the pointer where it is written.
type Schema struct {
	doc   *Document
	ptr   string
	raw   json.RawMessage
	shape shape
	kws   []*Keyword
	// ref is the reference a resolved view was resolved through.
	ref string
	// union and variants describe a lifted view (see Lift).
	union    string
	variants []*Schema
}

// Keyword is one keyword of a schema object.
type Keyword struct {
	Name string
	// Value is the keyword's value as written.
	Value json.RawMessage
	// Ptr is the JSON pointer of the value.
	Ptr string

	schema  *Schema
	list    []*Schema
	members []Member
}

// Member is a named subschema: a property, a definition, a pattern.
type Member struct {
	Name   string
	Schema *Schema
}

func (d *Document) parse(ptr string, raw json.RawMessage) *Schema {
	s := &Schema{doc: d, ptr: ptr, raw: raw}
	d.byPtr[ptr] = s
	switch {
	case string(raw) == "true":
		s.shape = shapeTrue
		return s
	case string(raw) == "false":
		s.shape = shapeFalse
		return s
	case len(raw) == 0 || raw[0] != '{':
		s.shape = shapeInvalid
		return s
	}
	for _, m := range members(raw) {
		k := &Keyword{Name: m.name, Value: m.value, Ptr: jsonpointer.Append(ptr, m.name)}
		switch Info(m.name).Form {
		case FormSchema:
			k.schema = d.parse(k.Ptr, m.value)
		case FormSchemaList:
			for i, v := range elements(m.value) {
				k.list = append(k.list, d.parse(jsonpointer.AppendIndex(k.Ptr, i), v))
			}
		case FormSchemaMap:
			for _, e := range members(m.value) {
				k.members = append(k.members, Member{Name: e.name, Schema: d.parse(jsonpointer.Append(k.Ptr, e.name), e.value)})
			}
		}
		if i := indexOf(s.kws, m.name); i >= 0 {
			s.kws[i] = k // the last value counts, as for any JSON decoder
		} else {
			s.kws = append(s.kws, k)
		}
	}
	return s
}

func indexOf(kws []*Keyword, name string) int {
	for i, k := range kws {
		if k.Name == name {
			return i
		}
	}
	return -1
}

type rawMember struct {
	name  string
	value json.RawMessage
}

// members splits a JSON object into its members in the order written; a
// name written twice keeps its first place and its last value. Anything
// but an object has none.
func members(raw json.RawMessage) []rawMember {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var out []rawMember
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := t.(string)
		start := int(dec.InputOffset())
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		value := bytes.TrimLeft(raw[start:dec.InputOffset()], " \t\r\n:")
		if i := memberIndex(out, name); i >= 0 {
			out[i].value = value
			continue
		}
		out = append(out, rawMember{name, value})
	}
	return out
}

func memberIndex(ms []rawMember, name string) int {
	for i, m := range ms {
		if m.name == name {
			return i
		}
	}
	return -1
}

// elements splits a JSON array into its elements as written; anything but
// an array has none.
func elements(raw json.RawMessage) []json.RawMessage {
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var out []json.RawMessage
	for dec.More() {
		start := int(dec.InputOffset())
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		out = append(out, bytes.TrimLeft(raw[start:dec.InputOffset()], " \t\r\n,"))
	}
	return out
}

// Document returns the document s belongs to.
func (s *Schema) Document() *Document { return s.doc }

// Pointer returns where s is: for a resolved view, where it is used.
func (s *Schema) Pointer() string { return s.ptr }

// Raw returns s as written (for a view, the schema it was made from).
func (s *Schema) Raw() json.RawMessage { return s.raw }

// Bool reports whether s is a boolean schema, and which.
func (s *Schema) Bool() (value, ok bool) {
	return s.shape == shapeTrue, s.shape == shapeTrue || s.shape == shapeFalse
}

// IsFalse reports the schema false, which admits no value.
func (s *Schema) IsFalse() bool { return s.shape == shapeFalse }

// Invalid reports a value that is neither an object nor a boolean.
func (s *Schema) Invalid() bool { return s.shape == shapeInvalid }

// IsObject reports a schema object (possibly empty), as opposed to a
// boolean or invalid schema.
func (s *Schema) IsObject() bool { return s.shape == shapeObject }

// Keywords returns the keywords in the order written.
func (s *Schema) Keywords() []*Keyword { return s.kws }

// Get returns the keyword name, or nil.
func (s *Schema) Get(name string) *Keyword {
	if i := indexOf(s.kws, name); i >= 0 {
		return s.kws[i]
	}
	return nil
}

// Has reports whether s has the keyword name.
func (s *Schema) Has(name string) bool { return indexOf(s.kws, name) >= 0 }

// HasAny reports whether s has any of the keywords.
func (s *Schema) HasAny(names ...string) bool {
	for _, n := range names {
		if s.Has(n) {
			return true
		}
	}
	return false
}

// KeywordPointer returns the pointer of keyword name: where it is written,
// or where it would be in s when s lacks it.
func (s *Schema) KeywordPointer(name string) string {
	if k := s.Get(name); k != nil {
		return k.Ptr
	}
	return jsonpointer.Append(s.ptr, name)
}

// String returns the value of keyword name when it is a string.
func (s *Schema) String(name string) (string, bool) {
	if k := s.Get(name); k != nil {
		return k.String()
	}
	return "", false
}

// Strings returns the value of keyword name when it is an array of strings.
func (s *Schema) Strings(name string) ([]string, bool) {
	if k := s.Get(name); k != nil {
		return k.Strings()
	}
	return nil, false
}

// Types returns the "type" keyword as a list (nil when absent or malformed).
func (s *Schema) Types() []string {
	k := s.Get("type")
	if k == nil {
		return nil
	}
	if t, ok := k.String(); ok {
		return []string{t}
	}
	ts, _ := k.Strings()
	return ts
}

// NonNullTypes splits the "type" keyword into the types other than "null"
// and whether "null" is among them.
func (s *Schema) NonNullTypes() (types []string, null bool) {
	for _, t := range s.Types() {
		if t == "null" {
			null = true
		} else {
			types = append(types, t)
		}
	}
	return types, null
}

// Sub returns the subschema of a keyword that holds one, or nil.
func (s *Schema) Sub(name string) *Schema {
	if k := s.Get(name); k != nil {
		return k.schema
	}
	return nil
}

// List returns the subschemas of a keyword that holds an array of them.
func (s *Schema) List(name string) []*Schema {
	if k := s.Get(name); k != nil {
		return k.list
	}
	return nil
}

// Members returns the named subschemas of a keyword that holds an object of
// them, in the order written.
func (s *Schema) Members(name string) []Member {
	if k := s.Get(name); k != nil {
		return k.members
	}
	return nil
}

// Properties returns the "properties" in the order written.
func (s *Schema) Properties() []Member { return s.Members("properties") }

// Property returns the schema of property name, or nil.
func (s *Schema) Property(name string) *Schema {
	for _, m := range s.Properties() {
		if m.Name == name {
			return m.Schema
		}
	}
	return nil
}

// ValueSchema returns the schema the value of property name must satisfy,
// and the keyword that gives it: "properties", else "patternProperties"
// (the first pattern that matches name; JSON Schema applies every match,
// the pages use one), else "additionalProperties" (true when absent). A
// nil schema means the name is not allowed (additionalProperties false).
func (s *Schema) ValueSchema(name string) (*Schema, string) {
	if p := s.Property(name); p != nil {
		return p, "properties"
	}
	for _, pp := range s.Members("patternProperties") {
		if re, err := ecmaregex.Compile(pp.Name); err == nil {
			if ok, err := re.MatchString(name); ok && err == nil {
				return pp.Schema, "patternProperties"
			}
		}
	}
	ap := s.Applied("additionalProperties")
	if ap != nil && ap.IsFalse() {
		ap = nil
	}
	return ap, "additionalProperties"
}

// Required returns the "required" names as written.
func (s *Schema) Required() []string {
	r, _ := s.Strings("required")
	return r
}

// Ref returns the "$ref" keyword's value, or "".
func (s *Schema) Ref() string {
	r, _ := s.String("$ref")
	return r
}

// Via returns the reference a resolved view was resolved through, or "".
func (s *Schema) Via() string { return s.ref }

// String returns the value when it is a JSON string.
func (k *Keyword) String() (string, bool) {
	if len(k.Value) == 0 || k.Value[0] != '"' {
		return "", false
	}
	if v, ok := plainString(k.Value); ok {
		return v, true
	}
	var v string
	if json.Unmarshal(k.Value, &v) != nil {
		return "", false
	}
	return v, true
}

// plainString reads a JSON string written without escapes as
// json.Unmarshal does, without it; ok is false for any other, which it
// leaves to json.Unmarshal: escapes, control characters (refused),
// invalid UTF-8 (replaced).
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

// Strings returns the value when it is an array of strings.
func (k *Keyword) Strings() ([]string, bool) {
	if len(k.Value) == 0 || k.Value[0] != '[' {
		return nil, false
	}
	if v, ok := plainStrings(k.Value); ok {
		return v, true
	}
	var v []string
	if json.Unmarshal(k.Value, &v) != nil {
		return nil, false
	}
	return v, true
}

// plainStrings reads an array of strings as json.Unmarshal does, faster;
// ok is false for anything else, which it leaves to json.Unmarshal: a null
// (read as ""), invalid UTF-8 (replaced), what is not an array of strings.
func plainStrings(raw []byte) (v []string, ok bool) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw))
	if t, err := dec.ReadToken(); err != nil || t.Kind() != '[' {
		return nil, false
	}
	v = []string{}
	for dec.PeekKind() == '"' {
		t, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		v = append(v, t.String())
	}
	if t, err := dec.ReadToken(); err != nil || t.Kind() != ']' {
		return nil, false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, false
	}
	return v, true
}

// Elements returns the value's elements when it is an array.
func (k *Keyword) Elements() ([]json.RawMessage, bool) {
	if len(k.Value) == 0 || k.Value[0] != '[' {
		return nil, false
	}
	return elements(k.Value), true
}

// IsObject reports a value that is a JSON object.
func (k *Keyword) IsObject() bool { return len(k.Value) > 0 && k.Value[0] == '{' }

// IsArray reports a value that is a JSON array.
func (k *Keyword) IsArray() bool { return len(k.Value) > 0 && k.Value[0] == '[' }

// Number returns the value when it is a JSON number, exactly.
func (k *Keyword) Number() (*big.Rat, bool) {
	if len(k.Value) == 0 || !(k.Value[0] == '-' || k.Value[0] >= '0' && k.Value[0] <= '9') {
		return nil, false
	}
	return new(big.Rat).SetString(string(k.Value))
}

// Schema returns the subschema of a keyword of form FormSchema.
func (k *Keyword) Schema() *Schema { return k.schema }

// Schemas returns the subschemas of a keyword of form FormSchemaList.
func (k *Keyword) Schemas() []*Schema { return k.list }

// Members returns the named subschemas of a keyword of form FormSchemaMap.
func (k *Keyword) Members() []Member { return k.members }

// Decode returns the value as Go values: objects map[string]any, arrays
// []any, numbers json.Number (exact), strings, booleans and nil.
func (k *Keyword) Decode() any {
	v, _ := DecodeValue(k.Value)
	return v
}

// DecodeValue decodes one JSON value keeping numbers exact (json.Number).
func DecodeValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Walk calls fn for every schema of the document that the keyword table
// knows to hold one, parents before children, keywords in the order
// written.
func (d *Document) Walk(fn func(s *Schema)) { walk(d.root, fn) }

func walk(s *Schema, fn func(*Schema)) {
	fn(s)
	for _, k := range s.kws {
		if k.schema != nil {
			walk(k.schema, fn)
		}
		for _, c := range k.list {
			walk(c, fn)
		}
		for _, m := range k.members {
			walk(m.Schema, fn)
		}
	}
}
