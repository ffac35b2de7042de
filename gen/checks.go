package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/internal/validation"
	"github.com/prickle-dev/prickle/spec"
)

// The validators. Every schema of a document that a value can reach is a
// vnode, compiled here from its keywords (and checked: what the generated
// code cannot check is an *UncheckableError, never left out) and printed
// by render_checks.go as one check function over an rt.Checker. The
// checks mirror how a compiled schema (santhosh-tekuri/jsonschema, the
// oracle gen/checks_test.go holds them to) judges a value: "type",
// "const", "enum" and "format" stop at their first failure; every other
// keyword reports what it finds.

// vnode is one schema as its check function checks it.
type vnode struct {
	d   *docCtx
	ptr string // the schema's pointer in its document
	fn  string // the check function; "" for a schema that admits every value

	isFalse bool // the schema false

	types                   []string // "type", as listed
	constant                string   // the JSON array of const's one value, compact; "" for none
	enum                    string   // enum's JSON array, compact
	constValues, enumValues *vshared
	composite               bool   // const or enum holds an object or an array
	format                  string // a format the validators assert
	unasserted              string // a format they do not (an annotation)

	minLength, maxLength *int
	pattern              *vshared
	minimum, maximum     string // number literals
	exclMin, exclMax     string
	multipleOf           string

	props             []vprop
	patternProps      []vpatternProp
	additional        *vnode // additionalProperties as a schema
	additionalFalse   bool
	required          []string
	minProps          *int
	maxProps          *int
	dependentRequired []vdependent
	dependentSchemas  []vdependentSchema
	propertyNames     *vnode

	prefixItems  []*vnode
	items        *vnode
	minItems     *int
	maxItems     *int
	unique       bool
	contains     *vnode
	minContains  *int
	maxContains  *int
	ref          *vnode
	allOf        []*vnode
	anyOf        []*vnode
	oneOf        []*vnode
	not          *vnode
	ifN          *vnode
	thenN, elseN *vnode

	// raw: the function reads the value whole, for the keywords that
	// apply several schemas to it.
	raw bool
	// members and itemsFn name the functions that check an object's
	// members or an array's items when the value is read whole.
	members, itemsFn string
	// alias: the schema is a $ref and nothing else; it is checked by its
	// target's function.
	alias *vnode
}

type vprop struct {
	name string
	n    *vnode
}

type vpatternProp struct {
	p *vshared
	n *vnode
}

type vdependent struct {
	prop  string
	names []string
}

type vdependentSchema struct {
	prop string
	n    *vnode
}

// vshared is what the check functions of a package share: a pattern
// (rt.Pattern, compiled once) or the values of an enum or a const
// (rt.Values), by its source.
type vshared struct {
	src string
	id  string // its variable
}

// UncheckableError is a keyword of a page's schema that the generated
// validators cannot check: generation stops rather than leave it out.
type UncheckableError struct {
	Pos     spec.Pos // where the keyword is written
	Tool    string
	Section string // "input" or "output"
	Pointer string // the keyword's pointer in the schema
	Keyword string
	Reason  string
}

func (e *UncheckableError) Error() string {
	return fmt.Sprintf("%s: generate: %s %s schema at %s: keyword %s: %s", e.Pos, e.Tool, e.Section, jsonpointer.Show(e.Pointer), e.Keyword, e.Reason)
}

// checks compiles and names the validators of a package.
type checks struct {
	names    *names // unexported package-level names
	nodes    []*vnode
	patterns []*vshared
	bySrc    map[string]*vshared
	values   []*vshared
	byValue  map[string]*vshared
}

func newChecks(taken map[string]bool) *checks {
	n := newNames()
	for k := range taken {
		n.reserve(k)
	}
	return &checks{names: n, bySrc: map[string]*vshared{}, byValue: map[string]*vshared{}}
}

// compileDoc compiles the validator of a document; d.checks maps its
// pointers to nodes.
func (cs *checks) compileDoc(d *docCtx) (*vnode, error) {
	d.checks = map[string]*vnode{}
	root := d.schema.Root()
	if v, ok := root.String("$schema"); ok && v != "https://json-schema.org/draft/2020-12/schema" {
		return nil, d.uncheckable(root.KeywordPointer("$schema"), "$schema", "only JSON Schema 2020-12 is checked")
	}
	n, err := cs.node(d, root)
	if err != nil {
		return nil, err
	}
	if err := cs.sameValueCycles(n); err != nil {
		return nil, err
	}
	return n, nil
}

