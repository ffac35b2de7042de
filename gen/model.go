package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

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

// gtype is a Go type made from a schema.
type gtype struct {
	kind kind
	prim string // kPrim: string, int64, float64, bool; kEnum: string or int64
	name string // named kinds
	node *node  // the schema that defined it (named kinds)
	doc  *docCtx

	elem         *gtype // kSlice, kMap, kAlias
	elemNullable bool   // kSlice, kMap: the items may be null
	elemNode     *node  // kSlice, kMap: the items' schema

	fields []*field // kStruct

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

// field is one property of a struct.
type field struct {
	json     string
	goName   string
	t        *gtype
	required bool
	nullable bool
	node     *node
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
	raw     json.RawMessage
	root    *gtype
	// rootName is the root type's name, the prefix of $defs type names.
	rootName string
	// refs memoises the types of $ref targets by pointer; refBusy marks
	// targets being resolved (a reference cycle through unnamed types).
	refs    map[string]*gtype
	refNull map[string]bool
	refBusy map[string]bool
}

// builder makes the types of a whole package.
type builder struct {
	names *names
	types []*gtype // named types in the order made
	// toolName is the catalog's enum, ToolName: an enum whose values are
	// exactly the catalog names maps to it.
	toolName *gtype
	notes    spec.Diagnostics
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

func (d *docCtx) newNamed(t *gtype, name string, n *node) *gtype {
	t.name = d.b.names.take(name)
	t.node = n
	t.doc = d
	d.b.types = append(d.b.types, t)
	return t
}

// resolve maps the schema n to a Go type; name is the type name to use if
// a named type is needed. nullable reports that null is also allowed.
func (d *docCtx) resolve(n *node, name string) (t *gtype, nullable bool) {
	if n == nil {
		return rawType, false
	}
	if n.boolean != nil {
		if !*n.boolean {
			d.note(n.ptr, "the schema false admits no value")
		}
		return rawType, false
	}
	if n.has("$dynamicRef") {
		d.note(n.ptr, "$dynamicRef is not supported")
		return rawType, false
	}
	if ref, ok := n.str("$ref"); ok {
		for _, k := range shapeKeys {
			if k != "$ref" && n.has(k) {
				d.note(n.ptr, "$ref beside %q", k)
				return rawType, false
			}
		}
		return d.ref(n, ref, name)
	}
	if n.has("const") {
		return d.constType(n, name)
	}
	if e := n.strs("enum"); len(e) == 1 {
		return d.newNamed(&gtype{kind: kConst, constJSON: mustJSON(e[0])}, name, n), false
	}
	if n.has("enum") {
		return d.enumType(n, name)
	}
	if n.has("allOf") {
		alts := n.children("allOf")
		var shaped []*node
		for _, a := range alts {
			if !constraintOnly(a) {
				shaped = append(shaped, a)
			}
		}
		own := false
		for _, k := range shapeKeys {
			if k != "allOf" && n.has(k) {
				own = true
			}
		}
		switch {
		case len(shaped) == 0:
		case len(shaped) == 1 && !own:
			return d.resolve(shaped[0], name)
		default:
			d.note(n.ptr+"/allOf", "allOf of several shapes is not merged")
			return rawType, false
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if n.has(k) {
			if t, nb, ok := d.alternatives(n, k, name); ok {
				return t, nb
			}
			return rawType, false
		}
	}
	return d.typed(n, name)
}

// typed maps a schema by its "type" (or the keywords that imply one).
func (d *docCtx) typed(n *node, name string) (*gtype, bool) {
	types := n.types()
	nullable := false
	var rest []string
	for _, t := range types {
		if t == "null" {
			nullable = true
		} else {
			rest = append(rest, t)
		}
	}
	if len(rest) == 2 && (rest[0] == "integer" && rest[1] == "number" || rest[0] == "number" && rest[1] == "integer") {
		rest = []string{"number"}
	}
	switch {
	case len(rest) > 1:
		d.note(n.ptr+"/type", "a value of several types (%s)", strings.Join(rest, ", "))
		return rawType, false
	case len(rest) == 0 && nullable:
		d.note(n.ptr, "a value that can only be null")
		return rawType, false
	case len(rest) == 0:
		switch {
		case n.hasAny("properties", "additionalProperties", "patternProperties"):
			rest = []string{"object"}
		case n.hasAny("items", "prefixItems"):
			rest = []string{"array"}
		default:
			return rawType, false // any JSON value: json.RawMessage is exact
		}
	}
	switch rest[0] {
	case "string":
		if f, _ := n.str("format"); f == "date-time" {
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
	d.note(n.ptr+"/type", "unknown type %q", rest[0])
	return rawType, false
}

func (d *docCtx) array(n *node, name string) *gtype {
	if n.has("prefixItems") {
		d.note(n.ptr+"/prefixItems", "a tuple (prefixItems)")
		return rawType
	}
	items := n.child("items")
	if items == nil {
		return &gtype{kind: kSlice, elem: rawType}
	}
	et, en := d.resolve(items, singular(name))
	return &gtype{kind: kSlice, elem: et, elemNullable: en, elemNode: items}
}

func (d *docCtx) object(n *node, name string) *gtype {
	if n.has("patternProperties") {
		d.note(n.ptr+"/patternProperties", "patternProperties")
		return rawType
	}
	ap := n.child("additionalProperties")
	apSchema := ap != nil && ap.boolean == nil
	if !n.has("properties") {
		switch {
		case apSchema:
			et, en := d.resolve(ap, name+"Value")
			return &gtype{kind: kMap, elem: et, elemNullable: en, elemNode: ap}
		case ap != nil && ap.boolean != nil && !*ap.boolean:
			return d.newNamed(&gtype{kind: kStruct}, name, n) // the empty object
		default:
			return &gtype{kind: kMap, elem: rawType}
		}
	}
	if apSchema {
		d.note(n.ptr+"/additionalProperties", "properties beside additionalProperties with a schema")
		return rawType
	}
	t := d.newNamed(&gtype{kind: kStruct}, name, n)
	d.fillStruct(t, n)
	return t
}

func (d *docCtx) fillStruct(t *gtype, n *node) {
	req := map[string]bool{}
	for _, r := range n.strs("required") {
		req[r] = true
	}
	used := map[string]bool{}
	for _, p := range n.props() {
		gn := fieldName(p.name)
		for base, i := gn, 2; used[gn]; i++ {
			gn = base + strconv.Itoa(i)
		}
		used[gn] = true
		ft, nb := d.resolve(p.n, t.name+gn)
		t.fields = append(t.fields, &field{json: p.name, goName: gn, t: ft, required: req[p.name], nullable: nb, node: p.n})
	}
}

// ref resolves a local reference (#, #/$defs/..., any JSON pointer into the
// same document).
func (d *docCtx) ref(n *node, ref, name string) (*gtype, bool) {
	if !strings.HasPrefix(ref, "#") {
		d.note(n.ptr+"/$ref", "a reference outside the document (%s)", ref)
		return rawType, false
	}
	ptr := ref[1:]
	if t, ok := d.refs[ptr]; ok {
		return t, d.refNull[ptr]
	}
	if ptr == "" {
		if d.root != nil && d.root.kind == kStruct {
			return d.root, false
		}
		d.note(n.ptr+"/$ref", "a reference to the root")
		return rawType, false
	}
	if d.refBusy[ptr] {
		d.note(n.ptr+"/$ref", "a reference cycle through unnamed types")
		return rawType, false
	}
	raw, ok := lookup(d.raw, ptr)
	if !ok {
		d.note(n.ptr+"/$ref", "a reference to nothing (%s)", ref)
		return rawType, false
	}
	target := parseNode(ptr, raw)
	tname := name
	toks := strings.Split(ptr, "/")
	if len(toks) == 3 && (toks[1] == "$defs" || toks[1] == "definitions") {
		tname = d.rootName + fieldName(strings.ReplaceAll(strings.ReplaceAll(toks[2], "~1", "/"), "~0", "~"))
	}
	// A struct target is registered before its fields are resolved, so a
	// recursive reference finds it.
	if !target.has("$ref") && !target.hasAny("anyOf", "oneOf", "allOf", "const", "enum") && isObjectWithProps(target) && !target.has("patternProperties") {
		if ap := target.child("additionalProperties"); ap == nil || ap.boolean != nil {
			t := d.newNamed(&gtype{kind: kStruct}, tname, target)
			nullable := false
			for _, ty := range target.types() {
				nullable = nullable || ty == "null"
			}
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

func isObjectWithProps(n *node) bool {
	if !n.has("properties") {
		return false
	}
	for _, t := range n.types() {
		if t != "object" && t != "null" {
			return false
		}
	}
	return true
}

func (d *docCtx) constType(n *node, name string) (*gtype, bool) {
	raw := bytes.TrimSpace(n.m["const"])
	if bytes.Equal(raw, []byte("null")) {
		d.note(n.ptr+"/const", "a value that can only be null")
		return rawType, false
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		d.note(n.ptr+"/const", "const is not JSON")
		return rawType, false
	}
	return d.newNamed(&gtype{kind: kConst, constJSON: b.Bytes()}, name, n), false
}

func (d *docCtx) enumType(n *node, name string) (*gtype, bool) {
	var vals []json.RawMessage
	if json.Unmarshal(n.m["enum"], &vals) != nil || len(vals) == 0 {
		d.note(n.ptr+"/enum", "enum is not a list of values")
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
		d.note(n.ptr+"/enum", "an enum value that is neither a string nor an integer (%s)", v)
		return rawType, false
	}
	switch {
	case len(strs) > 0 && len(nums) > 0:
		d.note(n.ptr+"/enum", "an enum of strings and numbers")
		return rawType, false
	case len(strs) == 0 && len(nums) == 0:
		d.note(n.ptr+"/enum", "an enum of null alone")
		return rawType, false
	}
	if len(strs) > 0 && sameSet(strs, d.b.toolName.enum) {
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
func (d *docCtx) alternatives(n *node, key, name string) (t *gtype, nullable, ok bool) {
	alts := n.children(key)
	var shaped []*node
	hasNull := false
	for _, a := range alts {
		switch {
		case isNullSchema(a):
			hasNull = true
		case constraintOnly(a):
		default:
			shaped = append(shaped, a)
		}
	}
	own := false
	for _, k := range shapeKeys {
		if k != key && n.has(k) {
			own = true
		}
	}
	switch {
	case len(shaped) == 0 && own:
		t, nb := d.typed(n, name)
		return t, nb || hasNull, true
	case len(shaped) == 0 && hasNull:
		d.note(n.ptr+"/"+key, "a value that can only be null")
		return nil, false, false
	case len(shaped) == 0:
		return rawType, false, true
	case len(shaped) == 1 && (!own || onlyType(n, "object") && isObjectLike(shaped[0])):
		t, nb := d.resolve(shaped[0], name)
		return t, nb || hasNull, true
	case own && !onlyType(n, "object"):
		d.note(n.ptr+"/"+key, "%s beside other type keywords", key)
		return nil, false, false
	}
	u := d.union(n, key, shaped, name)
	if u == nil {
		return nil, false, false
	}
	return u, hasNull, true
}

func onlyType(n *node, typ string) bool {
	ts := n.types()
	return len(ts) == 1 && ts[0] == typ && !n.hasAny("properties", "additionalProperties", "patternProperties", "items", "prefixItems")
}

func isObjectLike(n *node) bool {
	return n.has("$ref") || n.has("properties") || onlyType(n, "object")
}

// union makes a tagged union of object alternatives that all require one
// property with a distinct const string value.
func (d *docCtx) union(n *node, key string, alts []*node, name string) *gtype {
	targets := make([]*node, len(alts))
	for i, a := range alts {
		t := a
		for depth := 0; t.has("$ref") && depth < 16; depth++ {
			ref, _ := t.str("$ref")
			if !strings.HasPrefix(ref, "#") {
				break
			}
			raw, ok := lookup(d.raw, ref[1:])
			if !ok {
				break
			}
			t = parseNode(ref[1:], raw)
		}
		if !t.has("properties") {
			d.note(n.ptr+"/"+key, "a union whose alternative %d is not an object with properties", i)
			return nil
		}
		targets[i] = t
	}
	// Candidates: properties of the first alternative with a const string.
	discs := constPropsOrdered(targets[0])
	var disc string
	var values []string
	for _, cand := range discs {
		vals := make([]string, 0, len(targets))
		seen := map[string]bool{}
		good := true
		for _, t := range targets {
			v, ok := constProps(t)[cand]
			if !ok || seen[v] {
				good = false
				break
			}
			seen[v] = true
			vals = append(vals, v)
		}
		if good {
			disc, values = cand, vals
			break
		}
	}
	if disc == "" {
		d.note(n.ptr+"/"+key, "a union of objects with no required const property telling them apart")
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
			d.note(a.ptr, "a union alternative that is not a struct")
			return nil
		}
		u.variants = append(u.variants, &variant{goName: vn, value: values[i], t: vt})
	}
	return u
}

// constProps maps each required property with a const string (or a
// one-string enum) to that string. Candidates come out sorted by the order
// the properties are written.
func constProps(n *node) map[string]string {
	req := map[string]bool{}
	for _, r := range n.strs("required") {
		req[r] = true
	}
	out := map[string]string{}
	for _, p := range n.props() {
		if !req[p.name] {
			continue
		}
		if s, ok := p.n.str("const"); ok {
			out[p.name] = s
			continue
		}
		if e := p.n.strs("enum"); len(e) == 1 {
			out[p.name] = e[0]
		}
	}
	return out
}

// constPropsOrdered is constProps's keys in the order written.
func constPropsOrdered(n *node) []string {
	m := constProps(n)
	var out []string
	for _, p := range n.props() {
		if _, ok := m[p.name]; ok {
			out = append(out, p.name)
		}
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// sameSet reports whether strs holds exactly the values of evs.
func sameSet(strs []string, evs []enumVal) bool {
	set := map[string]bool{}
	for _, s := range strs {
		set[s] = true
	}
	if len(set) != len(evs) {
		return false
	}
	for _, ev := range evs {
		if !set[ev.str] {
			return false
		}
	}
	return true
}
