package testkit_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyTests: no command of the module links testkit; its helpers are
// the tests'.
func TestOnlyTests(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/prickle-dev/prickle/cmd/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/prickle-dev/prickle/internal/testkit" {
			t.Fatal("a command links internal/testkit: its helpers are for tests only")
		}
	}
}
