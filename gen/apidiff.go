package gen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/specdiff"
)

// APIChanges compares the Go packages Generate makes of two versions of
// the spec and reports, as specdiff changes on side go, what Go code
// written against the old package may no longer compile against: named
// types, struct fields, enum and tool-name constants, and Handler methods
// that are gone or changed. Additions other than Handler methods break no
// such code and are not reported.
func APIChanges(old, new *spec.Spec, opts Options) ([]specdiff.Change, error) {
	om, err := build(old, opts)
	if err != nil {
		return nil, fmt.Errorf("go api of the old version: %w", err)
	}
	nm, err := build(new, opts)
	if err != nil {
		return nil, fmt.Errorf("go api of the new version: %w", err)
	}
	oa, na := surface(om), surface(nm)
	var out []specdiff.Change
	add := func(kind string, o, n *apiDecl, id, format string, args ...any) {
		c := specdiff.Change{Side: specdiff.SideGo, Pointer: id, Kind: kind, Message: fmt.Sprintf(format, args...)}
		if o != nil {
			c.Tool, c.OldPos = o.tool, o.pos
		}
		if n != nil {
			c.Tool, c.NewPos = n.tool, n.pos
		}
		out = append(out, c)
	}
	for _, name := range oa.order {
		o, n := oa.decls[name], na.decls[name]
		switch {
		case n == nil:
			add(specdiff.KindGoTypeRemoved, o, nil, name, "type %s is gone", name)
		case o.shape != n.shape:
			add(specdiff.KindGoTypeChanged, o, n, name, "type %s changed from %s to %s", name, o.shape, n.shape)
		default:
			for _, f := range o.fields {
				nf := n.field(f.name)
				switch {
				case nf == nil:
					msg := fmt.Sprintf("field %s.%s (%s) is gone", name, f.name, f.json)
					if r := n.fieldByJSON(f.json); r != nil && f.json != "" {
						msg += fmt.Sprintf("; %s is now %s.%s", f.json, name, r.name)
					}
					add(specdiff.KindGoFieldRemoved, f.decl(o), n, name+"."+f.name, "%s", msg)
				case nf.typ != f.typ:
					add(specdiff.KindGoFieldRetyped, f.decl(o), nf.decl(n), name+"."+f.name,
						"field %s.%s changed type from %s to %s", name, f.name, f.typ, nf.typ)
				}
			}
			for _, c := range o.consts {
				if !slices.Contains(n.consts, c) {
					add(specdiff.KindGoConstRemoved, o, n, name, "constant %s of type %s is gone", strings.SplitN(c, " ", 2)[0], name)
				}
			}
		}
	}
	for _, c := range oa.tools {
		if !slices.ContainsFunc(na.tools, func(n apiMethod) bool { return n.name == c.name }) {
			add(specdiff.KindGoConstRemoved, &apiDecl{tool: c.tool, pos: c.pos}, nil, c.name, "tool-name constant %s is gone", c.name)
		}
	}
	for _, m := range na.methods {
		if !slices.ContainsFunc(oa.methods, func(o apiMethod) bool { return o.name == m.name }) {
			d := &apiDecl{tool: m.tool, pos: m.pos}
			add(specdiff.KindGoMethodAdded, nil, d, "Handler."+m.name, "Handler gains method %s: a handler that does not embed UnimplementedHandler no longer compiles", m.name)
		}
	}
	for _, m := range oa.methods {
		if !slices.ContainsFunc(na.methods, func(n apiMethod) bool { return n.name == m.name }) {
			d := &apiDecl{tool: m.tool, pos: m.pos}
			add(specdiff.KindGoMethodRemoved, d, nil, "Handler."+m.name, "Handler and Client lose method %s", m.name)
		}
	}
	return out, nil
}

// apiSurface is what Go code can name in a generated package.
type apiSurface struct {
	decls   map[string]*apiDecl
	order   []string    // declaration names, in the order made
	tools   []apiMethod // tool-name constants
	methods []apiMethod
}

// apiMethod is a Handler method or a tool-name constant, and its tool.
type apiMethod struct {
	name, tool string
	pos        spec.Pos
}

// apiDecl is one named type.
type apiDecl struct {
	tool   string
	pos    spec.Pos
	shape  string // "struct", "union", "const", or the Go type an enum or alias stands for
	fields []apiField
	consts []string // enum constants, "Name value"
}

type apiField struct {
	name, json, typ string
	pos             spec.Pos
}

// decl returns a copy of d placed at the field.
func (f apiField) decl(d *apiDecl) *apiDecl { return &apiDecl{tool: d.tool, pos: f.pos} }

func (d *apiDecl) field(name string) *apiField {
	for i := range d.fields {
		if d.fields[i].name == name {
			return &d.fields[i]
		}
	}
	return nil
}

func (d *apiDecl) fieldByJSON(json string) *apiField {
	for i := range d.fields {
		if d.fields[i].json == json {
			return &d.fields[i]
		}
	}
	return nil
}

func surface(m *model) *apiSurface {
	a := &apiSurface{decls: map[string]*apiDecl{}}
	for _, t := range m.b.types {
		d := &apiDecl{}
		if t.doc != nil {
			d.tool = t.doc.tool.Name
			d.pos = t.doc.pos(t.pointer)
		}
		switch t.kind {
		case kStruct:
			d.shape = "struct"
			for _, f := range t.fields {
				af := apiField{name: f.goName, json: f.json, typ: goString(fieldExpr(f))}
				if t.doc != nil {
					af.pos = t.doc.pos(f.pointer)
				}
				d.fields = append(d.fields, af)
			}
		case kUnion:
			d.shape = "union"
			for _, v := range t.variants {
				d.fields = append(d.fields, apiField{name: v.goName, typ: "*" + v.t.name, pos: d.pos})
			}
		case kConst:
			d.shape = "const " + string(t.constJSON)
		case kEnum:
			d.shape = t.prim
			for _, ev := range t.enum {
				v := strconv.Quote(ev.str)
				if t.prim != "string" {
					v = strconv.FormatInt(ev.num, 10)
				}
				d.consts = append(d.consts, ev.goName+" "+v)
			}
		case kAlias:
			d.shape = "= " + goString(typeExpr(t.elem))
		}
		a.decls[t.name] = d
		a.order = append(a.order, t.name)
	}
	for i, ev := range m.b.toolName.enum {
		c := m.spec.Catalog[i]
		a.tools = append(a.tools, apiMethod{name: ev.goName, tool: c.Name, pos: c.Pos})
	}
	for _, tm := range m.tools {
		a.methods = append(a.methods, apiMethod{name: tm.goName, tool: tm.t.Name, pos: tm.t.Pos})
	}
	return a
}

// pos is where ptr is in the document's page.
func (d *docCtx) pos(ptr string) spec.Pos {
	if d.block == nil {
		return spec.Pos{File: d.tool.Page.File}
	}
	return d.block.PointerPos(ptr)
}

// goString renders a type expression as Go source.
func goString(s *jen.Statement) string { return fmt.Sprintf("%#v", s) }
