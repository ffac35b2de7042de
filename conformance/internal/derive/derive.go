// Package derive turns the canonical spec into scripts when the suite
// runs, so a new page is covered without anyone writing a script:
//
//   - spec.tools: tools/list serves every documented tool with its
//     documented schemas (semantically equal).
//   - spec.TOOL.example: the documented example input is accepted as to
//     shape. The call may be refused for a business reason (the
//     claim_discussion example has no harness, which the page says is
//     refused), but not as invalid arguments: in the reference profile
//     its code is not invalid_arguments; in both profiles the answer does
//     not name the JSON pointer of any field of the example.
//   - spec.TOOL.FIELD.KEYWORD: for every constraint of the input schema
//     (required, type, minLength, maxLength, pattern, enum, const, format,
//     minimum, maximum, exclusiveMinimum, exclusiveMaximum,
//     additionalProperties: false), the example with one field changed so
//     that it breaks only that constraint; the call must be refused as a
//     tool error (reference: invalid_arguments) whose text names the field
//     by its JSON pointer (for a missing required field: by its name, and
//     by its parent's pointer when nested; for an unexpected property: by
//     its name). Optional fields the example lacks get a valid value first.
//     A pattern also gets a case for each way common regex engines read
//     it unlike ECMA-262 that changes the verdict on a value near the
//     valid one (pattern-newline-end: "t1\n" where $ ends the pattern;
//     engines.go lists them).
//     Where no value can break a constraint alone (an empty string breaks
//     minLength 1 and a "+" pattern together), every other violation is at
//     the same pointer. Each case is checked with the documented schema
//     when it is generated: the base is valid, the mutation is not, only
//     at the field.
//
// Who calls: the seeded runner (runner:maya/builder) for a tool whose page
// says it is for runner devices ("Runner devices ..." or "Only a paired
// runner ..."), the seeded agent (agent:maya/builder) for every other tool.
// Both exist in the standard seed world, which these scripts run against.
package derive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/internal/regexlang"
	schemalib "github.com/prickle-dev/prickle/internal/schemacompile"
	schemax "github.com/prickle-dev/prickle/internal/validation"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/seed"
)

// SeedRunner and SeedAgent are the principals of the standard seed world
// the derived cases call as.
const (
	SeedRunner = "runner:" + seed.BuilderAgent
	SeedAgent  = "agent:" + seed.BuilderAgent
)

var runnerOnlyRe = regexp.MustCompile(`(?i)\brunner devices\b|\bonly a paired runner\b`)

// PrincipalFor returns who the derived cases call tool t as.
func PrincipalFor(t *spec.Tool) string {
	for _, s := range t.Sentences {
		if runnerOnlyRe.MatchString(s.Text) {
			return SeedRunner
		}
	}
	return SeedAgent
}

// derivedKeywords are the assertions and applicators the derivation breaks
// or walks into; meta keywords and annotations judge no value and need no
// case. Any other keyword of an input schema is reported as not covered.
var derivedKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"minLength": true, "maxLength": true, "pattern": true, "enum": true, "const": true,
	"format": true, "minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minProperties": true, "maxProperties": true, "minItems": true, "maxItems": true, "uniqueItems": true, "items": true,
	"patternProperties": true, "multipleOf": true,
}

// covered reports whether the derivation covers keyword k.
func covered(k string) bool {
	switch jsonschema.Info(k).Class {
	case jsonschema.Meta, jsonschema.Annotation:
		return true // definitions matter where a $ref uses them, and $ref is reported there
	}
	return derivedKeywords[k]
}

// Scripts returns the spec-derived scripts and warnings for constraints it
// could not turn into a case.
func Scripts(sp *spec.Spec) ([]*suite.Script, []string) {
	var out []*suite.Script
	var warns []string
	var tb strings.Builder
	tb.WriteString("# tools/list serves every documented tool with its documented schemas (derived from the spec).\n")
	tb.WriteString("tools -as " + SeedAgent + "\n")
	for _, t := range sp.Tools {
		fmt.Fprintf(&tb, "stdout '^%s$'\n", regexp.QuoteMeta(t.Name))
	}
	out = append(out, mustScript("spec.tools", tb.String()))
	for _, t := range sp.Tools {
		s, w := deriveTool(t)
		out = append(out, s...)
		warns = append(warns, w...)
	}
	return out, warns
}

