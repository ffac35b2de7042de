package schemacompile

import (
	"os/exec"
	"strings"
	"testing"
)

// A program that imports the generated API validates with generated code
// alone: it does not link the schema library (whose init alone costs
// milliseconds and megabytes), nor this package.
func TestGeneratedAPILinksNoSchemaLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/prickle-dev/prickle/api").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/santhosh-tekuri/jsonschema") || dep == "github.com/prickle-dev/prickle/internal/schemacompile" {
			t.Errorf("the generated API links %s", dep)
		}
	}
}
