package conformance_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/conformance"
)

// TestRaceVerdicts counts, for conformance/README.md, the verdicts of
// whole runs (reference profile, exploration at the default budget, a
// seed each) against every race mutant, every replica mutant (as two
// replicas) and the reference server (as one, and as two replicas):
// PRICKLE_RACE_VERDICTS=N runs each N times, PRICKLE_RACE_SERVERS=REGEXP
// only the servers it matches, PRICKLE_RACE_PROFILE=core in the core
// profile. The machine's load is the caller's (two
// busy loops beside it, or none; PRICKLE_RACE_LABEL names it); a mutant
// CERTIFIED fails the test. Its counts, with the date and the load
// average seen, replace those of its label and profile in power.json
// and POWER.md.
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
	label := os.Getenv("PRICKLE_RACE_LABEL")
	if label == "" {
		label = "unlabelled"
	}
	got := conformance.RaceVerdicts{Label: label, Profile: string(profile), Date: time.Now().UTC().Format(time.DateOnly), Runs: n}
	lo, hi := 1e9, 0.0
	for _, m := range servers {
		if !only.MatchString(m.name) {
			continue
		}
		counts := map[conformance.Verdict]int{}
		for i := range n {
			load := loadAverage()
			lo, hi = min(lo, load), max(hi, load)
			rep := runMutant(t, sp, scripts, m, profile, "", conformance.DefaultExplore, "", int64(1000+i))
			counts[rep.Verdict]++
			if !strings.HasPrefix(m.name, "reference") && rep.Verdict == conformance.Certified {
				t.Errorf("%s certified (seed %d): %v", m.name, 1000+i, rep.Races)
			}
			if rep.Verdict != conformance.Certified {
				t.Logf("%s seed %d: %s; failed: %s; races short: %s", m.name, 1000+i, rep.Verdict, failedNames(rep), shortRaces(rep))
			}
		}
		fmt.Printf("| %s | %s | %d | %d | %d |\n", label, m.name,
			counts[conformance.Failed], counts[conformance.Incomplete], counts[conformance.Certified])
		got.Rows = append(got.Rows, conformance.RaceVerdictsRow{Server: m.name,
			Failed: counts[conformance.Failed], Incomplete: counts[conformance.Incomplete], Certified: counts[conformance.Certified]})
	}
	got.Load = fmt.Sprintf("%.2f to %.2f", lo, hi)
	f := readPowerFile(t)
	i := slices.IndexFunc(f.RaceVerdicts, func(v conformance.RaceVerdicts) bool { return v.Label == got.Label && v.Profile == got.Profile })
	if i < 0 {
		f.RaceVerdicts = append(f.RaceVerdicts, got)
	} else {
		f.RaceVerdicts[i] = got
	}
	writePower(t, f)
}
