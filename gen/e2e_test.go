package gen

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"text/template"

	"github.com/prickle-dev/prickle/spec"
)

// corpusDir holds the generator's corpus: one folder of pages per case.
const corpusDir = "../testdata/gen"

func corpusCases(t testing.TB) []string {
	ents, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	if len(out) < 8 {
		t.Fatalf("corpus has %d cases, want at least 8", len(out))
	}
	return out
}

func loadCase(t testing.TB, dir string) *spec.Spec {
	srcs, err := spec.ReadPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := spec.LoadLinted(srcs)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return s
}

// TestCorpusRuns generates every corpus case (and the bundled pages) as
// sub-packages of one temporary module that requires this one, writes a
// round-trip test next to each, and runs them all with one go test: the
// generated code compiles outside this module, and valid values survive
// unmarshal → marshal → validate while invalid ones fail at the expected
// JSON pointer (fixtures: testdata/gen/<case>/roundtrip.json).
func TestCorpusRuns(t *testing.T) {
	goBin, tmp, write := tempModule(t, "e2e")

	pkgs := corpusPackages(t)

	for _, p := range pkgs {
		files, _, err := Generate(p.s, Options{Package: p.name})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		for _, f := range files {
			write(p.name+"/"+f.Path, f.Data)
		}
		var tools []map[string]string
		for _, tl := range p.s.Tools {
			tools = append(tools, map[string]string{"Name": tl.Name, "Go": camel(tl.Name)})
		}
		var b bytes.Buffer
		if err := roundTripTmpl.Execute(&b, map[string]any{"Pkg": p.name, "Tools": tools}); err != nil {
			t.Fatal(err)
		}
		write(p.name+"/roundtrip_test.go", b.Bytes())
		write(p.name+"/testdata/roundtrip.json", p.fix)
	}

	out := goTestModule(t, goBin, tmp, "e2e", pkgs)
	t.Logf("%s", out)
}

