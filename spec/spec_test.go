package spec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/internal/testkit"
)

// corpusDir holds the pages of the tests: broken/ has one defect per page
// (named after the rule it breaks: RULE.md, RULE.VARIANT.md, or a folder
// RULE/ for findings across pages), good/ pages lint without error.
const corpusDir = "../testdata/pages"

// corpusCase is one page, or one folder of pages linted together.
type corpusCase struct {
	name string // file or folder name, without .md
	srcs []Source
}

// corpus reads testdata/pages/KIND: every *.md is a case, every folder a
// case of its pages.
func corpus(t testing.TB, kind string) []corpusCase {
	t.Helper()
	dir := filepath.Join(corpusDir, kind)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusCase
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		srcs, err := ReadPaths([]string{p})
		if err != nil {
			t.Fatal(err)
		}
		// Name the files relative to the corpus folder, as the goldens do.
		for i := range srcs {
			rel, err := filepath.Rel(dir, filepath.FromSlash(srcs[i].File))
			if err != nil {
				t.Fatal(err)
			}
			srcs[i].File = filepath.ToSlash(rel)
		}
		out = append(out, corpusCase{name: strings.TrimSuffix(e.Name(), ".md"), srcs: srcs})
	}
	if len(out) == 0 {
		t.Fatalf("no pages in %s", dir)
	}
	return out
}

func lintSources(srcs []Source) (*Spec, Diagnostics) {
	pages, pd := ParseAll(srcs)
	return Lint(pages, pd)
}

