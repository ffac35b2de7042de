package conformance_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/conformance"
)

// TestSeedVerdicts counts, for conformance/README.md ("The verdict across
// seeds"), the verdicts of whole runs of the reference server (in
// process, one server, exploration at the default budget) in both
// profiles, from PRICKLE_SEED_VERDICTS=N seeds each (1 to N, or from
// PRICKLE_SEED_FROM on). The machine's load is the caller's (quiet, or two
// busy loops beside it); the load average is read before each run and
// printed with the counts. A conforming server must certify from every
// seed: any other verdict fails the test, with its cause.
func TestSeedVerdicts(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PRICKLE_SEED_VERDICTS"))
	if n <= 0 {
		t.Skip("a measurement: set PRICKLE_SEED_VERDICTS=N")
	}
	from := int64(1)
	if v, err := strconv.ParseInt(os.Getenv("PRICKLE_SEED_FROM"), 10, 64); err == nil {
		from = v
	}
	sp, scripts := loadSuite(t)
	reference := mutant{name: "reference"}
	for _, prof := range []conformance.Profile{conformance.Core, conformance.Reference} {
		counts := map[conformance.Verdict]int{}
		lo, hi := 1e9, 0.0
		var causes []string
		for seed := from; seed < from+int64(n); seed++ {
			load := loadAverage()
			lo, hi = min(lo, load), max(hi, load)
			rep := runMutant(t, sp, scripts, reference, prof, "", conformance.DefaultExplore, "", seed)
			counts[rep.Verdict]++
			t.Logf("%s seed %d (load %.2f): %s in %.1fs; %s; race classes: %s", prof, seed, load, rep.Summary(), rep.Duration.Seconds(), rep.RefusalSummary(), raceMargins(rep))
			if rep.Verdict != conformance.Certified {
				cause := fmt.Sprintf("seed %d: %s; failed: %s; missing: %s", seed, rep.Verdict, failedNames(rep), strings.Join(rep.Missing, "; "))
				causes = append(causes, cause)
				t.Errorf("%s profile: the reference server is not certified from %s", prof, cause)
			}
		}
		fmt.Printf("| %s | %s | %d | %d / %d / %d | %.2f to %.2f |\n", os.Getenv("PRICKLE_SEED_LABEL"), prof, n,
			counts[conformance.Certified], counts[conformance.Incomplete], counts[conformance.Failed], lo, hi)
		for _, c := range causes {
			fmt.Printf("|  | %s | %s |\n", prof, c)
		}
	}
}

// loadAverage is the machine's load average over the last minute (0
// where /proc/loadavg cannot be read).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, _ := strconv.ParseFloat(f, 64)
	return v
}

// raceMargins is each race class's groups that count, of those needed:
// "task-same-key 70/66, ...".
func raceMargins(rep *conformance.Report) string {
	var out []string
	for _, e := range rep.Races {
		n := e.Overlapped
		if e.AcrossReplicas {
			n = e.CrossReplica
		}
		out = append(out, fmt.Sprintf("%s %d/%d", e.Class, n, e.K))
	}
	return strings.Join(out, ", ")
}
