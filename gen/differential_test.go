package gen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"text/template"

	"github.com/prickle-dev/prickle/gen/internal/validatordiff"
	"github.com/prickle-dev/prickle/spec"
)

// checksDir holds pages that put every keyword the schema model knows
// before the generated validators.
const checksDir = "testdata/checks"

// growDir holds pages that grow the reference: unions, maps, nullable
// types. They are loaded alone, not with the bundled pages, which may come
// to document the same tools (testdata/grow/README.txt).
const growDir = "../testdata/grow"

// TestValidatorsMatchTheOracle generates the validators of every corpus
// case, of the keyword corpus (testdata/checks), of the bundled pages and
// of testdata/grow's, as packages of one temporary module. A test
// written next to each validates the cases validatordiff makes from the
// pages (examples, derived conformance cases, sampled values and their
// mutations) and writes what it found; here each is compared with what the
// compiled schema (the oracle) says of the same document: the same
// verdict and the same violations.
func TestValidatorsMatchTheOracle(t *testing.T) {
	goBin, tmp, write := tempModule(t, "diff")
	type set struct {
		name  string
		s     *spec.Spec
		cases []validatordiff.Case
	}
	var sets []set
	for _, c := range corpusCases(t) {
		sets = append(sets, set{name: c, s: loadCase(t, filepath.Join(corpusDir, c))})
	}
	bundled, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	sets = append(sets, set{name: "checks", s: loadCase(t, checksDir)}, set{name: "bundled", s: bundled}, set{name: "grown", s: loadCase(t, growDir)})
	var pkgs []corpusPkg
	for i := range sets {
		st := &sets[i]
		files, _, err := Generate(st.s, Options{Package: st.name})
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for _, f := range files {
			write(st.name+"/"+f.Path, f.Data)
		}
		var tools []map[string]string
		for _, tl := range st.s.Tools {
			tools = append(tools, map[string]string{"Name": tl.Name, "Go": camel(tl.Name)})
		}
		var b bytes.Buffer
		if err := driverTmpl.Execute(&b, map[string]any{"Pkg": st.name, "Tools": tools}); err != nil {
			t.Fatal(err)
		}
		write(st.name+"/driver_test.go", b.Bytes())
		st.cases = validatordiff.Cases(st.s)
		raw, err := json.Marshal(st.cases)
		if err != nil {
			t.Fatal(err)
		}
		write(st.name+"/testdata/cases.json", raw)
		pkgs = append(pkgs, corpusPkg{name: st.name, s: st.s})
	}
	goTestModule(t, goBin, tmp, "diff", pkgs)

	oracle := validatordiff.NewOracle()
	total := 0
	for _, st := range sets {
		raw, err := os.ReadFile(filepath.Join(tmp, st.name, "testdata", "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		var got []validatordiff.Result
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(st.cases) {
			t.Fatalf("%s: %d results for %d cases", st.name, len(got), len(st.cases))
		}
		for i, c := range st.cases {
			want, err := oracle.Judge(c.Tool+"/"+c.Section, validatordiff.Schema(st.s, c.Tool, c.Section), c.Doc)
			if err != nil {
				t.Fatal(err)
			}
			if d := validatordiff.Diff(got[i], want); d != "" {
				t.Errorf("%s: %s: %s", st.name, c, d)
			}
		}
		total += len(st.cases)
		t.Logf("%s: %d cases", st.name, len(st.cases))
	}
	t.Logf("%d cases in all", total)
}

var driverTmpl = template.Must(template.New("driver").Parse(`package {{.Pkg}}

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/prickle-dev/prickle/rt"
)

var validators = map[string]func([]byte) error{
{{- range .Tools}}
	{{printf "%q" (print .Name "/input")}}:  Validate{{.Go}}Input,
	{{printf "%q" (print .Name "/output")}}: Validate{{.Go}}Output,
{{- end}}
}

type result struct {
	Valid      bool           ` + "`json:\"valid\"`" + `
	Violations []rt.Violation ` + "`json:\"violations,omitempty\"`" + `
	Err        string         ` + "`json:\"err,omitempty\"`" + `
}

// TestDrive validates every case and writes what it found, for the
// differential test of package gen to compare with the oracle.
func TestDrive(t *testing.T) {
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Tool    string ` + "`json:\"tool\"`" + `
		Section string ` + "`json:\"section\"`" + `
		Doc     []byte ` + "`json:\"doc\"`" + `
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	out := make([]result, len(cases))
	for i, c := range cases {
		validate, ok := validators[c.Tool+"/"+c.Section]
		if !ok {
			t.Fatalf("no validator of %s %s", c.Tool, c.Section)
		}
		err := validate(c.Doc)
		var ve *rt.ValidationError
		switch {
		case err == nil:
			out[i].Valid = true
		case errors.As(err, &ve):
			out[i].Violations = ve.Violations
		default:
			out[i].Err = err.Error()
		}
	}
	b, err = json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("testdata/results.json", b, 0o644); err != nil {
		t.Fatal(err)
	}
}
`))
