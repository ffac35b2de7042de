package gen

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/prickle-dev/prickle/internal/jsonschema"
)

// The model decides, once every type is made and before anything is
// rendered, each answer to "does this type get X?": how a field holds its
// type (decideShapes), which structs write empty arrays and maps in a
// MarshalJSON of their own (decideMarshal), which have a wire form and how
// each field converts into it (decideWire), and what each field's comment
// and reference row say (describeField). The renderers print these answers
// and read no schema.

// decide makes every decision of the package's types. outputs are the
// tools' output roots, taken the package's unexported names.
func decide(types, outputs []*gtype, taken map[string]bool) {
	decideShapes(types)
	decideMarshal(types)
	decideWire(types, outputs, taken)
}

// decideShapes decides how each struct field holds its type and its JSON
// tag, as the package documentation's Fields table says.
func decideShapes(types []*gtype) {
	for _, owner := range types {
		for _, f := range owner.fields {
			f.shape, f.tag = shapeOf(owner, f)
		}
	}
}
func shapeOf(owner *gtype, f *field) (fieldShape, string) {
	t := f.t
	switch {
	case t.kind == kRaw:
		if f.required {
			return shapeValue, f.json
		}
		return shapeValue, f.json + ",omitempty"
	case t.kind == kSlice || t.kind == kMap:
		switch {
		case f.required:
			return shapeValue, f.json
		case !f.nullable:
			return shapeValue, f.json + ",omitzero"
		}
		return shapeNullable, f.json + ",omitzero"
	case f.required && !f.nullable:
		if t.kind == kStruct && valueCycle(owner, t, map[*gtype]bool{}) {
			return shapePointer, f.json
		}
		return shapeValue, f.json
	case f.required:
		return shapePointer, f.json
	case !f.nullable:
		return shapePointer, f.json + ",omitempty"
	}
	return shapeNullable, f.json + ",omitzero"
}

