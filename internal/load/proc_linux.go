package load

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// readProc returns the resident set size (bytes) and the CPU time (user
// plus system, all threads) of process pid.
func readProc(pid int) (rss int64, cpu time.Duration, err error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("process %d: %w", pid, err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest) // "12345 kB"
			if len(f) != 2 || f[1] != "kB" {
				return 0, 0, fmt.Errorf("process %d: /proc status: unexpected VmRSS %q", pid, strings.TrimSpace(rest))
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("process %d: /proc status: VmRSS: %w", pid, err)
			}
			rss = kb << 10
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("process %d: %w", pid, err)
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields that follow start after its last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("process %d: /proc stat: no command name", pid)
	}
	f := strings.Fields(string(stat[i+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("process %d: /proc stat: %d fields", pid, len(f)+2)
	}
	var ticks int64
	for _, s := range f[11:13] { // fields 14 (utime) and 15 (stime)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("process %d: /proc stat: %w", pid, err)
		}
		ticks += n
	}
	return rss, time.Duration(ticks) * clockTick, nil
}

// loadAverage returns the 1-, 5- and 15-minute load averages.
func loadAverage() ([3]float64, error) {
	var la [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return la, err
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return la, fmt.Errorf("/proc/loadavg: %q", b)
	}
	for i := range la {
		if la[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return la, fmt.Errorf("/proc/loadavg: %w", err)
		}
	}
	return la, nil
}
