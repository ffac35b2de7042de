package gen

import (
	"fmt"
	"path"
	"strings"

	"github.com/dave/jennifer/jen"
)

// validateFile writes the validators: for each tool's input and output a
// Validate function, a Validate method on its root type, and the check
// functions of its schemas (checks.go decides them).
func (m *model) validateFile() *jen.File {
	f := newFile(m.pkg)
	f.Add(comment("The validators of the documented schemas: generated Go, one check function per schema (JSON Schema 2020-12, ECMA-262 patterns, format asserted), as the validators of rt run them."))
	f.Var().DefsFunc(func(g *jen.Group) {
		for _, tm := range m.tools {
			for _, sec := range []struct {
				name string
				d    *docCtx
			}{{"Input", tm.in}, {"Output", tm.out}} {
				g.Id(tm.lower+sec.name+"Validator").Op("=").Qual(pkgRT, "NewValidator").Call(
					jen.Lit(tm.t.Name+"/"+strings.ToLower(sec.name)), jen.Index().Byte().Call(jen.Id(tm.goName+sec.name+"Schema")), checkRef(sec.d.check))
			}
		}
	})
	f.Line()
	f.Add(comment("CompileSchemas compiles the patterns of every validator now rather than on first use, e.g. at server start-up, and reports one that does not compile."))
	f.Func().Id("CompileSchemas").Params().Error().BlockFunc(func(g *jen.Group) {
		if len(m.checks.patterns) == 0 {
			g.Return(jen.Nil())
			return
		}
		g.For(jen.List(jen.Id("_"), jen.Id("p")).Op(":=").Range().Index().Op("*").Qual(pkgRT, "Pattern").ValuesFunc(func(vg *jen.Group) {
			for _, p := range m.checks.patterns {
				vg.Id(p.id)
			}
		})).Block(
			jen.If(jen.Id("err").Op(":=").Id("p").Dot("Compile").Call(), jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Id("err"))),
		)
		g.Return(jen.Nil())
	})
	f.Line()
	for _, tm := range m.tools {
		for _, sec := range []struct {
			name string
			d    *docCtx
		}{{"Input", tm.in}, {"Output", tm.out}} {
			v := tm.lower + sec.name + "Validator"
			fn := "Validate" + tm.goName + sec.name
			f.Add(comment(fmt.Sprintf("%s validates JSON against the %s schema of %s: nil, a *rt.ValidationError listing every violation by JSON pointer, or another error when the validation could not finish (a pattern match that timed out): the value is then neither valid nor invalid.", fn, strings.ToLower(sec.name), tm.t.Name)))
			f.Func().Id(fn).Params(jen.Id("raw").Index().Byte()).Error().Block(
				jen.Return(jen.Id(v).Dot("Validate").Call(jen.Id("raw"))),
			)
			f.Line()
			root := sec.d.root
			if root.kind == kAlias {
				continue
			}
			f.Add(comment("Validate marshals v as Register sends it and validates the JSON against its schema."))
			f.Func().Params(jen.Id("v").Op("*").Id(root.name)).Id("Validate").Params().Error().Block(
				jen.Return(jen.Id(v).Dot("ValidateValue").Call(jen.Id("v"))),
			)
			f.Line()
		}
	}
	sharedVars(f, "The patterns of the schemas, compiled on first use.", "NewPattern", m.checks.patterns)
	sharedVars(f, "The values of the schemas' enums and consts.", "NewValues", m.checks.values)
	for _, tm := range m.tools {
		for _, d := range []*docCtx{tm.in, tm.out} {
			for _, n := range d.checkOrder {
				if n.fn != "" {
					renderCheck(f, n)
				}
			}
		}
	}
	return f
}

// sharedVars writes the package-level variables the check functions
// share, each made by rt's constructor from its source.
func sharedVars(f *jen.File, doc, constructor string, vs []*vshared) {
	if len(vs) == 0 {
		return
	}
	f.Add(comment(doc))
	f.Var().DefsFunc(func(g *jen.Group) {
		for _, v := range vs {
			g.Id(v.id).Op("=").Qual(pkgRT, constructor).Call(rawLit(v.src))
		}
	})
	f.Line()
}

