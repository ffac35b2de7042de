package gen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/spec"
)

// kind is what a schema becomes in Go.
type kind int

const (
	kPrim   kind = iota // string, int64, float64, bool
	kTime               // time.Time (format date-time)
	kRaw                // json.RawMessage: any JSON, or a construct typed as raw with a note
	kSlice              // []elem
	kMap                // map[string]elem
	kStruct             // a named struct
	kEnum               // a named string or int64 type with constants
	kUnion              // a named struct with one pointer per variant, told apart by a const property
	kConst              // a named empty struct that always marshals one JSON value
	kAlias              // a named alias of a type that is not itself named (a root schema only)
)

// gtype is a Go type made from a schema. The builder reads schemas; the
// renderers read only what the model holds (see decide.go), never a
// schema node.
type gtype struct {
	kind kind
	prim string             // kPrim: string, int64, float64, bool; kEnum: string or int64
	name string             // named kinds
	node *jsonschema.Schema // the schema that defined it (named kinds); the builder's alone
	doc  *docCtx

	// pointer and description are the defining schema's place and
	// description ("" when it has none).
	pointer     string
	description string

	elem         *gtype // kSlice, kMap, kAlias
	elemNullable bool   // kSlice, kMap: the items may be null
	// elemConstraints and elemEnum describe the items (kSlice) or values
	// (kMap) for the reference: their narrowing keywords and enum values.
	elemConstraints []string
	elemEnum        []string

	fields []*field // kStruct
	// marshal, empty and fill are decided by decideMarshal; wireName by
	// decideWire.
	marshal  bool     // kStruct: a MarshalJSON of its own (empty or fill is not)
	empty    []*field // kStruct: the fields that marshal nil as [] or {}
	fill     []*field // kStruct: the fields whose nested slices or maps must not be null
	wired    bool     // kStruct: its JSON goes through a MarshalJSON, its own or a field's
	wireName string   // kStruct: the name of its wire form; "" when it has none

	enum []enumVal // kEnum

	disc     string     // kUnion: the discriminating property
	variants []*variant // kUnion

	constJSON []byte // kConst: the value, compact
}

func (t *gtype) named() bool {
	switch t.kind {
	case kStruct, kEnum, kUnion, kConst, kAlias:
		return true
	}
	return false
}

var (
	rawType    = &gtype{kind: kRaw}
	stringType = &gtype{kind: kPrim, prim: "string"}
	intType    = &gtype{kind: kPrim, prim: "int64"}
	numberType = &gtype{kind: kPrim, prim: "float64"}
	boolType   = &gtype{kind: kPrim, prim: "bool"}
	timeType   = &gtype{kind: kTime}
)

// fieldShape is how a field holds its type.
type fieldShape int

const (
	shapeValue    fieldShape = iota // T
	shapePointer                    // *T
	shapeNullable                   // rt.Nullable[T]
)

// field is one property of a struct.
type field struct {
	json     string
	goName   string
	t        *gtype
	required bool
	nullable bool
	node     *jsonschema.Schema // the builder's alone
	pointer  string             // the property's schema's place
	// doc is the field's comment; constraints and enum describe it for the
	// reference (every narrowing keyword, the enum values as written);
	// deflt is the documented default an OrDefault getter returns, or nil.
	doc         string
	constraints []string
	enum        []string
	deflt       *fieldDefault
	// shape and tag are the field's Go shape and JSON tag, decided once
	// (decideShapes) for the struct, its wire form and the docs to read;
	// fillLevels (decideMarshal) and wire (decideWire) follow from them.
	shape      fieldShape
	tag        string
	fillLevels []bool
	wire       fieldWire
}

// fieldDefault is a documented default of an optional scalar field.
type fieldDefault struct {
	json  string // as the page writes it, compact
	value any    // a string, int, float64 or bool literal
	enum  string // or the enum constant
}

type enumVal struct {
	goName string
	str    string // string enums
	num    int64  // int64 enums
}

type variant struct {
	goName string // the union's field
	value  string // the discriminator's value
	t      *gtype // a kStruct
}