func (d *docCtx) uncheckable(ptr, kw, reason string) error {
	pos := spec.Pos{File: d.tool.Page.File}
	if d.block != nil {
		pos = d.block.PointerPos(ptr)
	}
	return &UncheckableError{Pos: pos, Tool: d.tool.Name, Section: d.section, Pointer: ptr, Keyword: kw, Reason: reason}
}

// node returns the vnode of s, compiling it on first use.
func (cs *checks) node(d *docCtx, s *jsonschema.Schema) (*vnode, error) {
	ptr := s.Pointer()
	if n, ok := d.checks[ptr]; ok {
		return n, nil
	}
	n := &vnode{d: d, ptr: ptr}
	d.checks[ptr] = n
	d.checkOrder = append(d.checkOrder, n)
	if err := cs.compile(n, s); err != nil {
		return nil, err
	}
	return n, nil
}

// admitsAll reports a schema that checks nothing (true, or no assertion).
func (n *vnode) admitsAll() bool { return n.fn == "" && !n.isFalse && n.alias == nil }

// target is the node whose function checks n: n, or what n only refers to.
func (n *vnode) target() *vnode {
	for i := 0; n.alias != nil && i <= len(n.d.checks); i++ {
		n = n.alias
	}
	return n
}

// compile reads s's keywords into n, and names n's function when some
// keyword checks something.
func (cs *checks) compile(n *vnode, s *jsonschema.Schema) error {
	if v, ok := s.Bool(); ok {
		n.isFalse = !v
		if n.isFalse {
			n.fn = cs.fnName(n)
			cs.nodes = append(cs.nodes, n)
		}
		return nil
	}
	if s.Invalid() {
		return n.d.uncheckable(n.ptr, "", "not a schema")
	}
	var checkedKws []string // the keywords that check something
	for _, k := range s.Keywords() {
		checked, err := cs.keyword(n, s, k)
		if err != nil {
			return err
		}
		if checked {
			checkedKws = append(checkedKws, k.Name)
		}
	}
	if n.ifN != nil {
		if err := cs.thenElse(n, s); err != nil {
			return err
		}
	}
	if len(checkedKws) == 0 {
		return nil // every value passes
	}
	if len(checkedKws) == 1 && checkedKws[0] == "$ref" {
		n.alias = n.ref
		return nil
	}
	cs.name(n)
	return nil
}

// keyword reads one keyword of s into n, and reports whether it checks
// something.
func (cs *checks) keyword(n *vnode, s *jsonschema.Schema, k *jsonschema.Keyword) (checked bool, err error) {
	switch k.Name {
	case "type", "const", "enum", "format":
		return cs.valueKeyword(n, k)
	case "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
		return true, cs.scalarKeyword(n, k)
	case "properties", "patternProperties", "additionalProperties", "required",
		"minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "propertyNames":
		return cs.objectKeyword(n, k)
	case "prefixItems", "items", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains":
		return cs.arrayKeyword(n, k)
	case "$ref", "allOf", "anyOf", "oneOf", "not", "if":
		return true, cs.applicator(n, s, k)
	case "then", "else":
		return false, nil // compiled with if
	case "$schema", "$id":
		if n.ptr != "" {
			return false, n.d.uncheckable(k.Ptr, k.Name, "a schema resource inside the document is not checked")
		}
		return false, nil
	case "$dynamicRef", "$recursiveRef", "unevaluatedProperties", "unevaluatedItems", "dependencies":
		return false, n.d.uncheckable(k.Ptr, k.Name, "the generated validators cannot check it")
	}
	// Annotations, definitions, content (not asserted), and keywords
	// 2020-12 does not define: nothing to check.
	return false, nil
}

