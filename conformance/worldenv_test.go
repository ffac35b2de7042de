package conformance

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCmdTargetNamesTheWorldTwice: a server command finds the world to
// load in $PRICKLE_WORLD and, under its older name, in $PRICKLE_FIXTURE,
// which servers written before PRICKLE_WORLD read.
func TestCmdTargetNamesTheWorldTwice(t *testing.T) {
	file, _ := writeSeedFixture(t)
	dir := t.TempDir()
	c := &CmdTarget{Command: `printf '%s\n' "$PRICKLE_WORLD" "$PRICKLE_FIXTURE" >"$PRICKLE_STATE_DIR/env"; exec sleep 30`,
		StartTimeout: time.Second, StopTimeout: time.Second}
	if _, err := c.Start(context.Background(), &Script{Name: "x"}, file, dir); err == nil {
		t.Fatal("a command that never listens started")
	}
	got, err := os.ReadFile(filepath.Join(dir, "state", "env"))
	if err != nil {
		t.Fatal(err)
	}
	if want := file + "\n" + file + "\n"; string(got) != want {
		t.Errorf("$PRICKLE_WORLD and $PRICKLE_FIXTURE:\n%s\nwant both %s", got, file)
	}
}
