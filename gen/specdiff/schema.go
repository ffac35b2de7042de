package specdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/prickle-dev/prickle/spec"
)

// document is one version of one schema.
type document struct {
	block *spec.JSONBlock
	root  json.RawMessage
}

func (d *document) pos(ptr string) spec.Pos {
	if d.block == nil {
		return spec.Pos{}
	}
	return d.block.PointerPos(ptr)
}

// node is a schema seen through $ref resolution and union lifting: each
// keyword remembers the pointer of the object that holds it, so that a
// change inside a resolved definition or a lifted variant is reported
// where it is written.
type node struct {
	ptr     string // the schema's own pointer (the use site, for a resolved $ref)
	boolean bool   // a boolean schema; value in val
	val     bool
	invalid bool // neither an object nor a boolean
	raw     json.RawMessage
	kw      map[string]json.RawMessage
	at      map[string]string // keyword -> pointer of the object holding it
	target  string            // the $ref this node was resolved from
	union   string            // "anyOf" or "oneOf" when the variants are lifted
	lifted  []*node
}

func (n *node) isFalse() bool { return n.boolean && !n.val }

// kwPtr is the pointer of keyword k (where it would be, when absent).
func (n *node) kwPtr(k string) string {
	if p, ok := n.at[k]; ok {
		return p + "/" + k
	}
	return n.ptr + "/" + k
}

func (n *node) has(k string) bool {
	_, ok := n.kw[k]
	return ok
}

// clone copies the node's keyword maps.
func (n *node) clone() *node {
	c := *n
	c.kw = make(map[string]json.RawMessage, len(n.kw))
	c.at = make(map[string]string, len(n.at))
	for k, v := range n.kw {
		c.kw[k] = v
		c.at[k] = n.at[k]
	}
	return &c
}

func (n *node) without(k string) *node {
	c := n.clone()
	delete(c.kw, k)
	delete(c.at, k)
	return c
}

func (d *document) load(raw json.RawMessage, ptr string) *node {
	n := &node{ptr: ptr, raw: raw}
	t := bytes.TrimSpace(raw)
	switch {
	case string(t) == "true" || string(t) == "false":
		n.boolean, n.val = true, string(t) == "true"
		return n
	case len(t) == 0 || t[0] != '{':
		n.invalid = true
		return n
	}
	if err := json.Unmarshal(t, &n.kw); err != nil {
		n.invalid = true
		return n
	}
	n.at = make(map[string]string, len(n.kw))
	for k := range n.kw {
		n.at[k] = ptr
	}
	return n
}

// object turns the boolean schema true into the empty schema.
func (n *node) object() *node {
	if n.boolean && n.val {
		return &node{ptr: n.ptr, raw: n.raw, kw: map[string]json.RawMessage{}, at: map[string]string{}}
	}
	return n
}

// resolve finds a local reference ("#", "#/json/pointer") in the document.
func (d *document) resolve(ref string) (json.RawMessage, string, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, "", false
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil || (frag != "" && frag[0] != '/') {
		return nil, "", false
	}
	cur := d.root
	if frag == "" {
		return cur, "", true
	}
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch t := bytes.TrimSpace(cur); {
		case len(t) > 0 && t[0] == '{':
			var m map[string]json.RawMessage
			if json.Unmarshal(t, &m) != nil {
				return nil, "", false
			}
			v, ok := m[tok]
			if !ok {
				return nil, "", false
			}
			cur = v
		case len(t) > 0 && t[0] == '[':
			var a []json.RawMessage
			i, err := strconv.Atoi(tok)
			if json.Unmarshal(t, &a) != nil || err != nil || i < 0 || i >= len(a) {
				return nil, "", false
			}
			cur = a[i]
		default:
			return nil, "", false
		}
	}
	return cur, frag, true
}

