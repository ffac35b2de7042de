package gen

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// validateFile writes the validators: for each tool's input and output a
// Validate function, a Validate method on its root type, and the check
// functions of its schemas (checks.go decides them). The file is written
// as gofmt prints it (goSrc), not rendered and formatted.
func (m *model) validateFile() []byte {
	// Room for the file at once: a check function takes about 650 bytes.
	size := 4096
	for _, tm := range m.tools {
		size += 2048 + 640*(len(tm.in.checkOrder)+len(tm.out.checkOrder))
	}
	w := &goSrc{b: make([]byte, 0, size)}
	w.line("// ", Header)
	w.blank()
	w.line("package ", m.pkg)
	w.blank()
	w.line("import ", goLit(pkgRT))
	w.blank()
	w.comment("The validators of the documented schemas: generated Go, one check function per schema (JSON Schema 2020-12, ECMA-262 patterns, format asserted), as the validators of rt run them.")
	var names, values []string
	for _, tm := range m.tools {
		for _, sec := range []struct {
			name string
			d    *docCtx
		}{{"Input", tm.in}, {"Output", tm.out}} {
			names = append(names, tm.lower+sec.name+"Validator")
			values = append(values, goCall("rt.NewValidator", goLit(tm.t.Name+"/"+strings.ToLower(sec.name)),
				goCall("[]byte", tm.goName+sec.name+"Schema"), checkRef(sec.d.check)))
		}
	}
	w.varBlock(names, values)
	w.blank()
	w.comment("CompileSchemas compiles the patterns of every validator now rather than on first use, e.g. at server start-up, and reports one that does not compile.")
	w.open("func CompileSchemas() error")
	if len(m.checks.patterns) > 0 {
		ids := make([]string, len(m.checks.patterns))
		for i, p := range m.checks.patterns {
			ids[i] = p.id
		}
		w.open("for _, p := range []*rt.Pattern{", strings.Join(ids, ", "), "}")
		w.open("if err := p.Compile(); err != nil")
		w.line("return err")
		w.close()
		w.close()
	}
	w.line("return nil")
	w.close()
	w.blank()
	for _, tm := range m.tools {
		for _, sec := range []struct {
			name string
			d    *docCtx
		}{{"Input", tm.in}, {"Output", tm.out}} {
			v := tm.lower + sec.name + "Validator"
			fn := "Validate" + tm.goName + sec.name
			w.comment(fmt.Sprintf("%s validates JSON against the %s schema of %s: nil, a *rt.ValidationError listing every violation by JSON pointer, or another error when the validation could not finish (a pattern match that timed out): the value is then neither valid nor invalid.", fn, strings.ToLower(sec.name), tm.t.Name))
			w.open("func ", fn, "(raw []byte) error")
			w.line("return ", v, ".Validate(raw)")
			w.close()
			w.blank()
			root := sec.d.root
			if root.kind == kAlias {
				continue
			}
			w.comment("Validate marshals v as Register sends it and validates the JSON against its schema.")
			w.open("func (v *", root.name, ") Validate() error")
			w.line("return ", v, ".ValidateValue(v)")
			w.close()
			w.blank()
		}
	}
	sharedVars(w, "The patterns of the schemas, compiled on first use.", "NewPattern", m.checks.patterns)
	sharedVars(w, "The values of the schemas' enums and consts.", "NewValues", m.checks.values)
	for _, tm := range m.tools {
		for _, d := range []*docCtx{tm.in, tm.out} {
			for _, n := range d.checkOrder {
				if n.fn != "" {
					renderCheck(w, n)
				}
			}
		}
	}
	// gofmt ends the file after its last declaration.
	w.b = w.b[:len(w.b)-1]
	return w.b
}

// sharedVars writes the package-level variables the check functions
// share, each made by rt's constructor from its source.
func sharedVars(w *goSrc, doc, constructor string, vs []*vshared) {
	if len(vs) == 0 {
		return
	}
	w.comment(doc)
	names, values := make([]string, len(vs)), make([]string, len(vs))
	for i, v := range vs {
		names[i], values[i] = v.id, goCall("rt."+constructor, rawLit(v.src))
	}
	w.varBlock(names, values)
	w.blank()
}

// rawLit is s as a Go string literal, raw when it can be.
func rawLit(s string) string {
	if !strings.ContainsAny(s, "`\r\n") {
		return "`" + s + "`"
	}
	return goLit(s)
}

