package benchcompare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Instruction counts stand still on a machine whose load moves the
// timings: each benchmark's sub-benchmarks that match c.sub run under
// valgrind's callgrind, on one CPU, for 1 and for 3 iterations, and the
// difference halved is what one iteration costs, set-up left out. The
// garbage collector is off (GOGC=off): its share moves with the timing of
// its cycles by a few percent from run to run, while the rest repeats to
// within 0.5%; what a change does to allocation shows in the timings'
// B/op and allocs/op. Work done on other CPUs counts as if it ran on one:
// a change that only spreads work shows in the timings, not here.

// collected is callgrind's count of a run's instructions.
var collected = regexp.MustCompile(`Collected : (\d+)`)

// callgrind runs valgrind on one benchmark of t for n iterations and
// returns the instructions of the whole run.
func (c *config) callgrind(ctx context.Context, t *tree, l Loc, n int) (int64, error) {
	args := []string{"--tool=callgrind", "--callgrind-out-file=" + os.DevNull, t.bins[l.Pkg],
		"-test.run", "^$", "-test.bench", "^" + regexp.QuoteMeta(l.Func) + "$/" + c.sub,
		"-test.benchtime", strconv.Itoa(n) + "x"}
	cmd := exec.CommandContext(ctx, "valgrind", args...)
	cmd.Dir = filepath.Join(t.root, filepath.FromSlash(l.Pkg))
	// cpu.rdtscp=off: valgrind's CPUID offers RDTSCP on hosts whose
	// instruction it cannot decode (SIGILL in runtime.cputicks).
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GOGC=off", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%s: valgrind %s: %w\n%s", t.label, l, err, out)
	}
	if !strings.Contains(string(out), "\nPASS") || !strings.Contains(string(out), l.Func+"/") {
		return 0, fmt.Errorf("%s: %s ran no sub-benchmark matching %q:\n%s", t.label, l, c.sub, out)
	}
	m := collected.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("%s: valgrind %s counted nothing:\n%s", t.label, l, out)
	}
	return strconv.ParseInt(string(m[1]), 10, 64)
}

// RatioError is a benchmark whose ratio of instructions (base ÷ work) is
// below -fail-below.
type RatioError struct {
	Bench      string
	Ratio, Min float64
	Base, Work float64 // instructions per iteration
}

func (e *RatioError) Error() string {
	return fmt.Sprintf("%s: %.2f× the base's instructions (%.1fM → %.1fM), below %.2f×", e.Bench, e.Ratio, e.Base/1e6, e.Work/1e6, e.Min)
}

// countInstructions prints, per benchmark, the instructions of one
// iteration in each tree and their ratio; with c.failBelow, the
// benchmarks whose ratio is below it are the error, after the table.
func (c *config) countInstructions(ctx context.Context, trees []*tree, w io.Writer) error {
	if _, err := exec.LookPath("valgrind"); err != nil {
		return errors.New("-instructions needs valgrind (apt-get install valgrind)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "instructions per iteration (callgrind, GOMAXPROCS=1, GOGC=off; a run of 3 iterations less a run of 1, halved), sub-benchmarks matching %q\n", c.sub)
	fmt.Fprintf(tw, "\tbase\twork\tbase ÷ work\t\n")
	var below []error
	for i, b := range c.suite {
		per := make([]float64, len(trees))
		for j, t := range trees {
			fmt.Fprintf(c.log, "instructions: %s %s\n", t.label, t.locs[i])
			one, err := c.callgrind(ctx, t, t.locs[i], 1)
			if err != nil {
				return err
			}
			three, err := c.callgrind(ctx, t, t.locs[i], 3)
			if err != nil {
				return err
			}
			per[j] = float64(three-one) / 2
		}
		name := strings.TrimPrefix(b.Func, "Benchmark") + "/" + c.sub
		ratio := "-" // too few instructions to compare
		if per[0] > 0 && per[1] > 0 {
			r := per[0] / per[1]
			ratio = fmt.Sprintf("%.2f×", r)
			if r < c.failBelow {
				below = append(below, &RatioError{Bench: name, Ratio: r, Min: c.failBelow, Base: per[0], Work: per[1]})
			}
		}
		fmt.Fprintf(tw, "%s\t%.1fM\t%.1fM\t%s\t\n", name, per[0]/1e6, per[1]/1e6, ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return errors.Join(below...)
}