func refOf(n *node) string {
	var s string
	if raw, ok := n.kw["$ref"]; ok && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

// deref replaces a resolvable local $ref by its target, the $ref's
// siblings laid over it. It returns n itself when there is nothing to do, or
// when the reference cannot be resolved (remote, dangling, or a cycle of
// references that never reaches a schema).
func (d *document) deref(n *node, depth int) *node {
	if r, ok := d.derefChain(n, depth); ok {
		return r
	}
	return n
}

func (d *document) derefChain(n *node, depth int) (*node, bool) {
	ref := refOf(n)
	if ref == "" || n.boolean || n.invalid {
		return n, true
	}
	if depth > 32 {
		return nil, false
	}
	raw, tptr, ok := d.resolve(ref)
	if !ok {
		return nil, false
	}
	t, ok := d.derefChain(d.load(raw, tptr), depth+1)
	if !ok || t.invalid {
		return nil, false
	}
	siblings := n.without("$ref")
	if t.boolean {
		if !t.val || len(siblings.kw) == 0 {
			return t, true
		}
		siblings.target = ref
		return siblings, true
	}
	m := t.clone()
	m.ptr, m.target = n.ptr, ref
	for k, v := range siblings.kw {
		m.kw[k], m.at[k] = v, siblings.at[k]
	}
	return m, true
}

// Keywords that are annotations: a change is reported, never breaking.
var annotations = map[string]bool{
	"title": true, "description": true, "$comment": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true,
}

// Keywords that stay on a node when its assertions are lifted into a
// single variant.
var nodeLevel = map[string]bool{
	"$schema": true, "$id": true, "$anchor": true, "$defs": true, "definitions": true, "default": true,
}

// unionOf names the node's union keyword: "anyOf", "oneOf", "" or "both".
func unionOf(n *node) string {
	if n.union != "" {
		return n.union
	}
	a, o := n.has("anyOf"), n.has("oneOf")
	switch {
	case a && o:
		return "both"
	case a:
		return "anyOf"
	case o:
		return "oneOf"
	}
	return ""
}

// lift rewrites a node without a union as a union of one variant holding
// its assertions, so that it compares with a version that has a union
// (typically {"type": "string"} becoming anyOf [string, null]).
func lift(n *node, kw string) *node {
	branch := &node{ptr: n.ptr, raw: n.raw, kw: map[string]json.RawMessage{}, at: map[string]string{}}
	out := &node{ptr: n.ptr, raw: n.raw, kw: map[string]json.RawMessage{}, at: map[string]string{}, target: n.target, union: kw}
	for k, v := range n.kw {
		if annotations[k] || nodeLevel[k] {
			out.kw[k], out.at[k] = v, n.at[k]
		} else {
			branch.kw[k], branch.at[k] = v, n.at[k]
		}
	}
	out.lifted = []*node{branch}
	return out
}

// branches returns the variants of the node's union kw.
func (d *document) branches(n *node, kw string) []*node {
	if n.union == kw {
		return n.lifted
	}
	var arr []json.RawMessage
	if json.Unmarshal(n.kw[kw], &arr) != nil {
		return nil
	}
	base := n.kwPtr(kw)
	out := make([]*node, len(arr))
	for i, raw := range arr {
		out[i] = d.load(raw, base+"/"+strconv.Itoa(i))
	}
	return out
}

func typeSet(raw json.RawMessage) ([]string, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many, true
	}
	return nil, false
}

func arrayOf(raw json.RawMessage) ([]json.RawMessage, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	var a []json.RawMessage
	if json.Unmarshal(raw, &a) != nil {
		return nil, false
	}
	return a, true
}

func objectOf(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &m) != nil {
		return nil
	}
	return m
}

func isFalseRaw(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "false" }