// valueKeyword reads type, const, enum and format.
func (cs *checks) valueKeyword(n *vnode, k *jsonschema.Keyword) (checked bool, err error) {
	d := n.d
	switch k.Name {
	case "type":
		n.types, err = typeList(d, k)
	case "const":
		n.constant = "[" + compact(k.Value) + "]"
		n.composite = n.composite || k.IsObject() || k.IsArray()
	case "enum":
		if !k.IsArray() {
			return false, d.uncheckable(k.Ptr, k.Name, "not an array")
		}
		n.enum = compact(k.Value)
		els, _ := k.Elements()
		for _, e := range els {
			if e[0] == '{' || e[0] == '[' {
				n.composite = true
			}
		}
	case "format":
		f, ok := k.String()
		switch {
		case !ok:
			return false, d.uncheckable(k.Ptr, k.Name, "not a string")
		case validation.Format(f) == nil:
			n.unasserted = f
			return false, nil
		default:
			n.format = f
		}
	}
	return true, err
}

// scalarKeyword reads the string and number keywords.
func (cs *checks) scalarKeyword(n *vnode, k *jsonschema.Keyword) (err error) {
	d := n.d
	switch k.Name {
	case "minLength":
		n.minLength, err = count(d, k)
	case "maxLength":
		n.maxLength, err = count(d, k)
	case "pattern":
		n.pattern, err = cs.patternOf(d, k, n)
	case "minimum":
		n.minimum, err = number(d, k, false)
	case "maximum":
		n.maximum, err = number(d, k, false)
	case "exclusiveMinimum":
		n.exclMin, err = number(d, k, false)
	case "exclusiveMaximum":
		n.exclMax, err = number(d, k, false)
	case "multipleOf":
		n.multipleOf, err = number(d, k, true)
	}
	return err
}

// objectKeyword reads the object keywords.
func (cs *checks) objectKeyword(n *vnode, k *jsonschema.Keyword) (checked bool, err error) {
	d := n.d
	switch k.Name {
	case "properties":
		for _, m := range k.Members() {
			pn, err := cs.node(d, m.Schema)
			if err != nil {
				return false, err
			}
			n.props = append(n.props, vprop{m.Name, pn})
		}
	case "patternProperties":
		for _, m := range k.Members() {
			p, err := cs.pattern(d, jsonpointer.Append(k.Ptr, m.Name), k.Name, m.Name, n, "Key")
			if err != nil {
				return false, err
			}
			pn, err := cs.node(d, m.Schema)
			if err != nil {
				return false, err
			}
			n.patternProps = append(n.patternProps, vpatternProp{p, pn})
		}
	case "additionalProperties":
		if v, ok := k.Schema().Bool(); ok {
			n.additionalFalse = !v
			return !v, nil
		}
		n.additional, err = cs.sub(n, k)
	case "required":
		names, ok := k.Strings()
		if !ok {
			return false, d.uncheckable(k.Ptr, k.Name, "not an array of strings")
		}
		n.required = names
	case "minProperties":
		n.minProps, err = count(d, k)
	case "maxProperties":
		n.maxProps, err = count(d, k)
	case "dependentRequired":
		err = cs.dependentRequired(n, k)
	case "dependentSchemas":
		for _, m := range k.Members() {
			dn, err := cs.node(d, m.Schema)
			if err != nil {
				return false, err
			}
			n.dependentSchemas = append(n.dependentSchemas, vdependentSchema{m.Name, dn})
		}
	case "propertyNames":
		n.propertyNames, err = cs.sub(n, k)
	}
	return true, err
}

// dependentRequired reads the dependentRequired keyword.
func (cs *checks) dependentRequired(n *vnode, k *jsonschema.Keyword) error {
	if !k.IsObject() {
		return n.d.uncheckable(k.Ptr, k.Name, "not an object")
	}
	var m map[string][]string
	if json.Unmarshal(k.Value, &m) != nil {
		return n.d.uncheckable(k.Ptr, k.Name, "not an object of string arrays")
	}
	for _, name := range memberNames(k.Value) {
		n.dependentRequired = append(n.dependentRequired, vdependent{name, m[name]})
	}
	return nil
}

