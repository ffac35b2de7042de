package app

import (
	"context"
	"io"
	"runtime/debug"
	"strings"
	"testing"
)

// TestGCPercent: prickled runs its collector at gcPercent unless GOGC is
// set, in which case the operator's value stands.
func TestGCPercent(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	version := func() {
		t.Helper()
		if code := Main(context.Background(), []string{"-version"}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			t.Fatalf("prickled -version: exit %d", code)
		}
	}

	t.Setenv("GOGC", "")
	version()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GOGC unset: the collector's target is %d%%, want %d%%", got, gcPercent)
	}

	t.Setenv("GOGC", "100")
	version()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=100: the collector's target is %d%%, want the operator's 100%%", got)
	}
}
