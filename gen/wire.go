package gen

import (
	"strings"

	"github.com/dave/jennifer/jen"
)

// Wire forms.
//
// A struct that must write a nil array or map as [] / {} has a MarshalJSON
// (gtype.marshal), and encoding/json scans again whatever a MarshalJSON
// returns: once per level of such structs. So each such struct, and each
// struct that holds one, has an unexported wire form: the same fields and
// tags, nested structs in their wire forms, required arrays and maps never
// nil, no methods; the struct's wire method converts. MarshalJSON marshals
// the wire form, and Register hands rt.Handle the wire form of each output
// (rt.ConvertOutput), which encoding/json writes in one pass, without the
// HTML escaping a nested json.Marshal would add. BenchmarkMarshal in api
// compares the two ways.
//
// Containers the wire form does not convert (rt.Nullable, unions, arrays of
// arrays) keep the struct's own type, and so its MarshalJSON.

// renderWire writes t's wire form and its wire method, if it has one.
func renderWire(f *jen.File, t *gtype) {
	name := t.wireName
	if name == "" {
		return
	}
	converted := false // a field's type changes
	for _, fl := range t.fields {
		if fl.wire.shape != wireSame {
			converted = true
		}
	}
	f.Line()
	f.Add(comment(name + " is " + t.name + " as it is marshalled (see " + t.name + ".wire)."))
	if !converted {
		f.Type().Id(name).Id(t.name) // the same fields, none of the methods
	} else {
		f.Type().Id(name).StructFunc(func(g *jen.Group) {
			for _, fl := range t.fields {
				typ := fieldExpr(fl)
				if w := fl.wire; w.shape != wireSame {
					typ = wireTypeExpr(w.shape, w.elem.wireName, w.elemPtr)
				}
				g.Id(fl.goName).Add(typ).Tag(map[string]string{"json": fl.tag})
			}
		})
	}
	f.Line()
	doc := "wire returns v in its wire form"
	if len(t.empty) > 0 {
		doc += ", with " + fieldNames(t.empty) + " empty, never null, when nil"
	}
	if len(t.fill) > 0 {
		doc += ", and the nil slices and maps nested in " + fieldNames(t.fill) + " empty where the schema forbids null"
	}
	f.Add(comment(doc + "."))
	f.Func().Params(jen.Id("v").Id(t.name)).Id("wire").Params().Id(name).BlockFunc(func(g *jen.Group) {
		var same []jen.Code
		for _, fl := range t.fields {
			if fl.wire.shape == wireSame {
				same = append(same, jen.Id(fl.goName).Op(":").Id("v").Dot(fl.goName))
			}
		}
		if converted {
			g.Id("w").Op(":=").Id(name).Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: len(same) > 0}, same...)
		} else {
			g.Id("w").Op(":=").Id(name).Call(jen.Id("v"))
		}
		empty := map[*field]bool{}
		for _, fl := range t.empty {
			empty[fl] = true
		}
		for _, fl := range t.fields {
			// Fresh statements every time: jen appends to a statement in place.
			src := func() *jen.Statement { return jen.Id("v").Dot(fl.goName) }
			dst := func() *jen.Statement { return jen.Id("w").Dot(fl.goName) }
			s, elemPtr := fl.wire.shape, fl.wire.elemPtr
			switch s {
			case wireSame:
				if empty[fl] {
					g.If(dst().Op("==").Nil()).Block(dst().Op("=").Add(typeExpr(fl.t)).Values())
				}
				if levels := fl.fillLevels; levels != nil {
					args := []jen.Code{dst()} // after the empty fill above
					for _, n := range levels {
						args = append(args, jen.Lit(n))
					}
					g.Add(dst().Op("=").Qual(pkgRT, "FillEmpty").Call(args...))
				}
			case wireValue:
				g.Add(dst().Op("=").Add(src()).Dot("wire").Call())
			case wirePtr:
				g.If(src().Op("!=").Nil()).Block(
					jen.Id("x").Op(":=").Add(src()).Dot("wire").Call(),
					dst().Op("=").Op("&").Id("x"),
				)
			case wireSlice, wireMap:
				var loop jen.Code
				if s == wireSlice {
					loop = jen.For(jen.Id("i").Op(":=").Range().Add(src())).Block(
						wireElem(dst().Index(jen.Id("i")), src().Index(jen.Id("i")), elemPtr, false))
				} else {
					loop = jen.For(jen.List(jen.Id("k"), jen.Id("x")).Op(":=").Range().Add(src())).Block(
						wireElem(dst().Index(jen.Id("k")), jen.Id("x"), elemPtr, true))
				}
				fill := []jen.Code{dst().Op("=").Make(wireTypeExpr(s, fl.wire.elem.wireName, elemPtr), jen.Len(src())), loop}
				if empty[fl] {
					for _, c := range fill { // a nil slice or map becomes an empty one
						g.Add(c)
					}
				} else {
					g.If(src().Op("!=").Nil()).Block(fill...) // nil stays nil: null or omitted
				}
			}
		}
		g.Return(jen.Id("w"))
	})
}

// wireTypeExpr is the type of a converted field.
func wireTypeExpr(s wireShape, name string, elemPtr bool) *jen.Statement {
	elem := jen.Id(name)
	if elemPtr {
		elem = jen.Op("*").Id(name)
	}
	switch s {
	case wireValue:
		return jen.Id(name)
	case wirePtr:
		return jen.Op("*").Id(name)
	case wireSlice:
		return jen.Index().Add(elem)
	}
	return jen.Map(jen.String()).Add(elem)
}

// wireElem converts one item or value src, a fresh statement, into dst,
// another. A nil pointer stays nil: a map gets the key all the same
// (setNil), a new slice holds nil already.
func wireElem(dst, src *jen.Statement, ptr, setNil bool) jen.Code {
	if !ptr {
		return dst.Op("=").Add(src).Dot("wire").Call()
	}
	convert := []jen.Code{
		jen.Id("e").Op(":=").Add(src).Dot("wire").Call(),
		jen.Add(dst).Op("=").Op("&").Id("e"),
	}
	if setNil {
		return jen.If(jen.Add(src).Op("==").Nil()).Block(jen.Add(dst).Op("=").Nil()).Else().Block(convert...)
	}
	return jen.If(jen.Add(src).Op("!=").Nil()).Block(convert...)
}

func fieldNames(fs []*field) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.goName
	}
	return strings.Join(names, ", ")
}