// arrayKeyword reads the array keywords.
func (cs *checks) arrayKeyword(n *vnode, k *jsonschema.Keyword) (checked bool, err error) {
	d := n.d
	switch k.Name {
	case "prefixItems":
		n.prefixItems, err = cs.list(n, k)
	case "items":
		n.items, err = cs.sub(n, k)
	case "minItems":
		n.minItems, err = count(d, k)
	case "maxItems":
		n.maxItems, err = count(d, k)
	case "uniqueItems":
		n.unique = string(k.Value) == "true"
		return n.unique, nil
	case "contains":
		n.contains, err = cs.sub(n, k)
	case "minContains":
		n.minContains, err = count(d, k)
	case "maxContains":
		n.maxContains, err = count(d, k)
	}
	return true, err
}

// applicator reads $ref and the keywords that apply subschemas to the
// value itself (then and else are read with if, by thenElse).
func (cs *checks) applicator(n *vnode, s *jsonschema.Schema, k *jsonschema.Keyword) (err error) {
	switch k.Name {
	case "$ref":
		n.ref, err = cs.ref(n.d, s, k)
	case "allOf":
		n.allOf, err = cs.list(n, k)
	case "anyOf":
		n.anyOf, err = cs.list(n, k)
	case "oneOf":
		n.oneOf, err = cs.list(n, k)
	case "not":
		n.not, err = cs.sub(n, k)
	case "if":
		n.ifN, err = cs.sub(n, k)
	}
	return err
}

// thenElse reads then and else, which check something only beside if.
func (cs *checks) thenElse(n *vnode, s *jsonschema.Schema) (err error) {
	if k := s.Get("then"); k != nil {
		if n.thenN, err = cs.sub(n, k); err != nil {
			return err
		}
	}
	if k := s.Get("else"); k != nil {
		n.elseN, err = cs.sub(n, k)
	}
	return err
}

// sub compiles the subschema that keyword k holds.
func (cs *checks) sub(n *vnode, k *jsonschema.Keyword) (*vnode, error) {
	if k.Schema() == nil {
		return nil, n.d.uncheckable(k.Ptr, k.Name, "not a schema")
	}
	return cs.node(n.d, k.Schema())
}

// list compiles the non-empty array of subschemas that keyword k holds.
func (cs *checks) list(n *vnode, k *jsonschema.Keyword) ([]*vnode, error) {
	if !k.IsArray() || len(k.Schemas()) == 0 {
		return nil, n.d.uncheckable(k.Ptr, k.Name, "not a non-empty array of schemas")
	}
	var out []*vnode
	for _, c := range k.Schemas() {
		cn, err := cs.node(n.d, c)
		if err != nil {
			return nil, err
		}
		out = append(out, cn)
	}
	return out, nil
}

// name gives n, which checks something, its function and the names of
// the helpers and shared values it needs.
func (cs *checks) name(n *vnode) {
	n.raw = n.ref != nil || len(n.allOf)+len(n.anyOf)+len(n.oneOf) > 0 || n.not != nil || n.ifN != nil ||
		len(n.dependentSchemas) > 0 || n.unique || n.contains != nil || n.composite && n.admits("object", "array")
	n.fn = cs.fnName(n)
	if n.raw && n.hasObjectGroup() {
		n.members = cs.names.take(n.fn + "Members")
	}
	if n.raw && n.hasArrayGroup() {
		n.itemsFn = cs.names.take(n.fn + "Items")
	}
	if n.constant != "" {
		n.constValues = cs.valuesOf(n.constant, "const"+lastName(n))
	}
	if n.enum != "" {
		n.enumValues = cs.valuesOf(n.enum, "enum"+lastName(n))
	}
	cs.nodes = append(cs.nodes, n)
}

// admits reports whether the "type" keyword admits a value of one of the
// JSON types (no "type" admits every one).
func (n *vnode) admits(types ...string) bool {
	if n.types == nil {
		return true
	}
	for _, t := range n.types {
		for _, u := range types {
			if t == u || t == "integer" && u == "number" {
				return true
			}
		}
	}
	return false
}

func (n *vnode) hasStringGroup() bool {
	return n.admits("string") && (n.minLength != nil || n.maxLength != nil || n.pattern != nil)
}

