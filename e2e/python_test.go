//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/internal/schemacompile"
	"github.com/prickle-dev/prickle/internal/validation"
	"github.com/prickle-dev/prickle/spec"
)

// pyStamp marks a complete install of python/.venv (e2e/install.sh).
const pyStamp = ".prickle-e2e-installed"

// pyEnv is e2e's Python: the virtual environment e2e/install.sh makes in
// python/.venv, holding what python/requirements.txt and the starter's
// examples/python/requirements.txt pin, never the system's packages.
type pyEnv struct {
	dir     string // e2e/python, absolute
	python  string // the environment's interpreter
	codegen string // datamodel-codegen
}

// needPython returns e2e's Python, or skips the test, saying what to
// install, unless PRICKLE_E2E=1, when that is a failure.
func needPython(t *testing.T) pyEnv {
	t.Helper()
	dir, err := filepath.Abs("python")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, ".venv", "bin")
	e := pyEnv{dir: dir, python: filepath.Join(bin, "python"), codegen: filepath.Join(bin, "datamodel-codegen")}
	var missing []string
	for _, p := range []string{e.python, e.codegen, filepath.Join(dir, ".venv", pyStamp)} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	how := "run e2e/install.sh, which installs it from the Python package index"
	if _, err := exec.LookPath("python3"); err != nil {
		how = "install Python 3.11 or later with venv and pip (Debian: apt-get install python3-venv), then " + how
	}
	needInstalled(t, "the end-to-end Python tools are", missing, how)
	return e
}

// codegenArgs are datamodel-codegen's options, as conformance/README.md
// gives them to third parties.
var codegenArgs = []string{"--input-file-type", "jsonschema", "--output-model-type", "pydantic_v2.BaseModel",
	"--target-python-version", "3.11", "--formatters", "builtin", "--disable-timestamp"}

// pydanticModels runs datamodel-codegen on a folder of schemas (an
// export's schemas/) into the package dir/name, one module per schema
// file (claim_task.input.json: claim_task_input), and checks that each
// module defines the model its schema's title names. It returns the
// package's folder and the module and class of each file.
func pydanticModels(t *testing.T, e pyEnv, schemas, dir, name string) (string, map[string][2]string) {
	t.Helper()
	pkg := filepath.Join(dir, name)
	args := append([]string{"--input", schemas, "--output", pkg}, codegenArgs...)
	if r := run(t, dir, nil, e.codegen, args...); r.code != 0 {
		t.Fatalf("datamodel-codegen: %v", r)
	}
	files, err := filepath.Glob(filepath.Join(schemas, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in %s (%v)", schemas, err)
	}
	models := map[string][2]string{}
	for _, f := range files {
		var s struct{ Title string }
		if err := json.Unmarshal([]byte(readFile(t, f)), &s); err != nil || s.Title == "" {
			t.Fatalf("%s: no title (%v)", f, err)
		}
		module := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(f), ".json"), ".", "_")
		if src := readFile(t, filepath.Join(pkg, module+".py")); !strings.Contains(src, "\nclass "+s.Title+"(BaseModel):") {
			t.Errorf("%s.py defines no model %s", module, s.Title)
		}
		models[filepath.Base(f)] = [2]string{name + "." + module, s.Title}
	}
	return pkg, models
}

// A modelCase is a JSON text for one model: a value the schema admits, or
// one it refuses (breach names how).
type modelCase struct {
	ID     string `json:"id"`
	Module string `json:"module"`
	Class  string `json:"class"`
	JSON   string `json:"json"`

	breach string // "" for a valid value
	page   bool   // from the pages' schemas (not a probe)
	alone  bool   // the validator names only the breached keyword
}

// A breach is a value that breaks a schema by one keyword, in one way, at
// one place: key is the keyword, and after a colon the way when it is not
// the plain one.
type breach struct {
	key, at string
	doc     any
}