func mustScript(name, src string) *suite.Script {
	s, err := suite.ParseScript(name, []byte(src), true)
	if err != nil {
		panic(err)
	}
	return s
}

func decodeNum(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

type deriver struct {
	tool    *spec.Tool
	who     string
	example map[string]any
	schema  *jsonschema.Schema
	warns   []string
	scripts []*suite.Script
}

// numberOf returns keyword k of n as a number.
func numberOf(n *jsonschema.Schema, k string) (float64, bool) {
	kw := n.Get(k)
	if kw == nil {
		return 0, false
	}
	r, ok := kw.Number()
	if !ok {
		return 0, false
	}
	f, _ := r.Float64()
	return f, true
}

// props returns n's properties by name, and their names sorted.
func props(n *jsonschema.Schema) (map[string]*jsonschema.Schema, []string) {
	out := map[string]*jsonschema.Schema{}
	var names []string
	for _, m := range n.Properties() {
		if m.Schema.IsObject() {
			out[m.Name] = m.Schema
			names = append(names, m.Name)
		}
	}
	sort.Strings(names)
	return out, names
}

// required returns n's required names, sorted.
func required(n *jsonschema.Schema) []string {
	out := slices.Clone(n.Required())
	sort.Strings(out)
	return out
}

// decoded returns keyword k of n decoded (numbers as json.Number).
func decoded(n *jsonschema.Schema, k string) (any, bool) {
	kw := n.Get(k)
	if kw == nil {
		return nil, false
	}
	return kw.Decode(), true
}

func deriveTool(t *spec.Tool) ([]*suite.Script, []string) {
	d := &deriver{tool: t, who: PrincipalFor(t)}
	if t.InputSchema == nil || t.ExampleInput == nil {
		return nil, []string{fmt.Sprintf("%s: no input schema or example input; no derived cases", t.Name)}
	}
	ex, err := decodeNum(t.ExampleInput.JSON)
	exObj, ok := ex.(map[string]any)
	if err != nil || !ok {
		return nil, []string{fmt.Sprintf("%s: the example input is not a JSON object; no derived cases", t.Name)}
	}
	sch := t.InputSchema.Schema()
	if sch == nil || !sch.Root().IsObject() {
		return nil, []string{fmt.Sprintf("%s: the input schema is not a JSON object; no derived cases", t.Name)}
	}
	d.example, d.schema = exObj, sch.Root()
	compiled, err := schemalib.Compile("prickle:"+t.Name+"/input.json", t.InputSchema.JSON)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: the input schema does not compile: %v", t.Name, err)}
	}
	d.exampleScript()
	_ = compiled
	d.object(d.schema, nil)
	return d.scripts, d.warns
}