// acceptsNull reports whether the schema accepts the value null.
func (d *document) acceptsNull(n *node, depth int) bool {
	if depth > 32 {
		return true
	}
	if n.boolean {
		return n.val
	}
	if n.invalid {
		return false
	}
	ok := true
	if set, has := typeSet(n.kw["type"]); has {
		ok = slices.Contains(set, "null")
	}
	if vals, has := arrayOf(n.kw["enum"]); has {
		ok = ok && slices.ContainsFunc(vals, func(v json.RawMessage) bool { return canon(v) == "null" })
	}
	if c, has := n.kw["const"]; has {
		ok = ok && canon(c) == "null"
	}
	if ref := refOf(n); ref != "" {
		if raw, tptr, found := d.resolve(ref); found {
			ok = ok && d.acceptsNull(d.load(raw, tptr), depth+1)
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if n.union != kw && !n.has(kw) {
			continue
		}
		some := false
		for _, b := range d.branches(n, kw) {
			some = some || d.acceptsNull(b, depth+1)
		}
		ok = ok && some
	}
	if n.has("allOf") {
		for _, b := range d.branches(n, "allOf") {
			ok = ok && d.acceptsNull(b, depth+1)
		}
	}
	return ok
}

// nullSite is the pointer that makes a nullable node accept null.
func (d *document) nullSite(n *node) string {
	if set, has := typeSet(n.kw["type"]); has {
		if i := slices.Index(set, "null"); i >= 0 {
			if len(set) == 1 && bytes.TrimSpace(n.kw["type"])[0] == '"' {
				return n.kwPtr("type")
			}
			return n.kwPtr("type") + "/" + strconv.Itoa(i)
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if n.union != kw && !n.has(kw) {
			continue
		}
		for _, b := range d.branches(n, kw) {
			if d.acceptsNull(b, 0) {
				return b.ptr
			}
		}
	}
	return n.ptr
}

// isNullVariant reports a variant that only admits null.
func isNullVariant(n *node) bool {
	if n.boolean || n.invalid {
		return false
	}
	var asserts []string
	for k := range n.kw {
		if !annotations[k] {
			asserts = append(asserts, k)
		}
	}
	if len(asserts) != 1 {
		return false
	}
	switch asserts[0] {
	case "type":
		set, _ := typeSet(n.kw["type"])
		return len(set) == 1 && set[0] == "null"
	case "const":
		return canon(n.kw["const"]) == "null"
	case "enum":
		vals, _ := arrayOf(n.kw["enum"])
		return len(vals) == 1 && canon(vals[0]) == "null"
	}
	return false
}

// walker compares one side (input or output) of one tool.
type walker struct {
	d          *differ
	tool, side string
	old, new   *document
	seen       map[string]bool // pairs of resolved $ref targets on the current path
	via        string          // while comparing through a changed $ref: says which
}

// add records a change: ptr names it, optr and nptr place it on each side.
func (w *walker) add(kind, ptr, optr, nptr, format string, args ...any) {
	w.d.add(Change{Tool: w.tool, Side: w.side, Pointer: ptr, Kind: kind,
		Message: fmt.Sprintf(format, args...) + w.via, OldPos: w.old.pos(optr), NewPos: w.new.pos(nptr)})
}

// compare compares two schemas. nullHandled is set for the variants of a
// union whose nullability the caller already compared.
func (w *walker) compare(o, n *node, nullHandled bool) {
	if o.isFalse() || n.isFalse() {
		w.compareFalse(o, n)
		return
	}
	o, n = o.object(), n.object()
	if o.invalid || n.invalid {
		if canon(o.raw) != canon(n.raw) {
			w.add(KindSchemaChanged, n.ptr, o.ptr, n.ptr, "schema is not an object or a boolean; changed (conservatively breaking)")
		}
		return
	}
	oref, nref := refOf(o), refOf(n)
	if oref != "" && oref == nref {
		// The same reference on both sides: the definition is compared
		// where it is defined; only the siblings are compared here.
		o, n = o.without("$ref"), n.without("$ref")
	} else if oref != "" || nref != "" {
		od, nd := w.old.deref(o, 0), w.new.deref(n, 0)
		if od != o || nd != n {
			key := od.target + "|" + od.ptr + "\x00" + nd.target + "|" + nd.ptr
			if w.seen[key] {
				return // a recursive definition, already being compared
			}
			w.seen[key] = true
			defer delete(w.seen, key)
			saved := w.via
			site := n.ptr
			if site == "" {
				site = "/"
			}
			switch {
			case oref == "":
				w.via = fmt.Sprintf(" (via %s, now $ref %q)", site, nref)
			case nref == "":
				w.via = fmt.Sprintf(" (via %s, formerly $ref %q)", site, oref)
			default:
				w.via = fmt.Sprintf(" (via %s, $ref %q formerly %q)", site, nref, oref)
			}
			w.compare(od, nd, nullHandled)
			w.via = saved
			return
		}
	}
	// A union on one side only: lift the other side into a union of one.
	switch ou, nu := unionOf(o), unionOf(n); {
	case ou == "" && (nu == "anyOf" || nu == "oneOf"):
		o = lift(o, nu)
	case nu == "" && (ou == "anyOf" || ou == "oneOf"):
		n = lift(n, ou)
	}

	nullChanged := false
	if !nullHandled {
		on, nn := w.old.acceptsNull(o, 0), w.new.acceptsNull(n, 0)
		if on != nn {
			nullChanged = true
			if nn {
				w.add(KindNullAdded, n.ptr, o.ptr, w.new.nullSite(n), "now nullable: null is a valid value")
			} else {
				w.add(KindNullRemoved, n.ptr, w.old.nullSite(o), n.ptr, "no longer nullable: null is not a valid value")
			}
		}
	}
	skipNull := nullHandled || nullChanged

	done := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(union(o.kw, n.kw))) {
		if done[k] {
			continue
		}
		done[k] = true
		or, oh := o.kw[k]
		nr, nh := n.kw[k]
		switch {
		case k == "type":
			w.compareType(o, n)
		case k == "enum":
			w.compareEnum(o, n, skipNull)
		case k == "const" || k == "format" || k == "pattern" || k == "default":
			w.compareValue(o, n, k)
		case bounds[k] != 0:
			w.compareBound(o, n, k)
		case k == "multipleOf":
			w.compareMultipleOf(o, n)
		case k == "uniqueItems":
			if ov, nv := string(bytes.TrimSpace(or)) == "true", string(bytes.TrimSpace(nr)) == "true"; ov != nv {
				if nv {
					w.add(KindConstraintNarrowed, n.kwPtr(k), o.kwPtr(k), n.kwPtr(k), "uniqueItems is now true")
				} else {
					w.add(KindConstraintWidened, o.kwPtr(k), o.kwPtr(k), n.kwPtr(k), "uniqueItems is no longer true")
				}
			}
		case k == "properties" || k == "required":
			done["properties"], done["required"] = true, true
			w.compareObject(o, n)
		case subschemas[k]:
			if !oh {
				or = json.RawMessage("true")
			}
			if !nh {
				nr = json.RawMessage("true")
			}
			w.compare(w.old.load(or, o.kwPtr(k)), w.new.load(nr, n.kwPtr(k)), false)
		case k == "$defs" || k == "definitions" || k == "patternProperties":
			w.compareMap(o, n, k)
		case k == "allOf" || k == "prefixItems":
			w.compareList(o, n, k)
		case k == "anyOf" || k == "oneOf":
			// Reached only when both sides hold a union keyword, or a
			// side holds both (compared below as a whole).
		default:
			w.compareOther(o, n, k)
		}
	}
	w.compareUnions(o, n)
}

func union[V any](a, b map[string]V) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// Subschema keywords compared recursively, absent meaning true. Narrowing
// them narrows the schema.
var subschemas = map[string]bool{
	"additionalProperties": true, "unevaluatedProperties": true,
	"items": true, "unevaluatedItems": true, "propertyNames": true,
}

func (w *walker) compareFalse(o, n *node) {
	if o.isFalse() && n.isFalse() {
		return
	}
	props := strings.HasSuffix(n.ptr, "/additionalProperties") || strings.HasSuffix(n.ptr, "/unevaluatedProperties")
	kw := n.ptr[strings.LastIndexByte(n.ptr, '/')+1:]
	switch {
	case n.isFalse() && props:
		w.add(KindClosed, n.ptr, o.ptr, n.ptr, "%s is now false: unknown properties are rejected", kw)
	case n.isFalse():
		w.add(KindSchemaNarrowed, n.ptr, o.ptr, n.ptr, "schema is now false: no value is valid")
	case props:
		w.add(KindOpened, n.ptr, o.ptr, n.ptr, "%s is no longer false: unknown properties are accepted", kw)
	default:
		w.add(KindSchemaWidened, n.ptr, o.ptr, n.ptr, "schema is no longer false")
	}
}

// covers reports whether every type in b is valid under a.
func covers(a, b []string) bool {
	for _, t := range b {
		if !slices.Contains(a, t) && !(t == "integer" && slices.Contains(a, "number")) {
			return false
		}
	}
	return true
}

func withoutNull(set []string) []string {
	out := slices.DeleteFunc(slices.Clone(set), func(t string) bool { return t == "null" })
	if len(out) == 0 {
		return set // only null: keep it, it is the whole type
	}
	return out
}

func (w *walker) compareType(o, n *node) {
	os, oh := typeSet(o.kw["type"])
	ns, nh := typeSet(n.kw["type"])
	show := func(s []string) string { return strings.Join(s, "|") }
	switch {
	case !oh && !nh:
		if canon(o.kw["type"]) != canon(n.kw["type"]) {
			w.compareOther(o, n, "type")
		}
	case !nh:
		w.add(KindTypeWidened, o.kwPtr("type"), o.kwPtr("type"), n.kwPtr("type"), "type constraint removed (was %s)", show(os))
	case !oh:
		w.add(KindTypeNarrowed, n.kwPtr("type"), o.kwPtr("type"), n.kwPtr("type"), "type restricted to %s", show(ns))
	default:
		// Null is compared as nullability, once for the node.
		a, b := withoutNull(os), withoutNull(ns)
		switch fa, fb := covers(a, b), covers(b, a); {
		case fa && fb:
		case fa:
			w.add(KindTypeNarrowed, n.kwPtr("type"), o.kwPtr("type"), n.kwPtr("type"), "type narrowed from %s to %s", show(a), show(b))
		case fb:
			w.add(KindTypeWidened, n.kwPtr("type"), o.kwPtr("type"), n.kwPtr("type"), "type widened from %s to %s", show(a), show(b))
		default:
			w.add(KindTypeChanged, n.kwPtr("type"), o.kwPtr("type"), n.kwPtr("type"), "type changed from %s to %s", show(a), show(b))
		}
	}
}

func showValues(vals []json.RawMessage) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = canon(v)
	}
	return shorten("[" + strings.Join(parts, ", ") + "]")
}

