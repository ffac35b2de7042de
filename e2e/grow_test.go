//go:build linux

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// growTimeout bounds the whole grown tree's build and test runs (its -short
// tests, then the CI recipe's test).
const growTimeout = 30 * time.Minute

// TestPagesGrow is the acceptance test of adding pages: a copy of this
// module gets the pages of testdata/grow (tools unlike the bundled ones:
// other shapes, sentences and callers; one already in the catalog, one
// new to it), `prickle-gen generate` runs, and then the copy must build,
// vet and pass its tests with no other edit. Its tests then show the rest:
// prickled serves the new tools and refuses their calls as not_implemented
// (server's TestEveryDocumentedToolIsServed) and a conformance run against
// it ends INCOMPLETE, naming only them (cmd/prickle-conformance's
// TestServerCmd). Last, the grown copy runs the CI recipe's test, which
// -short skips (TestCIRecipe): the recipe still certifies prickled for the
// tools it implements, still fails a server that ignores its world, and
// fails prickled on every documented tool, missing only the new ones.
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
	pages, err := filepath.Glob(filepath.Join(root, "testdata", "grow", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in testdata/grow (%v)", err)
	}
	for _, p := range pages {
		copyFile(t, p, filepath.Join(dst, "spec", "reference", filepath.Base(p)))
	}
	deadline := time.Now().Add(growTimeout)
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dst
		// The copy's tests run as a user's `go test ./...` would: without
		// the real clients, and without running this test again.
		cmd.Env = append(os.Environ(), "PRICKLE_E2E=", "PRICKLE_GROW=", "PRICKLE_GROWN=1")
		cmd.WaitDelay = time.Minute
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
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
	run("run", "./cmd/prickle-gen", "generate")
	for _, p := range pages {
		name := strings.TrimSuffix(filepath.Base(p), ".md")
		b, err := os.ReadFile(filepath.Join(dst, "api", "schemas.go"))
		if err != nil || !bytes.Contains(b, []byte(`"`+name+`"`)) && !bytes.Contains(b, []byte(name+"/input")) {
			t.Fatalf("generate did not add %s to the API (%v)", name, err)
		}
	}
	run("build", "./...")
	run("vet", "./...")
	run("test", "-short", "./...")
	run("test", "-run", "^TestCIRecipe$", "./e2e/")
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
