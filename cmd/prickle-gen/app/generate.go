package app

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/prickle-dev/prickle/gen"
	"github.com/prickle-dev/prickle/internal/fsx"
	"github.com/prickle-dev/prickle/spec"
	"github.com/rogpeppe/go-internal/diff"
)

// modulePath is this module's path: with no -o, generate and check find
// its root by walking up from the working directory.
const modulePath = "github.com/prickle-dev/prickle"

var generateCommand = &command{
	name:    "generate",
	usage:   "[-o DIR] [-pkg NAME] [-docs DIR] [PATH...]",
	summary: "Generate the typed Go API (and docs) from the pages.\nWith no arguments, regenerate this module's api/ and docs/ from the bundled pages.\nWith -o, write the package for PATH (or the bundled pages) into DIR; docs only with -docs.\nConstructs typed as json.RawMessage are noted as file:line:col: info: ... [gen-raw].",
	run:     runGenerate,
}

var checkCommand = &command{
	name:    "check",
	usage:   "[-o DIR] [-pkg NAME] [-docs DIR] [PATH...]",
	summary: "Fail when generated files are out of date (CI).\nRegenerates in memory, as generate would, and prints a unified diff of every\ncommitted generated file (docs included) that differs; exit 1 if any does.",
	run:     runCheck,
}

// genTarget is what one generate or check run produces.
type genTarget struct {
	files map[string][]byte // path on disk → bytes
	order []string          // paths, sorted
	// owned are the folders whose generated files the run owns: a file
	// there that the run no longer produces is stale.
	goDir, docsDir string
	notes          spec.Diagnostics
}

// plan parses the flags shared by generate and check and builds every file
// in memory. code is non-zero when the command must stop with it.
func plan(c *invocation, cmd *command, args []string) (*genTarget, int) {
	name := cmd.name
	fs := c.flags(cmd)
	out := fs.String("o", "", "write the Go package into `DIR` (default: this module's api/)")
	pkg := fs.String("pkg", "", "package `NAME` (default: the last element of -o, or api)")
	docs := fs.String("docs", "", "write the docs into `DIR` (default: this module's docs/ when -o is not given)")
	if code, ok := c.parse(fs, args); !ok {
		return nil, code
	}
	paths := fs.Args()
	if len(paths) > 0 && *out == "" {
		return nil, c.fail("%s: PATH needs -o DIR: with no -o the bundled pages regenerate this module's api/", name)
	}
	goDir, docsDir := *out, *docs
	if goDir == "" {
		root, err := moduleRoot()
		if err != nil {
			return nil, c.fail("%s: %v", name, err)
		}
		goDir = filepath.Join(root, "api")
		if docsDir == "" {
			docsDir = filepath.Join(root, "docs")
		}
	}
	if *pkg == "" {
		*pkg = "api"
		if *out != "" {
			*pkg = packageName(goDir)
		}
	}
	srcs, err := sources(paths)
	if err != nil {
		return nil, c.fail("%v", err)
	}
	s, code := c.loadLinted(srcs)
	if s == nil {
		return nil, code
	}
	goFiles, docFiles, notes, err := gen.GenerateAll(s, gen.Options{Package: *pkg})
	if err != nil {
		return nil, c.fail("%v", err)
	}
	t := &genTarget{files: map[string][]byte{}, goDir: goDir, docsDir: docsDir, notes: notes}
	for _, f := range goFiles {
		t.files[filepath.Join(goDir, filepath.FromSlash(f.Path))] = f.Data
	}
	if docsDir != "" {
		for _, f := range docFiles {
			t.files[filepath.Join(docsDir, filepath.FromSlash(f.Path))] = f.Data
		}
	}
	for p := range t.files {
		t.order = append(t.order, p)
	}
	sort.Strings(t.order)
	return t, 0
}

