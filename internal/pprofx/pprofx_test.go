package pprofx

import (
	"os/exec"
	"strings"
	"testing"
)

// The default build of prickled must not carry net/http/pprof: only the
// pprof build tag adds it.
func TestPrickledLinksPprofOnlyWithTag(t *testing.T) {
	deps := func(tags ...string) string {
		out, err := exec.Command("go", append(append([]string{"list", "-deps"}, tags...), "github.com/prickle-dev/prickle/cmd/prickled")...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		return string(out)
	}
	if strings.Contains(deps(), "net/http/pprof") {
		t.Error("the default prickled build links net/http/pprof")
	}
	if !strings.Contains(deps("-tags", "pprof"), "net/http/pprof") {
		t.Error("the pprof build of prickled does not link net/http/pprof")
	}
}
