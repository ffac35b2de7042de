package specdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/spec"
)

// version is one version of one schema.
type version struct {
	block *spec.JSONBlock
	doc   *jsonschema.Document
}

func (d *version) pos(ptr string) spec.Pos {
	if d.block == nil {
		return spec.Pos{}
	}
	return d.block.PointerPos(ptr)
}

// isAnnotation reports a keyword that only informs: a change to it is
// reported, never breaking.
func isAnnotation(k string) bool { return jsonschema.Info(k).Class == jsonschema.Annotation }

// value returns the value of keyword k of n as written, and whether n has
// it.
func value(n *jsonschema.Schema, k string) (json.RawMessage, bool) {
	if kw := n.Get(k); kw != nil {
		return kw.Value, true
	}
	return nil, false
}

// elements returns the value of keyword k when it is an array.
func elements(n *jsonschema.Schema, k string) ([]json.RawMessage, bool) {
	if kw := n.Get(k); kw != nil {
		return kw.Elements()
	}
	return nil, false
}

func isFalseRaw(raw json.RawMessage) bool { return string(raw) == "false" }

// walker compares one side (input or output) of one tool.
type walker struct {
	d          *differ
	tool, side string
	old, new   *version
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
func (w *walker) compare(o, n *jsonschema.Schema, nullHandled bool) {
	if o.IsFalse() || n.IsFalse() {
		w.compareFalse(o, n)
		return
	}
	o, n = o.Object(), n.Object()
	if o.Invalid() || n.Invalid() {
		if canon(o.Raw()) != canon(n.Raw()) {
			w.add(KindSchemaChanged, n.Pointer(), o.Pointer(), n.Pointer(), "schema is not an object or a boolean; changed (conservatively breaking)")
		}
		return
	}
	o, n, done := w.compareRefs(o, n, nullHandled)
	if done {
		return
	}
	// A union on one side only: lift the other side into a union of one.
	switch ou, nu := o.UnionKeyword(), n.UnionKeyword(); {
	case ou == "" && (nu == "anyOf" || nu == "oneOf"):
		o = o.Lift(nu)
	case nu == "" && (ou == "anyOf" || ou == "oneOf"):
		n = n.Lift(ou)
	}
	skipNull := nullHandled || w.compareNull(o, n)
	w.compareKeywords(o, n, skipNull)
	w.compareUnions(o, n)
}

// compareRefs compares through "$ref". The same reference on both sides
// leaves the definition to be compared where it is defined: it returns
// the schemas without it, whose siblings remain to compare. A reference on
// one side, or a different one on each, compares what they resolve to, and
// then the schemas are done.
func (w *walker) compareRefs(o, n *jsonschema.Schema, nullHandled bool) (_, _ *jsonschema.Schema, done bool) {
	oref, nref := o.Ref(), n.Ref()
	if oref != "" && oref == nref {
		return o.Without("$ref"), n.Without("$ref"), false
	}
	if oref == "" && nref == "" {
		return o, n, false
	}
	od, nd := o.Resolved(), n.Resolved()
	if od == o && nd == n {
		return o, n, false
	}
	key := od.Via() + "|" + od.Pointer() + "\x00" + nd.Via() + "|" + nd.Pointer()
	if w.seen[key] {
		return o, n, true // a recursive definition, already being compared
	}
	w.seen[key] = true
	defer delete(w.seen, key)
	saved := w.via
	site := jsonpointer.Show(n.Pointer())
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
	return o, n, true
}

// compareNull compares whether null is a valid value, and reports whether
// that changed.
func (w *walker) compareNull(o, n *jsonschema.Schema) bool {
	on, nn := o.AcceptsNull(), n.AcceptsNull()
	if on == nn {
		return false
	}
	if nn {
		w.add(KindNullAdded, n.Pointer(), o.Pointer(), n.NullSite(), "now nullable: null is a valid value")
	} else {
		w.add(KindNullRemoved, n.Pointer(), o.NullSite(), n.Pointer(), "no longer nullable: null is not a valid value")
	}
	return true
}

// compareKeywords compares the schemas keyword by keyword, but for the
// union keywords (compareUnions). skipNull leaves null out of enums: its
// change is already reported.
func (w *walker) compareKeywords(o, n *jsonschema.Schema, skipNull bool) {
	done := map[string]bool{}
	for _, k := range keywordNames(o, n) {
		if done[k] {
			continue
		}
		done[k] = true
		or, _ := value(o, k)
		nr, _ := value(n, k)
		switch {
		case k == "type":
			w.compareType(o, n)
		case k == "enum":
			w.compareEnum(o, n, skipNull)
		case k == "const" || k == "format" || k == "pattern" || k == "default":
			w.compareValue(o, n, k)
		case jsonschema.Info(k).Bound != 0:
			w.compareBound(o, n, k)
		case k == "multipleOf":
			w.compareMultipleOf(o, n)
		case k == "uniqueItems":
			if ov, nv := string(or) == "true", string(nr) == "true"; ov != nv {
				op, np := o.KeywordPointer(k), n.KeywordPointer(k)
				if nv {
					w.add(KindConstraintNarrowed, np, op, np, "uniqueItems is now true")
				} else {
					w.add(KindConstraintWidened, op, op, np, "uniqueItems is no longer true")
				}
			}
		case k == "properties" || k == "required":
			done["properties"], done["required"] = true, true
			w.compareObject(o, n)
		case jsonschema.Info(k).AbsentIsTrue:
			w.compare(o.Applied(k), n.Applied(k), false)
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
}

// keywordNames lists the keywords of either schema, sorted.
func keywordNames(o, n *jsonschema.Schema) []string {
	m := map[string]bool{}
	for _, s := range []*jsonschema.Schema{o, n} {
		for _, k := range s.Keywords() {
			m[k.Name] = true
		}
	}
	return slices.Sorted(maps.Keys(m))
}

func (w *walker) compareFalse(o, n *jsonschema.Schema) {
	if o.IsFalse() && n.IsFalse() {
		return
	}
	np := n.Pointer()
	props := strings.HasSuffix(np, "/additionalProperties") || strings.HasSuffix(np, "/unevaluatedProperties")
	kw := jsonpointer.Last(np)
	switch {
	case n.IsFalse() && props:
		w.add(KindClosed, np, o.Pointer(), np, "%s is now false: unknown properties are rejected", kw)
	case n.IsFalse():
		w.add(KindSchemaNarrowed, np, o.Pointer(), np, "schema is now false: no value is valid")
	case props:
		w.add(KindOpened, np, o.Pointer(), np, "%s is no longer false: unknown properties are accepted", kw)
	default:
		w.add(KindSchemaWidened, np, o.Pointer(), np, "schema is no longer false")
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

func (w *walker) compareType(o, n *jsonschema.Schema) {
	os, oh := o.TypeSet()
	ns, nh := n.TypeSet()
	show := func(s []string) string { return strings.Join(s, "|") }
	switch {
	case !oh && !nh:
		ot, _ := value(o, "type")
		nt, _ := value(n, "type")
		if canon(ot) != canon(nt) {
			w.compareOther(o, n, "type")
		}
	case !nh:
		w.add(KindTypeWidened, o.KeywordPointer("type"), o.KeywordPointer("type"), n.KeywordPointer("type"), "type constraint removed (was %s)", show(os))
	case !oh:
		w.add(KindTypeNarrowed, n.KeywordPointer("type"), o.KeywordPointer("type"), n.KeywordPointer("type"), "type restricted to %s", show(ns))
	default:
		// Null is compared as nullability, once for the node.
		a, b := withoutNull(os), withoutNull(ns)
		switch fa, fb := covers(a, b), covers(b, a); {
		case fa && fb:
		case fa:
			w.add(KindTypeNarrowed, n.KeywordPointer("type"), o.KeywordPointer("type"), n.KeywordPointer("type"), "type narrowed from %s to %s", show(a), show(b))
		case fb:
			w.add(KindTypeWidened, n.KeywordPointer("type"), o.KeywordPointer("type"), n.KeywordPointer("type"), "type widened from %s to %s", show(a), show(b))
		default:
			w.add(KindTypeChanged, n.KeywordPointer("type"), o.KeywordPointer("type"), n.KeywordPointer("type"), "type changed from %s to %s", show(a), show(b))
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

func (w *walker) compareEnum(o, n *jsonschema.Schema, skipNull bool) {
	const k = "enum"
	ov, oh := elements(o, k)
	nv, nh := elements(n, k)
	switch {
	case !oh && !nh:
		w.compareOther(o, n, k)
		return
	case !oh:
		w.add(KindEnumAdded, n.KeywordPointer(k), o.KeywordPointer(k), n.KeywordPointer(k), "enum added: %s", showValues(nv))
		return
	case !nh:
		w.add(KindEnumRemoved, o.KeywordPointer(k), o.KeywordPointer(k), n.KeywordPointer(k), "enum removed (was %s)", showValues(ov))
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
			p := n.KeywordPointer(k) + "/" + strconv.Itoa(i)
			w.add(KindEnumValueAdded, p, o.KeywordPointer(k), p, "enum value %s added", shorten(c))
		}
	}
	for i, v := range ov {
		if c := canon(v); !ns[c] && !(skipNull && c == "null") {
			p := o.KeywordPointer(k) + "/" + strconv.Itoa(i)
			w.add(KindEnumValueRemoved, p, p, n.KeywordPointer(k), "enum value %s removed", shorten(c))
		}
	}
}

// compareValue compares a keyword whose value is compared whole: const,
// format, pattern, default.
func (w *walker) compareValue(o, n *jsonschema.Schema, k string) {
	or, oh := value(o, k)
	nr, nh := value(n, k)
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
	op, np := o.KeywordPointer(k), n.KeywordPointer(k)
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

// number returns keyword k of n as an exact number.
func number(n *jsonschema.Schema, k string) (*big.Rat, bool) {
	if kw := n.Get(k); kw != nil {
		return kw.Number()
	}
	return nil, false
}

func (w *walker) compareBound(o, n *jsonschema.Schema, k string) {
	or, oh := value(o, k)
	nr, nh := value(n, k)
	ov, ook := number(o, k)
	nv, nok := number(n, k)
	if (oh && !ook) || (nh && !nok) {
		w.compareOther(o, n, k)
		return
	}
	op, np := o.KeywordPointer(k), n.KeywordPointer(k)
	ol, nl := jsonschema.CanonicalNumber(string(or)), jsonschema.CanonicalNumber(string(nr))
	upper := jsonschema.Info(k).Bound > 0
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

func (w *walker) compareMultipleOf(o, n *jsonschema.Schema) {
	const k = "multipleOf"
	or, oh := value(o, k)
	nr, nh := value(n, k)
	ov, ook := number(o, k)
	nv, nok := number(n, k)
	if (oh && (!ook || ov.Sign() <= 0)) || (nh && (!nok || nv.Sign() <= 0)) {
		w.compareOther(o, n, k)
		return
	}
	op, np := o.KeywordPointer(k), n.KeywordPointer(k)
	ol, nl := jsonschema.CanonicalNumber(string(or)), jsonschema.CanonicalNumber(string(nr))
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

// requiredSet maps each required name to its index.
func requiredSet(n *jsonschema.Schema) map[string]int {
	m := map[string]int{}
	for i, s := range n.Required() {
		if _, dup := m[s]; !dup {
			m[s] = i
		}
	}
	return m
}

func closedObject(n *jsonschema.Schema) bool {
	a, _ := value(n, "additionalProperties")
	u, _ := value(n, "unevaluatedProperties")
	return isFalseRaw(a) || isFalseRaw(u)
}

// schemaMap returns the named subschemas of keyword k by name, and whether
// k is absent or an object.
func schemaMap(n *jsonschema.Schema, k string) (map[string]*jsonschema.Schema, bool) {
	kw := n.Get(k)
	if kw == nil {
		return nil, true
	}
	if !kw.IsObject() {
		return nil, false
	}
	m := map[string]*jsonschema.Schema{}
	for _, mb := range kw.Members() {
		m[mb.Name] = mb.Schema
	}
	return m, true
}

// constrainsUnknown reports an object that rejects unknown properties, or
// holds them to a schema (which may reject a value that was valid).
func constrainsUnknown(n *jsonschema.Schema) bool {
	for _, k := range []string{"additionalProperties", "unevaluatedProperties"} {
		if raw, ok := value(n, k); ok && canon(raw) != "true" && canon(raw) != "{}" {
			return true
		}
	}
	return false
}

// compareObject compares properties and required.
func (w *walker) compareObject(o, n *jsonschema.Schema) {
	op, okO := schemaMap(o, "properties")
	np, okN := schemaMap(n, "properties")
	if !okO || !okN {
		w.compareOther(o, n, "properties")
	}
	oreq, nreq := requiredSet(o), requiredSet(n)
	opp, npp := o.KeywordPointer("properties"), n.KeywordPointer("properties")
	for _, name := range slices.Sorted(maps.Keys(np)) {
		optr, nptr := jsonpointer.Append(opp, name), jsonpointer.Append(npp, name)
		if os, ok := op[name]; ok {
			w.compare(os, np[name], false)
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
		optr, nptr := jsonpointer.Append(opp, name), jsonpointer.Append(npp, name)
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
	orp, nrp := o.KeywordPointer("required"), n.KeywordPointer("required")
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
func (w *walker) compareMap(o, n *jsonschema.Schema, k string) {
	om, okO := schemaMap(o, k)
	nm, okN := schemaMap(n, k)
	if !okO || !okN {
		w.compareOther(o, n, k)
		return
	}
	op, np := o.KeywordPointer(k), n.KeywordPointer(k)
	defs := k != "patternProperties"
	for _, name := range slices.Sorted(maps.Keys(nm)) {
		optr, nptr := jsonpointer.Append(op, name), jsonpointer.Append(np, name)
		switch _, ok := om[name]; {
		case ok:
			w.compare(om[name], nm[name], false)
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
		optr, nptr := jsonpointer.Append(op, name), jsonpointer.Append(np, name)
		if defs {
			w.add(KindDefinitionRemoved, optr, optr, nptr, "definition %q removed", name)
		} else {
			w.add(KindSchemaChanged, optr, optr, nptr, "patternProperties entry %q removed (conservatively breaking)", name)
		}
	}
}

// compareList compares allOf and prefixItems entry by entry.
func (w *walker) compareList(o, n *jsonschema.Schema, k string) {
	_, oh := elements(o, k)
	_, nh := elements(n, k)
	if (o.Has(k) && !oh) || (n.Has(k) && !nh) {
		w.compareOther(o, n, k)
		return
	}
	oa, na := o.List(k), n.List(k)
	op, np := o.KeywordPointer(k), n.KeywordPointer(k)
	for i := 0; i < max(len(oa), len(na)); i++ {
		optr, nptr := op+"/"+strconv.Itoa(i), np+"/"+strconv.Itoa(i)
		switch {
		case i < len(oa) && i < len(na):
			w.compare(oa[i], na[i], false)
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
func (w *walker) compareOther(o, n *jsonschema.Schema, k string) {
	or, oh := value(o, k)
	nr, nh := value(n, k)
	if oh && nh && canon(or) == canon(nr) {
		return
	}
	kind, note := KindSchemaChanged, " (not compared: conservatively breaking)"
	what := "keyword"
	if isAnnotation(k) {
		kind, note, what = KindAnnotationChanged, "", "annotation"
	}
	op, np := o.KeywordPointer(k), n.KeywordPointer(k)
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
func (w *walker) compareUnions(o, n *jsonschema.Schema) {
	ou, nu := o.UnionKeyword(), n.UnionKeyword()
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
		w.add(KindSchemaChanged, n.KeywordPointer(nu), o.KeywordPointer(ou), n.KeywordPointer(nu), "%s replaced by %s (conservatively breaking)", ou, nu)
	}
	variants := func(x *jsonschema.Schema, kw string) []*jsonschema.Schema {
		var out []*jsonschema.Schema
		for _, b := range x.Variants(kw) {
			if !b.OnlyNull() {
				out = append(out, b)
			}
		}
		return out
	}
	ob, nb := variants(o, ou), variants(n, nu)
	type pair struct{ o, n *jsonschema.Schema }
	var pairs []pair
	match := func(key func(b *jsonschema.Schema) string, unique bool) {
		okeys, nkeys := map[string][]int{}, map[string][]int{}
		for i, b := range ob {
			if b != nil {
				if k := key(b); k != "" {
					okeys[k] = append(okeys[k], i)
				}
			}
		}
		for i, b := range nb {
			if b != nil {
				if k := key(b); k != "" {
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
	match(canonNode, false)
	exact := len(pairs)
	match(func(b *jsonschema.Schema) string { return discriminator(b.Resolved()) }, true)
	match(func(b *jsonschema.Schema) string {
		set, _ := b.Resolved().TypeSet()
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
		w.add(KindVariantRemoved, b.Pointer(), b.Pointer(), n.KeywordPointer(nu), "%s variant removed: %s", ou, describe(b))
	}
	for _, b := range nb {
		w.add(KindVariantAdded, b.Pointer(), o.KeywordPointer(ou), b.Pointer(), "%s variant added: %s", nu, describe(b))
	}
}

func isNil(n *jsonschema.Schema) bool { return n == nil }

// canonNode is the canonical JSON of a variant's keywords.
func canonNode(n *jsonschema.Schema) string {
	if !n.IsObject() {
		return canon(n.Raw())
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range n.Keywords() {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(k.Name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(k.Value)
	}
	b.WriteByte('}')
	return canon(b.Bytes())
}

// describe names a variant for a message: by its discriminator, else by
// its JSON.
func describe(b *jsonschema.Schema) string {
	if k := discriminator(b.Resolved()); k != "" {
		return k
	}
	return shorten(canonNode(b))
}

// discriminator names a variant by its const properties: kind="cat".
func discriminator(n *jsonschema.Schema) string {
	var parts []string
	props, _ := schemaMap(n, "properties")
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p := props[name]
		if c, ok := value(p, "const"); ok {
			parts = append(parts, name+"="+canon(c))
		} else if vals, ok := elements(p, "enum"); ok && len(vals) == 1 {
			parts = append(parts, name+"="+canon(vals[0]))
		}
	}
	return strings.Join(parts, ",")
}
