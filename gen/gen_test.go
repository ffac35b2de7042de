package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/imports"

	"github.com/prickle-dev/prickle/spec"
)

func generateAll(t testing.TB, srcs []spec.Source, pkg string) map[string][]byte {
	t.Helper()
	s, _, err := spec.LoadLinted(srcs)
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := Generate(s, Options{Package: pkg})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Docs(s)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		out[f.Path] = f.Data
	}
	for _, f := range docs {
		out["docs/"+f.Path] = f.Data
	}
	return out
}

// allSources are the bundled pages and every corpus case.
func allSources(t testing.TB) map[string][]spec.Source {
	m := map[string][]spec.Source{"bundled": spec.Bundled()}
	for _, c := range corpusCases(t) {
		srcs, err := spec.ReadPaths([]string{filepath.Join(corpusDir, c)})
		if err != nil {
			t.Fatal(err)
		}
		m[c] = srcs
	}
	return m
}

// Generating twice, or from the pages in another order, gives the same
// bytes.
func TestDeterministic(t *testing.T) {
	for name, srcs := range allSources(t) {
		first := generateAll(t, srcs, "x")
		rng := rand.New(rand.NewSource(1))
		for i := 0; i < 3; i++ {
			shuffled := append([]spec.Source(nil), srcs...)
			rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
			if i == 0 {
				for a, b := 0, len(shuffled)-1; a < b; a, b = a+1, b-1 {
					shuffled[a], shuffled[b] = shuffled[b], shuffled[a]
				}
			}
			again := generateAll(t, shuffled, "x")
			if len(again) != len(first) {
				t.Fatalf("%s: %d files, then %d", name, len(first), len(again))
			}
			for p, b := range first {
				if !bytes.Equal(b, again[p]) {
					t.Errorf("%s: %s differs between runs", name, p)
				}
			}
		}
	}
}

// Every generated Go file is gofmt-clean and starts with the header.
func TestGofmtAndHeader(t *testing.T) {
	for name, srcs := range allSources(t) {
		for p, b := range generateAll(t, srcs, "x") {
			if strings.HasPrefix(p, "docs/") {
				if p == "docs/reference.md" && !bytes.HasPrefix(b, []byte(ReferenceHeader+"\n\n")) {
					t.Errorf("%s: %s lacks the header", name, p)
				}
				continue
			}
			if !bytes.HasPrefix(b, []byte("// "+Header+"\n\npackage x\n")) {
				t.Errorf("%s: %s does not start with the header, a blank line and the package clause", name, p)
			}
			f, err := format.Source(b)
			if err != nil {
				t.Errorf("%s: %s: %v", name, p, err)
			} else if !bytes.Equal(f, b) {
				t.Errorf("%s: %s is not gofmt-clean", name, p)
			}
			// Imports grouped as goimports groups them, whether or not
			// generation ran goimports on the file (mixedImports).
			if g, err := imports.Process(p, b, &imports.Options{FormatOnly: true, Comments: true, TabIndent: true, TabWidth: 8}); err != nil || !bytes.Equal(g, b) {
				t.Errorf("%s: %s is not as goimports leaves it (%v)", name, p, err)
			}
		}
	}
}

// The per-tool docs are the canonical pages.
func TestDocsAreCanonicalPages(t *testing.T) {
	s, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	files, err := Docs(s)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, f := range files {
		got[f.Path] = f.Data
	}
	for _, tl := range s.Tools {
		want, err := spec.Render(tl)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got["tools/"+tl.Name+".md"], want) {
			t.Errorf("docs/tools/%s.md is not spec.Render's page", tl.Name)
		}
	}
	ref := string(got["reference.md"])
	for _, frag := range []string{
		"| `people[].avatar_url` | string | yes | yes | `format uri` |  |",
		"| `reviewing.provenance` | string enum | yes | no |  | `agent_generated`, `from_approved_context`, `owner_approved`, `owner_instruction` |",
		"| `harness` | integer | no | no | `minimum 1`, `maximum 1000` |  |",
		"```json\n{\n  \"task_id\": \"example-task-id\",",
	} {
		if !strings.Contains(ref, frag) {
			t.Errorf("reference.md lacks %q", frag)
		}
	}
}

