//go:build linux

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/spec"
)

// growTimeout bounds the whole grown tree's build and test runs.
const growTimeout = 30 * time.Minute

// TestPagesGrow is the acceptance test of adding pages: a copy of this
// module gets the pages of testdata/grow (tools unlike the bundled ones:
// other shapes, sentences and callers; one already in the catalog, one
// new to it), `prickle-gen generate` runs, and then the copy must build,
// vet and pass `go test ./...` with no other edit. Its tests then show the
// rest: prickled serves the new tools and refuses their calls as
// not_implemented (server's TestEveryDocumentedToolIsServed), a
// conformance run against it ends INCOMPLETE, naming only them
// (cmd/prickle-conformance's TestServerCmd), and the CI recipe
// (TestCIRecipe) still certifies prickled for the tools it implements,
// still fails a server that ignores its world, and fails prickled on every
// documented tool, missing only the new ones. The copy's spec/reference
// then documents every tool testdata/grow does, as it will the day real
// pages for them arrive: a test that read testdata/grow together with
// spec/reference would find each tool documented twice and fail.
//
// It takes many minutes (the grown copy's whole test suite), more than
// go test's default timeout leaves the e2e package, so it runs only with
// PRICKLE_GROW=1: CI runs it as a step of its own, with a timeout it
// fits. The grown copy's own run of it is skipped.
func TestPagesGrow(t *testing.T) {
	if os.Getenv("PRICKLE_GROWN") != "" {
		t.Skip("already inside a grown copy")
	}
	if os.Getenv("PRICKLE_GROW") != "1" {
		t.Skip("set PRICKLE_GROW=1 to add pages to a copy of the module and test it")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dst := copyModule(t, root)
	added := addGrowPages(t, root, dst)
	deadline := time.Now().Add(growTimeout)
	goIn(t, dst, deadline, "run", "./cmd/prickle-gen", "generate")
	// The API's catalog lists each added tool as documented (a catalog
	// name is in the API before its page, as undocumented).
	catalog, err := os.ReadFile(filepath.Join(dst, "api", "catalog.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range added {
		c := regexp.MustCompile(`(\w+)\s+ToolName\s+=\s+"` + regexp.QuoteMeta(name) + `"`).FindSubmatch(catalog)
		if c == nil || !regexp.MustCompile(`\{\s*`+string(c[1])+`,\s*true\s*\}`).Match(catalog) {
			t.Fatalf("generate did not add %s to the API's catalog as documented:\n%s", name, catalog)
		}
	}
	goIn(t, dst, deadline, "build", "./...")
	goIn(t, dst, deadline, "vet", "./...")
	goIn(t, dst, deadline, "test", "./...")
}

// copyModule copies the module's tracked files (but e2e's node_modules)
// from root into a temporary folder, and returns it.
func copyModule(t *testing.T, root string) string {
	t.Helper()
	files, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files (the copy is made of the tracked files): %v", err)
	}
	dst := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		if strings.HasPrefix(f, "e2e/node_modules/") {
			continue
		}
		copyFile(t, filepath.Join(root, f), filepath.Join(dst, f))
	}
	return dst
}

// addGrowPages adds the pages of root's testdata/grow to the copy dst's
// spec/reference, and returns the tools they document. A page of a tool
// spec/reference documents already joins under a name the bundled pages
// leave free: the bundled page stays (prickled may implement it), and the
// page still adds its shapes.
func addGrowPages(t *testing.T, root, dst string) (added []string) {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "testdata", "grow", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in testdata/grow (%v)", err)
	}
	bundled, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := spec.ParsePage(p, src)
		if page.Tool == "" {
			t.Fatalf("%s documents no tool", p)
		}
		tool := testkit.FreeToolName(page.Tool, func(n string) bool { return bundled.Tool(n) != nil })
		if tool != page.Tool {
			src = bytes.Replace(src, []byte("\n## "+page.Tool+"\n"), []byte("\n## "+tool+"\n"), 1)
			src = bytes.Replace(src, []byte("tool="+page.Tool+")"), []byte("tool="+tool+")"), 1)
			if renamed, _ := spec.ParsePage(p, src); renamed.Tool != tool {
				t.Fatalf("%s renamed to %s documents %q", p, tool, renamed.Tool)
			}
			t.Logf("%s joins as %s: spec/reference documents %s", filepath.Base(p), tool, page.Tool)
		}
		if err := os.WriteFile(filepath.Join(dst, "spec", "reference", tool+".md"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		added = append(added, tool)
	}
	return added
}

// goIn runs the go command with args in the grown copy dst, which must
// succeed before deadline. The copy's tests run as a user's `go test
// ./...` would: without the real clients, and without running
// TestPagesGrow again.
func goIn(t *testing.T, dst string, deadline time.Time, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dst
	cmd.Env = append(os.Environ(), "PRICKLE_E2E=", "PRICKLE_GROW=", "PRICKLE_GROWN=1")
	cmd.WaitDelay = time.Minute
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Until(deadline)):
		cmd.Process.Kill()
		err = <-done
		t.Fatalf("go %s: still running after %s\n%s", strings.Join(args, " "), growTimeout, out.String())
	}
	if err != nil {
		t.Fatalf("go %s in the grown copy: %v\n%s", strings.Join(args, " "), err, out.String())
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}