var roundTripTmpl = template.Must(template.New("rt").Parse(`package {{.Pkg}}

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/rt"
)

type toolFuncs struct {
	validate [2]func([]byte) error
	schema   [2]string
	newv     [2]func() any
}

var tools = map[string]toolFuncs{
{{- range .Tools}}
	{{printf "%q" .Name}}: {
		validate: [2]func([]byte) error{Validate{{.Go}}Input, Validate{{.Go}}Output},
		schema:   [2]string{ {{- .Go}}InputSchema, {{.Go}}OutputSchema},
		newv:     [2]func() any{func() any { return new({{.Go}}Input) }, func() any { return new({{.Go}}Output) }},
	},
{{- end}}
}

type fixture map[string]map[string]struct {
	Valid   []json.RawMessage ` + "`json:\"valid\"`" + `
	Invalid []struct {
		Value   json.RawMessage ` + "`json:\"value\"`" + `
		Pointer string          ` + "`json:\"pointer\"`" + `
	} ` + "`json:\"invalid\"`" + `
}

var sections = []string{"input", "output"}

func TestRoundTrip(t *testing.T) {
	b, err := os.ReadFile("testdata/roundtrip.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx fixture
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	for name, tf := range tools {
		for si, sec := range sections {
			cases, ok := fx[name][sec]
			if !ok || len(cases.Valid) == 0 || len(cases.Invalid) == 0 {
				t.Errorf("%s %s: the fixture needs valid and invalid values", name, sec)
				continue
			}
			for i, raw := range cases.Valid {
				if err := tf.validate[si](raw); err != nil {
					t.Errorf("%s %s valid[%d] does not validate: %v", name, sec, i, err)
					continue
				}
				v := tf.newv[si]()
				if err := json.Unmarshal(raw, v); err != nil {
					t.Errorf("%s %s valid[%d]: unmarshal: %v", name, sec, i, err)
					continue
				}
				out, err := json.Marshal(v)
				if err != nil {
					t.Errorf("%s %s valid[%d]: marshal: %v", name, sec, i, err)
					continue
				}
				if err := tf.validate[si](out); err != nil {
					t.Errorf("%s %s valid[%d]: marshalled %s does not validate: %v", name, sec, i, out, err)
				}
				if !sameJSON(t, raw, out) {
					t.Errorf("%s %s valid[%d]: round trip changed the value:\n in: %s\nout: %s", name, sec, i, raw, out)
				}
			}
			for i, c := range cases.Invalid {
				err := tf.validate[si](c.Value)
				var ve *rt.ValidationError
				if !errors.As(err, &ve) {
					t.Errorf("%s %s invalid[%d] %s: err = %v, want a *rt.ValidationError", name, sec, i, c.Value, err)
					continue
				}
				found := false
				for _, v := range ve.Violations {
					found = found || v.Pointer == c.Pointer
				}
				if !found {
					t.Errorf("%s %s invalid[%d]: violations %v do not name %q", name, sec, i, ve.Violations, c.Pointer)
				}
			}
		}
	}
}

// TestZeroValues marshals the zero value of every Input and Output: each
// required array must come out [] (never null), each required nullable
// property null (never absent).
func TestZeroValues(t *testing.T) {
	for name, tf := range tools {
		for si, sec := range sections {
			out, err := json.Marshal(tf.newv[si]())
			if err != nil {
				if strings.Contains(err.Error(), "variants set") {
					continue // a required union has no zero value
				}
				t.Errorf("%s %s: marshal the zero value: %v", name, sec, err)
				continue
			}
			var schema struct {
				Properties map[string]json.RawMessage ` + "`json:\"properties\"`" + `
				Required   []string                   ` + "`json:\"required\"`" + `
			}
			if err := json.Unmarshal([]byte(tf.schema[si]), &schema); err != nil {
				t.Fatal(err)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%s %s: %s: %v", name, sec, out, err)
			}
			for _, r := range schema.Required {
				v, ok := got[r]
				if !ok {
					t.Errorf("%s %s: required %q is missing from %s", name, sec, r, out)
					continue
				}
				nullable, isArray := kinds(schema.Properties[r])
				switch {
				case nullable && string(v) != "null":
					t.Errorf("%s %s: required nullable %q is %s, want null", name, sec, r, v)
				case !nullable && isArray && string(v) != "[]":
					t.Errorf("%s %s: required array %q is %s, want []", name, sec, r, v)
				case !nullable && string(v) == "null":
					t.Errorf("%s %s: required %q is null", name, sec, r)
				}
			}
		}
	}
}

// kinds reads whether a property schema admits null, and whether it is an
// array.
func kinds(raw json.RawMessage) (nullable, isArray bool) {
	var s struct {
		Type  any               ` + "`json:\"type\"`" + `
		AnyOf []json.RawMessage ` + "`json:\"anyOf\"`" + `
		OneOf []json.RawMessage ` + "`json:\"oneOf\"`" + `
		Enum  []any             ` + "`json:\"enum\"`" + `
	}
	json.Unmarshal(raw, &s)
	switch ty := s.Type.(type) {
	case string:
		isArray = ty == "array"
		nullable = ty == "null"
	case []any:
		for _, x := range ty {
			nullable = nullable || x == "null"
			isArray = isArray || x == "array"
		}
	}
	for _, alt := range append(s.AnyOf, s.OneOf...) {
		n, a := kinds(alt)
		nullable = nullable || n
		isArray = isArray || a
	}
	for _, e := range s.Enum {
		nullable = nullable || e == nil
	}
	if s.Type == nil && len(s.AnyOf)+len(s.OneOf)+len(s.Enum) == 0 && !strings.Contains(string(raw), "\"const\"") && !strings.Contains(string(raw), "\"$ref\"") {
		nullable = true // any JSON value: null included
	}
	return nullable, isArray
}

// sameJSON compares two JSON documents as values: numbers by value,
// date-times by instant.
func sameJSON(t *testing.T, a, b []byte) bool {
	return equal(decode(t, a), decode(t, b))
}

func decode(t *testing.T, b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		rx, _ := new(big.Rat).SetString(string(x))
		ry, _ := new(big.Rat).SetString(string(y))
		return rx != nil && ry != nil && rx.Cmp(ry) == 0
	case string:
		y, ok := b.(string)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		tx, err1 := time.Parse(time.RFC3339Nano, x)
		ty, err2 := time.Parse(time.RFC3339Nano, y)
		return err1 == nil && err2 == nil && tx.Equal(ty)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !equal(x[k], y[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
`))