// docCtx is one schema document: a tool's input or output schema.
type docCtx struct {
	b       *builder
	tool    *spec.Tool
	section string // "input" or "output"
	block   *spec.JSONBlock
	schema  *jsonschema.Document
	root    *gtype
	// rootName is the root type's name, the prefix of $defs type names.
	rootName string
	// refs memoises the types of $ref targets by pointer; refBusy marks
	// targets being resolved (a reference cycle through unnamed types).
	refs    map[string]*gtype
	refNull map[string]bool
	refBusy map[string]bool
	// checks holds the validator's nodes by pointer, checkOrder in the
	// order made (checks.go).
	checks     map[string]*vnode
	checkOrder []*vnode
	// check is the root of the document's validator.
	check *vnode
}

// builder makes the types of a whole package.
type builder struct {
	names *names
	types []*gtype // named types in the order made
	// toolName is the catalog's enum, ToolName: an enum whose values are
	// exactly the catalog names maps to it.
	toolName *gtype
	// catalog is the set of toolName's values.
	catalog map[string]bool
	notes   spec.Diagnostics
}

func (d *docCtx) note(ptr, format string, args ...any) {
	pos := spec.Pos{File: d.tool.Page.File}
	if d.block != nil {
		pos = d.block.PointerPos(ptr)
	}
	p := ptr
	if p == "" {
		p = "/"
	}
	d.b.notes = append(d.b.notes, spec.Diagnostic{Pos: pos, Severity: spec.Info, Rule: "gen-raw",
		Message: fmt.Sprintf("%s: %s schema at %s: %s; typed as json.RawMessage", d.tool.Name, d.section, p, fmt.Sprintf(format, args...))})
}

func (d *docCtx) newNamed(t *gtype, name string, n *jsonschema.Schema) *gtype {
	t.name = d.b.names.take(name)
	d.define(t, n)
	d.b.types = append(d.b.types, t)
	return t
}

// define records that the named type t is defined by n in d.
func (d *docCtx) define(t *gtype, n *jsonschema.Schema) {
	t.node, t.doc = n, d
	t.pointer = n.Pointer()
	if desc, ok := n.String("description"); ok {
		t.description = strings.TrimSpace(desc)
	}
}

// resolve maps the schema n to a Go type; name is the type name to use if
// a named type is needed. nullable reports that null is also allowed.
func (d *docCtx) resolve(n *jsonschema.Schema, name string) (t *gtype, nullable bool) {
	if n == nil {
		return rawType, false
	}
	if v, ok := n.Bool(); ok {
		if !v {
			d.note(n.Pointer(), "the schema false admits no value")
		}
		return rawType, false
	}
	if n.Has("$dynamicRef") {
		d.note(n.Pointer(), "$dynamicRef is not supported")
		return rawType, false
	}
	if ref, ok := n.String("$ref"); ok {
		if k := otherShape(n, "$ref"); k != "" {
			d.note(n.Pointer(), "$ref beside %q", k)
			return rawType, false
		}
		return d.ref(n, ref, name)
	}
	if n.Has("const") {
		return d.constType(n, name)
	}
	if e, _ := n.Strings("enum"); len(e) == 1 {
		return d.newNamed(&gtype{kind: kConst, constJSON: mustJSON(e[0])}, name, n), false
	}
	if n.Has("enum") {
		return d.enumType(n, name)
	}
	if n.Has("allOf") {
		var shaped []*jsonschema.Schema
		for _, a := range n.List("allOf") {
			if !a.ConstraintOnly() {
				shaped = append(shaped, a)
			}
		}
		switch {
		case len(shaped) == 0:
		case len(shaped) == 1 && otherShape(n, "allOf") == "":
			return d.resolve(shaped[0], name)
		default:
			d.note(n.KeywordPointer("allOf"), "allOf of several shapes is not merged")
			return rawType, false
		}
	}
	if u, ok := n.Union(); ok {
		if t, nb, ok := d.alternatives(n, u, name); ok {
			return t, nb
		}
		return rawType, false
	}
	return d.typed(n, name)
}

// otherShape returns a keyword of n other than except that decides a
// shape (jsonschema.KeywordInfo.Shape), or "".
func otherShape(n *jsonschema.Schema, except string) string {
	for _, k := range n.Keywords() {
		if k.Name != except && jsonschema.Info(k.Name).Shape {
			return k.Name
		}
	}
	return ""
}