func (w *walker) compareEnum(o, n *node, skipNull bool) {
	const k = "enum"
	ov, oh := arrayOf(o.kw[k])
	nv, nh := arrayOf(n.kw[k])
	switch {
	case !oh && !nh:
		w.compareOther(o, n, k)
		return
	case !oh:
		w.add(KindEnumAdded, n.kwPtr(k), o.kwPtr(k), n.kwPtr(k), "enum added: %s", showValues(nv))
		return
	case !nh:
		w.add(KindEnumRemoved, o.kwPtr(k), o.kwPtr(k), n.kwPtr(k), "enum removed (was %s)", showValues(ov))
		return
	}
	set := func(vals []json.RawMessage) map[string]bool {
		m := map[string]bool{}
		for _, v := range vals {
			m[canon(v)] = true
		}
		return m
	}
	os, ns := set(ov), set(nv)
	for i, v := range nv {
		if c := canon(v); !os[c] && !(skipNull && c == "null") {
			p := n.kwPtr(k) + "/" + strconv.Itoa(i)
			w.add(KindEnumValueAdded, p, o.kwPtr(k), p, "enum value %s added", shorten(c))
		}
	}
	for i, v := range ov {
		if c := canon(v); !ns[c] && !(skipNull && c == "null") {
			p := o.kwPtr(k) + "/" + strconv.Itoa(i)
			w.add(KindEnumValueRemoved, p, p, n.kwPtr(k), "enum value %s removed", shorten(c))
		}
	}
}