// breaches returns values that break schema s, each by one keyword at one
// place: v is a valid value at pointer at, and put returns the whole
// document with v replaced. It breaks what the pages' schemas hold:
// required, type, enum, additionalProperties false, string lengths,
// patterns (also as other regex engines read them), formats, bounds,
// maxItems; an array's first item and an object's properties in turn.
func breaches(s *jsonschema.Schema, v any, at string, put func(any) any) []breach {
	b := &breaker{s: s, at: at, put: put}
	for _, alt := range s.List("anyOf") { // a nullable value: break the branch it takes
		if v != nil && !alt.OnlyNull() {
			b.out = append(b.out, breaches(alt, v, at, put)...)
		}
	}
	b.types()
	if s.Has("enum") {
		b.add("enum", "not-an-allowed-value")
	}
	switch x := v.(type) {
	case map[string]any:
		b.object(x)
	case []any:
		b.array(x)
	case string:
		b.text(x)
	case json.Number:
		b.numeric()
	}
	return b.out
}

// breaker collects the breaches of schema s at pointer at; put returns
// the whole document with the value there replaced.
type breaker struct {
	s   *jsonschema.Schema
	at  string
	put func(any) any
	out []breach
}

func (b *breaker) add(key string, bad any) { b.out = append(b.out, breach{key, b.at, b.put(bad)}) }

// bound is the number keyword k holds, if it does.
func (b *breaker) bound(k string) (float64, bool) {
	if kw := b.s.Get(k); kw != nil {
		if r, ok := kw.Number(); ok {
			f, _ := r.Float64()
			return f, true
		}
	}
	return 0, false
}

// types breaks "type": a value of a type it leaves out, and the
// near-misses other validators take (a fraction or a numeric string for
// an integer, 0 or "true" for a boolean).
func (b *breaker) types() {
	types := b.s.Types()
	if len(types) == 0 {
		return
	}
	for _, w := range []struct {
		typ string
		v   any
	}{{"integer", json.Number("12345")}, {"string", "12345"}, {"boolean", true}, {"object", map[string]any{}}} {
		if !slices.Contains(types, w.typ) && !(w.typ == "integer" && slices.Contains(types, "number")) {
			key := "type"
			if f, ok := b.s.String("format"); ok && w.typ == "integer" {
				key = "type: a number for a " + f + " string" // pydantic reads some formats from numbers
			}
			b.add(key, w.v)
			break
		}
	}
	if slices.Contains(types, "integer") {
		b.add("type: a fraction for an integer", json.Number("1.5"))
		b.add("type: a numeric string for an integer", "1")
	}
	if slices.Contains(types, "boolean") {
		b.add("type: 0 or 1 for a boolean", json.Number("1"))
		b.add(`type: "true" for a boolean`, "true")
	}
}

// object breaks an object's required members and additionalProperties
// false, then each of its properties in turn.
func (b *breaker) object(x map[string]any) {
	for _, r := range b.s.Required() {
		c := maps.Clone(x)
		delete(c, r)
		b.add("required", c)
	}
	if ap := b.s.Sub("additionalProperties"); ap != nil && ap.IsFalse() {
		c := maps.Clone(x)
		c["unexpected_property"] = true
		b.add("additionalProperties: false", c)
	}
	for _, m := range b.s.Properties() {
		if pv, ok := x[m.Name]; ok {
			b.out = append(b.out, breaches(m.Schema, pv, b.at+"/"+m.Name, func(n any) any {
				c := maps.Clone(x)
				c[m.Name] = n
				return b.put(c)
			})...)
		}
	}
}

// array breaks an array's maxItems, then its first item.
func (b *breaker) array(x []any) {
	if hi, ok := b.bound("maxItems"); ok && len(x) > 0 {
		bad := slices.Clone(x)
		for len(bad) <= int(hi) {
			bad = append(bad, x[0])
		}
		b.add("maxItems", bad)
	}
	if items := b.s.Sub("items"); items != nil && len(x) > 0 {
		b.out = append(b.out, breaches(items, x[0], b.at+"/0", func(n any) any {
			c := slices.Clone(x)
			c[0] = n
			return b.put(c)
		})...)
	}
}