// typed maps a schema by its "type" (or the keywords that imply one).
func (d *docCtx) typed(n *jsonschema.Schema, name string) (*gtype, bool) {
	rest, nullable := n.NonNullTypes()
	if len(rest) == 2 && (rest[0] == "integer" && rest[1] == "number" || rest[0] == "number" && rest[1] == "integer") {
		rest = []string{"number"}
	}
	switch {
	case len(rest) > 1:
		d.note(n.KeywordPointer("type"), "a value of several types (%s)", strings.Join(rest, ", "))
		return rawType, false
	case len(rest) == 0 && nullable:
		d.note(n.Pointer(), "a value that can only be null")
		return rawType, false
	case len(rest) == 0:
		switch {
		case n.HasAny("properties", "additionalProperties", "patternProperties"):
			rest = []string{"object"}
		case n.HasAny("items", "prefixItems"):
			rest = []string{"array"}
		default:
			return rawType, false // any JSON value: json.RawMessage is exact
		}
	}
	switch rest[0] {
	case "string":
		if f, _ := n.String("format"); f == "date-time" {
			return timeType, nullable
		}
		return stringType, nullable
	case "integer":
		return intType, nullable
	case "number":
		return numberType, nullable
	case "boolean":
		return boolType, nullable
	case "array":
		return d.array(n, name), nullable
	case "object":
		return d.object(n, name), nullable
	}
	d.note(n.KeywordPointer("type"), "unknown type %q", rest[0])
	return rawType, false
}

func (d *docCtx) array(n *jsonschema.Schema, name string) *gtype {
	if n.Has("prefixItems") {
		d.note(n.KeywordPointer("prefixItems"), "a tuple (prefixItems)")
		return rawType
	}
	items := n.Sub("items")
	if items == nil {
		return &gtype{kind: kSlice, elem: rawType}
	}
	et, en := d.resolve(items, singular(name))
	return &gtype{kind: kSlice, elem: et, elemNullable: en, elemConstraints: constraints(items, nil), elemEnum: enumValues(et, items)}
}

func (d *docCtx) object(n *jsonschema.Schema, name string) *gtype {
	if n.Has("patternProperties") {
		d.note(n.KeywordPointer("patternProperties"), "patternProperties")
		return rawType
	}
	ap := n.Sub("additionalProperties")
	apSchema := ap != nil && !isBool(ap)
	if !n.Has("properties") {
		switch {
		case apSchema:
			et, en := d.resolve(ap, name+"Value")
			return &gtype{kind: kMap, elem: et, elemNullable: en, elemConstraints: constraints(ap, nil), elemEnum: enumValues(et, ap)}
		case ap != nil && ap.IsFalse():
			return d.newNamed(&gtype{kind: kStruct}, name, n) // the empty object
		default:
			return &gtype{kind: kMap, elem: rawType}
		}
	}
	if apSchema {
		d.note(n.KeywordPointer("additionalProperties"), "properties beside additionalProperties with a schema")
		return rawType
	}
	t := d.newNamed(&gtype{kind: kStruct}, name, n)
	d.fillStruct(t, n)
	return t
}

func (d *docCtx) fillStruct(t *gtype, n *jsonschema.Schema) {
	req := map[string]bool{}
	for _, r := range n.Required() {
		req[r] = true
	}
	used := map[string]bool{}
	for _, p := range n.Properties() {
		gn := fieldName(p.Name)
		for base, i := gn, 2; used[gn]; i++ {
			gn = base + strconv.Itoa(i)
		}
		used[gn] = true
		ft, nb := d.resolve(p.Schema, t.name+gn)
		f := &field{json: p.Name, goName: gn, t: ft, required: req[p.Name], nullable: nb, node: p.Schema, pointer: p.Schema.Pointer()}
		describeField(f)
		t.fields = append(t.fields, f)
	}
}

// isBool reports the boolean schemas true and false.
func isBool(n *jsonschema.Schema) bool {
	_, ok := n.Bool()
	return ok
}

