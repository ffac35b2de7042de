package spec

import (
	"bytes"
	"fmt"
)

// Render renders a tool's page in canonical form: the layout every page
// follows, JSON indented by two spaces with key order and numbers kept, one
// blank line between blocks and a final newline.
func Render(t *Tool) ([]byte, error) {
	var b bytes.Buffer
	para := func(s string) {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	para("# " + t.Page.Title)
	for _, p := range t.Page.Preamble {
		para(p.Text)
	}
	para("## " + t.Name)
	for _, p := range t.Description {
		para(p.Text)
	}
	for _, sec := range []struct {
		name string
		b    *JSONBlock
	}{{SectionExample, t.ExampleInput}, {SectionInput, t.InputSchema}, {SectionOutput, t.OutputSchema}} {
		para("### " + sec.name)
		if sec.b == nil || len(sec.b.JSON) == 0 {
			return nil, fmt.Errorf("render %s: section %q has no JSON", t.Name, sec.name)
		}
		b.WriteString("```json\n")
		ind, err := appendIndented(b.AvailableBuffer(), sec.b.JSON)
		if err != nil {
			return nil, fmt.Errorf("render %s: section %q: %w", t.Name, sec.name, err)
		}
		b.Write(ind)
		b.WriteString("\n```\n\n")
	}
	for _, p := range t.Notes {
		para(p.Text)
	}
	b.WriteString("[" + readOnline + "](" + t.DocURL + ")\n")
	return b.Bytes(), nil
}

// Format parses one page and renders it canonically. It refuses a page
// with errors, since rendering it could drop what it cannot place.
func Format(file string, src []byte) ([]byte, error) {
	p, ds := ParsePage(file, src)
	if ds.HasErrors() {
		return nil, &PagesError{Diagnostics: ds.Errors()}
	}
	return Render(toolOf(p))
}