func (n *vnode) hasNumberGroup() bool {
	return n.admits("number") && (n.minimum != "" || n.maximum != "" || n.exclMin != "" || n.exclMax != "" || n.multipleOf != "")
}

func (n *vnode) hasObjectGroup() bool {
	return n.admits("object") && (len(n.props) > 0 || len(n.patternProps) > 0 || n.additional != nil || n.additionalFalse ||
		len(n.required) > 0 || n.minProps != nil || n.maxProps != nil || len(n.dependentRequired) > 0 || n.propertyNames != nil)
}

func (n *vnode) hasArrayGroup() bool {
	return n.admits("array") && (len(n.prefixItems) > 0 || n.items != nil || n.minItems != nil || n.maxItems != nil)
}

// typeList reads "type": a type name or an array of them.
func typeList(d *docCtx, k *jsonschema.Keyword) ([]string, error) {
	var ts []string
	if t, ok := k.String(); ok {
		ts = []string{t}
	} else if ts, ok = k.Strings(); !ok {
		return nil, d.uncheckable(k.Ptr, k.Name, "not a type or an array of types")
	}
	for _, t := range ts {
		switch t {
		case "null", "boolean", "number", "integer", "string", "array", "object":
		default:
			return nil, d.uncheckable(k.Ptr, k.Name, fmt.Sprintf("unknown type %q", t))
		}
	}
	return ts, nil
}

// count reads a keyword whose value is a non-negative integer.
func count(d *docCtx, k *jsonschema.Keyword) (*int, error) {
	r, ok := k.Number()
	if !ok || !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() || r.Num().Int64() > 1<<31 {
		return nil, d.uncheckable(k.Ptr, k.Name, "not a non-negative integer")
	}
	v := int(r.Num().Int64())
	return &v, nil
}

// number reads a keyword whose value is a number (positive: more than 0),
// as its literal.
func number(d *docCtx, k *jsonschema.Keyword, positive bool) (string, error) {
	r, ok := k.Number()
	if !ok || positive && r.Sign() <= 0 {
		reason := "not a number"
		if positive {
			reason = "not a number more than 0"
		}
		return "", d.uncheckable(k.Ptr, k.Name, reason)
	}
	if _, ok := new(big.Rat).SetString(string(bytes.TrimSpace(k.Value))); !ok {
		return "", d.uncheckable(k.Ptr, k.Name, "not a number")
	}
	return string(bytes.TrimSpace(k.Value)), nil
}

func compact(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// memberNames lists the names of a JSON object in the order written.
func memberNames(raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var out []string
	if _, err := dec.Token(); err != nil {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := t.(string)
		out = append(out, name)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return out
		}
	}
	return out
}

// patternOf compiles a node's "pattern".
func (cs *checks) patternOf(d *docCtx, k *jsonschema.Keyword, n *vnode) (*vshared, error) {
	src, ok := k.String()
	if !ok {
		return nil, d.uncheckable(k.Ptr, k.Name, "not a string")
	}
	return cs.pattern(d, k.Ptr, k.Name, src, n, "")
}

// pattern returns the package's pattern src, compiled once now so that a
// pattern that does not compile stops generation.
func (cs *checks) pattern(d *docCtx, ptr, kw, src string, n *vnode, suffix string) (*vshared, error) {
	if p, ok := cs.bySrc[src]; ok {
		return p, nil
	}
	if _, err := ecmaregex.Compile(src); err != nil {
		return nil, d.uncheckable(ptr, kw, err.Error())
	}
	p := &vshared{src: src, id: cs.names.take("pattern" + lastName(n) + suffix)}
	cs.bySrc[src] = p
	cs.patterns = append(cs.patterns, p)
	return p, nil
}

// valuesOf returns the package's values src (an enum's, a const's),
// named name when they are new.
func (cs *checks) valuesOf(src, name string) *vshared {
	if v, ok := cs.byValue[src]; ok {
		return v
	}
	v := &vshared{src: src, id: cs.names.take(name)}
	cs.byValue[src] = v
	cs.values = append(cs.values, v)
	return v
}