// where says which schema n is, for its function's comment.
func where(n *vnode) string {
	d := n.d
	doc := fmt.Sprintf("the %s schema of %s", d.section, d.tool.Name)
	if n.ptr == "" {
		if d.block != nil {
			return fmt.Sprintf("%s (%s:%d)", doc, path.Base(d.block.Pos.File), d.block.Pos.Line)
		}
		return doc
	}
	return doc + " at " + n.ptr
}

// checkRef is the function that checks n's values: its own, its
// target's, or rt.Any for a schema that admits every value.
func checkRef(n *vnode) string {
	t := n.target()
	if t.admitsAll() {
		return "rt.Any"
	}
	return t.fn
}

// checkValue checks the next value with n.
func checkValue(n *vnode) string {
	t := n.target()
	if t.admitsAll() {
		return "c.Skip()"
	}
	return t.fn + "(c)"
}

// c is the call of the checker's method with args.
func c(method string, args ...string) string {
	return goCall("c."+method, args...)
}

func renderCheck(w *goSrc, n *vnode) {
	w.comment(fmt.Sprintf("%s checks a value against %s.", n.fn, where(n)))
	w.open("func ", n.fn, "(c *rt.Checker)")
	switch {
	case n.isFalse:
		w.line(c("False", goLit(n.ptr)))
	case n.raw:
		rawBody(w, n)
	default:
		groups, unread := n.streamGroups()
		w.line("v := ", c("Read"))
		prechecks(w, n, len(groups) == 0 && !unread)
		streamGroups(w, n, groups, unread)
	}
	w.close()
	w.blank()
	if n.members != "" {
		partFunc(w, n, n.members, "members of an object", objectGroup)
	}
	if n.itemsFn != "" {
		partFunc(w, n, n.itemsFn, "items of an array", arrayGroup)
	}
}

// partFunc writes fn, which checks the parts (what) of a value whose
// start c has read against n.
func partFunc(w *goSrc, n *vnode, fn, what string, parts func(*goSrc, *vnode)) {
	w.comment(fmt.Sprintf("%s checks the %s against %s.", fn, what, where(n)))
	w.open("func ", fn, "(c *rt.Checker)")
	w.line(c("Read"))
	parts(w, n)
	w.close()
	w.blank()
}

// prechecks are the keywords that stop at their first failure, in the
// order the library checks them: type, const, enum, format. last: no check
// follows them.
func prechecks(w *goSrc, n *vnode, last bool) {
	var calls []string
	if n.types != nil {
		ts := checkedTypes(n.types)
		for i, t := range ts {
			ts[i] = "rt." + t
		}
		calls = append(calls, c("Type", "v", goLit(n.loc("type")), strings.Join(ts, "|")))
	}
	if n.constant != "" {
		calls = append(calls, c("Const", "v", goLit(n.loc("const")), n.constValues.id))
	}
	if n.enum != "" {
		calls = append(calls, c("Enum", "v", goLit(n.loc("enum")), n.enumValues.id))
	}
	if n.format != "" {
		calls = append(calls, c("Format", "v", goLit(n.loc("format")), goLit(n.format)))
	}
	if n.unasserted != "" {
		w.line(fmt.Sprintf("// format %q is an annotation: the validators assert no such format.", n.unasserted))
	}
	for i, call := range calls {
		if last && i == len(calls)-1 {
			w.line(call)
		} else {
			w.open("if !", call)
			w.line("return")
			w.close()
		}
	}
}

// kinds lists the kinds of value n admits ("type"), in a fixed order.
func (n *vnode) kinds() []string {
	var out []string
	for _, k := range []string{"null", "boolean", "number", "string", "array", "object"} {
		if n.admits(k) {
			out = append(out, k)
		}
	}
	return out
}

var kindIDs = map[string]string{"null": "rt.KindNull", "boolean": "rt.KindBool", "number": "rt.KindNumber", "string": "rt.KindString", "array": "rt.KindArray", "object": "rt.KindObject"}

