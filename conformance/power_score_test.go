package conformance

import (
	"regexp"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/conformance/report"
)

// TestRunPower: a whole run's score counts the mutants its profile
// catches; a selection's counts, of those, the ones with a catching check
// it ran: a script that ran, exploration (for a tool of the scope), the
// coverage of a run of every script.
func TestRunPower(t *testing.T) {
	f := &powerFile{Mutants: []powerMutant{
		{Name: "a", Class: classPage, Tool: "claim_task", Core: []powerCatcher{{By: "claim_task_replay", Runs: 1}}, Reference: []powerCatcher{{By: "claim_task_replay", Runs: 1}}},
		{Name: "b", Class: classRace, Tool: "claim_task", Reference: []powerCatcher{{By: catchExplore, Runs: 3}}},
		{Name: "c", Class: classDecision, Tool: "discover_team_agents", Reference: []powerCatcher{{By: catchExplore, Runs: 1, Sequences: 10}}},
		{Name: "d", Class: classCoverage, Tool: "claim_discussion", Core: []powerCatcher{{By: catchCoverage, Runs: 1}}, Reference: []powerCatcher{{By: catchCoverage, Runs: 1}}},
		{Name: "e", Class: classReplica, Reference: []powerCatcher{{By: catchExplore, Runs: 1, Sequences: 100, Replicas: 2}}},
	}}
	rep := &Report{Suite: "v1.2.3", Results: []*report.Result{{Name: "claim_task_replay", Status: report.Skip}, {Name: report.ExploreScript, Status: report.Pass}}}
	for _, c := range []struct {
		name string
		o    Options
		want report.Power
	}{
		{"whole run, reference", Options{Profile: Reference}, report.Power{Profile: Reference, Mutants: 5, Caught: 5, Races: 1, Replicas: 1}},
		{"whole run, core", Options{Profile: Core}, report.Power{Profile: Core, Mutants: 5, Caught: 2}},
		// claim_task_replay was skipped: only exploration ran, for
		// discover_team_agents and every tool's rules.
		{"--tools discover_team_agents", Options{Profile: Reference, Tools: []string{"discover_team_agents"}}, report.Power{Profile: Reference, Mutants: 5, Caught: 5, Races: 1, Replicas: 1, Selection: true, Ran: 2}},
		// A --run selection never certifies: coverage does not count.
		{"--run explore", Options{Profile: Reference, Run: regexp.MustCompile("^explore$")}, report.Power{Profile: Reference, Mutants: 5, Caught: 5, Races: 1, Replicas: 1, Selection: true, Ran: 3}},
	} {
		got := f.runPower(rep, &c.o)
		c.want.List = "https://github.com/prickle-dev/prickle/blob/v1.2.3/conformance/POWER.md"
		if *got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, *got, c.want)
		}
	}
	p := f.runPower(rep, &Options{Profile: Reference, Tools: []string{"discover_team_agents"}})
	if s := p.String(); !strings.Contains(s, "catches 5 of 5 self-test mutants in the reference profile (of them 1 race, 1 replica bug") ||
		!strings.Contains(s, "ran the catching checks of 2 of them (40%)") || !strings.HasSuffix(s, "; the list: "+p.List) {
		t.Errorf("String: %q", s)
	}
	if got := powerList("a dev build"); !strings.Contains(got, "/blob/main/") {
		t.Errorf("the list of a build of no version: %s", got)
	}
}

// TestPowerEmbedded: the power file the reports read parses, and lists
// every profile's catchers.
func TestPowerEmbedded(t *testing.T) {
	f, err := readPower(powerJSON)
	if err != nil {
		t.Fatal(err)
	}
	if p := f.power(Reference, "", nil); p.Caught == 0 || p.Caught != p.Mutants {
		t.Errorf("the reference profile catches %d of %d mutants: the self-test asks that it catch every one", p.Caught, p.Mutants)
	}
}