func TestNotesForRawFallbacks(t *testing.T) {
	srcs, err := spec.ReadPaths([]string{filepath.Join(corpusDir, "fallback")})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := spec.LoadLinted(srcs)
	if err != nil {
		t.Fatal(err)
	}
	_, notes, err := Generate(s, Options{Package: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 7 {
		t.Errorf("%d notes, want 7: %v", len(notes), notes)
	}
	for _, n := range notes {
		if n.Rule != "gen-raw" || n.Severity != spec.Info || n.Pos.Line == 0 {
			t.Errorf("note %v", n)
		}
	}
	// The pages as first published need no fallback.
	first, err := spec.ReadPaths([]string{filepath.Join("..", "testdata", "pages", "snapshot")})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := spec.LoadLinted(first)
	if err != nil {
		t.Fatal(err)
	}
	if _, notes, _ := Generate(b, Options{}); len(notes) != 0 {
		t.Errorf("first published pages: %v", notes)
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"task_id": "TaskID", "avatar_url": "AvatarURL", "expires_at": "ExpiresAt", "message_id": "MessageID",
		"agent_id": "AgentID", "agentId": "AgentID", "HTTPServer": "HTTPServer", "discover_team_agents": "DiscoverTeamAgents",
		"mcp": "MCP", "x-y_z": "XYZ", "2fa": "2fa", "": "",
		"naïve": "Naive", "crème_brûlée": "CremeBrulee", "Ångström": "Angstrom",
	} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"People": "Person", "Agents": "Agent", "Capabilities": "Capability", "AllowedTools": "AllowedTool",
		"Statuses": "Status", "Status": "StatusItem", "Data": "DataItem", "Boxes": "Box",
	} {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
	if got := fieldName("3d"); got != "X3d" {
		t.Errorf("fieldName(3d) = %q", got)
	}
}

func TestBadPackageName(t *testing.T) {
	s, _ := spec.LoadBundled()
	if _, _, err := Generate(s, Options{Package: "func"}); err == nil {
		t.Error("a keyword as package name was accepted")
	}
}

// syntheticSources makes n tools by renaming copies of the bundled pages.
func syntheticSources(n int) []spec.Source {
	base := spec.Bundled()
	var out []spec.Source
	for i := 0; i < n; i++ {
		b := base[i%len(base)]
		name := strings.TrimSuffix(filepath.Base(b.File), ".md")
		nn := fmt.Sprintf("%s_%04d", name, i)
		src := strings.ReplaceAll(string(b.Src), "## "+name+"\n", "## "+nn+"\n")
		src = strings.ReplaceAll(src, "tool="+name+")", "tool="+nn+")")
		out = append(out, spec.Source{File: nn + ".md", Src: []byte(src)})
	}
	return out
}

// BenchmarkGenerate generates the Go package and the docs of n tools from
// their loaded spec.
func BenchmarkGenerate(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			s, _, err := spec.LoadLinted(syntheticSources(n))
			if err != nil {
				b.Fatal(err)
			}
			if len(s.Tools) != n {
				b.Fatalf("%d tools", len(s.Tools))
			}
			b.ResetTimer()
			for b.Loop() {
				if _, _, _, err := GenerateAll(s, Options{Package: "x"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGeneratePipeline is what prickle-gen generate does in memory:
// parse and lint n pages, then generate the package and the docs.
func BenchmarkGeneratePipeline(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			srcs := syntheticSources(n)
			for b.Loop() {
				s, _, err := spec.LoadLinted(srcs)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, _, err := GenerateAll(s, Options{Package: "x"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A page that adds a tool to the catalog retypes nothing that exists: a
// field whose enum lists catalog names keeps ToolName though its enum no
// longer equals the catalog.
func TestNewPageKeepsTypes(t *testing.T) {
	before := generateAll(t, spec.Bundled(), "api")
	base, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	tool, src := newPage(t, base, "list_team_rooms")
	after := generateAll(t, append(spec.Bundled(), src), "api")
	if c := "Tool" + camel(tool); !bytes.Contains(after["catalog.go"], []byte(c+` ToolName = "`+tool+`"`)) &&
		!bytes.Contains(after["catalog.go"], []byte(c+` = "`+tool+`"`)) {
		t.Fatalf("the new tool is not in the catalog:\n%s", after["catalog.go"])
	}
	// Every declaration of the old API is in the new one as it was.
	for _, f := range []string{"types.go", "enums.go"} {
		now := map[string]bool{}
		for _, decl := range declarations(t, after[f]) {
			now[decl] = true
		}
		for _, decl := range declarations(t, before[f]) {
			if !now[decl] {
				t.Errorf("%s: %q changed or went with a new page", f, decl)
			}
		}
	}
}

// declarations returns the type declarations and struct fields of a
// generated file, one line each.
func declarations(t *testing.T, src []byte) []string {
	var out []string
	for _, line := range strings.Split(string(src), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "type ") || strings.Contains(l, "`json:\"") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	if len(out) == 0 {
		t.Fatal("no declarations found")
	}
	return out
}

// The standard library's imports stand apart from the others, each group
// sorted by gofmt; one group is left alone.
func TestGroupImports(t *testing.T) {
	src := "package x\n\nimport (\n\t\"context\"\n\tmcp \"github.com/modelcontextprotocol/go-sdk/mcp\"\n\trt \"github.com/prickle-dev/prickle/rt\"\n\t\"time\"\n)\n\nvar _ = 1\n"
	want := "package x\n\nimport (\n\t\"context\"\n\t\"time\"\n\n\tmcp \"github.com/modelcontextprotocol/go-sdk/mcp\"\n\trt \"github.com/prickle-dev/prickle/rt\"\n)\n\nvar _ = 1\n"
	got, err := format.Source(groupImports([]byte(src)))
	if err != nil || string(got) != want {
		t.Errorf("got %v\n%s\nwant\n%s", err, got, want)
	}
	one := "package x\n\nimport (\n\t\"context\"\n\t\"time\"\n)\n"
	if got := groupImports([]byte(one)); string(got) != one {
		t.Errorf("one group changed:\n%s", got)
	}
}