// ref resolves a local reference (#, #/$defs/..., any JSON pointer into the
// same document).
func (d *docCtx) ref(n *jsonschema.Schema, ref, name string) (*gtype, bool) {
	refPtr := n.KeywordPointer("$ref")
	target, err := d.schema.Resolve(ref)
	if err != nil {
		var re *jsonschema.RefError
		if errors.As(err, &re) && re.Remote {
			d.note(refPtr, "a reference outside the document (%s)", ref)
		} else {
			d.note(refPtr, "a reference to nothing (%s)", ref)
		}
		return rawType, false
	}
	ptr := target.Pointer()
	if t, ok := d.refs[ptr]; ok {
		return t, d.refNull[ptr]
	}
	if ptr == "" {
		if d.root != nil && d.root.kind == kStruct {
			return d.root, false
		}
		d.note(refPtr, "a reference to the root")
		return rawType, false
	}
	if d.refBusy[ptr] {
		d.note(refPtr, "a reference cycle through unnamed types")
		return rawType, false
	}
	tname := name
	if toks, _ := jsonpointer.Split(ptr); len(toks) == 2 && (toks[0] == "$defs" || toks[0] == "definitions") {
		tname = d.rootName + fieldName(toks[1])
	}
	// A struct target is registered before its fields are resolved, so a
	// recursive reference finds it.
	if isPlainStruct(target) {
		if ap := target.Sub("additionalProperties"); ap == nil || isBool(ap) {
			t := d.newNamed(&gtype{kind: kStruct}, tname, target)
			_, nullable := target.NonNullTypes()
			d.refs[ptr], d.refNull[ptr] = t, nullable
			d.fillStruct(t, target)
			return t, nullable
		}
	}
	d.refBusy[ptr] = true
	t, nb := d.resolve(target, tname)
	delete(d.refBusy, ptr)
	d.refs[ptr], d.refNull[ptr] = t, nb
	return t, nb
}

func isObjectWithProps(n *jsonschema.Schema) bool {
	if !n.Has("properties") {
		return false
	}
	for _, t := range n.Types() {
		if t != "object" && t != "null" {
			return false
		}
	}
	return true
}

// isPlainStruct reports an object schema with properties and nothing
// that would make its Go type other than a struct of them (a union, an
// enum, a reference, pattern properties).
func isPlainStruct(n *jsonschema.Schema) bool {
	return isObjectWithProps(n) && !n.HasAny("$ref", "anyOf", "oneOf", "allOf", "const", "enum", "patternProperties")
}

func (d *docCtx) constType(n *jsonschema.Schema, name string) (*gtype, bool) {
	k := n.Get("const")
	if string(k.Value) == "null" {
		d.note(k.Ptr, "a value that can only be null")
		return rawType, false
	}
	var b bytes.Buffer
	if err := json.Compact(&b, k.Value); err != nil {
		d.note(k.Ptr, "const is not JSON")
		return rawType, false
	}
	return d.newNamed(&gtype{kind: kConst, constJSON: b.Bytes()}, name, n), false
}

func (d *docCtx) enumType(n *jsonschema.Schema, name string) (*gtype, bool) {
	k := n.Get("enum")
	vals, ok := k.Elements()
	if !ok || len(vals) == 0 {
		d.note(k.Ptr, "enum is not a list of values")
		return rawType, false
	}
	nullable := false
	var strs []string
	var nums []int64
	for _, v := range vals {
		v = bytes.TrimSpace(v)
		if bytes.Equal(v, []byte("null")) {
			nullable = true
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			strs = append(strs, s)
			continue
		}
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			nums = append(nums, i)
			continue
		}
		d.note(k.Ptr, "an enum value that is neither a string nor an integer (%s)", v)
		return rawType, false
	}
	switch {
	case len(strs) > 0 && len(nums) > 0:
		d.note(k.Ptr, "an enum of strings and numbers")
		return rawType, false
	case len(strs) == 0 && len(nums) == 0:
		d.note(k.Ptr, "an enum of null alone")
		return rawType, false
	}
	if len(strs) > 1 && subset(strs, d.b.catalog) {
		return d.b.toolName, nullable
	}
	t := d.newNamed(&gtype{kind: kEnum}, name, n)
	used := map[string]bool{}
	uniq := func(s string) string {
		for base, i := s, 2; used[s]; i++ {
			s = base + strconv.Itoa(i)
		}
		used[s] = true
		return d.b.names.take(t.name + s)
	}
	if len(strs) > 0 {
		t.prim = "string"
		for i, s := range strs {
			t.enum = append(t.enum, enumVal{goName: uniq(enumConstName(s, i)), str: s})
		}
	} else {
		t.prim = "int64"
		for _, v := range nums {
			s := strconv.FormatInt(v, 10)
			if v < 0 {
				s = "Minus" + s[1:]
			}
			t.enum = append(t.enum, enumVal{goName: uniq(s), num: v})
		}
	}
	return t, nullable
}

