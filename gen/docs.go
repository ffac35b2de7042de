package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/prickle-dev/prickle/spec"
)

// ReferenceHeader starts docs/reference.md.
const ReferenceHeader = "<!-- " + Header + " -->"

// Docs returns the docs of s: tools/<tool>.md, each tool's canonical page
// (spec.Render), and reference.md, one page for humans with every schema
// as a table of fields.
func Docs(s *spec.Spec) ([]File, error) {
	m, err := build(s, Options{})
	if err != nil {
		return nil, err
	}
	return m.docs()
}

func (m *model) docs() ([]File, error) {
	var out []File
	for _, tm := range m.tools {
		b, err := spec.Render(tm.t)
		if err != nil {
			return nil, err
		}
		out = append(out, File{Path: "tools/" + tm.t.Name + ".md", Data: b})
	}
	out = append(out, File{Path: "reference.md", Data: m.reference()})
	return out, nil
}

func (m *model) reference() []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\n\n", ReferenceHeader)
	title := m.spec.Title
	if title == "" {
		title = "Tool reference"
	}
	p("# %s\n\n", title)
	for _, para := range m.spec.Preamble {
		p("%s\n\n", para.Text)
	}
	p("Generated from the tool pages by `prickle-gen generate`: one section per documented tool, with its example input and a table of every field of its input and output. A path names a property with dots; `[]` is an array's items, `.*` a map's values and `<prop=value>` one variant of a union.\n\n")
	p("## Catalog\n\n| Tool | Documented |\n| --- | --- |\n")
	for _, c := range m.spec.Catalog {
		if c.Documented {
			p("| [%s](#%s) | yes |\n", c.Name, c.Name)
		} else {
			p("| %s | no |\n", c.Name)
		}
	}
	p("\n")
	for _, tm := range m.tools {
		p("## %s\n\n", tm.t.Name)
		for _, para := range tm.t.Description {
			p("%s\n\n", para.Text)
		}
		p("[Canonical page](tools/%s.md)", tm.t.Name)
		if tm.t.DocURL != "" {
			p(" · [Read online](%s)", tm.t.DocURL)
		}
		p("\n\n")
		if ex := tm.t.ExampleInput; ex != nil && len(ex.JSON) > 0 {
			var ind bytes.Buffer
			if json.Indent(&ind, ex.JSON, "", "  ") == nil {
				p("### Example input\n\n```json\n%s\n```\n\n", ind.String())
			}
		}
		for _, sec := range []struct {
			name string
			d    *docCtx
		}{{"Input", tm.in}, {"Output", tm.out}} {
			p("### %s\n\n", sec.name)
			p("| Path | Type | Required | Nullable | Constraints | Enum values |\n| --- | --- | --- | --- | --- | --- |\n")
			rows := fieldRows(sec.d.root, "", map[*gtype]bool{})
			if len(rows) == 0 {
				p("| (none) | | | | | |\n")
			}
			for _, r := range rows {
				p("| %s |\n", strings.Join(r, " | "))
			}
			p("\n")
		}
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// fieldRows lists the rows of the fields under t, paths prefixed.
func fieldRows(t *gtype, prefix string, onPath map[*gtype]bool) [][]string {
	if t.kind == kAlias {
		t = t.elem
	}
	if t.named() {
		if onPath[t] {
			return nil
		}
		onPath[t] = true
		defer delete(onPath, t)
	}
	var rows [][]string
	switch t.kind {
	case kStruct:
		for _, f := range t.fields {
			path := prefix + f.json
			rows = append(rows, []string{code(path), docType(f.t, onPath), yesNo(f.required), yesNo(f.nullable), codeList(f.constraints), codeList(f.enum)})
			rows = append(rows, childRows(f.t, path, onPath)...)
		}
	case kUnion:
		for _, v := range t.variants {
			rows = append(rows, fieldRows(v.t, fmt.Sprintf("%s<%s=%s>.", prefix, t.disc, v.value), onPath)...)
		}
	case kSlice, kMap:
		rows = append(rows, childRows(t, strings.TrimSuffix(prefix, "."), onPath)...)
	}
	return rows
}

// childRows are the rows under a field of type t at path.
func childRows(t *gtype, path string, onPath map[*gtype]bool) [][]string {
	switch t.kind {
	case kStruct, kUnion:
		return fieldRows(t, path+".", onPath)
	case kSlice, kMap:
		sub := path + "[]"
		if t.kind == kMap {
			sub = path + ".*"
		}
		var rows [][]string
		if !t.elem.named() || t.elem.kind == kEnum || t.elem.kind == kConst || t.elemNullable {
			rows = append(rows, []string{code(sub), docType(t.elem, onPath), "", yesNo(t.elemNullable), codeList(t.elemConstraints), codeList(t.elemEnum)})
		}
		return append(rows, childRows(t.elem, sub, onPath)...)
	}
	return nil
}

func docType(t *gtype, onPath map[*gtype]bool) string {
	switch t.kind {
	case kPrim:
		return map[string]string{"string": "string", "int64": "integer", "float64": "number", "bool": "boolean"}[t.prim]
	case kTime:
		return "string (date-time)"
	case kRaw:
		return "any JSON"
	case kSlice:
		return "array of " + docType(t.elem, onPath)
	case kMap:
		return "map of " + docType(t.elem, onPath)
	case kStruct:
		if onPath[t] {
			return "object (recursive: " + t.name + ")"
		}
		return "object"
	case kEnum:
		if t.prim == "string" {
			return "string enum"
		}
		return "integer enum"
	case kConst:
		return "const " + code(string(t.constJSON))
	case kUnion:
		var vs []string
		for _, v := range t.variants {
			vs = append(vs, v.value)
		}
		return fmt.Sprintf("one of (by %s): %s", code(t.disc), strings.Join(vs, ", "))
	case kAlias:
		return docType(t.elem, onPath)
	}
	return ""
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// code renders s as a Markdown code span fit for a table cell.
func code(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if fence != "`" || strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func codeList(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = code(s)
	}
	return strings.Join(out, ", ")
}