// rawLit is s as a Go string literal, raw when it can be.
func rawLit(s string) jen.Code {
	if !strings.ContainsAny(s, "`\r\n") {
		return jen.Op("`" + s + "`")
	}
	return jen.Lit(s)
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
func checkRef(n *vnode) jen.Code {
	t := n.target()
	if t.admitsAll() {
		return jen.Qual(pkgRT, "Any")
	}
	return jen.Id(t.fn)
}

// checkValue checks the next value with n.
func checkValue(n *vnode) jen.Code {
	t := n.target()
	if t.admitsAll() {
		return jen.Id("c").Dot("Skip").Call()
	}
	return jen.Id(t.fn).Call(jen.Id("c"))
}

func c(method string, args ...jen.Code) *jen.Statement {
	return jen.Id("c").Dot(method).Call(args...)
}

func renderCheck(f *jen.File, n *vnode) {
	f.Add(comment(fmt.Sprintf("%s checks a value against %s.", n.fn, where(n))))
	var body []jen.Code
	switch {
	case n.isFalse:
		body = []jen.Code{c("False", jen.Lit(n.ptr))}
	case n.raw:
		body = rawBody(n)
	default:
		rest := streamGroups(n)
		body = append([]jen.Code{jen.Id("v").Op(":=").Add(c("Read"))}, prechecks(n, len(rest) == 0)...)
		body = append(body, rest...)
	}
	f.Func().Id(n.fn).Params(jen.Id("c").Op("*").Qual(pkgRT, "Checker")).Block(body...)
	f.Line()
	if n.members != "" {
		f.Add(comment(fmt.Sprintf("%s checks the members of an object against %s.", n.members, where(n))))
		f.Func().Id(n.members).Params(jen.Id("c").Op("*").Qual(pkgRT, "Checker")).Block(
			append([]jen.Code{c("Read")}, objectGroup(n)...)...)
		f.Line()
	}
	if n.itemsFn != "" {
		f.Add(comment(fmt.Sprintf("%s checks the items of an array against %s.", n.itemsFn, where(n))))
		f.Func().Id(n.itemsFn).Params(jen.Id("c").Op("*").Qual(pkgRT, "Checker")).Block(
			append([]jen.Code{c("Read")}, arrayGroup(n)...)...)
		f.Line()
	}
}

// prechecks are the keywords that stop at their first failure, in the
// order the library checks them: type, const, enum, format. last: no check
// follows them.
func prechecks(n *vnode, last bool) []jen.Code {
	var calls []jen.Code
	stop := func(call jen.Code) { calls = append(calls, call) }
	if n.types != nil {
		var ts []jen.Code
		for i, t := range checkedTypes(n.types) {
			if i > 0 {
				ts = append(ts, jen.Op("|"))
			}
			ts = append(ts, jen.Qual(pkgRT, t))
		}
		stop(c("Type", jen.Id("v"), jen.Lit(n.loc("type")), jen.Add(ts...)))
	}
	if n.constant != "" {
		stop(c("Const", jen.Id("v"), jen.Lit(n.loc("const")), jen.Id(n.constValues.id)))
	}
	if n.enum != "" {
		stop(c("Enum", jen.Id("v"), jen.Lit(n.loc("enum")), jen.Id(n.enumValues.id)))
	}
	if n.format != "" {
		stop(c("Format", jen.Id("v"), jen.Lit(n.loc("format")), jen.Lit(n.format)))
	}
	var out []jen.Code
	if n.unasserted != "" {
		out = append(out, jen.Comment(fmt.Sprintf("format %q is an annotation: the validators assert no such format.", n.unasserted)))
	}
	for i, call := range calls {
		if last && i == len(calls)-1 {
			out = append(out, call)
		} else {
			out = append(out, jen.If(jen.Op("!").Add(call)).Block(jen.Return()))
		}
	}
	return out
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

var kindIDs = map[string]string{"null": "KindNull", "boolean": "KindBool", "number": "KindNumber", "string": "KindString", "array": "KindArray", "object": "KindObject"}

// streamGroups are the checks of the value v, read as it comes, by its
// kind.
func streamGroups(n *vnode) []jen.Code {
	type group struct {
		kind  string
		codes []jen.Code
	}
	var groups []group
	if n.hasStringGroup() {
		groups = append(groups, group{"string", stringChecks(n)})
	}
	if n.hasNumberGroup() {
		groups = append(groups, group{"number", numberChecks(n)})
	}
	if n.hasObjectGroup() {
		groups = append(groups, group{"object", objectGroup(n)})
	}
	if n.hasArrayGroup() {
		groups = append(groups, group{"array", arrayGroup(n)})
	}
	kinds := n.kinds()
	// Objects and arrays the groups leave are read to their end.
	unread := false
	for _, k := range kinds {
		if k == "object" && !n.hasObjectGroup() || k == "array" && !n.hasArrayGroup() {
			unread = true
		}
	}
	switch {
	case len(kinds) == 1 && len(groups) == 1:
		return groups[0].codes
	case len(groups) == 0:
		if unread {
			return []jen.Code{c("Rest", jen.Id("v"))}
		}
		return nil
	}
	var cases []jen.Code
	for _, gr := range groups {
		cases = append(cases, jen.Case(jen.Qual(pkgRT, kindIDs[gr.kind])).Block(gr.codes...))
	}
	if unread {
		cases = append(cases, jen.Default().Block(c("Rest", jen.Id("v"))))
	}
	return []jen.Code{jen.Switch(jen.Id("v").Dot("Kind")).Block(cases...)}
}

// stringChecks are the checks of a string v.
func stringChecks(n *vnode) []jen.Code {
	var out []jen.Code
	if n.minLength != nil {
		out = append(out, c("MinLength", jen.Id("v"), jen.Lit(n.loc("minLength")), jen.Lit(*n.minLength)))
	}
	if n.maxLength != nil {
		out = append(out, c("MaxLength", jen.Id("v"), jen.Lit(n.loc("maxLength")), jen.Lit(*n.maxLength)))
	}
	if n.pattern != nil {
		out = append(out, c("Pattern", jen.Id("v"), jen.Lit(n.loc("pattern")), jen.Id(n.pattern.id)))
	}
	return out
}

// numberChecks are the checks of a number v.
func numberChecks(n *vnode) []jen.Code {
	var out []jen.Code
	for _, b := range []struct{ method, kw, lit string }{
		{"Minimum", "minimum", n.minimum}, {"Maximum", "maximum", n.maximum},
		{"ExclusiveMinimum", "exclusiveMinimum", n.exclMin}, {"ExclusiveMaximum", "exclusiveMaximum", n.exclMax},
		{"MultipleOf", "multipleOf", n.multipleOf},
	} {
		if b.lit != "" {
			out = append(out, c(b.method, jen.Id("v"), jen.Lit(n.loc(b.kw)), jen.Lit(b.lit)))
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

// objectGroup are the checks of an object whose opening brace c has read:
// its members, then what the object as a whole must satisfy.
func objectGroup(n *vnode) []jen.Code {
	var out []jen.Code
	names, vars := n.tracked()
	if len(names) > 0 {
		var ids []jen.Code
		for _, name := range names {
			ids = append(ids, jen.Id(vars[name]))
		}
		out = append(out, jen.Var().List(ids...).Bool())
	}
	count := n.minProps != nil || n.maxProps != nil
	if count {
		out = append(out, jen.Id("n").Op(":=").Lit(0))
	}
	if n.additionalFalse {
		out = append(out, jen.Var().Id("extra").Index().String())
	}
	isProp := map[string]bool{}
	for _, p := range n.props {
		isProp[p.name] = true
	}
	out = append(out, jen.For(c("Member")).BlockFunc(func(lg *jen.Group) {
		if count {
			lg.Id("n").Op("++")
		}
		if pn := n.propertyNames; pn != nil && !pn.target().admitsAll() {
			lg.Add(c("PropertyName", checkRef(pn)))
		}
		// The names to track that no property checks.
		var loose []jen.Code
		for _, name := range names {
			if !isProp[name] {
				loose = append(loose, jen.Case(jen.Lit(name)).Block(jen.Id(vars[name]).Op("=").True()))
			}
		}
		if len(loose) > 0 {
			lg.Switch(jen.String().Call(c("Name"))).Block(loose...)
		}
		if len(n.patternProps) > 0 {
			eachMember(lg, n, vars)
			return
		}
		var cases []jen.Code
		for _, p := range n.props {
			var body []jen.Code
			if id, ok := vars[p.name]; ok {
				body = append(body, jen.Id(id).Op("=").True())
			}
			body = append(body, checkValue(p.n))
			cases = append(cases, jen.Case(jen.Lit(p.name)).Block(body...))
		}
		other := additionalMember(n)
		if len(cases) == 0 {
			for _, o := range other {
				lg.Add(o)
			}
			return
		}
		cases = append(cases, jen.Default().Block(other...))
		lg.Switch(jen.String().Call(c("Name"))).Block(cases...)
	}))
	if len(n.required) > 0 {
		out = append(out, jen.Var().Id("missing").Index().String())
		for _, r := range n.required {
			out = append(out, jen.If(jen.Op("!").Id(vars[r])).Block(jen.Id("missing").Op("=").Append(jen.Id("missing"), jen.Lit(r))))
		}
		out = append(out, c("Required", jen.Lit(n.loc("required")), jen.Id("missing")))
	}
	for _, dr := range n.dependentRequired {
		out = append(out, jen.If(jen.Id(vars[dr.prop])).BlockFunc(func(bg *jen.Group) {
			bg.Var().Id("missing").Index().String()
			for _, r := range dr.names {
				bg.If(jen.Op("!").Id(vars[r])).Block(jen.Id("missing").Op("=").Append(jen.Id("missing"), jen.Lit(r)))
			}
			bg.Add(c("DependentRequired", jen.Lit(n.loc("dependentRequired", dr.prop)), jen.Lit(dr.prop), jen.Id("missing")))
		}))
	}
	if n.minProps != nil {
		out = append(out, c("MinProperties", jen.Lit(n.loc("minProperties")), jen.Id("n"), jen.Lit(*n.minProps)))
	}
	if n.maxProps != nil {
		out = append(out, c("MaxProperties", jen.Lit(n.loc("maxProperties")), jen.Id("n"), jen.Lit(*n.maxProps)))
	}
	if n.additionalFalse {
		out = append(out, c("AdditionalProperties", jen.Lit(n.loc("additionalProperties")), jen.Id("extra")))
	}
	return out
}

// additionalMember checks the value of a member no property names
// (additionalProperties), without patternProperties.
func additionalMember(n *vnode) []jen.Code {
	switch {
	case n.additional != nil:
		return []jen.Code{checkValue(n.additional)}
	case n.additionalFalse:
		return []jen.Code{
			jen.Id("extra").Op("=").Append(jen.Id("extra"), jen.String().Call(c("Name"))),
			c("Skip"),
		}
	}
	return []jen.Code{c("Skip")}
}

// eachMember checks a member's value against every schema that applies to
// it: its property's, every matching pattern's, else additionalProperties.
func eachMember(g *jen.Group, n *vnode, vars map[string]string) {
	g.Id("name").Op(":=").Add(c("Name"))
	g.Var().Id("each").Qual(pkgRT, "Each")
	if len(n.props) > 0 {
		var cases []jen.Code
		for _, p := range n.props {
			var body []jen.Code
			if id, ok := vars[p.name]; ok {
				body = append(body, jen.Id(id).Op("=").True())
			}
			body = append(body, jen.Id("each").Dot("Add").Call(checkRef(p.n)))
			cases = append(cases, jen.Case(jen.Lit(p.name)).Block(body...))
		}
		g.Switch(jen.String().Call(jen.Id("name"))).Block(cases...)
	}
	for _, pp := range n.patternProps {
		g.If(c("Match", jen.Id("name"), jen.Id(pp.p.id))).Block(jen.Id("each").Dot("Add").Call(checkRef(pp.n)))
	}
	switch {
	case n.additional != nil:
		g.If(jen.Id("each").Dot("None").Call()).Block(jen.Id("each").Dot("Add").Call(checkRef(n.additional)))
	case n.additionalFalse:
		g.If(jen.Id("each").Dot("None").Call()).Block(jen.Id("extra").Op("=").Append(jen.Id("extra"), jen.String().Call(jen.Id("name"))))
	}
	g.Add(c("CheckEach", jen.Op("&").Id("each")))
}

// arrayGroup are the checks of an array whose opening bracket c has read:
// its items, then its length.
func arrayGroup(n *vnode) []jen.Code {
	var out []jen.Code
	count := len(n.prefixItems) > 0 || n.minItems != nil || n.maxItems != nil
	if count {
		out = append(out, jen.Id("n").Op(":=").Lit(0))
	}
	rest := c("Skip")
	if n.items != nil {
		rest = checkValue(n.items).(*jen.Statement)
	}
	out = append(out, jen.For(c("Item")).BlockFunc(func(lg *jen.Group) {
		if len(n.prefixItems) == 0 {
			lg.Add(rest)
		} else {
			var cases []jen.Code
			for i, p := range n.prefixItems {
				cases = append(cases, jen.Case(jen.Lit(i)).Block(checkValue(p)))
			}
			cases = append(cases, jen.Default().Block(rest))
			lg.Switch(jen.Id("n")).Block(cases...)
		}
		if count {
			lg.Id("n").Op("++")
		}
	}))
	if n.minItems != nil {
		out = append(out, c("MinItems", jen.Lit(n.loc("minItems")), jen.Id("n"), jen.Lit(*n.minItems)))
	}
	if n.maxItems != nil {
		out = append(out, c("MaxItems", jen.Lit(n.loc("maxItems")), jen.Id("n"), jen.Lit(*n.maxItems)))
	}
	return out
}

// rawBody are the checks of a schema that reads its value whole, to apply
// several schemas to it.
func rawBody(n *vnode) []jen.Code {
	kinds := n.kinds()
	var rest []jen.Code
	usesV := false // the checks read v
	when := func(kind string, body ...jen.Code) {
		if len(kinds) == 1 {
			rest = append(rest, body...)
			return
		}
		usesV = true
		rest = append(rest, jen.If(jen.Id("v").Dot("Kind").Op("==").Qual(pkgRT, kindIDs[kind])).Block(body...))
	}
	if n.ref != nil && !n.ref.target().admitsAll() {
		rest = append(rest, c("Check", jen.Id("raw"), checkRef(n.ref)))
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
		when("object", c("Check", jen.Id("raw"), jen.Id(n.members)))
	}
	for _, ds := range n.dependentSchemas {
		if ds.n.target().admitsAll() {
			continue
		}
		usesV = true
		rest = append(rest, jen.If(jen.Id("v").Dot("Kind").Op("==").Qual(pkgRT, "KindObject").Op("&&").Add(c("Has", jen.Id("raw"), jen.Lit(ds.prop)))).Block(
			c("Check", jen.Id("raw"), checkRef(ds.n))))
	}
	if n.itemsFn != "" {
		when("array", c("Check", jen.Id("raw"), jen.Id(n.itemsFn)))
	}
	if n.unique && n.admits("array") {
		when("array", c("UniqueItems", jen.Id("raw"), jen.Lit(n.loc("uniqueItems"))))
	}
	if n.contains != nil && n.admits("array") {
		min, max := jen.Lit(-1), jen.Lit(-1)
		if n.minContains != nil {
			min = jen.Lit(*n.minContains)
		}
		if n.maxContains != nil {
			max = jen.Lit(*n.maxContains)
		}
		when("array", c("Contains", jen.Id("raw"), jen.Lit(n.ptr), checkRef(n.contains), min, max))
	}
	refs := func(ns []*vnode) []jen.Code {
		var out []jen.Code
		for _, m := range ns {
			out = append(out, checkRef(m))
		}
		return out
	}
	if len(n.allOf) > 0 {
		rest = append(rest, c("AllOf", append([]jen.Code{jen.Id("raw")}, refs(n.allOf)...)...))
	}
	if len(n.anyOf) > 0 {
		rest = append(rest, c("AnyOf", append([]jen.Code{jen.Id("raw")}, refs(n.anyOf)...)...))
	}
	if len(n.oneOf) > 0 {
		rest = append(rest, c("OneOf", append([]jen.Code{jen.Id("raw"), jen.Lit(n.loc("oneOf"))}, refs(n.oneOf)...)...))
	}
	if n.not != nil {
		rest = append(rest, c("Not", jen.Id("raw"), jen.Lit(n.ptr), checkRef(n.not)))
	}
	if n.ifN != nil {
		var then, els jen.Code = jen.Nil(), jen.Nil()
		if n.thenN != nil {
			then = checkRef(n.thenN)
		}
		if n.elseN != nil {
			els = checkRef(n.elseN)
		}
		rest = append(rest, c("If", jen.Id("raw"), checkRef(n.ifN), then, els))
	}
	pre := prechecks(n, len(rest) == 0)
	out := []jen.Code{jen.Id("raw").Op(":=").Add(c("Raw"))}
	if usesV || n.types != nil || n.constant != "" || n.enum != "" || n.format != "" {
		out = append(out, jen.Id("v").Op(":=").Add(c("ValueOf", jen.Id("raw"))))
	}
	out = append(out, pre...)
	return append(out, rest...)
}