func (d *deriver) exampleScript() {
	t := d.tool
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: the documented example input is accepted as to shape (derived from the spec).\n", t.Name)
	fmt.Fprintf(&b, "# It may be refused for a business reason, never as invalid arguments.\n")
	fmt.Fprintf(&b, "# decisions: %s\n", suite.RefusalsDecision)
	fmt.Fprintf(&b, "call -as %s %s %s\n", d.who, t.Name, script.Quote(script.JSON(d.example)))
	b.WriteString("accepted")
	for _, k := range slices.Sorted(maps.Keys(d.example)) {
		b.WriteString(" " + script.Quote(jsonpointer.Append("", k)))
	}
	b.WriteString("\n")
	d.scripts = append(d.scripts, mustScript("spec."+t.Name+".example", b.String()))
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

func pointerOf(path []string) string { return jsonpointer.Join(path) }

// base returns a copy of the example in which every object on path exists
// (valid values from the schema where the example lacks them).
func (d *deriver) base(path []string) (map[string]any, map[string]any, bool) {
	root := deepCopy(d.example).(map[string]any)
	cur, node := root, d.schema
	for _, p := range path {
		props, _ := props(node)
		ps := props[p]
		if ps == nil {
			return nil, nil, false
		}
		next, ok := cur[p].(map[string]any)
		if !ok {
			v, ok := minimal(ps)
			if !ok {
				return nil, nil, false
			}
			next, ok = v.(map[string]any)
			if !ok {
				return nil, nil, false
			}
			cur[p] = next
		}
		cur, node = next, ps
	}
	return root, cur, true
}

// object derives the cases of an object schema at path.
func (d *deriver) object(n *jsonschema.Schema, path []string) {
	for _, k := range n.Keywords() {
		if !covered(k.Name) {
			d.warns = append(d.warns, fmt.Sprintf("%s: input schema at %s: keyword %q is not covered by derived cases", d.tool.Name, schemaPtr(path), k.Name))
		}
	}
	ptr := pointerOf(path)
	props, names := props(n)
	for _, name := range required(n) {
		root, obj, ok := d.base(path)
		if !ok {
			d.warn(path, name, "required", "no valid base value")
			continue
		}
		baseArgs := script.JSON(root)
		delete(obj, name)
		expect := []string{regexp.QuoteMeta(name)}
		if ptr != "" {
			expect = append(expect, regexp.QuoteMeta(ptr))
		}
		d.emit(append(append([]string{}, path...), name), "required", fmt.Sprintf("%s is missing", pointerOf(append(path, name))), baseArgs, root, ptr, expect)
	}
	if ap := n.Sub("additionalProperties"); ap != nil && ap.IsFalse() {
		root, obj, ok := d.base(path)
		extra, free := unexpectedName(n)
		if !free {
			d.warns = append(d.warns, fmt.Sprintf("%s: %s additionalProperties: patternProperties allow every name tried; no derived case", d.tool.Name, schemaPtr(path)))
		}
		if ok && free {
			baseArgs := script.JSON(root)
			obj[extra] = true
			d.emit(path, "additionalProperties", fmt.Sprintf("%s has an unexpected property %s", schemaPtrOrRoot(ptr), extra), baseArgs, root, ptr, []string{extra})
		}
	}
	d.propertyCounts(n, path)
	// The values of properties the schema does not name: one name under
	// each patternProperties pattern, one under additionalProperties, each
	// value broken keyword by keyword as a named property's is.
	for _, pp := range n.Members("patternProperties") {
		name, err := regexlang.Sample(pp.Name, 1, -1)
		if err != nil || props[name] != nil {
			d.warns = append(d.warns, fmt.Sprintf("%s: %s patternProperties %q: no name to try; no derived case", d.tool.Name, schemaPtr(path), pp.Name))
			continue
		}
		d.unnamed(pp.Schema, path, name)
	}
	if ap := n.Sub("additionalProperties"); ap != nil && !ap.IsFalse() && len(ap.Keywords()) > 0 {
		if name, ok := unexpectedName(n); ok {
			d.unnamed(ap, path, name)
		}
	}
	for _, name := range names {
		ps := props[name]
		fpath := append(append([]string{}, path...), name)
		d.field(ps, fpath)
		if slicesContains(ps.Types(), "object") {
			d.object(ps, fpath)
		}
	}
}

// unnamed derives the cases of the value of property name, which the
// object at path allows through schema n without naming it.
func (d *deriver) unnamed(n *jsonschema.Schema, path []string, name string) {
	fpath := append(append([]string{}, path...), name)
	d.field(n, fpath)
}

// unexpectedName returns a property name that object schema n neither
// names nor allows through a patternProperties pattern, and whether it
// found one.
func unexpectedName(n *jsonschema.Schema) (string, bool) {
	for _, name := range []string{"unexpected_property", "Unexpected-Property", "0", "~", " "} {
		if _, via := n.ValueSchema(name); via == "additionalProperties" {
			return name, true
		}
	}
	return "", false
}

func slicesContains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func schemaPtr(path []string) string {
	if len(path) == 0 {
		return "the root"
	}
	return pointerOf(path)
}

func schemaPtrOrRoot(p string) string {
	if p == "" {
		return "the arguments object"
	}
	return p
}

func (d *deriver) warn(path []string, field, kw, why string) {
	d.warns = append(d.warns, fmt.Sprintf("%s: %s %s: %s; no derived case", d.tool.Name, pointerOf(append(append([]string{}, path...), field)), kw, why))
}

// field derives the cases of one property's own constraints.
func (d *deriver) field(n *jsonschema.Schema, path []string) {
	parent, name := path[:len(path)-1], path[len(path)-1]
	// Start from the example's own value where it has one.
	valid, ok := minimal(n)
	if _, obj, found := d.base(parent); found {
		if v, has := obj[name]; has {
			valid, ok = v, true
		}
	}
	ptr := pointerOf(path)
	for _, b := range d.breakers(n, path, valid, ok) {
		root, obj, ok := d.base(parent)
		if !ok {
			d.warnAt(path, b.kw, "no valid base value")
			continue
		}
		baseArgs := script.JSON(root)
		obj[name] = b.bad
		shown := script.JSON(b.bad)
		if len(shown) > 40 {
			shown = shown[:37] + "..."
		}
		d.emit(path, b.label(), fmt.Sprintf("%s %s (%s)", ptr, b.why, shown), baseArgs, root, ptr, []string{regexp.QuoteMeta(ptr)})
	}
}

// A breaker is a value that breaks one keyword of a schema, and only it.
type breaker struct {
	kw, variant, why string
	bad              any
}

func (b breaker) label() string {
	if b.variant != "" {
		return b.kw + "-" + b.variant
	}
	return b.kw
}

// warnAt records that keyword kw of the schema at path has no case.
func (d *deriver) warnAt(path []string, kw, why string) {
	d.warns = append(d.warns, fmt.Sprintf("%s: %s %s: %s; no derived case", d.tool.Name, pointerOf(path), kw, why))
}

// breakers returns the values that each break one keyword of n, the schema
// of a value at path; valid is a valid value when ok. An array's items are
// broken one at a time, as its first item.
func (d *deriver) breakers(n *jsonschema.Schema, path []string, valid any, ok bool) []breaker {
	for _, k := range n.Keywords() {
		// An object's keywords are object's to report, once.
		if !covered(k.Name) && !slicesContains(n.Types(), "object") {
			d.warns = append(d.warns, fmt.Sprintf("%s: input schema at %s: keyword %q is not covered by derived cases", d.tool.Name, pointerOf(path), k.Name))
		}
	}
	if !ok {
		d.warnAt(path, "(any)", "could not make a valid value")
		return nil
	}
	var out []breaker
	set := func(kw, variant, why string, bad any) {
		out = append(out, breaker{kw: kw, variant: variant, why: why, bad: bad})
	}
	types := n.Types()
	if len(types) > 0 {
		if bad, ok := wrongType(types); ok {
			set("type", "", "has the wrong type, not "+strings.Join(types, " or "), bad)
		}
		if slicesContains(types, "integer") && !slicesContains(types, "number") {
			lo, hasLo := numberOf(n, "minimum")
			v := 1.5
			if hasLo {
				v = lo + 0.5
			}
			if hi, ok := numberOf(n, "maximum"); !ok || v <= hi {
				set("type", "fraction", "is a number that is not an integer", json.Number(fmt.Sprint(v)))
			}
		}
	}
	str, isStr := valid.(string)
	if isStr {
		if lo, ok := numberOf(n, "minLength"); ok && lo >= 1 {
			if bad, ok := shortString(n, str, int(lo)-1); ok {
				set("minLength", "", fmt.Sprintf("is shorter than %d", int(lo)), bad)
			}
		}
		if hi, ok := numberOf(n, "maxLength"); ok {
			set("maxLength", "", fmt.Sprintf("is longer than %d", int(hi)), longString(n, str, int(hi)+1))
		}
		if pat, ok := n.String("pattern"); ok {
			if bad, ok := patternBreaker(n, str); ok {
				set("pattern", "", "does not match the pattern", bad)
			} else {
				d.warnAt(path, "pattern", "no value within the length bounds breaks it")
			}
			out = append(out, engineBreakers(n, pat, str)...)
		}
		if f, ok := n.String("format"); ok {
			if bad, ok := formatBreaker(f); ok {
				set("format", "", "is not a valid "+f, bad)
			}
		}
	}
	if arr, isArr := valid.([]any); isArr {
		out = append(out, d.arrayBreakers(n, path, arr)...)
	}
	if v, _ := decoded(n, "enum"); v != nil {
		if enum, ok := v.([]any); ok {
			if bad, ok := outsideEnum(enum, valid); ok {
				set("enum", "", "is not one of the allowed values", bad)
			}
		}
	}
	if c, ok := decoded(n, "const"); ok {
		if bad, ok := outsideEnum([]any{c}, valid); ok {
			set("const", "", "is not the constant value", bad)
		}
	}
	isInt := slicesContains(types, "integer")
	if lo, ok := numberOf(n, "minimum"); ok {
		set("minimum", "", fmt.Sprintf("is below the minimum %s", num(lo)), number(lo-1, isInt))
	}
	if hi, ok := numberOf(n, "maximum"); ok {
		set("maximum", "", fmt.Sprintf("is above the maximum %s", num(hi)), number(hi+1, isInt))
	}
	if lo, ok := numberOf(n, "exclusiveMinimum"); ok {
		set("exclusiveMinimum", "", fmt.Sprintf("is not above %s", num(lo)), number(lo, isInt))
	}
	if hi, ok := numberOf(n, "exclusiveMaximum"); ok {
		set("exclusiveMaximum", "", fmt.Sprintf("is not below %s", num(hi)), number(hi, isInt))
	}
	if m, ok := numberOf(n, "multipleOf"); ok {
		if bad, ok := notMultiple(n, valid, m, isInt); ok {
			set("multipleOf", "", fmt.Sprintf("is not a multiple of %s", num(m)), bad)
		} else {
			d.warnAt(path, "multipleOf", "no value within the bounds breaks it alone")
		}
	}
	return out
}

// notMultiple returns a number next to valid (a multiple of m) that is not
// a multiple of m and keeps the schema's bounds: valid ± m/2, or ± 1 for
// an integer (m an integer above 1).
func notMultiple(n *jsonschema.Schema, valid any, m float64, integer bool) (json.Number, bool) {
	var v float64
	switch x := valid.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return "", false
		}
		v = f
	case float64:
		v = x
	case int64:
		v = float64(x)
	default:
		return "", false
	}
	step := m / 2
	if integer {
		if m != math.Trunc(m) || m < 2 {
			return "", false
		}
		step = 1
	}
	within := func(f float64) bool {
		if lo, ok := numberOf(n, "minimum"); ok && f < lo {
			return false
		}
		if hi, ok := numberOf(n, "maximum"); ok && f > hi {
			return false
		}
		if lo, ok := numberOf(n, "exclusiveMinimum"); ok && f <= lo {
			return false
		}
		if hi, ok := numberOf(n, "exclusiveMaximum"); ok && f >= hi {
			return false
		}
		return true
	}
	for _, f := range []float64{v + step, v - step} {
		if within(f) {
			return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
		}
	}
	return "", false
}