// compareValue compares a keyword whose value is compared whole: const,
// format, pattern, default.
func (w *walker) compareValue(o, n *node, k string) {
	or, oh := o.kw[k]
	nr, nh := n.kw[k]
	oc, nc := canon(or), canon(nr)
	if oh && nh && oc == nc {
		return
	}
	kinds := map[string][3]string{ // added, removed, changed
		"const":   {KindConstAdded, KindConstRemoved, KindConstChanged},
		"format":  {KindFormatAdded, KindFormatRemoved, KindFormatChanged},
		"pattern": {KindPatternAdded, KindPatternRemoved, KindPatternChanged},
		"default": {KindDefaultAdded, KindDefaultChanged, KindDefaultChanged},
	}[k]
	op, np := o.kwPtr(k), n.kwPtr(k)
	oc, nc = shorten(oc), shorten(nc)
	switch {
	case !oh:
		w.add(kinds[0], np, op, np, "%s added: %s", k, nc)
	case !nh:
		w.add(kinds[1], op, op, np, "%s removed (was %s)", k, oc)
	default:
		var ops, nps string
		if k == "pattern" && json.Unmarshal(or, &ops) == nil && json.Unmarshal(nr, &nps) == nil {
			w.comparePattern(ops, nps, op, np, oc, nc)
			return
		}
		w.add(kinds[2], np, op, np, "%s changed from %s to %s", k, oc, nc)
	}
}

// bounds: +1 for an upper bound (lowering it narrows), -1 for a lower one.
var bounds = map[string]int{
	"maxLength": 1, "maxItems": 1, "maxProperties": 1, "maximum": 1, "exclusiveMaximum": 1, "maxContains": 1,
	"minLength": -1, "minItems": -1, "minProperties": -1, "minimum": -1, "exclusiveMinimum": -1, "minContains": -1,
}

func number(raw json.RawMessage) (*big.Rat, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	return new(big.Rat).SetString(string(bytes.TrimSpace(raw)))
}

