package cireport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
)

func TestAnnotation(t *testing.T) {
	for _, c := range []struct {
		a    Annotation
		want string
	}{
		{Annotation{Level: Error, File: "pages/a.md", Line: 3, Col: 7, Title: "lint: rule", Message: "bad"},
			"::error file=pages/a.md,line=3,col=7,title=lint%3A rule::bad"},
		// The message keeps ':' and ',' but not line breaks or '%', which
		// the runner would read as the end of the command or an escape.
		{Annotation{Level: Warning, Message: "50% off\nsecond line: a, b\r"},
			"::warning::50%25 off%0Asecond line: a, b%0D"},
		// Property values escape their separators.
		{Annotation{Level: Notice, File: "dir,with:odd%name.md", Title: "a,b"},
			"::notice file=dir%2Cwith%3Aodd%25name.md,title=a%2Cb::"},
		// No line: no col either; no level: an error.
		{Annotation{File: "a.md", Col: 4, Message: "m"}, "::error file=a.md::m"},
	} {
		if got := c.a.String(); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.a, got, c.want)
		}
	}
}

// The table, rendered as GitHub renders Markdown (GFM tables), keeps every
// cell's text whole: a pipe or a line break inside a cell, or a backtick
// inside a code span, does not break the table. (GitHub lets <br> through;
// goldmark needs WithUnsafe for it.)
func TestTableRendersWhole(t *testing.T) {
	var md bytes.Buffer
	rows := [][]string{
		{"a|b", Code("x|y"), "two\nlines"},
		{"plain", Code("has `tick`"), ""},
	}
	if err := Table(&md, []string{"One", "Two", "Three"}, rows); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithRendererOptions(html.WithUnsafe())).Convert(md.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"<th>One</th>", "<th>Three</th>",
		"<td>a|b</td>", "<td><code>x|y</code></td>", "<td>two<br>lines</td>",
		"<td><code>has `tick`</code></td>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered table lacks %s:\n%s\nfrom\n%s", want, got, md.String())
		}
	}
	if n := strings.Count(got, "<tr>"); n != 3 {
		t.Errorf("%d rows rendered, want 3 (header and two):\n%s", n, got)
	}
}

func TestTableEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := Table(&b, []string{"A"}, nil); err != nil || b.Len() != 0 {
		t.Errorf("no rows: wrote %q, %v; want nothing", b.String(), err)
	}
}
