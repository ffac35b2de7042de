package conformance

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/prickle-dev/prickle/conformance/report"
)

// The suite's power: what its self-test measured of the mutants it
// runs, which check catches each, in which profile. The self-test writes
// power.json and POWER.md (PRICKLE_MUTANTS=1 go test -run
// '^TestMutants(FullRun)?$' ./conformance -update) and fails when what
// it measured differs from them; reports read the score from here,
// never from a copy.

//go:embed power.json
var powerJSON []byte

// powerFile is power.json.
type powerFile struct {
	// Seed is the seed of the self-test's explorations (their first run).
	Seed    int64         `json:"seed"`
	Mutants []powerMutant `json:"mutants"`
	// RaceVerdicts are the last counts of TestRaceVerdicts, by label
	// and profile.
	RaceVerdicts []raceVerdicts `json:"race_verdicts,omitempty"`
}

// Mutant classes.
const (
	classPage     = "page rule"
	classDecision = "reference decision"
	classRace     = "race"
	classReplica  = "replica"
	classProtocol = "protocol"
	classCoverage = "coverage"
)

// powerMutant is one self-test mutant and what caught it.
type powerMutant struct {
	Name  string `json:"name"`
	Class string `json:"class"`
	// Breaks is what it breaks: a page sentence's ID, a page's schema
	// ("TOOL: output schema"), a decision of server/README.md
	// ("server/README.md: TITLE") or an MCP rule ("MCP ...").
	Breaks string `json:"breaks"`
	Rule   string `json:"rule"`
	// Tool is the tool whose rule it breaks ("" for every tool's).
	Tool string `json:"tool,omitempty"`
	// Core and Reference are its catchers in each profile; none where
	// the profile leaves the rule open.
	Core      []powerCatcher `json:"core"`
	Reference []powerCatcher `json:"reference"`
}

// caught is m's catchers in profile p.
func (m *powerMutant) caught(p Profile) []powerCatcher {
	if p == Core {
		return m.Core
	}
	return m.Reference
}

// Catchers.
const (
	// catchExplore is exploration alone, the scripts off, at the default
	// budget.
	catchExplore = report.ExploreScript
	// catchCoverage is the verdict's coverage: a full run never
	// certifies a server that refuses every call of a tool.
	catchCoverage = "coverage"
)

// powerCatcher is a check that catches a mutant, and how many tries it
// needed, as bounds (exact counts vary from run to run).
type powerCatcher struct {
	// By is a script's name, catchExplore or catchCoverage.
	By string `json:"by"`
	// Runs bounds the runs it needed: 1, or for a race mutant the runs
	// the self-test gives exploration (a seed each; a race may need a
	// quieter moment).
	Runs int `json:"runs"`
	// Sequences bounds, for exploration of a mutant that does not race,
	// the sequences it ran up to the one that caught it: 10 or
	// DefaultExplore.
	Sequences int `json:"sequences,omitempty"`
	// Replicas is the deployment it was caught against (0: one server).
	Replicas int `json:"replicas,omitempty"`
}

// raceVerdicts are the verdicts of whole runs against the race and
// replica mutants and the reference server (TestRaceVerdicts).
type raceVerdicts struct {
	Label   string `json:"label"`
	Profile string `json:"profile"`
	Date    string `json:"date"`
	// Load is the load average seen over the runs ("2.1 to 4.0").
	Load string            `json:"load"`
	Runs int               `json:"runs"`
	Rows []raceVerdictsRow `json:"rows"`
}

type raceVerdictsRow struct {
	Server     string `json:"server"`
	Failed     int    `json:"failed"`
	Incomplete int    `json:"incomplete"`
	Certified  int    `json:"certified"`
}

// readPower parses power.json.
func readPower(b []byte) (*powerFile, error) {
	var f powerFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("power.json: %w", err)
	}
	return &f, nil
}

// revision matches a module version or a VCS revision: a ref the list
// can be read at.
var revision = regexp.MustCompile(`^(v\d+\.\d+\.\d+\S*|[0-9a-f]{40})$`)

// powerList is where the list of the suite of version suite is.
func powerList(suite string) string {
	ref := "main"
	if revision.MatchString(suite) {
		ref = suite
	}
	return "https://github.com/prickle-dev/prickle/blob/" + ref + "/conformance/POWER.md"
}

// ranCatcher reports whether a run ran catcher c of a mutant of tool
// (its results res, its scope, whether it was a whole run).
type ranCatcher func(c powerCatcher, tool string) bool

// power is f's score in profile p; ran, for a selection, tells the
// catchers the run ran (nil for a whole run).
func (f *powerFile) power(p Profile, suite string, ran ranCatcher) *report.Power {
	out := &report.Power{Profile: p, Mutants: len(f.Mutants), List: powerList(suite), Selection: ran != nil}
	for _, m := range f.Mutants {
		cs := m.caught(p)
		if len(cs) == 0 {
			continue
		}
		out.Caught++
		switch m.Class {
		case classRace:
			out.Races++
		case classReplica:
			out.Replicas++
		}
		if ran != nil && slices.ContainsFunc(cs, func(c powerCatcher) bool { return ran(c, m.Tool) }) {
			out.Ran++
		}
	}
	return out
}

// runPower is the power of the run of rep, with options o: of a
// selection when o selects scripts (o.Run) or tools (o.Tools).
func runPower(rep *Report, o *Options) (*report.Power, error) {
	f, err := readPower(powerJSON)
	if err != nil {
		return nil, err
	}
	return f.runPower(rep, o), nil
}

// runPower is runPower with f for the power file.
func (f *powerFile) runPower(rep *Report, o *Options) *report.Power {
	if o.Run == nil && len(o.Tools) == 0 {
		return f.power(o.Profile, rep.Suite, nil)
	}
	inScope := func(tool string) bool { return len(o.Tools) == 0 || tool == "" || slices.Contains(o.Tools, tool) }
	ran := func(c powerCatcher, tool string) bool {
		switch c.By {
		case catchCoverage:
			return o.Run == nil && inScope(tool)
		case catchExplore:
			r := rep.Result(report.ExploreScript)
			return r != nil && r.Status != report.Skip && inScope(tool)
		}
		r := rep.Result(c.By)
		return r != nil && r.Status != report.Skip
	}
	return f.power(o.Profile, rep.Suite, ran)
}

// powerText is the score as a sentence, capitalized, without the list
// ("" without a score).
func (r *Report) powerText() string {
	if r.Power == nil {
		return ""
	}
	t := r.Power.Score()
	return strings.ToUpper(t[:1]) + t[1:]
}