// ref resolves a node's "$ref", a reference inside the document.
func (cs *checks) ref(d *docCtx, s *jsonschema.Schema, k *jsonschema.Keyword) (*vnode, error) {
	ref, ok := k.String()
	if !ok {
		return nil, d.uncheckable(k.Ptr, k.Name, "not a string")
	}
	target, err := d.schema.Resolve(ref)
	if err != nil {
		return nil, d.uncheckable(k.Ptr, k.Name, err.Error())
	}
	return cs.node(d, target)
}

// sameValueCycles refuses schemas that apply themselves to the same value
// without reading into it ($ref, allOf, ...), which would never end.
func (cs *checks) sameValueCycles(root *vnode) error {
	state := map[*vnode]int{} // 1 on the path, 2 done
	var visit func(n *vnode) error
	visit = func(n *vnode) error {
		switch state[n] {
		case 1:
			return n.d.uncheckable(n.ptr, "$ref", "a cycle of references that never reads into the value")
		case 2:
			return nil
		}
		state[n] = 1
		for _, m := range n.sameValue() {
			if err := visit(m); err != nil {
				return err
			}
		}
		state[n] = 2
		return nil
	}
	for _, n := range root.d.checkOrder {
		if err := visit(n); err != nil {
			return err
		}
	}
	return nil
}

// sameValue lists the schemas n applies to the value it checks itself.
func (n *vnode) sameValue() []*vnode {
	var out []*vnode
	add := func(ms ...*vnode) {
		for _, m := range ms {
			if m != nil {
				out = append(out, m)
			}
		}
	}
	add(n.ref, n.alias, n.not, n.ifN, n.thenN, n.elseN)
	add(n.allOf...)
	add(n.anyOf...)
	add(n.oneOf...)
	for _, ds := range n.dependentSchemas {
		add(ds.n)
	}
	return out
}

// fnName names the check function of n after the document's root type
// and the way from the root: check<Root><Property>..., with Item, Value,
// Key1, AnyOf0 and the like for the other keywords.
func (cs *checks) fnName(n *vnode) string {
	return cs.names.take("check" + cs.base(n))
}

// base is the part of a name that says where n is: the document's root
// type, then the way to n as the Go types name it (a property's Go name,
// an array's item in the singular, a map's Value), with Key, AnyOf0,
// WhenName (dependentSchemas), Not and the like for the other keywords.
func (cs *checks) base(n *vnode) string {
	toks, _ := jsonpointer.Split(n.ptr)
	parts := []string{n.d.rootName}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		next := ""
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		switch t {
		case "properties", "$defs", "definitions":
			parts = append(parts, fieldName(next))
			i++
		case "dependentSchemas":
			parts = append(parts, "When"+fieldName(next))
			i++
		case "patternProperties":
			parts = append(parts, "Key")
			i++
		case "items":
			last := parts[len(parts)-1]
			parts[len(parts)-1] = singular(last)
		case "prefixItems", "allOf", "anyOf", "oneOf":
			parts = append(parts, camel(t)+next)
			i++
		case "additionalProperties":
			parts = append(parts, "Value")
		case "propertyNames":
			parts = append(parts, "Name")
		default:
			parts = append(parts, camel(t))
		}
	}
	return strings.Join(parts, "")
}

// lastName is the Go name of the last property on the way to n (its
// document's root type when there is none), to name what n uses.
func lastName(n *vnode) string {
	toks, _ := jsonpointer.Split(n.ptr)
	for i := len(toks) - 2; i >= 0; i-- {
		switch toks[i] {
		case "properties", "$defs", "definitions":
			return fieldName(toks[i+1])
		}
	}
	return n.d.rootName
}

// checkedTypes is the rt.Types expression a "type" list names.
func checkedTypes(types []string) []string {
	order := []string{"null", "boolean", "number", "integer", "string", "array", "object"}
	var out []string
	for _, t := range order {
		for _, u := range types {
			if t == u {
				out = append(out, "Type"+strings.ToUpper(t[:1])+t[1:])
				break
			}
		}
	}
	return out
}

// loc is the pointer of n's keyword kw (and tokens after it).
func (n *vnode) loc(kw ...string) string { return jsonpointer.Append(n.ptr, kw...) }

// intLit is an int as Go source.
func intLit(p *int) string { return strconv.Itoa(*p) }