// streamGroups returns the kinds of value whose checks n's function
// reads as the value comes, and whether objects or arrays are left that
// it must read to their end.
func (n *vnode) streamGroups() (groups []string, unread bool) {
	if n.hasStringGroup() {
		groups = append(groups, "string")
	}
	if n.hasNumberGroup() {
		groups = append(groups, "number")
	}
	if n.hasObjectGroup() {
		groups = append(groups, "object")
	}
	if n.hasArrayGroup() {
		groups = append(groups, "array")
	}
	for _, k := range n.kinds() {
		if k == "object" && !n.hasObjectGroup() || k == "array" && !n.hasArrayGroup() {
			unread = true
		}
	}
	return groups, unread
}

// streamGroups writes the checks of the value v, read as it comes, by its
// kind.
func streamGroups(w *goSrc, n *vnode, groups []string, unread bool) {
	switch {
	case len(n.kinds()) == 1 && len(groups) == 1:
		group(w, n, groups[0])
		return
	case len(groups) == 0:
		if unread {
			w.line(c("Rest", "v"))
		}
		return
	}
	w.open("switch v.Kind")
	for _, g := range groups {
		w.label("case ", kindIDs[g])
		group(w, n, g)
	}
	if unread {
		w.label("default")
		w.line(c("Rest", "v"))
	}
	w.close()
}

// group writes the checks of a v of one kind.
func group(w *goSrc, n *vnode, kind string) {
	switch kind {
	case "string":
		lines(w, stringChecks(n))
	case "number":
		lines(w, numberChecks(n))
	case "object":
		objectGroup(w, n)
	case "array":
		arrayGroup(w, n)
	}
}

// lines writes each statement of stmts on a line of its own.
func lines(w *goSrc, stmts []string) {
	for _, s := range stmts {
		w.line(s)
	}
}

// stringChecks are the checks of a string v.
func stringChecks(n *vnode) []string {
	var out []string
	if n.minLength != nil {
		out = append(out, c("MinLength", "v", goLit(n.loc("minLength")), intLit(n.minLength)))
	}
	if n.maxLength != nil {
		out = append(out, c("MaxLength", "v", goLit(n.loc("maxLength")), intLit(n.maxLength)))
	}
	if n.pattern != nil {
		out = append(out, c("Pattern", "v", goLit(n.loc("pattern")), n.pattern.id))
	}
	return out
}

// numberChecks are the checks of a number v.
func numberChecks(n *vnode) []string {
	var out []string
	for _, b := range []struct{ method, kw, lit string }{
		{"Minimum", "minimum", n.minimum}, {"Maximum", "maximum", n.maximum},
		{"ExclusiveMinimum", "exclusiveMinimum", n.exclMin}, {"ExclusiveMaximum", "exclusiveMaximum", n.exclMax},
		{"MultipleOf", "multipleOf", n.multipleOf},
	} {
		if b.lit != "" {
			out = append(out, c(b.method, "v", goLit(n.loc(b.kw)), goLit(b.lit)))
		}
	}
	return out
}

// tracked lists the names an object's checks must know it has (required,
// dependentRequired), with the local variable of each.
func (n *vnode) tracked() (names []string, vars map[string]string) {
	vars = map[string]string{}
	used := map[string]bool{"c": true, "v": true, "n": true, "raw": true, "extra": true, "missing": true, "name": true, "each": true}
	add := func(name string) {
		if _, ok := vars[name]; ok {
			return
		}
		id := "has" + fieldName(name)
		for base, i := id, 2; used[id]; i++ {
			id = fmt.Sprintf("%s%d", base, i)
		}
		used[id] = true
		vars[name] = id
		names = append(names, name)
	}
	for _, r := range n.required {
		add(r)
	}
	for _, dr := range n.dependentRequired {
		add(dr.prop)
		for _, r := range dr.names {
			add(r)
		}
	}
	return names, vars
}