// tempModule makes a temporary module, example.com/NAME, that requires this
// one (replaced by the working tree). It returns the go command of the
// toolchain running the test, the module's folder, and a function that
// writes a file into it. It skips the test in -short mode and without a go
// command.
func tempModule(t *testing.T, name string) (goBin, dir string, write func(name string, data []byte)) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go test in a temporary module")
	}
	goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command")
		}
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	write = func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", []byte("module example.com/"+name+"\n\ngo 1.26\n\nrequire github.com/prickle-dev/prickle v0.0.0\n\nreplace github.com/prickle-dev/prickle => "+repo+"\n"))
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", sum)
	return goBin, dir, write
}

// goTestModule runs go test on every package of the temporary module
// example.com/MOD in dir and requires each of pkgs to pass; it returns the
// output.
func goTestModule(t *testing.T, goBin, dir, mod string, pkgs []corpusPkg) []byte {
	t.Helper()
	cmd := exec.Command(goBin, "test", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test in the generated module: %v\n%s", err, out)
	}
	for _, p := range pkgs {
		if !strings.Contains(string(out), "ok  \texample.com/"+mod+"/"+p.name) {
			t.Errorf("package %s did not pass:\n%s", p.name, out)
		}
	}
	return out
}

// corpusPkg is a spec to generate as a package of a temporary module, with
// its round-trip fixtures (nil when it has none).
type corpusPkg struct {
	name string
	s    *spec.Spec
	fix  []byte
}

// corpusPackages returns every corpus case and the bundled pages (package
// api), each with its round-trip fixtures.
func corpusPackages(t *testing.T) []corpusPkg {
	t.Helper()
	var pkgs []corpusPkg
	for _, c := range corpusCases(t) {
		fix, err := os.ReadFile(filepath.Join(corpusDir, c, "roundtrip.json"))
		if err != nil {
			t.Fatalf("case %s has no roundtrip.json fixture: %v", c, err)
		}
		pkgs = append(pkgs, corpusPkg{c, loadCase(t, filepath.Join(corpusDir, c)), fix})
	}
	bundled, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	fix, err := os.ReadFile("testdata/bundled.roundtrip.json")
	if err != nil {
		t.Fatal(err)
	}
	return append(pkgs, corpusPkg{"api", bundled, withDerived(t, bundled, fix)})
}

// withDerived adds to the round-trip fixture fix the values of the tools it
// lacks, derived from the spec, so that a page added to the bundled ones
// needs no hand-written values: valid inputs are the example input and the
// input schema's instance (jsonschema.Instance), the valid output is the
// output schema's instance, and the invalid value of each side is an array
// where the schema asks for an object (violation at the root).
func withDerived(t *testing.T, s *spec.Spec, fix []byte) []byte {
	t.Helper()
	type invalid struct {
		Value   json.RawMessage `json:"value"`
		Pointer string          `json:"pointer"`
	}
	type cases struct {
		Valid   []json.RawMessage `json:"valid"`
		Invalid []invalid         `json:"invalid"`
	}
	var m map[string]map[string]cases
	if err := json.Unmarshal(fix, &m); err != nil {
		t.Fatal(err)
	}
	instance := func(b *spec.JSONBlock) json.RawMessage {
		v, err := b.Schema().Root().Instance()
		if err != nil {
			t.Fatalf("an instance of %s: %v", b.Pos, err)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	for _, tool := range s.Tools {
		if _, ok := m[tool.Name]; ok {
			continue
		}
		bad := []invalid{{Value: json.RawMessage(`[]`), Pointer: ""}}
		m[tool.Name] = map[string]cases{
			"input":  {Valid: []json.RawMessage{tool.ExampleInput.JSON, instance(tool.InputSchema)}, Invalid: bad},
			"output": {Valid: []json.RawMessage{instance(tool.OutputSchema)}, Invalid: bad},
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
