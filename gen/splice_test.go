package gen

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/spec"
)

// schemas.go with its literals spliced in after formatting is what
// formatting it whole prints, and where the pages write text that looks
// like a placeholder, schemas.go is formatted whole.
func TestSplicedAsFormatted(t *testing.T) {
	var hostile []spec.Source
	for _, s := range spec.Bundled() {
		src := string(s.Src)
		// A placeholder inside a schema made an interpreted literal (it
		// holds a backquote), and one inside a raw literal.
		src = strings.Replace(src, `"type": "object"`, `"type": "object", "description": "`+"`§1§`"+`"`, 1)
		src = strings.Replace(src, `"minLength": 1`, `"minLength": 1, "description": "§0§"`, 1)
		hostile = append(hostile, spec.Source{File: s.File, Src: []byte(src)})
	}
	// A placeholder in a description, which is itself a placeholder while
	// the file is formatted (a code span keeps its backquotes).
	var described []spec.Source
	for _, s := range spec.Bundled() {
		src := string(s.Src)
		at := strings.Index(src, "\n## ") + 1
		at += strings.Index(src[at:], "\n\n") + 2
		src = src[:at] + "See `§0§` and `§1§`.\n\n" + src[at:]
		described = append(described, spec.Source{File: s.File, Src: []byte(src)})
	}
	// A placeholder in a file's name, which a comment of schemas.go holds.
	var named []spec.Source
	for i, s := range spec.Bundled() {
		named = append(named, spec.Source{File: fmt.Sprintf("pages/`§%d§`.md", i), Src: s.Src})
	}
	corpora := map[string][]spec.Source{
		"named":     named,
		"bundled":   spec.Bundled(),
		"synthetic": syntheticSources(12),
		"hostile":   hostile,
		"described": described,
	}
	good, err := spec.ReadPaths([]string{"../testdata/pages/good"})
	if err != nil {
		t.Fatal(err)
	}
	corpora["good"] = good
	for name, srcs := range corpora {
		s, _, err := spec.LoadLinted(srcs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m, err := build(s, Options{Package: "api"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var lits literals
		placeheld, err := render(m.schemasFile(&lits))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, spliced := lits.splice(placeheld)
		if spliced != (name != "hostile" && name != "named") {
			t.Errorf("%s: spliced %v", name, spliced)
		}
		got, err := renderedLits(m.schemasFile)()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := render(m.schemasFile(&literals{inline: true}))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: spliced schemas.go differs from schemas.go formatted whole:\n%s", name, testkit.FirstDiff(got, want))
		}
	}
}
