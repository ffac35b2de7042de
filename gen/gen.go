// Package gen generates, from the canonical spec of the tool pages, a Go
// package (types, enums, schemas, validators, MCP server registration, a
// typed client and the tool catalog) and the docs (canonical pages and a
// human reference). prickle-gen generate and check drive it.
//
// It imports the spec (spec, spec/specdiff), the runtime rt that the
// generated code calls, and the ground floor of internal/; it must not
// import its own output api, the server, the conformance suite or a
// command. Only cmd/prickle-gen/app imports it.
//
// # Mapping
//
// Every tool gets <Tool>Input and <Tool>Output (claim_task → ClaimTaskInput).
// A nested object is a struct named after its parent and property
// (ClaimTaskOutputAttempt); an array's items are named in the singular
// (DiscoverTeamAgentsOutputAgent, ...OutputAgentCapability; "Item" is
// appended when the name does not look plural); a map's values get
// "Value"; a $defs entry is named <Root><Def>. Names use Go initialisms
// (TaskID, AvatarURL); a name already taken gets 2, 3, ... appended.
//
//   - integer → int64, number → float64, boolean → bool, string → string,
//     string with format date-time → time.Time (RFC 3339; see below).
//   - An enum of strings (or integers) is a named type with one constant per
//     value (ClaimDiscussionOutputRoleDraft) and Valid(). null among the
//     values makes the field nullable. An enum of two or more catalog names
//     is the catalog's ToolName, so that a page adding a tool retypes
//     nothing.
//   - const (or an enum of one value) is a named empty struct that always
//     marshals as the constant and unmarshals only from it.
//   - type [T, "null"], anyOf / oneOf [T, {"type": "null"}] → T, nullable.
//   - oneOf / anyOf of objects that all require one property with a distinct
//     const string is a union: a struct with one pointer per variant (set
//     exactly one), whose MarshalJSON writes that variant and whose
//     UnmarshalJSON picks the variant the property names. Alternatives that
//     only narrow (e.g. one of two properties required) keep the node's
//     own type.
//   - additionalProperties with a schema and no properties → map[string]T;
//     an object with neither → map[string]json.RawMessage.
//   - A schema with no type keyword (any JSON) → json.RawMessage.
//
// # Fields
//
// A property's field holds its type T as the schema requires the property
// and lets it be null (decideShapes decides it, the renderers print it):
//
//	                 not nullable                 nullable
//	required         T                            *T, null when nil
//	optional         *T, omitempty                rt.Nullable[T], omitzero
//
// A slice, a map or json.RawMessage carries null as nil, so it is never a
// pointer: required it is T (nil is null when the schema lets it be null);
// optional, a slice or map is T with omitzero, so that an explicit []
// survives, or rt.Nullable[T] when nullable (absent, null, or a value),
// and json.RawMessage is T with omitempty (null is bytes of its own). A
// struct held by value
// that would contain itself is a pointer. An array or map the schema does
// not let be null marshals as [] or {} when nil, and so do the arrays and
// maps nested in it (rt.FillEmpty): its struct gets a MarshalJSON and an
// unexported wire form, which Register hands rt.Handle (see wire.go). A
// documented default on an optional scalar gives a <Field>OrDefault
// getter.
//
// Date-time is time.Time: encoding/json writes RFC 3339 with nanoseconds as
// needed and the value's own offset (UTC writes Z); it reads any RFC 3339
// time the documented pattern admits. A round trip keeps the instant and
// the offset; trailing zeros of a fraction are dropped.
//
// # Validators
//
// Each tool's input and output schema gets a validator, Validate<Tool>Input
// and Validate<Tool>Output, of Go code: one check function per schema a
// value can reach (check<Root><Property>..., named as the types are), over
// an rt.Checker that reads the JSON document's tokens as they come and
// reports each violation as a compiled schema does (pointer, keyword,
// keyword location, validation's words). Every keyword the schema model knows
// is checked, whatever the Go type of the value (json.RawMessage too), but
// $dynamicRef, unevaluatedProperties and unevaluatedItems: those, like a
// reference outside the document, stop generation with an
// *UncheckableError naming the page, the pointer and the keyword.
//
// What cannot be typed well falls back to json.RawMessage with a note
// (rule gen-raw): patternProperties, properties beside an
// additionalProperties schema, tuples (prefixItems), unions without a
// discriminator, several non-null types, allOf of several shapes,
// references outside the document, $dynamicRef. Keywords that only narrow
// values (bounds, lengths, patterns, formats, uniqueItems, not, if/then)
// are left to the validators; properties a schema allows but does not name
// are ignored when decoding.
package gen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/dave/jennifer/jen"

	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/spec"
)

