package spec

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/prickle-dev/prickle/internal/testkit"
)

// TestMain turns off the minimizing of new fuzz inputs unless the command
// line asks for it (-fuzzminimizetime). The seeds are whole pages of several
// kilobytes: minimizing every input that widens coverage (up to 60 s each by
// default) would take a whole -fuzztime=60s run, with almost no input
// tried. Crashers are then kept as found.
func TestMain(m *testing.M) {
	flag.Set("test.fuzzminimizetime", "0s") // the command line, parsed later, wins
	os.Exit(m.Run())
}

// FuzzParse feeds arbitrary pages to the parser, the builder, the linter
// and the renderer: none may panic. A page that lints without error must
// render, and formatting the rendering again must give the same bytes; a
// page that Format accepts must format to a fixed point.
//
//	go test -fuzz=FuzzParse -fuzztime=60s ./spec/
func FuzzParse(f *testing.F) {
	for _, s := range Bundled() {
		f.Add(s.Src)
	}
	for _, kind := range []string{"broken", "good"} {
		for _, c := range corpus(f, kind) {
			for _, s := range c.srcs {
				f.Add(s.Src)
			}
		}
	}
	f.Add([]byte(""))
	f.Add([]byte("# t\n\n## x\n\n```json\n{\n```\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		const file = "fuzz.md"
		p, pd := ParsePage(file, src)
		if p == nil {
			t.Fatal("ParsePage returned no page")
		}
		s, ds := Lint([]*Page{p}, pd)
		for _, d := range ds {
			if d.Pos.Line < 1 || d.Pos.Col < 1 {
				t.Fatalf("bad position: %s", d)
			}
		}
		if _, err := s.Marshal(); err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		for _, tool := range s.Tools {
			out, err := Render(tool)
			if ds.HasErrors() {
				continue // rendering may fail; it must not panic
			}
			if err != nil {
				t.Fatalf("a page without errors does not render: %v", err)
			}
			again, err := Format(file, out)
			if err != nil {
				t.Fatalf("the rendering of a page without errors is refused: %v\n%s", err, out)
			}
			if !bytes.Equal(again, out) {
				t.Fatalf("formatting the rendering changes it:\n%s", testkit.FirstDiff(again, out))
			}
		}
		if out, err := Format(file, src); err == nil {
			again, err := Format(file, out)
			if err != nil {
				t.Fatalf("Format accepts the page but not its own output: %v\n%s", err, out)
			}
			if !bytes.Equal(again, out) {
				t.Fatalf("Format is not idempotent:\n%s", testkit.FirstDiff(again, out))
			}
		}
	})
}
