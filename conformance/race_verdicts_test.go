package conformance_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/conformance"
)

// TestRaceVerdicts counts, for conformance/README.md, the verdicts of
// whole runs (reference profile, exploration at the default budget, a
// seed each) against every race mutant, every replica mutant (as two
// replicas) and the reference server (as one, and as two replicas):
// PRICKLE_RACE_VERDICTS=N runs each N times, PRICKLE_RACE_SERVERS=REGEXP
// only the servers it matches, PRICKLE_RACE_PROFILE=core in the core
// profile. The machine's load is the caller's (two
// busy loops beside it, or none); a mutant CERTIFIED fails the test.
func TestRaceVerdicts(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PRICKLE_RACE_VERDICTS"))
	if n <= 0 {
		t.Skip("a measurement: set PRICKLE_RACE_VERDICTS=N")
	}
	only := regexp.MustCompile(os.Getenv("PRICKLE_RACE_SERVERS"))
	profile := conformance.Reference
	if os.Getenv("PRICKLE_RACE_PROFILE") == "core" {
		profile = conformance.Core
	}
	sp, scripts := loadSuite(t)
	servers := []mutant{{name: "reference"}, checkThenInsert}
	for _, m := range mutants {
		if m.race {
			servers = append(servers, m)
		}
	}
	servers = append(servers, mutant{name: "reference-2-replicas", replicas: 2})
	servers = append(servers, replicaMutants...)
	for _, m := range servers {
		if !only.MatchString(m.name) {
			continue
		}
		counts := map[conformance.Verdict]int{}
		for i := range n {
			rep := runMutant(t, sp, scripts, m, profile, "", conformance.DefaultExplore, "", int64(1000+i))
			counts[rep.Verdict]++
			if !strings.HasPrefix(m.name, "reference") && rep.Verdict == conformance.Certified {
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