// propertyCounts derives the cases of an object's minProperties and
// maxProperties: one property too few, one too many.
func (d *deriver) propertyCounts(n *jsonschema.Schema, path []string) {
	ptr := pointerOf(path)
	case_ := func(kw, why string, change func(obj map[string]any) bool) {
		root, obj, ok := d.base(path)
		if !ok {
			d.warns = append(d.warns, fmt.Sprintf("%s: %s %s: no valid base value; no derived case", d.tool.Name, schemaPtr(path), kw))
			return
		}
		baseArgs := script.JSON(root)
		if !change(obj) {
			d.warns = append(d.warns, fmt.Sprintf("%s: %s %s: no value breaks it; no derived case", d.tool.Name, schemaPtr(path), kw))
			return
		}
		var expect []string
		if ptr != "" {
			expect = []string{regexp.QuoteMeta(ptr)}
		}
		d.emit(path, kw, fmt.Sprintf("%s %s", schemaPtrOrRoot(ptr), why), baseArgs, root, ptr, expect)
	}
	if hi, ok := numberOf(n, "maxProperties"); ok {
		case_("maxProperties", fmt.Sprintf("has more than %d properties", int(hi)), func(obj map[string]any) bool {
			return n.AddProperties(obj, int(hi)+1) == nil
		})
	}
	if lo, ok := numberOf(n, "minProperties"); ok && lo >= 1 {
		case_("minProperties", fmt.Sprintf("has fewer than %d properties", int(lo)), func(obj map[string]any) bool {
			names := make([]string, 0, len(obj))
			for k := range obj {
				names = append(names, k)
			}
			sort.Strings(names)
			for len(obj) > int(lo)-1 {
				delete(obj, names[len(obj)-1])
			}
			return true
		})
	}
}

