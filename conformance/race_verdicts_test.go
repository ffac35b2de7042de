package conformance_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/prickle-dev/prickle/conformance"
)

// TestRaceVerdicts counts, for conformance/README.md, the verdicts of
// whole runs (reference profile, exploration at the default budget, a
// seed each) against every race mutant and the reference server:
// PRICKLE_RACE_VERDICTS=N runs each N times. The machine's load is the
// caller's (two busy loops beside it, or none); a race mutant CERTIFIED
// fails the test.
func TestRaceVerdicts(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PRICKLE_RACE_VERDICTS"))
	if n <= 0 {
		t.Skip("a measurement: set PRICKLE_RACE_VERDICTS=N")
	}
	sp, scripts := loadSuite(t)
	servers := []mutant{{name: "reference"}, checkThenInsert}
	for _, m := range mutants {
		if m.race {
			servers = append(servers, m)
		}
	}
	for _, m := range servers {
		counts := map[conformance.Verdict]int{}
		for i := range n {
			rep := runMutant(t, sp, scripts, m, conformance.Reference, "", conformance.DefaultExplore, "", int64(1000+i))
			counts[rep.Verdict]++
			if m.name != "reference" && rep.Verdict == conformance.Certified {
				t.Errorf("%s certified (seed %d): %v", m.name, 1000+i, rep.Races)
			}
			if rep.Verdict != conformance.Certified {
				t.Logf("%s seed %d: %s; failed: %s; races short: %s", m.name, 1000+i, rep.Verdict, failedNames(rep), shortRaces(rep))
			}
		}
		fmt.Printf("| %s | %s | %d | %d | %d |\n", os.Getenv("PRICKLE_RACE_LABEL"), m.name,
			counts[conformance.Failed], counts[conformance.Incomplete], counts[conformance.Certified])
	}
}