// text breaks a string's lengths, pattern (also as other regex engines
// read it) and format.
func (b *breaker) text(x string) {
	if lo, ok := b.bound("minLength"); ok && lo >= 1 {
		b.add("minLength", "")
	}
	if hi, ok := b.bound("maxLength"); ok {
		r := []rune(x + "a")
		for len(r) <= int(hi) {
			r = append(r, r[len(r)-1])
		}
		b.add("maxLength", string(r))
	}
	if p, ok := b.s.String("pattern"); ok {
		b.add("pattern", "!"+x)
		b.add("pattern: $ before a final newline", x+"\n")
		if i := strings.IndexAny(x, "0123456789"); i >= 0 && strings.Contains(p, `\d`) {
			b.add(`pattern: \d as a Unicode digit`, x[:i]+"\u0663"+x[i+1:])
		}
	}
	switch f, _ := b.s.String("format"); f {
	case "uri":
		b.add("format: uri", "not a uri")
	case "date-time":
		b.add("format: date-time", "2026-13-45T25:61:00Z")
		b.add("format: date-time without an offset", "2026-01-15T09:30:00")
	}
}

// numeric breaks a number's bounds.
func (b *breaker) numeric() {
	if lo, ok := b.bound("minimum"); ok {
		b.add("minimum", json.Number(fmt.Sprint(lo-1)))
	}
	if hi, ok := b.bound("maximum"); ok {
		b.add("maximum", json.Number(fmt.Sprint(hi+1)))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// decodeJSON decodes with numbers as json.Number, as breaches reads them.
func decodeJSON(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// modelCases returns the cases of one schema: each valid value, checked
// valid by the project's validator, and each breach of it, checked
// invalid, marked alone when the validator names no other keyword.
func modelCases(t *testing.T, name string, raw []byte, module, class string, valid map[string]any) []modelCase {
	t.Helper()
	compiled, err := schemacompile.Compile("prickle:"+name, raw)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	var out []modelCase
	for _, label := range slices.Sorted(maps.Keys(valid)) {
		v := valid[label]
		text := mustJSON(t, v)
		if err := schemacompile.Validate(compiled, []byte(text)); err != nil {
			t.Fatalf("%s %s is not valid against its schema: %v\n%s", name, label, err, text)
		}
		out = append(out, modelCase{ID: name + " " + label, Module: module, Class: class, JSON: text})
		for _, b := range breaches(doc.Root(), v, "", func(n any) any { return n }) {
			bad := mustJSON(t, b.doc)
			verr := schemacompile.Validate(compiled, []byte(bad))
			if verr == nil {
				t.Errorf("%s: the breach %q at %s is valid against the schema: %s", name, b.key, b.at, bad)
				continue
			}
			ve, ok := verr.(*validation.ValidationError)
			if !ok {
				t.Fatalf("%s: the breach %q at %s could not be checked: %v", name, b.key, b.at, verr)
			}
			kw, _, _ := strings.Cut(b.key, ":")
			alone := true
			for _, v := range ve.Violations {
				// A nullable value's null branch refuses every breach of it.
				null := v.Keyword == "type" && doc.At(strings.TrimSuffix(v.KeywordLocation, "/type")).OnlyNull()
				alone = alone && (v.Keyword == kw || null)
			}
			out = append(out, modelCase{ID: fmt.Sprintf("%s %s %s at %s", name, label, b.key, b.at), Module: module,
				Class: class, JSON: bad, breach: b.key, alone: alone})
		}
	}
	return out
}

// A probe is a keyword the pages do not use today, in a schema of its own
// (testdata/keywords.json): a value it admits and one it refuses.
type probe struct {
	Keyword string          `json:"keyword"`
	Schema  json.RawMessage `json:"schema"`
	Valid   json.RawMessage `json:"valid"`
	Invalid json.RawMessage `json:"invalid"`
}

// TestPythonModels is a Python third party's second step:
// datamodel-codegen makes pydantic v2 models of the exported schemas, one
// module per schema, each model named by its schema's title. Every
// documented example input and a valid value of every schema pass their
// model; a missing required member, a wrong type and a value outside an
// enum fail it. What else breaks a schema and passes its model is
// measured, for every keyword of the pages and for those the pages do not
// use yet (testdata/keywords.json), and must be what conformance/README.md
// lists, neither more nor less.
func TestPythonModels(t *testing.T) {
	e := needPython(t)
	export, sp := exportPages(t)
	work := t.TempDir()
	pkg, models := pydanticModels(t, e, filepath.Join(export, "schemas"), work, "models")
	cases := pageModelCases(t, filepath.Join(export, "schemas"), sp, models)
	probeDir := filepath.Join(t.TempDir(), "probes")
	cases = append(cases, probeCases(t, probeDir)...)
	probePkg, _ := pydanticModels(t, e, probeDir, work, "probes")
	version, results := checkModels(t, e, work, cases, pkg, probePkg)

	byKey := tallyBreaches(t, cases, results)
	var dropped []string
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		tl := byKey[key]
		where := map[bool]string{true: "pages", false: "probe"}[tl.page]
		if tl.refused < tl.alone {
			dropped = append(dropped, key)
			t.Logf("PASSES %-45s %s: %d of %d refused; passes: %.80s", key, where, tl.refused, tl.alone, tl.accepted)
		} else {
			t.Logf("refused %-44s %s: %d of %d (%.60s)", key, where, tl.refused, tl.alone, tl.reason)
		}
	}
	for _, kept := range []string{"required", "type", "enum"} {
		if tl := byKey[kept]; tl == nil || tl.refused == 0 || tl.refused < tl.alone {
			t.Errorf("%s: the models must refuse every value that breaks it: %+v", kept, tl)
		}
	}
	listed := pydanticDropsListed(t)
	if !slices.Equal(dropped, listed) {
		t.Errorf("what breaks a schema and passes its pydantic model: measured %q, conformance/README.md lists %q", dropped, listed)
	}
	t.Logf("pydantic %s: %d cases; %d kinds of breach passed their model", version, len(cases), len(dropped))
}

// pageModelCases returns the cases of every exported schema (in dir) of
// sp's tools: a value of the schema, the example input, and the values
// that break it (modelCases), for the models that pydanticModels made.
func pageModelCases(t *testing.T, dir string, sp *spec.Spec, models map[string][2]string) []modelCase {
	t.Helper()
	var cases []modelCase
	for _, tool := range sp.Tools {
		for _, kind := range []string{"input", "output"} {
			file := tool.Name + "." + kind + ".json"
			raw := []byte(readFile(t, filepath.Join(dir, file)))
			doc, err := jsonschema.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			inst, err := doc.Root().Instance()
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			valid := map[string]any{"instance": decodeJSON(t, []byte(mustJSON(t, inst)))}
			if kind == "input" && tool.ExampleInput != nil {
				valid["example"] = decodeJSON(t, tool.ExampleInput.JSON)
			}
			m := models[file]
			for _, c := range modelCases(t, file, raw, m[0], m[1], valid) {
				c.page = true
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// probeCases writes, into dir, a schema for each keyword the pages do not
// use (testdata/keywords.json), in an object's member v, and returns the
// cases of each: the value it admits and the one it refuses.
func probeCases(t *testing.T, dir string) []modelCase {
	t.Helper()
	var probes []probe
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join("testdata", "keywords.json"))), &probes); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var cases []modelCase
	for i, p := range probes {
		schema := fmt.Sprintf(`{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"Probe","type":"object",`+
			`"properties":{"v":%s},"required":["v"]}`, p.Schema)
		file := fmt.Sprintf("probe%02d.json", i)
		if err := os.WriteFile(filepath.Join(dir, file), []byte(schema), 0o644); err != nil {
			t.Fatal(err)
		}
		compiled, err := schemacompile.Compile("prickle:"+file, []byte(schema))
		if err != nil {
			t.Fatalf("%s: %v", p.Keyword, err)
		}
		good, bad := `{"v":`+string(p.Valid)+`}`, `{"v":`+string(p.Invalid)+`}`
		if schemacompile.Validate(compiled, []byte(good)) != nil || schemacompile.Validate(compiled, []byte(bad)) == nil {
			t.Fatalf("probe %s: %s must be valid and %s invalid", p.Keyword, good, bad)
		}
		m := fmt.Sprintf("probes.probe%02d", i)
		cases = append(cases, modelCase{ID: p.Keyword + " valid", Module: m, Class: "Probe", JSON: good},
			modelCase{ID: p.Keyword + " invalid", Module: m, Class: "Probe", JSON: bad, breach: p.Keyword, alone: true})
	}
	return cases
}

// modelResult is what check_models.py found of a case: whether its model
// accepted the value, and if not, why.
type modelResult struct {
	ID       string
	Accepted bool
	Error    string
}

// checkModels has check_models.py parse every case with its model (in
// the packages pkg and probePkg) and returns pydantic's version and a
// result per case.
func checkModels(t *testing.T, e pyEnv, work string, cases []modelCase, pkg, probePkg string) (pydantic string, results []modelResult) {
	t.Helper()
	casesFile := filepath.Join(work, "cases.json")
	if err := os.WriteFile(casesFile, []byte(mustJSON(t, cases)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, work, nil, e.python, filepath.Join(e.dir, "check_models.py"), casesFile, pkg, probePkg)
	var out struct {
		Pydantic string
		Results  []modelResult
	}
	if err := json.Unmarshal(r.stdout, &out); r.code != 0 || err != nil || len(out.Results) != len(cases) {
		t.Fatalf("check_models.py: %v (%d results for %d cases)\n%v", err, len(out.Results), len(cases), r)
	}
	return out.Pydantic, out.Results
}

// breachTally is what the models did with the values that broke a schema
// by one keyword alone.
type breachTally struct {
	page             bool // the keyword is the pages' (not a probe's)
	alone, refused   int
	accepted, reason string // a value accepted; why one was refused
}

// tallyBreaches counts, by breach, how many values the models refused of
// those that broke the schema by that keyword alone; a valid value that
// its model refuses fails t.
func tallyBreaches(t *testing.T, cases []modelCase, results []modelResult) map[string]*breachTally {
	t.Helper()
	byKey := map[string]*breachTally{}
	for i, c := range cases {
		res := results[i]
		switch {
		case c.breach == "" && !res.Accepted:
			t.Errorf("%s: valid, yet its model refuses it: %s\n%s", c.ID, res.Error, c.JSON)
		case c.breach == "" || !c.alone:
		default:
			tl := byKey[c.breach]
			if tl == nil {
				tl = &breachTally{page: c.page}
				byKey[c.breach] = tl
			}
			tl.alone++
			if res.Accepted {
				tl.accepted = c.JSON
			} else {
				tl.refused++
				tl.reason = res.Error
			}
		}
	}
	return byKey
}

// pydanticTableHeader opens conformance/README.md's table of what the
// pydantic models let through.
const pydanticTableHeader = "| what breaks the schema | in the pages | what its pydantic model does |"

// pydanticDropsListed returns the first cell of each row of that table,
// backquotes removed, sorted.
func pydanticDropsListed(t *testing.T) []string {
	t.Helper()
	readme := readFile(t, filepath.Join("..", "conformance", "README.md"))
	_, table, ok := strings.Cut(readme, pydanticTableHeader+"\n")
	if !ok {
		t.Fatalf("conformance/README.md has no table %q", pydanticTableHeader)
	}
	var keys []string
	for _, line := range strings.Split(table, "\n")[1:] { // past the separator
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			break
		}
		cell := strings.Split(line, "|")[1]
		keys = append(keys, strings.TrimSpace(strings.ReplaceAll(cell, "`", "")))
	}
	slices.Sort(keys)
	return keys
}
