package load

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// startSh starts sh -c script and stops it when the test ends.
func startSh(t *testing.T, script string) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// TestReadProcsSumsTheTree: a process's live descendants are summed, and
// so is the CPU of the children it reaped (as PostgreSQL's postmaster
// reaps its backends).
func TestReadProcsSumsTheTree(t *testing.T) {
	// Two children that live, one grandchild under the second.
	live := startSh(t, "sleep 30 & sh -c 'sleep 30 & wait' & wait")
	var n int
	for deadline := time.Now().Add(10 * time.Second); n < 4 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if _, _, n, err = readProcs([]int{live}); err != nil {
			t.Fatal(err)
		}
	}
	if n != 4 {
		t.Errorf("sh with two children and a grandchild: %d processes summed, want 4", n)
	}
	rootOnly, _ := readStat(live)
	rss, _, _, _ := readProcs([]int{live})
	if rss <= rootOnly.rss {
		t.Errorf("the tree's RSS %d is not more than its root's %d", rss, rootOnly.rss)
	}

	// A child that burns CPU and ends, reaped by its parent, which then
	// becomes sleep (exec keeps the reaped children's CPU).
	reaped := startSh(t, `sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'; exec sleep 30`)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", reaped))
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(comm)) == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the burning child did not end within a minute")
		}
	}
	_, cpu, n, err := readProcs([]int{reaped})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || cpu < 50*time.Millisecond {
		t.Errorf("after its child burned CPU and was reaped: %d processes, CPU %v; want 1 process and the child's CPU (over 50ms)", n, cpu)
	}
	if _, _, _, err := readProcs([]int{live, 1 << 30}); err == nil {
		t.Error("a process that does not exist: no error")
	}
}

// TestReadProcsWhileChildrenEnd: a tree whose children keep ending, each
// reaped by its parent, is read without a child missed or counted twice:
// its CPU never goes back.
func TestReadProcsWhileChildrenEnd(t *testing.T) {
	root := startSh(t, `while :; do sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'; done`)
	var last time.Duration
	for i := range 300 {
		_, cpu, _, err := readProcs([]int{root})
		if err != nil {
			t.Fatal(err)
		}
		if cpu < last {
			t.Fatalf("read %d: the tree's CPU went back from %v to %v", i, last, cpu)
		}
		last = cpu
	}
}
