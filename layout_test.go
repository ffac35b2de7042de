package prickle

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/prickle-dev/prickle"

// pkg is one package of the module as go list sees it: its directory
// relative to the module's root ("." for the root), and what it and its
// tests import of the module (the same form).
type pkg struct {
	dir         string
	imports     []string
	testImports []string
}

// packages lists the module's packages with go list.
func packages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-f",
		"{{.ImportPath}}|{{join .Imports \" \"}}|{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		f := strings.Split(strings.TrimSpace(line), "|")
		pkgs = append(pkgs, pkg{dir: rel(f[0]), imports: ours(f[1]), testImports: ours(f[2])})
	}
	return pkgs
}

// rel is an import path of the module as a directory relative to its root.
func rel(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(path, module+"/")
}

// ours keeps the module's packages of a space-separated list of import
// paths, as directories.
func ours(list string) []string {
	var out []string
	for _, p := range strings.Fields(list) {
		if p == module || strings.HasPrefix(p, module+"/") {
			out = append(out, rel(p))
		}
	}
	return out
}

// tableRow is a line of README's package table: | `dir` | what |.
var tableRow = regexp.MustCompile("^\\| `([^`]+)` \\|")

// readmePackages reads the package table of README.md's "What is here":
// the table whose header is | package | what |, a line per package.
func readmePackages(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var dirs []string
	section, table := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section = line == "## What is here"
		case section && line == "| package | what |":
			table = true
		case table && !strings.HasPrefix(line, "|"):
			return dirs
		case table:
			if m := tableRow.FindStringSubmatch(line); m != nil {
				dirs = append(dirs, m[1])
			} else if !strings.HasPrefix(line, "| ---") {
				t.Errorf("README.md's package table: a line that names no package: %q", line)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !table {
		t.Fatal(`README.md has no package table (| package | what |) under "## What is here"`)
	}
	return dirs
}

// TestReadmeListsEveryPackage: README.md's package table has one line for
// each package of the module and none for a package that is gone.
func TestReadmeListsEveryPackage(t *testing.T) {
	listed := readmePackages(t)
	seen := map[string]bool{}
	for _, d := range listed {
		if seen[d] {
			t.Errorf("README.md's package table lists %s twice", d)
		}
		seen[d] = true
	}
	for _, p := range packages(t) {
		if !seen[p.dir] {
			t.Errorf("README.md's package table has no line for %s", p.dir)
		}
		delete(seen, p.dir)
	}
	for _, d := range listed {
		if seen[d] {
			t.Errorf("README.md's package table lists %s, which is not a package", d)
		}
	}
}

// under reports whether dir is root or inside it.
func under(dir, root string) bool {
	return dir == root || strings.HasPrefix(dir, root+"/")
}

// products are the packages that make the toolchain's products: the
// ground floor, internal/, imports none of them, not even in its tests.
var products = []string{"api", "rt", "gen", "server", "conformance", "cmd", "tools"}

// importRules say what may import what: each returns why dir may not
// import imp, or "".
var importRules = []func(dir, imp string) string{
	func(dir, imp string) string {
		if !under(dir, "internal") {
			return ""
		}
		for _, p := range products {
			if under(imp, p) {
				return "internal/ is the ground floor: it imports no product (" + strings.Join(products, ", ") + ")"
			}
		}
		return ""
	},
	func(dir, imp string) string {
		if under(imp, "gen") && !under(dir, "gen") && !under(dir, "cmd") {
			return "only gen/ and the commands import the generator; generated code imports rt"
		}
		return ""
	},
}

// TestImportRules: no package, nor its tests, imports what its layer must
// not (the package docs say what each must not import; these are the
// rules that hold across the tree).
func TestImportRules(t *testing.T) {
	for _, p := range packages(t) {
		check := func(imports []string, who string) {
			for _, imp := range imports {
				for _, rule := range importRules {
					why := rule(p.dir, imp)
					if why == "" {
						continue
					}
					t.Errorf("%s imports %s: %s", who, imp, why)
				}
			}
		}
		check(p.imports, p.dir)
		check(p.testImports, p.dir+" (its tests)")
	}
}
