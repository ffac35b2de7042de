//go:build unix

package api

import "syscall"

// processCPU is the CPU time the process has used so far, user and system,
// in nanoseconds, garbage collection included.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