// arrayBreakers returns the breakers of an array's own keywords (minItems,
// maxItems, uniqueItems) and of its items, given its valid value arr.
func (d *deriver) arrayBreakers(n *jsonschema.Schema, path []string, arr []any) []breaker {
	var out []breaker
	set := func(kw, why string, bad []any) {
		out = append(out, breaker{kw: kw, why: why, bad: bad})
	}
	is := n.Sub("items")
	item, itemOK := any(nil), len(arr) > 0
	if itemOK {
		item = arr[0]
	} else if is != nil {
		if v, ok := minimal(is); ok {
			item, itemOK = v, true
		} else if v, err := is.Instance(); err == nil {
			item, itemOK = v, true
		}
	}
	if hi, ok := numberOf(n, "maxItems"); ok {
		switch {
		case !itemOK:
			d.warnAt(path, "maxItems", "could not make a valid item")
		default:
			bad := slices.Clone(arr)
			unique, _ := decoded(n, "uniqueItems")
			if unique == true {
				more, ok := is.DistinctItems(bad, int(hi)+1)
				if !ok {
					d.warnAt(path, "maxItems", "could not make that many distinct items")
					break
				}
				bad = more
			}
			for len(bad) <= int(hi) {
				bad = append(bad, item)
			}
			set("maxItems", fmt.Sprintf("has more than %d items", int(hi)), bad)
		}
	}
	if lo, ok := numberOf(n, "minItems"); ok && lo >= 1 {
		set("minItems", fmt.Sprintf("has fewer than %d items", int(lo)), slices.Clone(arr[:min(len(arr), int(lo)-1)]))
	}
	if u, ok := decoded(n, "uniqueItems"); ok && u == true {
		if !itemOK {
			d.warnAt(path, "uniqueItems", "could not make a valid item")
		} else {
			bad := append(slices.Clone(arr), item)
			if len(bad) < 2 {
				bad = append(bad, item)
			}
			set("uniqueItems", "has a repeated item", bad)
		}
	}
	if is == nil || !is.IsObject() {
		return out
	}
	if slicesContains(is.Types(), "object") {
		d.warns = append(d.warns, fmt.Sprintf("%s: input schema at %s: the properties of object items are not covered by derived cases", d.tool.Name, pointerOf(append(slices.Clone(path), "items"))))
		return out
	}
	// Each breaker of the item schema, as the first item of an otherwise
	// valid array.
	for _, b := range d.breakers(is, append(slices.Clone(path), "0"), item, itemOK) {
		bad := slices.Clone(arr)
		if len(bad) == 0 {
			bad = append(bad, item)
		}
		bad[0] = b.bad
		out = append(out, breaker{kw: "items." + b.kw, variant: b.variant, why: "has an item that " + b.why, bad: bad})
	}
	return out
}