// objectGroup writes the checks of an object whose opening brace c has
// read: its members, then what the object as a whole must satisfy.
func objectGroup(w *goSrc, n *vnode) {
	names, vars := n.tracked()
	if len(names) > 0 {
		ids := make([]string, len(names))
		for i, name := range names {
			ids[i] = vars[name]
		}
		w.line("var ", strings.Join(ids, ", "), " bool")
	}
	count := n.minProps != nil || n.maxProps != nil
	if count {
		w.line("n := 0")
	}
	if n.additionalFalse {
		w.line("var extra []string")
	}
	isProp := map[string]bool{}
	for _, p := range n.props {
		isProp[p.name] = true
	}
	w.open("for ", c("Member"))
	members(w, n, count, names, vars, isProp)
	w.close()
	if len(n.required) > 0 {
		w.line("var missing []string")
		for _, r := range n.required {
			missing(w, vars[r], r)
		}
		w.line(c("Required", goLit(n.loc("required")), "missing"))
	}
	for _, dr := range n.dependentRequired {
		w.open("if ", vars[dr.prop])
		w.line("var missing []string")
		for _, r := range dr.names {
			missing(w, vars[r], r)
		}
		w.line(c("DependentRequired", goLit(n.loc("dependentRequired", dr.prop)), goLit(dr.prop), "missing"))
		w.close()
	}
	if n.minProps != nil {
		w.line(c("MinProperties", goLit(n.loc("minProperties")), "n", intLit(n.minProps)))
	}
	if n.maxProps != nil {
		w.line(c("MaxProperties", goLit(n.loc("maxProperties")), "n", intLit(n.maxProps)))
	}
	if n.additionalFalse {
		w.line(c("AdditionalProperties", goLit(n.loc("additionalProperties")), "extra"))
	}
}

// missing adds name to missing unless the object has it (has).
func missing(w *goSrc, has, name string) {
	w.open("if !", has)
	w.line("missing = append(missing, ", goLit(name), ")")
	w.close()
}

// members writes the body of the loop over an object's members.
func members(w *goSrc, n *vnode, count bool, names []string, vars map[string]string, isProp map[string]bool) {
	if count {
		w.line("n++")
	}
	if pn := n.propertyNames; pn != nil && !pn.target().admitsAll() {
		w.line(c("PropertyName", checkRef(pn)))
	}
	// The names to track that no property checks.
	var loose []string
	for _, name := range names {
		if !isProp[name] {
			loose = append(loose, name)
		}
	}
	if len(loose) > 0 {
		w.open("switch string(c.Name())")
		for _, name := range loose {
			w.label("case ", goLit(name))
			w.line(vars[name], " = true")
		}
		w.close()
	}
	if len(n.patternProps) > 0 {
		eachMember(w, n, vars)
		return
	}
	if len(n.props) == 0 {
		additionalMember(w, n)
		return
	}
	w.open("switch string(c.Name())")
	for _, p := range n.props {
		w.label("case ", goLit(p.name))
		if id, ok := vars[p.name]; ok {
			w.line(id, " = true")
		}
		w.line(checkValue(p.n))
	}
	w.label("default")
	additionalMember(w, n)
	w.close()
}

// additionalMember checks the value of a member no property names
// (additionalProperties), without patternProperties.
func additionalMember(w *goSrc, n *vnode) {
	switch {
	case n.additional != nil:
		w.line(checkValue(n.additional))
	case n.additionalFalse:
		w.line("extra = append(extra, string(c.Name()))")
		w.line(c("Skip"))
	default:
		w.line(c("Skip"))
	}
}

// eachMember checks a member's value against every schema that applies to
// it: its property's, every matching pattern's, else additionalProperties.
func eachMember(w *goSrc, n *vnode, vars map[string]string) {
	w.line("name := ", c("Name"))
	w.line("var each rt.Each")
	if len(n.props) > 0 {
		w.open("switch string(name)")
		for _, p := range n.props {
			w.label("case ", goLit(p.name))
			if id, ok := vars[p.name]; ok {
				w.line(id, " = true")
			}
			w.line("each.Add(", checkRef(p.n), ")")
		}
		w.close()
	}
	for _, pp := range n.patternProps {
		w.open("if ", c("Match", "name", pp.p.id))
		w.line("each.Add(", checkRef(pp.n), ")")
		w.close()
	}
	switch {
	case n.additional != nil:
		w.open("if each.None()")
		w.line("each.Add(", checkRef(n.additional), ")")
		w.close()
	case n.additionalFalse:
		w.open("if each.None()")
		w.line("extra = append(extra, string(name))")
		w.close()
	}
	w.line(c("CheckEach", "&each"))
}