// valueCycle reports whether the struct t, held by value, contains owner
// by value: Go cannot lay that out, so such a field is a pointer.
func valueCycle(owner, t *gtype, seen map[*gtype]bool) bool {
	if t == owner {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	for _, f := range t.fields {
		if f.required && !f.nullable && f.t.kind == kStruct && valueCycle(owner, f.t, seen) {
			return true
		}
	}
	return false
}

// decideMarshal decides which structs have a MarshalJSON of their own:
// those with a slice or map, at the top of a field or nested in one, that
// the schema does not let be null.
func decideMarshal(types []*gtype) {
	for _, t := range types {
		for _, f := range t.fields {
			if f.required && !f.nullable && (f.t.kind == kSlice || f.t.kind == kMap) {
				t.empty = append(t.empty, f)
			}
			if f.fillLevels = nestedNullable(f); f.fillLevels != nil {
				t.fill = append(t.fill, f)
			}
		}
		t.marshal = len(t.empty) > 0 || len(t.fill) > 0
	}
}

// nestedNullable returns, for a field whose type nests slices or maps in
// slices or maps (map[string][]T, [][]T, ...), whether each nested level
// may be null (see rt.FillEmpty), or nil when no nested level must be
// kept from null. Optional nullable fields (rt.Nullable) are left out.
func nestedNullable(f *field) []bool {
	if !f.required && f.nullable {
		return nil
	}
	var levels []bool
	must := false
	for t := f.t; (t.kind == kSlice || t.kind == kMap) && (t.elem.kind == kSlice || t.elem.kind == kMap); t = t.elem {
		levels = append(levels, t.elemNullable)
		must = must || !t.elemNullable
	}
	if !must {
		return nil
	}
	return levels
}

// wireShape is how a field's type changes in the wire form (see wire.go).
type wireShape int

const (
	wireSame  wireShape = iota // the field's own type
	wireValue                  // T → wireT
	wirePtr                    // *T → *wireT
	wireSlice                  // []T, []*T → []wireT, []*wireT
	wireMap                    // map[string]T, map[string]*T → map[string]wireT, ...
)

// fieldWire is how a field converts into its struct's wire form: its
// shape there, and the struct it converts (elemPtr: items or values are
// pointers).
type fieldWire struct {
	shape   wireShape
	elem    *gtype
	elemPtr bool
}

// wireOf is how f changes in the wire form, given which structs are
// wired. It reads the field's shape.
func wireOf(f *field, wired map[*gtype]bool) fieldWire {
	t := f.t
	if f.shape == shapeNullable {
		return fieldWire{} // rt.Nullable keeps its own MarshalJSON
	}
	switch t.kind {
	case kSlice, kMap:
		if t.elem.kind != kStruct || !wired[t.elem] {
			return fieldWire{}
		}
		if t.kind == kSlice {
			return fieldWire{wireSlice, t.elem, t.elemNullable}
		}
		return fieldWire{wireMap, t.elem, t.elemNullable}
	case kStruct:
		if !wired[t] {
			return fieldWire{}
		}
		if f.shape == shapePointer {
			return fieldWire{shape: wirePtr, elem: t}
		}
		return fieldWire{shape: wireValue, elem: t}
	}
	return fieldWire{} // what has no MarshalJSON inside
}

// decideWire finds the structs whose JSON goes through a MarshalJSON of
// theirs or of a struct they hold (a fixpoint), decides how each of their
// fields converts, and names the wire forms that are used: those of
// structs with a MarshalJSON, of the output roots among the wired structs,
// and of what their wire forms hold. taken lists the package's unexported
// names.
func decideWire(types []*gtype, outputs []*gtype, taken map[string]bool) {
	wired := map[*gtype]bool{}
	for _, t := range types {
		if t.kind == kStruct && t.marshal {
			wired[t] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for _, t := range types {
			if t.kind != kStruct || wired[t] {
				continue
			}
			for _, f := range t.fields {
				if wireOf(f, wired).shape != wireSame {
					wired[t], changed = true, true
					break
				}
			}
		}
	}
	for _, t := range types {
		t.wired = wired[t]
		for _, f := range t.fields {
			f.wire = wireOf(f, wired)
		}
	}
	used := map[*gtype]bool{}
	var use func(t *gtype)
	use = func(t *gtype) {
		if used[t] {
			return
		}
		used[t] = true
		for _, f := range t.fields {
			if f.wire.shape != wireSame {
				use(f.wire.elem)
			}
		}
	}
	for _, t := range types {
		if t.kind == kStruct && t.marshal {
			use(t)
		}
	}
	for _, t := range outputs {
		if t.kind == kStruct && t.wired {
			use(t)
		}
	}
	for _, t := range types { // in order, so that names do not depend on map order
		if !used[t] {
			continue
		}
		name := "wire" + t.name
		for taken[name] {
			name += "Wire"
		}
		taken[name] = true
		t.wireName = name
	}
}

// describeField decides what f's comment and reference row say, and its
// documented default, from its schema.
func describeField(f *field) {
	f.doc = fieldDoc(f)
	f.constraints = constraints(f.node, nil)
	f.enum = enumValues(f.t, f.node)
	f.deflt = fieldDefaultOf(f)
}

// fieldDoc is a field's comment: its description, then the constraints its
// Go type does not express.
func fieldDoc(f *field) string {
	var parts []string
	if d, ok := f.node.String("description"); ok {
		parts = append(parts, strings.TrimSpace(d))
	} else if d, ok := f.node.String("title"); ok {
		parts = append(parts, strings.TrimSpace(d))
	}
	if cs := constraints(f.node, expressedBy(f.t)); len(cs) > 0 {
		parts = append(parts, "Schema: "+strings.Join(cs, "; ")+".")
	}
	if annotated(f.node, "readOnly") {
		parts = append(parts, "Read-only: set by the server.")
	}
	var doc string
	switch {
	case len(parts) == 1 && strings.HasPrefix(parts[0], "Schema: "):
		doc = f.goName + ": " + strings.TrimPrefix(parts[0], "Schema: ")
	case len(parts) > 0:
		doc = f.goName + ": " + strings.Join(parts, " ")
	}
	if annotated(f.node, "deprecated") {
		// The paragraph Go's tools (gopls, staticcheck) flag uses of.
		doc += "\n\nDeprecated: the page marks " + f.json + " deprecated."
	}
	return doc
}

// annotated reports whether the boolean annotation kw is true on n.
func annotated(n *jsonschema.Schema, kw string) bool {
	k := n.Get(kw)
	return k != nil && string(k.Value) == "true"
}

// constraintKeys are shown in comments and the reference, in this order.
var constraintKeys = []string{"format", "pattern", "minLength", "maxLength", "minimum", "exclusiveMinimum",
	"maximum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems", "minProperties",
	"maxProperties", "const", "default"}

// expressedBy returns the constraint keywords that a field of type t
// expresses by its Go type, so that its comment need not repeat them: a
// time.Time is an RFC 3339 date-time (format, and the pattern that spells
// date-time out), a const type is its constant.
func expressedBy(t *gtype) map[string]bool {
	switch t.kind {
	case kTime:
		return map[string]bool{"format": true, "pattern": true}
	case kConst:
		return map[string]bool{"const": true}
	}
	return nil
}

// constraints lists a schema's narrowing keywords as "keyword value",
// with those of the one non-null alternative of an anyOf / oneOf (a
// nullable value) after the node's own, leaving out the keywords in skip.
func constraints(n *jsonschema.Schema, skip map[string]bool) []string {
	if n == nil {
		return nil
	}
	out := ownConstraints(n, skip)
	for _, k := range []string{"anyOf", "oneOf"} {
		var shaped []*jsonschema.Schema
		for _, a := range n.List(k) {
			if !a.OnlyNull() {
				shaped = append(shaped, a)
			}
		}
		if len(shaped) == 1 {
			out = append(out, constraints(shaped[0], skip)...)
		}
	}
	return out
}

func ownConstraints(n *jsonschema.Schema, skip map[string]bool) []string {
	var out []string
	for _, k := range constraintKeys {
		kw := n.Get(k)
		if kw == nil || skip[k] {
			continue
		}
		raw := kw.Value
		var b bytes.Buffer
		if json.Compact(&b, raw) != nil {
			continue
		}
		v := b.String()
		if k == "pattern" || k == "format" {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				v = s
			}
		}
		out = append(out, k+" "+v)
	}
	return out
}

// enumValues lists an enum's values in the order the schema n writes them
// (the shared ToolName type is sorted), else in the type's order; nil
// when t is no enum.
func enumValues(t *gtype, n *jsonschema.Schema) []string {
	if t.kind != kEnum {
		return nil
	}
	var vs []string
	for n != nil && !n.Has("enum") {
		var next *jsonschema.Schema
		for _, k := range []string{"anyOf", "oneOf"} {
			for _, a := range n.List(k) {
				if !a.OnlyNull() && a.Has("enum") {
					next = a
				}
			}
		}
		n = next
	}
	if n != nil {
		if raw, ok := n.Get("enum").Elements(); ok {
			for _, r := range raw {
				if string(r) != "null" {
					vs = append(vs, strings.Trim(compactJSON(r), `"`))
				}
			}
			return vs
		}
	}
	for _, ev := range t.enum {
		if t.prim == "string" {
			vs = append(vs, ev.str)
		} else {
			vs = append(vs, strconv.FormatInt(ev.num, 10))
		}
	}
	return vs
}

// fieldDefaultOf is the documented default of an optional scalar field
// that its Go type can hold, or nil.
func fieldDefaultOf(fl *field) *fieldDefault {
	k := fl.node.Get("default")
	if k == nil || fl.required || fl.nullable {
		return nil
	}
	raw := k.Value
	d := &fieldDefault{json: compactJSON(raw)}
	switch fl.t.kind {
	case kPrim:
		switch fl.t.prim {
		case "string":
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return nil
			}
			d.value = s
		case "int64":
			i, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
			if err != nil {
				return nil
			}
			d.value = int(i)
		case "float64":
			var x float64
			if json.Unmarshal(raw, &x) != nil {
				return nil
			}
			d.value = x
		case "bool":
			var x bool
			if json.Unmarshal(raw, &x) != nil {
				return nil
			}
			d.value = x
		}
	case kEnum:
		for _, ev := range fl.t.enum {
			if fl.t.prim == "string" {
				var s string
				if json.Unmarshal(raw, &s) == nil && s == ev.str {
					d.enum = ev.goName
				}
			} else if string(bytes.TrimSpace(raw)) == strconv.FormatInt(ev.num, 10) {
				d.enum = ev.goName
			}
		}
	}
	if d.value == nil && d.enum == "" {
		return nil
	}
	return d
}

func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