// Options configures Generate.
type Options struct {
	// Package is the package name; "api" when empty.
	Package string
}

// File is one generated file: a slash-separated path relative to the
// folder it belongs in, and its bytes.
type File struct {
	Path string
	Data []byte
}

// GoFiles lists the files Generate writes, in order.
var GoFiles = []string{"catalog.go", "types.go", "enums.go", "schemas.go", "validate.go", "server.go", "client.go"}

type toolModel struct {
	t       *spec.Tool
	goName  string // ClaimTask
	lower   string // claimTask
	in, out *docCtx
}

type model struct {
	pkg    string
	spec   *spec.Spec
	tools  []*toolModel
	b      *builder
	checks *checks
}

// Generate returns the Go files of the package for s, and the notes of the
// constructs typed as json.RawMessage (rule gen-raw, severity info).
func Generate(s *spec.Spec, opts Options) ([]File, spec.Diagnostics, error) {
	m, err := build(s, opts)
	if err != nil {
		return nil, nil, err
	}
	return m.goFiles()
}

// GenerateAll is Generate and Docs in one pass: the Go files, the docs
// files and the notes.
func GenerateAll(s *spec.Spec, opts Options) (goFiles, docFiles []File, notes spec.Diagnostics, err error) {
	m, err := build(s, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	if goFiles, notes, err = m.goFiles(); err != nil {
		return nil, nil, nil, err
	}
	if docFiles, err = m.docs(); err != nil {
		return nil, nil, nil, err
	}
	return goFiles, docFiles, notes, nil
}

func (m *model) goFiles() ([]File, spec.Diagnostics, error) {
	// Each file is made by jennifer and formatted, except the validators,
	// which are written formatted (validateFile).
	files := []func() ([]byte, error){
		rendered(m.catalogFile), rendered(m.typesFile), rendered(m.enumsFile), renderedLits(m.schemasFile),
		func() ([]byte, error) { return m.validateFile(), nil },
		rendered(m.serverFile), rendered(m.clientFile),
	}
	out := make([]File, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Go(func() {
			src, err := f()
			if err != nil {
				errs[i] = fmt.Errorf("generate %s: %w", GoFiles[i], err)
				return
			}
			out[i] = File{Path: GoFiles[i], Data: src}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	notes := m.b.notes
	notes.Sort()
	return out, notes, nil
}

// rendered renders the file file makes and formats it once, after its
// imports are grouped.
func rendered(file func() *jen.File) func() ([]byte, error) {
	return func() ([]byte, error) { return render(file()) }
}

// renderedLits is rendered for a file whose long string literals wait out
// the formatting (literals).
func renderedLits(file func(*literals) *jen.File) func() ([]byte, error) {
	return func() ([]byte, error) {
		var lits literals
		src, err := render(file(&lits))
		if err != nil || len(lits.lits) == 0 {
			return src, err
		}
		if out, ok := lits.splice(src); ok {
			return out, nil
		}
		return render(file(&literals{inline: true}))
	}
}

// render renders f and formats it once, after its imports are grouped.
func render(f *jen.File) ([]byte, error) {
	f.NoFormat = true
	var b bytes.Buffer
	if err := f.Render(&b); err != nil {
		return nil, err
	}
	return format.Source(groupImports(b.Bytes()))
}

// groupImports puts the standard library's imports of src, a Go file,
// apart from the others, as goimports groups them and as hand-written
// code reads; gofmt then sorts each group. src is returned as it is when
// its imports are one group already.
func groupImports(src []byte) []byte {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly)
	if err != nil {
		return src // format.Source reports it
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT || !g.Lparen.IsValid() {
			continue
		}
		var std, other [][]byte
		for _, sp := range g.Specs {
			is := sp.(*ast.ImportSpec)
			text := src[fset.Position(is.Pos()).Offset:fset.Position(is.End()).Offset]
			if path, _ := strconv.Unquote(is.Path.Value); !strings.Contains(strings.Split(path, "/")[0], ".") {
				std = append(std, text)
			} else {
				other = append(other, text)
			}
		}
		if len(std) == 0 || len(other) == 0 {
			return src
		}
		open, end := fset.Position(g.Lparen).Offset+1, fset.Position(g.Rparen).Offset
		out := append([]byte(nil), src[:open]...)
		for _, text := range std {
			out = append(append(out, "\n\t"...), text...)
		}
		out = append(out, '\n')
		for _, text := range other {
			out = append(append(out, "\n\t"...), text...)
		}
		out = append(out, '\n')
		return append(out, src[end:]...)
	}
	return src
}

func build(s *spec.Spec, opts Options) (*model, error) {
	pkg := opts.Package
	if pkg == "" {
		pkg = "api"
	}
	if !isIdent(pkg) {
		return nil, fmt.Errorf("generate: package name %q is not a Go identifier", pkg)
	}
	b := &builder{names: newNames()}
	m := &model{pkg: pkg, spec: s, b: b}
	for _, n := range []string{"Handler", "UnimplementedHandler", "Unimplemented", "Register", "Tool", "Tools", "Client", "NewClient", "Catalog", "CatalogEntry", "ToolName", "CompileSchemas"} {
		b.names.reserve(n)
	}
	b.toolName = &gtype{kind: kEnum, prim: "string", name: "ToolName"}
	b.catalog = make(map[string]bool, len(s.Catalog))
	for _, c := range s.Catalog {
		b.names.reserve("Tool" + camel(c.Name))
		b.toolName.enum = append(b.toolName.enum, enumVal{goName: "Tool" + camel(c.Name), str: c.Name})
		b.catalog[c.Name] = true
	}
	tools := append([]*spec.Tool(nil), s.Tools...)
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	for _, t := range tools {
		g := camel(t.Name)
		if g == "" {
			return nil, fmt.Errorf("generate: tool %q has no usable Go name", t.Name)
		}
		for _, suf := range []string{"Input", "Output", "InputSchema", "OutputSchema"} {
			b.names.reserve(g + suf)
		}
		b.names.reserve("Validate" + g + "Input")
		b.names.reserve("Validate" + g + "Output")
		m.tools = append(m.tools, &toolModel{t: t, goName: g, lower: lowerCamel(t.Name)})
	}
	for _, tm := range m.tools {
		if tm.t.InputSchema == nil || tm.t.OutputSchema == nil {
			return nil, fmt.Errorf("generate: tool %s lacks a schema", tm.t.Name)
		}
		var err error
		if tm.in, err = m.doc(tm, "input", tm.t.InputSchema, tm.goName+"Input"); err != nil {
			return nil, err
		}
		if tm.out, err = m.doc(tm, "output", tm.t.OutputSchema, tm.goName+"Output"); err != nil {
			return nil, err
		}
	}
	taken := map[string]bool{} // the unexported package-level names
	var outputs []*gtype
	for _, tm := range m.tools {
		for _, suf := range []string{"Tool", "InputValidator", "OutputValidator"} {
			taken[tm.lower+suf] = true
		}
		outputs = append(outputs, tm.out.root)
	}
	decide(b.types, outputs, taken)
	m.checks = newChecks(taken)
	for _, tm := range m.tools {
		for _, d := range []*docCtx{tm.in, tm.out} {
			var err error
			if d.check, err = m.checks.compileDoc(d); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *model) doc(tm *toolModel, section string, blk *spec.JSONBlock, rootName string) (*docCtx, error) {
	// The block's document, read once for lint and the catalog too; read
	// here only when the block has none (to say why).
	schema := blk.Schema()
	if schema == nil {
		var err error
		if schema, err = jsonschema.Parse(blk.JSON); err != nil {
			return nil, fmt.Errorf("generate: %s %s schema: %w", tm.t.Name, section, err)
		}
	}
	d := &docCtx{b: m.b, tool: tm.t, section: section, block: blk, schema: schema, rootName: rootName,
		refs: map[string]*gtype{}, refNull: map[string]bool{}, refBusy: map[string]bool{}}
	n := schema.Root()
	ap := n.Sub("additionalProperties")
	if isPlainStruct(n) && (ap == nil || isBool(ap)) {
		t := &gtype{kind: kStruct, name: rootName}
		d.define(t, n)
		m.b.types = append(m.b.types, t)
		d.root = t
		d.fillStruct(t, n)
		return d, nil
	}
	delete(m.b.names.taken, rootName)
	t, _ := d.resolve(n, rootName)
	if t.named() && t.name == rootName {
		d.root = t
		return d, nil
	}
	a := &gtype{kind: kAlias, elem: t}
	d.newNamed(a, rootName, n)
	d.root = a
	return d, nil
}

func isIdent(s string) bool {
	if s == "" || s == "_" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return !goKeywords[s]
}

var goKeywords = map[string]bool{"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true,
	"defer": true, "else": true, "fallthrough": true, "for": true, "func": true, "go": true, "goto": true, "if": true,
	"import": true, "interface": true, "map": true, "package": true, "range": true, "return": true, "select": true,
	"struct": true, "switch": true, "type": true, "var": true}

// description joins a tool's description paragraphs.
func description(t *spec.Tool) string {
	parts := make([]string, len(t.Description))
	for i, p := range t.Description {
		parts[i] = p.Text
	}
	return strings.Join(parts, "\n\n")
}

func (m *model) catalogFile() *jen.File {
	f := newFile(m.pkg)
	f.Add(comment("Tool names: every name in the catalog, documented or not."))
	f.Const().DefsFunc(func(g *jen.Group) {
		for _, c := range m.spec.Catalog {
			doc := "has no page yet."
			if c.Documented {
				doc = "is documented."
			}
			g.Comment(fmt.Sprintf("Tool%s names %s, which %s", camel(c.Name), c.Name, doc))
			g.Id("Tool" + camel(c.Name)).Id("ToolName").Op("=").Lit(c.Name)
		}
	})
	f.Line()
	f.Add(comment("CatalogEntry is one tool name the API knows."))
	f.Type().Id("CatalogEntry").Struct(
		jen.Id("Name").Id("ToolName"),
		jen.Comment("Documented is true when the tool has a page (and so types, a Handler method and a Client method)."),
		jen.Id("Documented").Bool(),
	)
	f.Line()
	f.Add(comment("Catalog lists every tool name, sorted."))
	var entries []jen.Code
	for _, c := range m.spec.Catalog {
		entries = append(entries, jen.Values(jen.Id("Tool"+camel(c.Name)), jen.Lit(c.Documented)))
	}
	f.Var().Id("Catalog").Op("=").Index().Id("CatalogEntry").Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, entries...)
	f.Line()
	tn := m.b.toolName
	f.Add(comment("ToolName is a name from the catalog: the Tool constants, and a schema's enum that lists catalog names (allowed_tools), so that a field keeps its type when a page adds a tool to the catalog; the validators hold such a field to its own enum."))
	f.Type().Id(tn.name).String()
	f.Line()
	f.Add(comment("Valid reports whether v is a catalog name."))
	f.Func().Params(jen.Id("v").Id(tn.name)).Id("Valid").Params().Bool().Block(
		jen.Switch(jen.Id("v")).Block(
			jen.CaseFunc(func(g *jen.Group) {
				for _, ev := range tn.enum {
					g.Id(ev.goName)
				}
			}).Block(jen.Return(jen.True())),
		),
		jen.Return(jen.False()),
	)
	return f
}

func (m *model) typesFile() *jen.File {
	f := newFile(m.pkg)
	for _, t := range m.b.types {
		switch t.kind {
		case kStruct:
			renderStruct(f, t)
		case kUnion:
			renderUnion(f, t)
		case kAlias:
			renderAlias(f, t)
		}
	}
	return f
}

func (m *model) enumsFile() *jen.File {
	f := newFile(m.pkg)
	for _, t := range m.b.types {
		switch t.kind {
		case kEnum:
			renderEnum(f, t)
		case kConst:
			renderConst(f, t)
		}
	}
	return f
}

// schemaLit is a schema's documented bytes as a Go string literal: a raw
// string when it can be one.
func schemaLit(lits *literals, body []byte) jen.Code {
	s := string(body)
	if !strings.ContainsAny(s, "`\r") {
		return lits.raw(s)
	}
	return jen.Lit(s)
}

func (m *model) schemasFile(lits *literals) *jen.File {
	f := newFile(m.pkg)
	for _, tm := range m.tools {
		for _, sec := range []struct {
			name string
			blk  *spec.JSONBlock
		}{{"Input", tm.t.InputSchema}, {"Output", tm.t.OutputSchema}} {
			id := tm.goName + sec.name + "Schema"
			f.Add(comment(fmt.Sprintf("%s is the %s schema of %s, byte for byte as its page documents it (%s).",
				id, strings.ToLower(sec.name), tm.t.Name, fmt.Sprintf("%s:%d", path.Base(sec.blk.Pos.File), sec.blk.Pos.Line))))
			f.Const().Id(id).Op("=").Add(schemaLit(lits, sec.blk.Body()))
			f.Line()
		}
		f.Var().Id(tm.lower+"Tool").Op("=").Op("&").Qual(pkgRT, "Tool").Values(jen.Dict{
			jen.Id("Name"):         jen.String().Call(jen.Id("Tool" + tm.goName)),
			jen.Id("Description"):  lits.quoted(ServedTool(tm.t).Description),
			jen.Id("InputSchema"):  jen.Qual(pkgJSON, "RawMessage").Call(jen.Id(tm.goName + "InputSchema")),
			jen.Id("OutputSchema"): jen.Qual(pkgJSON, "RawMessage").Call(jen.Id(tm.goName + "OutputSchema")),
			jen.Id("Input"):        jen.Id(tm.lower + "InputValidator"),
			jen.Id("Output"):       jen.Id(tm.lower + "OutputValidator"),
		})
		f.Line()
	}
	f.Add(comment("Tool returns the documented tool name: its name, description, documented schemas and validators (a copy: the validators are shared); nil for a name without a page."))
	f.Func().Id("Tool").Params(jen.Id("name").Id("ToolName")).Op("*").Qual(pkgRT, "Tool").BlockFunc(func(g *jen.Group) {
		g.Var().Id("t").Op("*").Qual(pkgRT, "Tool")
		g.Switch(jen.Id("name")).BlockFunc(func(sg *jen.Group) {
			for _, tm := range m.tools {
				sg.Case(jen.Id("Tool" + tm.goName)).Block(jen.Id("t").Op("=").Id(tm.lower + "Tool"))
			}
			sg.Default().Block(jen.Return(jen.Nil()))
		})
		g.Id("c").Op(":=").Op("*").Id("t")
		g.Return(jen.Op("&").Id("c"))
	})
	f.Line()
	f.Add(comment("Tools returns the documented tools as tools/list serves them: name, description (the page's paragraphs) and both schemas as documented. Each call returns new values."))
	f.Func().Id("Tools").Params().Index().Op("*").Qual(pkgMCP, "Tool").Block(
		jen.Return(jen.Index().Op("*").Qual(pkgMCP, "Tool").ValuesFunc(func(g *jen.Group) {
			for _, tm := range m.tools {
				g.Id(tm.lower + "Tool").Dot("MCP").Call()
			}
		})),
	)
	return f
}

func (m *model) serverFile() *jen.File {
	f := newFile(m.pkg)
	f.Add(comment("Handler implements the documented tools. The caller's identity comes from the context (rt.TokenInfoFrom, or what RegisterOptions.Before attached), never from an argument. Return a *rt.ToolError to refuse a call; any other error is a server bug."))
	f.Type().Id("Handler").InterfaceFunc(func(g *jen.Group) {
		for i, tm := range m.tools {
			if i > 0 {
				g.Line()
			}
			g.Add(comment(tm.goName + " implements " + tm.t.Name + ": " + firstSentence(description(tm.t))))
			g.Id(tm.goName).Params(jen.Id("ctx").Qual(pkgContext, "Context"), jen.Id("in").Op("*").Id(tm.goName+"Input")).
				Params(jen.Op("*").Id(tm.goName+"Output"), jen.Error())
		}
	})
	f.Line()
	f.Add(comment("UnimplementedHandler answers every documented tool with a not_implemented refusal (rt.CodeNotImplemented). Embed it in a Handler so that a page added later gives the Handler interface a method the handler already has: the build does not break, and the new tool is served (listed by tools/list, its calls refused) until the handler implements it."))
	f.Type().Id("UnimplementedHandler").Struct()
	for _, tm := range m.tools {
		f.Line()
		f.Add(comment(tm.goName + " refuses " + tm.t.Name + " as not implemented."))
		f.Func().Params(jen.Id("UnimplementedHandler")).Id(tm.goName).
			Params(jen.Qual(pkgContext, "Context"), jen.Op("*").Id(tm.goName+"Input")).
			Params(jen.Op("*").Id(tm.goName+"Output"), jen.Error()).Block(
			jen.Return(jen.Nil(), jen.Qual(pkgRT, "NotImplemented").Call(jen.String().Call(jen.Id("Tool"+tm.goName)))),
		)
	}
	f.Line()
	f.Add(comment("Unimplemented lists the documented tools that h leaves to an embedded UnimplementedHandler, for a server to say at start-up what it does not implement."))
	f.Func().Id("Unimplemented").Params(jen.Id("h").Id("Handler")).Index().Id("ToolName").BlockFunc(func(g *jen.Group) {
		g.Var().Id("out").Index().Id("ToolName")
		g.For(jen.List(jen.Id("_"), jen.Id("m")).Op(":=").Range().Index().Struct(
			jen.Id("method").String(),
			jen.Id("tool").Id("ToolName"),
		).ValuesFunc(func(vg *jen.Group) {
			for _, tm := range m.tools {
				vg.Values(jen.Lit(tm.goName), jen.Id("Tool"+tm.goName))
			}
		})).Block(
			jen.If(jen.Qual(pkgRT, "PromotedFrom").Call(jen.Id("h"), jen.Id("m").Dot("method"), jen.Qual("reflect", "TypeFor").Types(jen.Id("UnimplementedHandler")).Call())).Block(
				jen.Id("out").Op("=").Append(jen.Id("out"), jen.Id("m").Dot("tool")),
			),
		)
		g.Return(jen.Id("out"))
	})
	f.Line()
	f.Add(comment("Register adds every documented tool to s with the low-level AddTool: the documented schemas are served as written; arguments are validated (a failure is an isError result, code invalid_arguments, naming each JSON pointer); the handler's output is validated before it leaves (a violation is logged and answered as a JSON-RPC internal error, never sent). opts may be nil."))
	f.Func().Id("Register").Params(jen.Id("s").Op("*").Qual(pkgMCP, "Server"), jen.Id("h").Id("Handler"), jen.Id("opts").Op("*").Qual(pkgRT, "RegisterOptions")).BlockFunc(func(g *jen.Group) {
		for _, tm := range m.tools {
			var h jen.Code = jen.Id("h").Dot(tm.goName)
			if tm.out.root.wireName != "" {
				// rt.Handle marshals the output's wire form: the same JSON, in one pass.
				h = jen.Qual(pkgRT, "ConvertOutput").Call(h, jen.Id(tm.out.root.name).Dot("wire"))
			}
			g.Qual(pkgRT, "AddTool").Call(jen.Id("s"), jen.Id(tm.lower+"Tool"), h, jen.Id("opts"))
		}
	})
	return f
}

func (m *model) clientFile() *jen.File {
	f := newFile(m.pkg)
	f.Add(comment("Client calls the documented tools over an MCP client session and checks what comes back: a refusal is a *rt.ToolError, an output that fails its schema a *rt.ValidationError."))
	f.Type().Id("Client").Struct(jen.Id("cs").Op("*").Qual(pkgMCP, "ClientSession"))
	f.Line()
	f.Add(comment("NewClient returns a Client over cs."))
	f.Func().Id("NewClient").Params(jen.Id("cs").Op("*").Qual(pkgMCP, "ClientSession")).Op("*").Id("Client").Block(
		jen.Return(jen.Op("&").Id("Client").Values(jen.Dict{jen.Id("cs"): jen.Id("cs")})),
	)
	f.Line()
	f.Add(comment("Session returns the session the client uses."))
	f.Func().Params(jen.Id("c").Op("*").Id("Client")).Id("Session").Params().Op("*").Qual(pkgMCP, "ClientSession").Block(
		jen.Return(jen.Id("c").Dot("cs")),
	)
	for _, tm := range m.tools {
		f.Line()
		f.Add(comment(tm.goName + " calls " + tm.t.Name + ": " + firstSentence(description(tm.t))))
		f.Func().Params(jen.Id("c").Op("*").Id("Client")).Id(tm.goName).
			Params(jen.Id("ctx").Qual(pkgContext, "Context"), jen.Id("in").Op("*").Id(tm.goName+"Input")).
			Params(jen.Op("*").Id(tm.goName+"Output"), jen.Error()).Block(
			jen.Return(jen.Qual(pkgRT, "Call").Types(jen.Id(tm.goName+"Output")).Call(jen.Id("ctx"), jen.Id("c").Dot("cs"), jen.Id(tm.lower+"Tool"), jen.Id("in"))),
		)
	}
	return f
}

// firstSentence is the text up to the first ". " (or all of it).
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