// stale lists files the run owns but no longer produces: Go files in the
// package folder that start with the generated header, and pages in
// docs/tools.
func (t *genTarget) stale() []string {
	var out []string
	if ents, err := os.ReadDir(t.goDir); err == nil {
		for _, e := range ents {
			p := filepath.Join(t.goDir, e.Name())
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || t.files[p] != nil {
				continue
			}
			if isGenerated(p) {
				out = append(out, p)
			}
		}
	}
	if t.docsDir != "" {
		dir := filepath.Join(t.docsDir, "tools")
		if ents, err := os.ReadDir(dir); err == nil {
			for _, e := range ents {
				p := filepath.Join(dir, e.Name())
				if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") && t.files[p] == nil {
					out = append(out, p)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func isGenerated(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	return strings.TrimSpace(line) == "// "+gen.Header
}

func printNotes(c *invocation, notes spec.Diagnostics) {
	for _, d := range notes {
		fmt.Fprintln(c.stderr, d)
	}
}

func runGenerate(c *invocation, cmd *command, args []string) int {
	t, code := plan(c, cmd, args)
	if t == nil {
		return code
	}
	printNotes(c, t.notes)
	for _, p := range t.order {
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, t.files[p]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return c.fail("%v", err)
		}
		if err := fsx.WriteFileAtomic(p, t.files[p], 0); err != nil {
			return c.fail("%v", err)
		}
	}
	for _, p := range t.stale() {
		if err := os.Remove(p); err != nil {
			return c.fail("%v", err)
		}
	}
	return ExitOK
}

func runCheck(c *invocation, cmd *command, args []string) int {
	t, code := plan(c, cmd, args)
	if t == nil {
		return code
	}
	wd, _ := os.Getwd()
	rel := func(p string) string {
		if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
		return filepath.ToSlash(p)
	}
	var bad []string
	for _, p := range t.order {
		old, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return c.fail("%v", err)
		}
		if bytes.Equal(old, t.files[p]) && err == nil {
			continue
		}
		bad = append(bad, rel(p))
		c.stdout.Write(diff.Diff(rel(p), old, rel(p)+" (generated)", t.files[p]))
	}
	for _, p := range t.stale() {
		old, _ := os.ReadFile(p)
		bad = append(bad, rel(p))
		c.stdout.Write(diff.Diff(rel(p), old, rel(p)+" (generated)", nil))
	}
	if len(bad) > 0 {
		fmt.Fprintf(c.stderr, "prickle-gen: %d generated file(s) out of date: %s; run prickle-gen generate\n", len(bad), strings.Join(bad, ", "))
		return ExitFindings
	}
	return ExitOK
}

// moduleRoot walks up from the working directory to the go.mod of this
// module.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				f := strings.Fields(line)
				if len(f) >= 2 && f[0] == "module" && strings.Trim(f[1], `"`) == modulePath {
					return dir, nil
				}
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("not inside module %s: run it in this module, or give -o DIR", modulePath)
		}
		dir = parent
	}
}

// packageName derives a package name from a folder: its last element,
// lower-cased, without what an identifier cannot hold.
func packageName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err == nil {
		dir = abs
	}
	base := strings.ToLower(filepath.Base(dir))
	var b strings.Builder
	for _, r := range base {
		if r >= 'a' && r <= 'z' || r == '_' || b.Len() > 0 && r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "api"
	}
	return b.String()
}

// loadLinted loads pages that must lint: on findings it prints them and
// returns a nil spec with ExitFindings.
func (c *invocation) loadLinted(srcs []spec.Source) (*spec.Spec, int) {
	s, _, err := spec.LoadLinted(srcs)
	if err != nil {
		var pe *spec.PagesError
		if asPagesError(err, &pe) {
			for _, d := range pe.Diagnostics {
				fmt.Fprintln(c.stderr, d)
			}
			return nil, ExitFindings
		}
		return nil, c.fail("%v", err)
	}
	return s, ExitOK
}