func bundledSpec(t testing.TB, srcs []Source) (*Spec, []byte) {
	t.Helper()
	s, _, err := LoadLinted(srcs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

// The bundled pages must stay byte-identical to the shared reference
// pages, when those are beside the repository (as for a session or CI).
func TestBundledMatchesShared(t *testing.T) {
	shared := filepath.Join("..", "..", "shared", "reference")
	if _, err := os.Stat(shared); err != nil {
		t.Skipf("no shared reference pages at %s", shared)
	}
	names := map[string]bool{}
	for _, s := range Bundled() {
		name := filepath.Base(s.File)
		names[name] = true
		want, err := os.ReadFile(filepath.Join(shared, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(s.Src, want) {
			t.Errorf("%s differs from %s", s.File, filepath.Join(shared, name))
		}
	}
	entries, err := os.ReadDir(shared)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") && !names[e.Name()] {
			t.Errorf("shared page %s is not bundled", e.Name())
		}
	}
}

// Rendering a bundled page gives the page back byte for byte, except that
// a page without a final newline gains one (the canonical form ends with
// one).
func TestBundledRender(t *testing.T) {
	srcs := Bundled()
	if len(srcs) == 0 {
		t.Fatal("no bundled pages")
	}
	s, _ := bundledSpec(t, srcs)
	for _, src := range srcs {
		want := src.Src
		if !bytes.HasSuffix(want, []byte("\n")) {
			want = append(append([]byte(nil), want...), '\n')
		}
		got, err := Format(src.File, src.Src)
		if err != nil {
			t.Fatalf("Format(%s): %v", src.File, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Format(%s) differs from the page:\n%s", src.File, testkit.FirstDiff(got, want))
		}
		// Rendering from the merged spec gives the same bytes.
		p, _ := ParsePage(src.File, src.Src)
		r, err := Render(s.Tool(p.Tool))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r, want) {
			t.Errorf("Render(%s) from the spec differs from the page:\n%s", p.Tool, testkit.FirstDiff(r, want))
		}
	}
}

// The same pages in any order give the same bytes and hash.
func TestDeterminism(t *testing.T) {
	srcs := Bundled()
	// More pages than the three bundled ones make shuffling meaningful:
	// add renamed copies (a tie in the shared text, drift, a catalog).
	bundled, _ := bundledSpec(t, srcs)
	for i, name := range []string{"alpha_tool", "zulu_tool", "mike_tool"} {
		name = testkit.FreeToolName(name, func(n string) bool { return bundled.Tool(n) != nil })
		src := bytes.ReplaceAll(srcs[i].Src, []byte(toolOfSrc(t, srcs[i])), []byte(name))
		srcs = append(srcs, Source{File: "extra/" + name + ".md", Src: src})
	}
	s0, want := bundledSpec(t, srcs)
	hash0 := s0.Hash()
	if !strings.HasPrefix(hash0, "sha256:") || len(hash0) != len("sha256:")+64 {
		t.Fatalf("hash %q", hash0)
	}
	_, ds0 := lintSources(srcs)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		shuffled := append([]Source(nil), srcs...)
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		s, got := bundledSpec(t, shuffled)
		if !bytes.Equal(got, want) {
			t.Fatalf("shuffle %d: spec differs:\n%s", i, testkit.FirstDiff(got, want))
		}
		if h := s.Hash(); h != hash0 {
			t.Fatalf("shuffle %d: hash %s, want %s", i, h, hash0)
		}
		_, ds := lintSources(shuffled)
		if a, b := diagText(ds), diagText(ds0); a != b {
			t.Fatalf("shuffle %d: findings differ:\n%s\nwant:\n%s", i, a, b)
		}
	}
}

func toolOfSrc(t testing.TB, s Source) string {
	t.Helper()
	p, _ := ParsePage(s.File, s.Src)
	if p.Tool == "" {
		t.Fatalf("%s has no tool", s.File)
	}
	return p.Tool
}

func diagText(ds Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Sentence IDs come from the sentence's own text: inserting a sentence
// keeps every other ID, changing one changes only its ID.
func TestSentenceIDsStable(t *testing.T) {
	var src Source
	for _, s := range Bundled() {
		if strings.HasSuffix(s.File, "/claim_task.md") {
			src = s
		}
	}
	ids := func(b []byte) []string {
		t.Helper()
		p, ds := ParsePage("claim_task.md", b)
		if ds.HasErrors() {
			t.Fatalf("page has errors: %v", ds)
		}
		var out []string
		for _, s := range toolOf(p).Sentences {
			out = append(out, s.ID)
		}
		return out
	}
	before := ids(src.Src)
	if len(before) < 8 {
		t.Fatalf("only %d sentences: %v", len(before), before)
	}
	seen := map[string]bool{}
	for _, id := range before {
		if !strings.HasPrefix(id, "claim_task#") || seen[id] {
			t.Fatalf("bad or repeated ID %q in %v", id, before)
		}
		seen[id] = true
	}

	// Insert a sentence in the middle of the first paragraph.
	const anchor = "Returns the attempt and an execution credential"
	if !bytes.Contains(src.Src, []byte(anchor)) {
		t.Fatal("anchor sentence not found")
	}
	inserted := bytes.Replace(src.Src, []byte(anchor), []byte("Claims are logged. "+anchor), 1)
	after := ids(inserted)
	if len(after) != len(before)+1 {
		t.Fatalf("%d sentences after inserting one, want %d", len(after), len(before)+1)
	}
	var added []string
	j := 0
	for _, id := range after {
		if j < len(before) && id == before[j] {
			j++
			continue
		}
		added = append(added, id)
	}
	if j != len(before) || len(added) != 1 {
		t.Errorf("after inserting a sentence: %v\nbefore: %v", after, before)
	}

	// Change one word of one sentence: only its ID changes.
	const old, edited = "A mention is never a run's cause.", "A mention is never the run's cause."
	if !bytes.Contains(src.Src, []byte(old)) {
		t.Fatal("sentence to change not found")
	}
	changed := ids(bytes.Replace(src.Src, []byte(old), []byte(edited), 1))
	if len(changed) != len(before) {
		t.Fatalf("%d sentences after a change, want %d", len(changed), len(before))
	}
	n := 0
	for i := range before {
		if before[i] != changed[i] {
			n++
		}
	}
	if n != 1 {
		t.Errorf("changing one sentence changed %d IDs:\n%v\n%v", n, before, changed)
	}

	// Moving text to another line (a soft break) does not change IDs: white
	// space is normalised.
	wrapped := ids(bytes.Replace(src.Src, []byte("Runner devices only: claim"), []byte("Runner devices only:\nclaim"), 1))
	if strings.Join(wrapped, " ") != strings.Join(before, " ") {
		t.Errorf("rewrapping changed IDs:\n%v\n%v", before, wrapped)
	}
}

// A spec read back and written again gives the same bytes.
func TestMarshalRoundTrip(t *testing.T) {
	s, b := bundledSpec(t, Bundled())
	r, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Hash() != s.Hash() || writtenHash(b) != s.Hash() {
		t.Errorf("hash read back %s, written %s, want %s", r.Hash(), writtenHash(b), s.Hash())
	}
	b2, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatalf("Marshal(Unmarshal(b)) differs:\n%s", testkit.FirstDiff(b2, b))
	}
	// The JSON blocks read back stay usable: rendering from the read spec
	// gives the same pages.
	for _, tool := range s.Tools {
		want, err := Render(tool)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Render(r.Tool(tool.Name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: render after Unmarshal differs:\n%s", tool.Name, testkit.FirstDiff(got, want))
		}
	}
	// Another format is refused.
	if _, err := Unmarshal(bytes.Replace(b, []byte(`"format": 1,`), []byte(`"format": 2,`), 1)); err == nil {
		t.Error("Unmarshal accepted format 2")
	}
}

// Marshal writes the hash Hash returns; both hash what the spec holds
// now, and Marshal leaves the spec alone.
func TestHash(t *testing.T) {
	s, _, err := LoadLinted(Bundled())
	if err != nil {
		t.Fatal(err)
	}
	built, title := s.Hash(), s.Title
	if !strings.HasPrefix(built, "sha256:") {
		t.Fatalf("hash %q", built)
	}
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"hash": "`+built+`"`)) {
		t.Errorf("Marshal wrote another hash than Hash returns (%s)", built)
	}
	s.Title += " changed"
	b2, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != title+" changed" {
		t.Error("Marshal modified the spec")
	}
	if bytes.Contains(b2, []byte(built)) || s.Hash() == built {
		t.Error("a changed spec has its old hash")
	}
	// A change that keeps the document's length is seen too: the hash is
	// always that of what the spec holds.
	s.Title = strings.ToUpper(title[:1]) + strings.ToLower(title[1:2]) + title[2:]
	if s.Title == title {
		t.Fatalf("title %q unchanged", title)
	}
	b3, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range [][]byte{b, b2, b3} {
		if got, want := writtenHash(b), contentHash(t, b); got != want {
			t.Errorf("document %d: hash %s, want %s", i, got, want)
		}
	}
	if writtenHash(b3) == writtenHash(b2) || s.Hash() != writtenHash(b3) {
		t.Error("a spec changed to a document of the same length keeps the old hash")
	}
}

// The hash covers the pages, not where they are: the same pages read from
// other folders, under other names, hash the same; a change to a page's
// text, even one that moves no position, changes it.
func TestHashWithoutFiles(t *testing.T) {
	var hashes []string
	for _, dir := range []string{"spec/reference/", "", "/tmp/a \"/b\u2028\xff/"} {
		var srcs []Source
		for i, src := range Bundled() {
			srcs = append(srcs, Source{File: fmt.Sprintf("%s%d-%s.md", dir, i, dir), Src: src.Src})
		}
		s, _, err := LoadUnlinted(srcs)
		if err != nil {
			t.Fatal(err)
		}
		h := s.Hash()
		// The copy without files, which encode's fallback hashes, holds
		// every file name that encode notes.
		if c := s.withoutFiles(); c.Hash() != h {
			t.Errorf("files in %q: the copy without files hashes %s, the spec %s", dir, c.Hash(), h)
		} else if b, _ := c.Marshal(); bytes.Contains(b, []byte(dir+"0-")) && dir != "" {
			t.Errorf("the copy without files names %q", dir)
		}
		hashes = append(hashes, h)
	}
	if hashes[0] != hashes[1] || hashes[0] != hashes[2] {
		t.Errorf("the same pages in other folders hash differently: %v", hashes)
	}
	s, _ := bundledSpec(t, Bundled())
	s.Tools[0].Sentences[0].Text = strings.ToUpper(s.Tools[0].Sentences[0].Text)
	if s.Hash() == hashes[0] {
		t.Error("a changed sentence keeps the hash")
	}
}

// writtenHash is the hash a marshalled spec holds.
func writtenHash(doc []byte) string {
	var v struct{ Hash string }
	json.Unmarshal(doc, &v)
	return v.Hash
}

// contentHash is the SHA-256 of a marshalled spec of the bundled pages
// with its hash emptied and their folder, spec/reference/, left out of every
// file name, as FORMAT.md says (the pages' names, NAME.md, are left out
// too).
func contentHash(t *testing.T, doc []byte) string {
	t.Helper()
	h := writtenHash(doc)
	doc = bytes.Replace(doc, []byte(`"hash": "`+h+`"`), []byte(`"hash": ""`), 1)
	re := regexp.MustCompile(`"spec/reference/[^"/]+\.md(:[0-9]+:[0-9]+)?"`)
	if n := len(re.FindAll(doc, -1)); n < 50 {
		t.Fatalf("only %d file names in the document", n)
	}
	doc = re.ReplaceAll(doc, []byte(`"$1"`))
	if bytes.Contains(doc, []byte("spec/reference")) {
		t.Fatal("a file name is left")
	}
	return compactHash(t, doc)
}

// compactHash is the SHA-256 of doc written compact, by json.Compact.
func compactHash(t *testing.T, doc []byte) string {
	t.Helper()
	var c bytes.Buffer
	if err := json.Compact(&c, doc); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(c.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// The hash is of the document written compact, whatever its strings and
// its JSON blocks' member names hold: quotes, backslashes, colons, spaces,
// line breaks, invalid UTF-8 (encode's other way).
func TestHashCompact(t *testing.T) {
	for _, odd := range []string{`a": b`, `a\`, `\": "`, "x\n\"y: ", "é\u2028", "é\xff"} {
		s, _ := bundledSpec(t, Bundled())
		q, _ := json.Marshal(odd)
		name := string(q)
		s.Title = odd + `": "` + odd
		s.Tools[0].InputSchema = &JSONBlock{JSON: json.RawMessage(`{` + name + `: {` + name + `: ` + name + `}, "x": [ {"y": [` + name + `]} ], "z": {}, "w": []}`)}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(&document{Format: s.Format, Spec: s.withoutFiles()}); err != nil {
			t.Fatal(err)
		}
		if got, want := s.Hash(), compactHash(t, want.Bytes()); got != want {
			t.Errorf("%q: hash %s, want %s", odd, got, want)
		}
	}
}

// testPage builds a page of the canonical layout around the given parts.
func testPage(tool, desc, example, input, output string) []byte {
	return []byte("# MCP tool reference\n\nTools for tests.\n\n## " + tool + "\n\n" + desc +
		"\n\n### Example input\n\n```json\n" + example + "\n```\n\n### Input schema\n\n```json\n" + input +
		"\n```\n\n### Output schema\n\n```json\n" + output +
		"\n```\n\nA note.\n\n[Read online](https://app.useprickle.dev/docs/reference/mcp-tools?tool=" + tool + ")\n")
}

// Numbers keep the literal the page wrote (no float64 rounding), and keys
// keep the order the page gave them, in the spec and in the rendering.
func TestJSONKeptAsWritten(t *testing.T) {
	example := `{
  "zeta": 1e2,
  "alpha": 10.50,
  "mid": 12345678901234567890
}`
	input := `{
  "type": "object",
  "properties": {
    "zeta": {
      "type": "number",
      "maximum": 1e2
    },
    "alpha": {
      "type": "number",
      "multipleOf": 0.50,
      "default": 10.50
    },
    "mid": {
      "type": "integer",
      "minimum": 12345678901234567890
    }
  },
  "required": [
    "zeta",
    "alpha",
    "mid"
  ]
}`
	output := `{
  "type": "object",
  "properties": {
    "b": {
      "const": -0.0
    },
    "a": {
      "const": 1.0E+400
    }
  }
}`
	src := testPage("numbers", "Numbers as written.", example, input, output)
	s, ds, err := LoadLinted([]Source{{File: "numbers.md", Src: src}})
	if err != nil {
		t.Fatalf("%v\n%s", err, diagText(ds))
	}
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, lit := range []string{`"zeta": 1e2`, `"alpha": 10.50`, `"mid": 12345678901234567890`,
		`"maximum": 1e2`, `"multipleOf": 0.50`, `"minimum": 12345678901234567890`, `"const": -0.0`, `"const": 1.0E+400`} {
		if !bytes.Contains(b, []byte(lit)) {
			t.Errorf("spec lacks %s", lit)
		}
	}
	inOrder := func(what string, b []byte, keys ...string) {
		t.Helper()
		last := -1
		for _, k := range keys {
			i := bytes.Index(b, []byte(`"`+k+`"`))
			if i <= last {
				t.Errorf("%s: key %q out of order (keys %v)", what, k, keys)
			}
			last = i
		}
	}
	inOrder("spec", b, "zeta", "alpha", "mid")
	inOrder("spec output schema", b[bytes.Index(b, []byte(`"output_schema"`)):], "b", "a")
	inOrder("schema keywords", b[bytes.Index(b, []byte(`"alpha": {`)):], "type", "multipleOf", "default")

	r, err := Render(s.Tools[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r, src) {
		t.Errorf("render differs from the canonical page:\n%s", testkit.FirstDiff(r, src))
	}
	// And through Unmarshal too.
	u, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(u.Tools[0].ExampleInput.JSON, []byte(`{"zeta":1e2,"alpha":10.50,"mid":12345678901234567890}`)) {
		t.Errorf("example after Unmarshal: %s", u.Tools[0].ExampleInput.JSON)
	}
}

// Every rule in Rules is triggered by at least one page of the corpus, with
// the severity Rules gives it, and no finding names an unlisted rule. Each
// broken case triggers the rule it is named after.
func TestRulesCovered(t *testing.T) {
	rules := map[string]Severity{}
	for _, r := range Rules {
		if _, dup := rules[r.ID]; dup {
			t.Errorf("rule %s listed twice", r.ID)
		}
		rules[r.ID] = r.Severity
	}
	hit := map[string][]string{}
	check := func(kind string, c corpusCase) Diagnostics {
		_, ds := lintSources(c.srcs)
		for _, d := range ds {
			sev, ok := rules[d.Rule]
			switch {
			case !ok:
				t.Errorf("%s/%s: finding of unlisted rule: %s", kind, c.name, d)
			case sev != d.Severity:
				t.Errorf("%s/%s: rule %s is a %s in Rules: %s", kind, c.name, d.Rule, sev, d)
			}
			if d.Pos.Line < 1 || d.Pos.Col < 1 || d.Pos.File == "" {
				t.Errorf("%s/%s: bad position: %s", kind, c.name, d)
			}
			hit[d.Rule] = append(hit[d.Rule], kind+"/"+c.name)
		}
		return ds
	}
	broken := corpus(t, "broken")
	for _, c := range broken {
		ds := check("broken", c)
		rule, _, _ := strings.Cut(c.name, ".")
		found := false
		for _, d := range ds {
			if d.Rule == rule {
				found = true
			}
		}
		if !found {
			t.Errorf("broken/%s does not trigger %s; findings:\n%s", c.name, rule, diagText(ds))
		}
		// A broken page breaks one thing: every finding is of its rule.
		for _, d := range ds {
			if d.Rule != rule {
				t.Errorf("broken/%s: finding beside its own rule: %s", c.name, d)
			}
		}
	}
	for _, c := range corpus(t, "good") {
		if ds := check("good", c); ds.HasErrors() {
			t.Errorf("good/%s has errors:\n%s", c.name, diagText(ds.Errors()))
		}
	}
	var missing []string
	for _, r := range Rules {
		if len(hit[r.ID]) == 0 {
			missing = append(missing, r.ID)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("rules no corpus page triggers: %s", strings.Join(missing, ", "))
	}
	if len(broken) < 14 {
		t.Errorf("%d broken cases, want at least 14", len(broken))
	}
}

// Findings that only show across pages: the catalog and drift, on the
// pages as first published (a frozen copy), and the catalog of the bundled
// pages, whatever they hold.
func TestCatalogAndDrift(t *testing.T) {
	srcs, err := ReadPaths([]string{filepath.Join(corpusDir, "snapshot")})
	if err != nil {
		t.Fatal(err)
	}
	s, ds := lintSources(srcs)
	if ds.HasErrors() {
		t.Fatalf("first published pages have errors:\n%s", diagText(ds.Errors()))
	}
	documented := 0
	for _, e := range s.Catalog {
		if e.Documented {
			documented++
		}
	}
	if len(s.Catalog) != 18 || documented != 3 {
		t.Errorf("catalog: %d entries, %d documented; want 18, 3", len(s.Catalog), documented)
	}
	var drift []string
	for _, d := range ds {
		if d.Rule == "shared-drift" {
			drift = append(drift, d.String())
		}
	}
	if len(drift) != 2 || !strings.Contains(drift[0], "notes paragraph 2") || !strings.Contains(drift[1], "app.staging.useprickle.dev") {
		t.Errorf("drift findings:\n%s", strings.Join(drift, "\n"))
	}
	if s.DocsBase != "https://app.useprickle.dev/docs/reference/mcp-tools" {
		t.Errorf("docs base %q", s.DocsBase)
	}

	// The bundled pages: every tool is a documented catalog entry, and
	// every other entry is named by an allowed_tools enum.
	b, bds := lintSources(Bundled())
	if bds.HasErrors() {
		t.Fatalf("bundled pages have errors:\n%s", diagText(bds.Errors()))
	}
	names := map[string]bool{}
	for _, e := range b.Catalog {
		names[e.Name] = true
		if e.Documented != (b.Tool(e.Name) != nil) {
			t.Errorf("catalog entry %s: documented %v, but has a page: %v", e.Name, e.Documented, b.Tool(e.Name) != nil)
		}
		if !e.Documented && !bytes.Contains(allSchemas(b), []byte(`"`+e.Name+`"`)) {
			t.Errorf("catalog entry %s is neither a tool nor in a schema", e.Name)
		}
	}
	for _, tool := range b.Tools {
		if !names[tool.Name] {
			t.Errorf("tool %s is not in the catalog", tool.Name)
		}
	}
}

func allSchemas(s *Spec) []byte {
	var b []byte
	for _, t := range s.Tools {
		b = append(append(b, t.InputSchema.JSON...), t.OutputSchema.JSON...)
	}
	return b
}

// Positions of blocks the parser reports: a stray fence at its opening
// line, a missing link at the page's last line (not past it).
func TestPositions(t *testing.T) {
	src := testPage("ping", "Ping.", `{}`, `{"type": "object"}`, `{"type": "object"}`)
	cases := []struct {
		name, from, to, want string
	}{
		{"fence in description", "Ping.\n", "Ping.\n\n```sh\nping\n```\n", "x.md:9:1: error: code fence outside a section [fence-unexpected]"},
		{"quote in description", "Ping.\n", "Ping.\n\n> quoted\n", "x.md:9:1: error: unexpected Blockquote block; a page holds headings, paragraphs and ```json fences [block-unexpected]"},
		{"rule in description", "Ping.\n", "Ping.\n\n---\n", "x.md:9:1: error: unexpected ThematicBreak block; a page holds headings, paragraphs and ```json fences [block-unexpected]"},
		{"html in description", "Ping.\n", "Ping.\n\n<div>x</div>\n", "x.md:9:1: error: unexpected HTMLBlock block; a page holds headings, paragraphs and ```json fences [block-unexpected]"},
		{"no link", "\n\n[Read online](https://app.useprickle.dev/docs/reference/mcp-tools?tool=ping)\n", "\n", "x.md:27:1: error: the page does not end with a [Read online](URL) link [link-missing]"},
	}
	for _, c := range cases {
		b := bytes.Replace(src, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(b, src) {
			t.Fatalf("%s: no change", c.name)
		}
		_, ds := lintSources([]Source{{File: "x.md", Src: b}})
		if got := strings.TrimSpace(diagText(ds)); got != c.want {
			t.Errorf("%s:\n got: %s\nwant: %s", c.name, got, c.want)
		}
	}
}

// The spec encodes as encoding/json's Encoder writes it (no HTML escaping
// outside the JSON blocks, a two-space indent): the canonical document and
// its hash depend on every byte.
func TestEncodeAsEncodingJSON(t *testing.T) {
	pages, _ := ParseAll(append(genCorpus(30), Bundled()...))
	s, _ := Build(pages)
	odd := "<a> & \u2028\u2029 \"q\" \\ \t\x01 é 🌵"
	s.Title = odd
	s.Notes = append(s.Notes, Paragraph{Text: odd})
	s.Tools[2].Pos.File, s.Tools[2].Page.File = odd, odd // encode's own Pos and PageText
	// Invalid UTF-8 (and U+FFFD as written) takes the other way.
	invalid := *s
	invalid.Title = odd + " \xff\xfe \ufffd"
	s.Tools[0].Sentences = nil
	s.Tools[1].InputSchema.JSON = json.RawMessage(`{"pattern": "^(?<!-)[<>&]\u2028$", "x": [ ] }`)
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	if err := enc.Encode(&invalid); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	var es []*encoding
	for _, v := range []*Spec{s, &invalid} {
		e, err := encode(v, 4) // after room for 4 bytes
		if err != nil {
			t.Fatal(err)
		}
		if len(e.out) != 4+len(e.doc()) {
			t.Errorf("%d bytes, %d of them the document", len(e.out), len(e.doc()))
		}
		got.Write(e.doc())
		es = append(es, e)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("encode differs from encoding/json:\n%s", testkit.FirstDiff(got.Bytes(), want.Bytes()))
	}
	// The second took the other way, and its start was abandoned.
	if es[0].legacy || !es[1].legacy || len(es[1].pos) != 0 {
		t.Errorf("legacy %v, %v", es[0].legacy, es[1].legacy)
	}
}

// A U+FFFD is seen wherever the writes split it.
func TestFFFDWatch(t *testing.T) {
	doc := []byte("ab\uFFFDcd")
	for i := 0; i <= len(doc); i++ {
		for j := i; j <= len(doc); j++ {
			var out bytes.Buffer
			w := &fffdWatch{w: &out}
			for _, part := range [][]byte{doc[:i], doc[i:j], doc[j:]} {
				w.Write(part)
			}
			if !w.seen || out.String() != string(doc) {
				t.Errorf("split at %d, %d: seen %v, wrote %q", i, j, w.seen, out.Bytes())
			}
		}
	}
	w := &fffdWatch{w: io.Discard}
	w.Write([]byte("\xef\xbf"))
	w.Write([]byte("x\xbd"))
	if w.seen {
		t.Error("a U+FFFD seen in bytes that do not make one")
	}
}

// A block is read as a schema once: the catalog, lint and the generator
// share the document.
func TestSchemaOnce(t *testing.T) {
	pages, _ := ParseAll(Bundled())
	s, _ := Build(pages)
	b := s.Tools[0].OutputSchema
	if d := b.Schema(); d == nil || d != b.Schema() {
		t.Fatalf("Schema gave %p, then %p", d, b.Schema())
	}
}

// An abbreviation ends no sentence in any case, as strings.ToLower reads
// it: also where the text's end is not ASCII (İ lowers to i).
func TestAbbreviationsFold(t *testing.T) {
	for _, s := range []string{"e.g.", "xx E.G.", "İ.E.", "İ.e.", "I.E.", "ETC.", "eTc.", "\u212A.", "vS.", "x\xffe.g.", "éé.e.g.", "é.g.", "a", ""} {
		for _, a := range abbreviations {
			if got, want := hasSuffixFold(s, a), strings.HasSuffix(strings.ToLower(s), a); got != want {
				t.Errorf("hasSuffixFold(%q, %q) = %v, want %v", s, a, got, want)
			}
		}
	}
	if got := sentenceRanges("Call it, E.G. twice. İ.e. once. Done."); len(got) != 3 {
		t.Errorf("sentences: %v", got)
	}
}

// compactJSON accepts and writes what json.Compact does: white space
// dropped, everything else as written.
func TestCompactJSONAsEncodingJSON(t *testing.T) {
	for _, in := range []string{
		` { "a" : [ 1.50 , -0 , 1e+07, 1E-2 ] , "b":"\u00e9\/\"é\ud800 x\t" , "a" : null } `,
		"{\"k\": \"\xff\xfe\", \"<>&\": \"\u2028\"}",
		`[true,false,null,{},[],""]`, `"s"`, `0`,
		`{"a":}`, `{"a":1,}`, `[1 2]`, `{} {}`, `01`, `"\x"`, `"\u12"`, "\"a\x01\"", ``, ` `, `nul`, `{"a":1`,
	} {
		var want bytes.Buffer
		werr := json.Compact(&want, []byte(in))
		got, err := compactJSON([]byte(in))
		if (err == nil) != (werr == nil) {
			t.Errorf("%q: error %v, json.Compact's %v", in, err, werr)
			continue
		}
		if err == nil && !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%q: %q, json.Compact writes %q", in, got, want.Bytes())
		}
	}
}

// appendIndented accepts and writes what json.Indent does, so that Render
// writes pages as it always has.
func TestIndentedAsEncodingJSON(t *testing.T) {
	ins := []string{`{"a":1,"b":[1,2,{}],"c":{},"d":[],"e":{"x":[[]]},"f":"\u00e9\/","a":-0.50e+1}`, `[]`, `{}`, `1`, `"s"`, "{\"\xff\":\"\u2028<>\"}",
		`{"a":}`, `[1,]`, `{} {}`, ``}
	pages, _ := ParseAll(append(genCorpus(30), Bundled()...))
	for _, p := range pages {
		for _, b := range p.Sections {
			ins = append(ins, string(b.JSON))
		}
	}
	for _, in := range ins {
		var want bytes.Buffer
		werr := json.Indent(&want, []byte(in), "", "  ")
		got, err := appendIndented([]byte("kept"), []byte(in))
		if (err == nil) != (werr == nil) {
			t.Errorf("%q: error %v, json.Indent's %v", in, err, werr)
		} else if err == nil && (!bytes.HasPrefix(got, []byte("kept")) || !bytes.Equal(got[4:], want.Bytes())) {
			t.Errorf("%q:\n%s\njson.Indent writes\n%s", in, got, want.Bytes())
		}
	}
}
