//go:build !unix

package conformance

import (
	"os"
	"os/exec"
)

func newGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, kill bool) {
	if kill {
		_ = cmd.Process.Kill()
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
}
