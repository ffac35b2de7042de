package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/spec"
)

// exportPages runs `prickle-gen export -o DIR` on the module's pages, as a
// third party runs it, and returns DIR and the spec of the pages.
func exportPages(t *testing.T) (string, *spec.Spec) {
	t.Helper()
	bin := goBin(t, "github.com/prickle-dev/prickle/cmd/prickle-gen")
	dir := filepath.Join(t.TempDir(), "export")
	if r := run(t, ".", nil, bin, "export", "-o", dir); r.code != 0 {
		t.Fatalf("prickle-gen export: %v", r)
	}
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	return dir, sp
}

// TestExportTypeScript is a third party's second step: json-schema-to-
// typescript (json2ts) types the exported schemas, each type named by its
// schema's title; tsc --noEmit --strict then accepts every documented
// example input as its tool's input type and refuses an input that lacks
// a required member.
func TestExportTypeScript(t *testing.T) {
	e := needNode(t)
	export, sp := exportPages(t)
	work := t.TempDir()
	bin := func(name string) string { return filepath.Join(e.modules, ".bin", name) }
	if r := run(t, work, nil, e.node, bin("json2ts"), "-i", filepath.Join(export, "schemas", "*.json"), "-o", "types"); r.code != 0 {
		t.Fatalf("json2ts: %v", r)
	}
	var src strings.Builder
	for _, tool := range sp.Tools {
		for _, kind := range []string{"input", "output"} {
			file := tool.Name + "." + kind
			var schema struct{ Title string }
			b, err := os.ReadFile(filepath.Join(export, "schemas", file+".json"))
			if err != nil || json.Unmarshal(b, &schema) != nil || schema.Title == "" {
				t.Fatalf("%s.json: no title (%v)", file, err)
			}
			d, err := os.ReadFile(filepath.Join(work, "types", file+".d.ts"))
			if err != nil {
				t.Fatal(err)
			}
			// The title names the type; nothing else is exported under another name.
			names := regexp.MustCompile(`(?m)^export (?:interface|type) (\w+)`).FindAllStringSubmatch(string(d), -1)
			if len(names) == 0 || names[0][1] != schema.Title {
				t.Errorf("%s.d.ts exports %v, want %s first", file, names, schema.Title)
			}
			t.Logf("%s %s: %s", tool.Name, kind, schema.Title)
			fmt.Fprintf(&src, "import type { %s } from \"./types/%s.js\";\n", schema.Title, file)
			if kind != "input" {
				continue
			}
			if tool.ExampleInput != nil {
				fmt.Fprintf(&src, "export const %sExample: %s = %s;\n", schema.Title, schema.Title, tool.ExampleInput.Body())
			}
			if len(requiredOf(t, tool.InputSchema.Body())) > 0 {
				fmt.Fprintf(&src, "// @ts-expect-error: a required member is missing\nexport const %sEmpty: %s = {};\n", schema.Title, schema.Title)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(work, "examples.ts"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, work, nil, e.node, bin("tsc"), "--noEmit", "--strict", "--target", "es2022", "--module", "nodenext",
		"--moduleResolution", "nodenext", "examples.ts")
	if r.code != 0 {
		t.Fatalf("tsc --noEmit: %v\nexamples.ts:\n%s", r, src.String())
	}
}

// requiredOf is the top-level "required" list of a schema.
func requiredOf(t *testing.T, schema []byte) []string {
	t.Helper()
	var s struct{ Required []string }
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	return s.Required
}

// TestTypeScriptStarter certifies examples/typescript, a third party's
// third step: the starter type-checks (tsc --noEmit with its own
// tsconfig.json), and certifyStarter's run, the starter serving the export
// as it is, shows discover_team_agents certified.
func TestTypeScriptStarter(t *testing.T) {
	e := needNode(t)
	export, sp := exportPages(t)
	starter := t.TempDir()
	for _, f := range []string{"server.ts", "package.json", "tsconfig.json"} {
		copyFile(t, filepath.Join("..", "examples", "typescript", f), filepath.Join(starter, f))
	}
	if err := os.Symlink(e.modules, filepath.Join(starter, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(export, filepath.Join(starter, "export")); err != nil {
		t.Fatal(err)
	}
	if r := run(t, starter, nil, e.node, filepath.Join(e.modules, ".bin", "tsc"), "-p", "."); r.code != 0 {
		t.Fatalf("tsc -p examples/typescript: %v", r)
	}
	starterLines(t, filepath.Join(starter, "server.ts"))
	// Node.js 22 runs the TypeScript itself (type stripping).
	certifyStarter(t, sp, "TypeScript", starter, "exec "+e.node22+" "+filepath.Join(starter, "server.ts"))
}

// starterLines fails the test when a starter's source reaches 200 lines,
// and returns its count.
func starterLines(t *testing.T, path string) int {
	t.Helper()
	n := strings.Count(readFile(t, path), "\n")
	if n >= 200 {
		t.Errorf("%s has %d lines: a starter stays under 200", filepath.Base(path), n)
	}
	return n
}

// certifyStarter runs prickle-conformance --profile core --tools
// discover_team_agents against a starter, started by serverCmd in dir, as
// the starters' READMEs say, and checks what its run must show: exit 0,
// the tool certified, the whole run incomplete, missing only the tools the
// starter answers not_implemented, and every script that calls no other
// tool passing.
func certifyStarter(t *testing.T, sp *spec.Spec, lang, dir, serverCmd string) {
	t.Helper()
	runner := conformanceBin(t)
	report := filepath.Join(t.TempDir(), "report.json")
	const tool = "discover_team_agents"
	start := time.Now()
	r := run(t, dir, nil, runner, "--profile", "core", "--tools", tool, "--parallel", "2", "--json", report,
		"--server-cmd", serverCmd)
	t.Logf("certifying the %s starter for %s took %s", lang, tool, time.Since(start).Round(100*time.Millisecond))
	if r.code != 0 {
		t.Fatalf("prickle-conformance --tools %s: %v", tool, r)
	}
	var rep struct {
		Verdict string
		Missing []string
		Tools   []struct{ Name, Verdict string }
		Scripts []struct{ Name, Status, Reason string }
	}
	if err := json.Unmarshal([]byte(readFile(t, report)), &rep); err != nil {
		t.Fatal(err)
	}
	var others []string
	for _, tv := range sp.Tools {
		if tv.Name != tool {
			others = append(others, tv.Name)
		}
	}
	if rep.Verdict != "incomplete" {
		t.Errorf("the whole run is %s, want incomplete", rep.Verdict)
	}
	for _, tv := range rep.Tools {
		if want := map[bool]string{true: "certified", false: "incomplete"}[tv.Name == tool]; tv.Verdict != want {
			t.Errorf("%s is %s, want %s", tv.Name, tv.Verdict, want)
		}
	}
	for _, m := range rep.Missing {
		if !slices.ContainsFunc(others, func(o string) bool { return testkit.NamesTool(m, o) }) {
			t.Errorf("missing, yet of no tool the starter leaves out: %s", m)
		}
	}
	passed := 0
	for _, s := range rep.Scripts {
		switch {
		case s.Status == "pass":
			passed++
		case s.Status == "skip" && strings.Contains(s.Reason, "which --tools leaves out"):
		default:
			t.Errorf("%s: %s (%s)", s.Name, s.Status, s.Reason)
		}
	}
	if passed < 5 {
		t.Errorf("only %d scripts passed", passed)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
