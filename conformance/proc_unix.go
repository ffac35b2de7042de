//go:build unix

package conformance

import (
	"os/exec"
	"syscall"
)

// newGroup makes cmd the leader of a new process group, so that stopping
// it reaches everything `sh -c` started.
func newGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig (terminate or kill) to cmd's process group.
func signalGroup(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