func num(f float64) string { return fmt.Sprint(f) }

func number(f float64, integer bool) json.Number {
	if integer {
		f = math.Round(f)
	}
	return json.Number(fmt.Sprint(f))
}

// emit builds one case: call with root, expect a refusal naming expect.
func (d *deriver) emit(path []string, keyword, why, baseArgs string, root map[string]any, wantPtr string, expect []string) {
	t := d.tool
	args := script.JSON(root)
	// Check the case against the documented schema: the base must be valid,
	// the mutation invalid, only at wantPtr (or below it for a nested
	// object).
	compiled, err := schemalib.Compile("prickle:"+t.Name+"/input.json", t.InputSchema.JSON)
	if err != nil {
		d.warns = append(d.warns, err.Error())
		return
	}
	if err := schemalib.Validate(compiled, []byte(baseArgs)); err != nil {
		what := "is not valid"
		if ecmaregex.IsTimeout(err) {
			what = "could not be checked"
		}
		d.warns = append(d.warns, fmt.Sprintf("%s: the base of the case for %s %s %s (%v); dropped", t.Name, pointerOf(path), keyword, what, err))
		return
	}
	verr := schemalib.Validate(compiled, []byte(args))
	ve, ok := verr.(*schemax.ValidationError)
	switch {
	case !ok && verr != nil:
		d.warns = append(d.warns, fmt.Sprintf("%s: the case for %s %s could not be checked (%v); dropped", t.Name, pointerOf(path), keyword, verr))
		return
	case !ok:
		d.warns = append(d.warns, fmt.Sprintf("%s: the case for %s %s is valid against the schema (%s); dropped", t.Name, pointerOf(path), keyword, args))
		return
	}
	for _, v := range ve.Violations {
		if v.Pointer != wantPtr && !strings.HasPrefix(v.Pointer, wantPtr+"/") {
			d.warns = append(d.warns, fmt.Sprintf("%s: the case for %s %s also breaks %s (%s); dropped", t.Name, pointerOf(path), keyword, v, args))
			return
		}
	}
	name := "spec." + t.Name
	for _, p := range path {
		name += "." + p
	}
	name += "." + keyword
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s: refused, naming the field (derived from the spec).\n", t.Name, why)
	fmt.Fprintf(&b, "# decisions: %s\n", suite.RefusalsDecision)
	fmt.Fprintf(&b, "call -as %s %s %s\n", d.who, t.Name, script.Quote(args))
	b.WriteString("refused invalid_arguments\n")
	for _, e := range expect {
		fmt.Fprintf(&b, "stdout %s\n", script.Quote(e))
	}
	d.scripts = append(d.scripts, mustScript(name, b.String()))
}

