package load

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// procStat is what /proc/PID/stat tells of one process.
type procStat struct {
	ppid int
	rss  int64         // bytes
	cpu  time.Duration // user + system, all threads, and of its reaped children
}

// readStat reads /proc/PID/stat.
func readStat(pid int) (procStat, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, fmt.Errorf("process %d: %w", pid, err)
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields that follow start after its last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("process %d: /proc stat: no command name", pid)
	}
	f := strings.Fields(string(stat[i+1:])) // f[0] is field 3 (state)
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("process %d: /proc stat: %d fields", pid, len(f)+2)
	}
	var n [6]int64
	for j, k := range []int{1, 11, 12, 13, 14, 21} { // ppid, utime, stime, cutime, cstime, rss (pages)
		if n[j], err = strconv.ParseInt(f[k], 10, 64); err != nil {
			return procStat{}, fmt.Errorf("process %d: /proc stat: %w", pid, err)
		}
	}
	// A child's CPU moves to cutime and cstime when its parent reaps it,
	// so a process's tree keeps the CPU of the children it has reaped
	// (PostgreSQL's backends that ended).
	return procStat{ppid: int(n[0]), cpu: time.Duration(n[1]+n[2]+n[3]+n[4]) * clockTick, rss: n[5] * pageSize}, nil
}

var pageSize = int64(os.Getpagesize())

// readProcs returns the resident set size (bytes) and the CPU time of
// the processes roots and all their descendants, summed, and how many
// processes that is. Shared memory counts once per process that
// touched it.
func readProcs(roots []int) (rss int64, cpu time.Duration, n int, err error) {
	// A child that a root reaps while the machine's processes are read
	// would be missed or counted twice: read again when a root's CPU
	// moved meanwhile.
	for try := 0; ; try++ {
		before, err := readRoots(roots)
		if err != nil {
			return 0, 0, 0, err
		}
		all, kids, err := readAll()
		if err != nil {
			return 0, 0, 0, err
		}
		stats, err := readRoots(roots)
		if err != nil {
			return 0, 0, 0, err
		}
		if try < 10 && !maps.EqualFunc(before, stats, func(a, b procStat) bool { return a.cpu == b.cpu }) {
			continue
		}
		for queue := slices.Clone(roots); len(queue) > 0; queue = queue[1:] {
			for _, kid := range kids[queue[0]] {
				if _, seen := stats[kid]; !seen {
					stats[kid] = all[kid]
					queue = append(queue, kid)
				}
			}
		}
		for _, st := range stats {
			rss += st.rss
			cpu += st.cpu
		}
		return rss, cpu, len(stats), nil
	}
}

func readRoots(roots []int) (map[int]procStat, error) {
	stats := map[int]procStat{}
	for _, pid := range roots {
		st, err := readStat(pid)
		if err != nil {
			return nil, err
		}
		stats[pid] = st
	}
	return stats, nil
}

// readAll reads every process of the machine, and lists each one's
// children.
func readAll() (all map[int]procStat, kids map[int][]int, err error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil, err
	}
	all, kids = map[int]procStat{}, map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil { // else it ended since the listing: its parent has its CPU, or will
			all[pid] = st
			kids[st.ppid] = append(kids[st.ppid], pid)
		}
	}
	return all, kids, nil
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