// alternatives maps anyOf / oneOf: null beside one shape is a nullable
// shape; objects told apart by a const property are a union; alternatives
// that only narrow (e.g. "one of these two required") leave the node's own
// type. ok is false when the construct falls back to json.RawMessage.
func (d *docCtx) alternatives(n *jsonschema.Schema, u jsonschema.Union, name string) (t *gtype, nullable, ok bool) {
	kwPtr := n.KeywordPointer(u.Keyword)
	own := otherShape(n, u.Keyword) != ""
	switch shaped := u.Shaped; {
	case len(shaped) == 0 && own:
		t, nb := d.typed(n, name)
		return t, nb || u.Null, true
	case len(shaped) == 0 && u.Null:
		d.note(kwPtr, "a value that can only be null")
		return nil, false, false
	case len(shaped) == 0:
		return rawType, false, true
	case len(shaped) == 1 && (!own || onlyType(n, "object") && isObjectLike(shaped[0])):
		t, nb := d.resolve(shaped[0], name)
		return t, nb || u.Null, true
	case own && !onlyType(n, "object"):
		d.note(kwPtr, "%s beside other type keywords", u.Keyword)
		return nil, false, false
	}
	t = d.union(n, u, name)
	if t == nil {
		return nil, false, false
	}
	return t, u.Null, true
}

func onlyType(n *jsonschema.Schema, typ string) bool {
	ts := n.Types()
	return len(ts) == 1 && ts[0] == typ && !n.HasAny("properties", "additionalProperties", "patternProperties", "items", "prefixItems")
}

func isObjectLike(n *jsonschema.Schema) bool {
	return n.Has("$ref") || n.Has("properties") || onlyType(n, "object")
}

// union makes a tagged union of object alternatives that all require one
// property with a distinct const string value.
func (d *docCtx) union(n *jsonschema.Schema, un jsonschema.Union, name string) *gtype {
	kwPtr := n.KeywordPointer(un.Keyword)
	alts := un.Shaped
	targets := make([]*jsonschema.Schema, len(alts))
	for i, a := range alts {
		t := a.Resolved()
		if !t.Has("properties") {
			d.note(kwPtr, "a union whose alternative %d is not an object with properties", i)
			return nil
		}
		targets[i] = t
	}
	// Candidates: properties of the first alternative with a const string.
	var disc string
	var values []string
	for _, cand := range constProps(targets[0]) {
		vals := make([]string, 0, len(targets))
		seen := map[string]bool{}
		good := true
		for _, t := range targets {
			v, ok := constProp(t, cand.name)
			if !ok || seen[v] {
				good = false
				break
			}
			seen[v] = true
			vals = append(vals, v)
		}
		if good {
			disc, values = cand.name, vals
			break
		}
	}
	if disc == "" {
		d.note(kwPtr, "a union of objects with no required const property telling them apart")
		return nil
	}
	u := d.newNamed(&gtype{kind: kUnion, disc: disc}, name, n)
	used := map[string]bool{}
	for i, a := range alts {
		vn := camel(values[i])
		if vn == "" {
			vn = "Variant" + strconv.Itoa(i)
		}
		for base, j := vn, 2; used[vn]; j++ {
			vn = base + strconv.Itoa(j)
		}
		used[vn] = true
		vt, _ := d.resolve(a, u.name+vn)
		if vt.kind != kStruct {
			d.note(a.Pointer(), "a union alternative that is not a struct")
			return nil
		}
		u.variants = append(u.variants, &variant{goName: vn, value: values[i], t: vt})
	}
	return u
}

// namedConst is a required property with a const string value.
type namedConst struct{ name, value string }

// constProps lists, in the order written, the required properties of n
// whose value is a const string (or a one-string enum).
func constProps(n *jsonschema.Schema) []namedConst {
	req := map[string]bool{}
	for _, r := range n.Required() {
		req[r] = true
	}
	var out []namedConst
	for _, p := range n.Properties() {
		if !req[p.Name] {
			continue
		}
		if s, ok := p.Schema.String("const"); ok {
			out = append(out, namedConst{p.Name, s})
		} else if e, _ := p.Schema.Strings("enum"); len(e) == 1 {
			out = append(out, namedConst{p.Name, e[0]})
		}
	}
	return out
}

// constProp returns the const string of n's required property name.
func constProp(n *jsonschema.Schema, name string) (string, bool) {
	for _, c := range constProps(n) {
		if c.name == name {
			return c.value, true
		}
	}
	return "", false
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// subset reports whether every string of strs is in set.
func subset(strs []string, set map[string]bool) bool {
	for _, s := range strs {
		if !set[s] {
			return false
		}
	}
	return true
}