func normNumber(lit string) string {
	r, ok := new(big.Rat).SetString(lit)
	if !ok {
		return lit
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func (w *walker) compareBound(o, n *node, k string) {
	or, oh := o.kw[k]
	nr, nh := n.kw[k]
	ov, ook := number(or)
	nv, nok := number(nr)
	if (oh && !ook) || (nh && !nok) {
		w.compareOther(o, n, k)
		return
	}
	op, np := o.kwPtr(k), n.kwPtr(k)
	ol, nl := normNumber(string(bytes.TrimSpace(or))), normNumber(string(bytes.TrimSpace(nr)))
	upper := bounds[k] > 0
	switch {
	case !oh:
		w.add(KindConstraintNarrowed, np, op, np, "%s added: %s", k, nl)
	case !nh:
		w.add(KindConstraintWidened, op, op, np, "%s removed (was %s)", k, ol)
	default:
		c := nv.Cmp(ov)
		switch {
		case c == 0:
		case c < 0 && upper:
			w.add(KindConstraintNarrowed, np, op, np, "%s lowered from %s to %s", k, ol, nl)
		case c > 0 && !upper:
			w.add(KindConstraintNarrowed, np, op, np, "%s raised from %s to %s", k, ol, nl)
		case c > 0:
			w.add(KindConstraintWidened, np, op, np, "%s raised from %s to %s", k, ol, nl)
		default:
			w.add(KindConstraintWidened, np, op, np, "%s lowered from %s to %s", k, ol, nl)
		}
	}
}

func (w *walker) compareMultipleOf(o, n *node) {
	const k = "multipleOf"
	or, oh := o.kw[k]
	nr, nh := n.kw[k]
	ov, ook := number(or)
	nv, nok := number(nr)
	if (oh && (!ook || ov.Sign() <= 0)) || (nh && (!nok || nv.Sign() <= 0)) {
		w.compareOther(o, n, k)
		return
	}
	op, np := o.kwPtr(k), n.kwPtr(k)
	ol, nl := normNumber(string(bytes.TrimSpace(or))), normNumber(string(bytes.TrimSpace(nr)))
	switch {
	case !oh:
		w.add(KindConstraintNarrowed, np, op, np, "%s added: %s", k, nl)
	case !nh:
		w.add(KindConstraintWidened, op, op, np, "%s removed (was %s)", k, ol)
	case ov.Cmp(nv) == 0:
	case new(big.Rat).Quo(nv, ov).IsInt():
		w.add(KindConstraintNarrowed, np, op, np, "%s changed from %s to %s, a multiple of it", k, ol, nl)
	case new(big.Rat).Quo(ov, nv).IsInt():
		w.add(KindConstraintWidened, np, op, np, "%s changed from %s to %s, a divisor of it", k, ol, nl)
	default:
		w.add(KindConstraintChanged, np, op, np, "%s changed from %s to %s", k, ol, nl)
	}
}

func escapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// requiredSet maps each required name to its index.
func requiredSet(raw json.RawMessage) map[string]int {
	var names []string
	json.Unmarshal(raw, &names)
	m := map[string]int{}
	for i, s := range names {
		if _, dup := m[s]; !dup {
			m[s] = i
		}
	}
	return m
}

func closedObject(n *node) bool {
	return isFalseRaw(n.kw["additionalProperties"]) || isFalseRaw(n.kw["unevaluatedProperties"])
}

// constrainsUnknown reports an object that rejects unknown properties, or
// holds them to a schema (which may reject a value that was valid).
func constrainsUnknown(n *node) bool {
	for _, k := range []string{"additionalProperties", "unevaluatedProperties"} {
		if raw, ok := n.kw[k]; ok && canon(raw) != "true" && canon(raw) != "{}" {
			return true
		}
	}
	return false
}

// compareObject compares properties and required.
func (w *walker) compareObject(o, n *node) {
	if (o.has("properties") && objectOf(o.kw["properties"]) == nil) || (n.has("properties") && objectOf(n.kw["properties"]) == nil) {
		w.compareOther(o, n, "properties")
	}
	op, np := objectOf(o.kw["properties"]), objectOf(n.kw["properties"])
	oreq, nreq := requiredSet(o.kw["required"]), requiredSet(n.kw["required"])
	opp, npp := o.kwPtr("properties"), n.kwPtr("properties")
	for _, name := range slices.Sorted(maps.Keys(np)) {
		optr, nptr := opp+"/"+escapeToken(name), npp+"/"+escapeToken(name)
		if oraw, ok := op[name]; ok {
			w.compare(w.old.load(oraw, optr), w.new.load(np[name], nptr), false)
			continue
		}
		if _, req := nreq[name]; req {
			w.add(KindFieldRequiredAdded, nptr, optr, nptr, "new required property %q", name)
		} else if w.side == SideOutput && closedObject(o) {
			// Clients validate outputs against the schema they were built
			// with (the generated client, the TypeScript SDK): breaking.
			w.add(KindFieldAdded, nptr, optr, nptr, "new property %q in an object that rejected unknown properties: a client validating with the old schema rejects it", name)
		} else {
			w.d.changes = append(w.d.changes, Change{Tool: w.tool, Side: w.side, Pointer: nptr, Kind: KindFieldAdded,
				Message: fmt.Sprintf("new optional property %q", name) + w.via, OldPos: w.old.pos(optr), NewPos: w.new.pos(nptr)})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(op)) {
		if _, ok := np[name]; ok {
			continue
		}
		optr, nptr := opp+"/"+escapeToken(name), npp+"/"+escapeToken(name)
		c := Change{Tool: w.tool, Side: w.side, Pointer: optr, Kind: KindFieldRemoved,
			OldPos: w.old.pos(optr), NewPos: w.new.pos(nptr), Breaking: true}
		switch {
		case w.side == SideOutput:
			c.Message = fmt.Sprintf("property %q removed", name)
		case closedObject(n):
			c.Message = fmt.Sprintf("property %q removed: the object rejects unknown properties", name)
		case constrainsUnknown(n):
			c.Message = fmt.Sprintf("property %q removed: unknown properties must match additionalProperties now", name)
		default:
			c.Message = fmt.Sprintf("property %q removed (still accepted: the object allows unknown properties)", name)
			c.Breaking = false
		}
		c.Message += w.via
		w.d.changes = append(w.d.changes, c)
	}
	orp, nrp := o.kwPtr("required"), n.kwPtr("required")
	for _, name := range slices.Sorted(maps.Keys(nreq)) {
		if _, was := oreq[name]; was {
			continue
		}
		_, inOld := op[name]
		_, inNew := np[name]
		if inNew && !inOld {
			continue // a new required property
		}
		p := nrp + "/" + strconv.Itoa(nreq[name])
		w.add(KindFieldRequired, p, orp, p, "property %q is now required", name)
	}
	for _, name := range slices.Sorted(maps.Keys(oreq)) {
		if _, still := nreq[name]; still {
			continue
		}
		_, inOld := op[name]
		_, inNew := np[name]
		if inOld && !inNew {
			continue // a removed property
		}
		p := orp + "/" + strconv.Itoa(oreq[name])
		w.add(KindFieldOptional, p, p, nrp, "property %q is now optional", name)
	}
}

// compareMap compares $defs, definitions and patternProperties by name.
func (w *walker) compareMap(o, n *node, k string) {
	om, nm := objectOf(o.kw[k]), objectOf(n.kw[k])
	if (o.has(k) && om == nil) || (n.has(k) && nm == nil) {
		w.compareOther(o, n, k)
		return
	}
	op, np := o.kwPtr(k), n.kwPtr(k)
	defs := k != "patternProperties"
	for _, name := range slices.Sorted(maps.Keys(nm)) {
		optr, nptr := op+"/"+escapeToken(name), np+"/"+escapeToken(name)
		switch _, ok := om[name]; {
		case ok:
			w.compare(w.old.load(om[name], optr), w.new.load(nm[name], nptr), false)
		case defs:
			w.add(KindDefinitionAdded, nptr, optr, nptr, "definition %q added", name)
		default:
			w.add(KindSchemaChanged, nptr, optr, nptr, "patternProperties entry %q added (conservatively breaking)", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(om)) {
		if _, ok := nm[name]; ok {
			continue
		}
		optr, nptr := op+"/"+escapeToken(name), np+"/"+escapeToken(name)
		if defs {
			w.add(KindDefinitionRemoved, optr, optr, nptr, "definition %q removed", name)
		} else {
			w.add(KindSchemaChanged, optr, optr, nptr, "patternProperties entry %q removed (conservatively breaking)", name)
		}
	}
}

// compareList compares allOf and prefixItems entry by entry.
func (w *walker) compareList(o, n *node, k string) {
	oa, oh := arrayOf(o.kw[k])
	na, nh := arrayOf(n.kw[k])
	if (o.has(k) && !oh) || (n.has(k) && !nh) {
		w.compareOther(o, n, k)
		return
	}
	op, np := o.kwPtr(k), n.kwPtr(k)
	for i := 0; i < max(len(oa), len(na)); i++ {
		optr, nptr := op+"/"+strconv.Itoa(i), np+"/"+strconv.Itoa(i)
		switch {
		case i < len(oa) && i < len(na):
			w.compare(w.old.load(oa[i], optr), w.new.load(na[i], nptr), false)
		case k == "allOf" && i < len(na):
			w.add(KindSchemaNarrowed, nptr, optr, nptr, "allOf entry added")
		case k == "allOf":
			w.add(KindSchemaWidened, optr, optr, nptr, "allOf entry removed")
		case i < len(na):
			w.add(KindSchemaChanged, nptr, optr, nptr, "%s entry added (conservatively breaking)", k)
		default:
			w.add(KindSchemaChanged, optr, optr, nptr, "%s entry removed (conservatively breaking)", k)
		}
	}
}

// compareOther compares a keyword the walker does not interpret.
func (w *walker) compareOther(o, n *node, k string) {
	or, oh := o.kw[k]
	nr, nh := n.kw[k]
	if oh && nh && canon(or) == canon(nr) {
		return
	}
	kind, note := KindSchemaChanged, " (not compared: conservatively breaking)"
	what := "keyword"
	if annotations[k] {
		kind, note, what = KindAnnotationChanged, "", "annotation"
	}
	op, np := o.kwPtr(k), n.kwPtr(k)
	switch {
	case !oh:
		w.add(kind, np, op, np, "%s %q added%s", what, k, note)
	case !nh:
		w.add(kind, op, op, np, "%s %q removed%s", what, k, note)
	default:
		w.add(kind, np, op, np, "%s %q changed%s", what, k, note)
	}
}

// compareUnions compares the variants of anyOf/oneOf. Variants that only
// admit null are left out: nullability is compared for the whole node.
// Variants are paired when identical, then by their discriminator (the
// const properties), then by their type, then by position when as many
// remain on both sides; the rest are added or removed.
func (w *walker) compareUnions(o, n *node) {
	ou, nu := unionOf(o), unionOf(n)
	if ou == "" && nu == "" {
		return
	}
	if ou == "both" || nu == "both" || ou == "" || nu == "" {
		for _, k := range []string{"anyOf", "oneOf"} {
			w.compareOther(o, n, k)
		}
		return
	}
	if ou != nu {
		w.add(KindSchemaChanged, n.kwPtr(nu), o.kwPtr(ou), n.kwPtr(nu), "%s replaced by %s (conservatively breaking)", ou, nu)
	}
	variants := func(d *document, x *node, kw string) []*node {
		var out []*node
		for _, b := range d.branches(x, kw) {
			if !isNullVariant(b) {
				out = append(out, b)
			}
		}
		return out
	}
	ob, nb := variants(w.old, o, ou), variants(w.new, n, nu)
	type pair struct{ o, n *node }
	var pairs []pair
	match := func(key func(d *document, b *node) string, unique bool) {
		okeys, nkeys := map[string][]int{}, map[string][]int{}
		for i, b := range ob {
			if b != nil {
				if k := key(w.old, b); k != "" {
					okeys[k] = append(okeys[k], i)
				}
			}
		}
		for i, b := range nb {
			if b != nil {
				if k := key(w.new, b); k != "" {
					nkeys[k] = append(nkeys[k], i)
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(okeys)) {
			oi, ni := okeys[k], nkeys[k]
			if len(ni) == 0 || (unique && (len(oi) != 1 || len(ni) != 1)) {
				continue
			}
			for j := 0; j < min(len(oi), len(ni)); j++ {
				pairs = append(pairs, pair{ob[oi[j]], nb[ni[j]]})
				ob[oi[j]], nb[ni[j]] = nil, nil
			}
		}
	}
	match(func(_ *document, b *node) string { return canonNode(b) }, false)
	exact := len(pairs)
	match(func(d *document, b *node) string { return discriminator(d.deref(b, 0)) }, true)
	match(func(d *document, b *node) string {
		set, _ := typeSet(d.deref(b, 0).kw["type"])
		return strings.Join(set, "|")
	}, true)
	ob, nb = slices.DeleteFunc(ob, isNil), slices.DeleteFunc(nb, isNil)
	if len(ob) == len(nb) {
		for i := range ob {
			pairs = append(pairs, pair{ob[i], nb[i]})
		}
		ob, nb = nil, nil
	}
	for _, p := range pairs[exact:] {
		w.compare(p.o, p.n, true)
	}
	for _, b := range ob {
		w.add(KindVariantRemoved, b.ptr, b.ptr, n.kwPtr(nu), "%s variant removed: %s", ou, describe(w.old, b))
	}
	for _, b := range nb {
		w.add(KindVariantAdded, b.ptr, o.kwPtr(ou), b.ptr, "%s variant added: %s", nu, describe(w.new, b))
	}
}

func isNil(n *node) bool { return n == nil }

// canonNode is the canonical JSON of a variant's keywords.
func canonNode(n *node) string {
	if n.boolean || n.invalid {
		return canon(n.raw)
	}
	b, _ := json.Marshal(n.kw)
	return canon(b)
}

// describe names a variant for a message: by its discriminator, else by
// its JSON.
func describe(d *document, b *node) string {
	if k := discriminator(d.deref(b, 0)); k != "" {
		return k
	}
	return shorten(canonNode(b))
}

// discriminator names a variant by its const properties: kind="cat".
func discriminator(n *node) string {
	var parts []string
	props := objectOf(n.kw["properties"])
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p := objectOf(props[name])
		if c, ok := p["const"]; ok {
			parts = append(parts, name+"="+canon(c))
		} else if vals, ok := arrayOf(p["enum"]); ok && len(vals) == 1 {
			parts = append(parts, name+"="+canon(vals[0]))
		}
	}
	return strings.Join(parts, ",")
}
