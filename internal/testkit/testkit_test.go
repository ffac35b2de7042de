package testkit_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/internal/testkit"
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

func TestFreeToolName(t *testing.T) {
	taken := map[string]bool{"new_tool": true, "new_tool_2": true, "other": true}
	for name, want := range map[string]string{"new_tool": "new_tool_3", "other": "other_2", "free_tool": "free_tool"} {
		if got := testkit.FreeToolName(name, func(n string) bool { return taken[n] }); got != want {
			t.Errorf("FreeToolName(%q) = %q, want %q", name, got, want)
		}
	}
}