// wrongType returns a value whose JSON type is none of types.
func wrongType(types []string) (any, bool) {
	candidates := []any{json.Number("12345"), "not-a-number", true, map[string]any{}, []any{}}
	for _, c := range candidates {
		jt := jsonTypeNum(c)
		ok := true
		for _, t := range types {
			if t == jt || (t == "number" && jt == "integer") {
				ok = false
			}
		}
		if ok {
			return c, true
		}
	}
	return nil, false
}

func jsonTypeNum(v any) string {
	switch x := v.(type) {
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case nil:
		return "null"
	}
	return "?"
}

func shortString(n *jsonschema.Schema, valid string, l int) (string, bool) {
	if l == 0 {
		return "", true
	}
	r := []rune(valid)
	if len(r) >= l && n.MatchesPattern(string(r[:l])) {
		return string(r[:l]), true
	}
	for _, c := range []string{"a", "0", "x", "A"} {
		s := strings.Repeat(c, l)
		if n.MatchesPattern(s) {
			return s, true
		}
	}
	return strings.Repeat("a", l), true
}

func longString(n *jsonschema.Schema, valid string, l int) string {
	fillers := []string{"a", "0", "x", "A"}
	if valid != "" {
		r := []rune(valid)
		fillers = append([]string{string(r[len(r)-1])}, fillers...)
	}
	for _, f := range fillers {
		s := valid
		for utf8.RuneCountInString(s) < l {
			s += f
		}
		s = string([]rune(s)[:l])
		if n.MatchesPattern(s) {
			return s
		}
	}
	return strings.Repeat("a", l)
}

func patternBreaker(n *jsonschema.Schema, valid string) (string, bool) {
	candidates := []string{valid + "!", "!" + valid, valid + " x", "not valid!", "!", "-", "A", "a b", "?"}
	for _, c := range candidates {
		if ok, decided := n.MatchPattern(c); decided && !ok && n.FitsLength(c) {
			return c, true
		}
	}
	return "", false
}

func formatBreaker(f string) (string, bool) {
	switch f {
	case "date-time":
		return "2026-13-45T25:61:00Z", true
	case "date":
		return "2026-13-45", true
	case "uri":
		return "not a uri", true
	case "email":
		return "not-an-email", true
	case "uuid":
		return "not-a-uuid", true
	}
	return "", false
}

func outsideEnum(enum []any, valid any) (any, bool) {
	candidates := []any{"not-an-allowed-value", json.Number("987654321"), false}
	if _, ok := valid.(string); ok {
		candidates = candidates[:1]
	}
	for _, c := range candidates {
		in := false
		for _, e := range enum {
			if script.JSON(e) == script.JSON(c) {
				in = true
			}
		}
		if !in {
			return c, true
		}
	}
	return nil, false
}

// minimal is the schema model's Minimal value of n, and whether there is
// one.
func minimal(n *jsonschema.Schema) (any, bool) {
	v, err := n.Minimal()
	return v, err == nil
}