// arrayGroup writes the checks of an array whose opening bracket c has
// read: its items, then its length.
func arrayGroup(w *goSrc, n *vnode) {
	count := len(n.prefixItems) > 0 || n.minItems != nil || n.maxItems != nil
	if count {
		w.line("n := 0")
	}
	rest := c("Skip")
	if n.items != nil {
		rest = checkValue(n.items)
	}
	w.open("for ", c("Item"))
	if len(n.prefixItems) == 0 {
		w.line(rest)
	} else {
		w.open("switch n")
		for i, p := range n.prefixItems {
			w.label("case ", strconv.Itoa(i))
			w.line(checkValue(p))
		}
		w.label("default")
		w.line(rest)
		w.close()
	}
	if count {
		w.line("n++")
	}
	w.close()
	if n.minItems != nil {
		w.line(c("MinItems", goLit(n.loc("minItems")), "n", intLit(n.minItems)))
	}
	if n.maxItems != nil {
		w.line(c("MaxItems", goLit(n.loc("maxItems")), "n", intLit(n.maxItems)))
	}
}

// guarded is a statement of a raw body: its lines, under if cond when
// cond is set.
type guarded struct {
	cond string
	body []string
}

// rawBody writes the checks of a schema that reads its value whole, to
// apply several schemas to it.
func rawBody(w *goSrc, n *vnode) {
	kinds := n.kinds()
	var rest []guarded
	usesV := false // the checks read v
	when := func(kind string, body ...string) {
		if len(kinds) == 1 {
			for _, b := range body {
				rest = append(rest, guarded{body: []string{b}})
			}
			return
		}
		usesV = true
		rest = append(rest, guarded{cond: "v.Kind == " + kindIDs[kind], body: body})
	}
	do := func(stmt string) { rest = append(rest, guarded{body: []string{stmt}}) }
	if n.ref != nil && !n.ref.target().admitsAll() {
		do(c("Check", "raw", checkRef(n.ref)))
	}
	if n.hasStringGroup() {
		usesV = true
		when("string", stringChecks(n)...)
	}
	if n.hasNumberGroup() {
		usesV = true
		when("number", numberChecks(n)...)
	}
	if n.members != "" {
		when("object", c("Check", "raw", n.members))
	}
	for _, ds := range n.dependentSchemas {
		if ds.n.target().admitsAll() {
			continue
		}
		usesV = true
		rest = append(rest, guarded{cond: "v.Kind == rt.KindObject && " + c("Has", "raw", goLit(ds.prop)),
			body: []string{c("Check", "raw", checkRef(ds.n))}})
	}
	if n.itemsFn != "" {
		when("array", c("Check", "raw", n.itemsFn))
	}
	if n.unique && n.admits("array") {
		when("array", c("UniqueItems", "raw", goLit(n.loc("uniqueItems"))))
	}
	if n.contains != nil && n.admits("array") {
		min, max := "-1", "-1"
		if n.minContains != nil {
			min = intLit(n.minContains)
		}
		if n.maxContains != nil {
			max = intLit(n.maxContains)
		}
		when("array", c("Contains", "raw", goLit(n.ptr), checkRef(n.contains), min, max))
	}
	refs := func(ns []*vnode) []string {
		var out []string
		for _, m := range ns {
			out = append(out, checkRef(m))
		}
		return out
	}
	if len(n.allOf) > 0 {
		do(c("AllOf", append([]string{"raw"}, refs(n.allOf)...)...))
	}
	if len(n.anyOf) > 0 {
		do(c("AnyOf", append([]string{"raw"}, refs(n.anyOf)...)...))
	}
	if len(n.oneOf) > 0 {
		do(c("OneOf", append([]string{"raw", goLit(n.loc("oneOf"))}, refs(n.oneOf)...)...))
	}
	if n.not != nil {
		do(c("Not", "raw", goLit(n.ptr), checkRef(n.not)))
	}
	if n.ifN != nil {
		then, els := "nil", "nil"
		if n.thenN != nil {
			then = checkRef(n.thenN)
		}
		if n.elseN != nil {
			els = checkRef(n.elseN)
		}
		do(c("If", "raw", checkRef(n.ifN), then, els))
	}
	w.line("raw := ", c("Raw"))
	if usesV || n.types != nil || n.constant != "" || n.enum != "" || n.format != "" {
		w.line("v := ", c("ValueOf", "raw"))
	}
	prechecks(w, n, len(rest) == 0)
	for _, g := range rest {
		if g.cond == "" {
			lines(w, g.body)
			continue
		}
		w.open("if ", g.cond)
		lines(w, g.body)
		w.close()
	}
}
