package conformance

import (
	"github.com/prickle-dev/prickle/spec"
)

// Requirement is one normative sentence of the pages and what the run
// found of it: the per-requirement result that reports show.
type Requirement struct {
	ID   string   `json:"id"`
	Tool string   `json:"tool"`
	Text string   `json:"text"`
	Pos  spec.Pos `json:"pos"` // on its page, as the pages were given
	// Status is what the run found: RequirementPassed, RequirementFailed,
	// RequirementUntestable or RequirementNotCovered.
	Status RequirementStatus `json:"status"`
	// Scripts are the scripts that test it (their "# covers:" lines) and,
	// when exploration found it broken, ExploreScript.
	Scripts []string `json:"scripts,omitempty"`
	// Reason is why it cannot be (fully) tested from outside
	// (untestable.md), when it cannot.
	Reason string `json:"reason,omitempty"`
}

// RequirementStatus is what a run found of a requirement.
type RequirementStatus string

// The statuses of a requirement. A requirement a script tests fails when
// one of its scripts failed (an expected failure among them) or an
// explored sequence broke it, and passes when one passed and none failed;
// one that no script tested in the run is untestable when untestable.md
// gives a reason, else not covered.
const (
	RequirementPassed     RequirementStatus = "passed"
	RequirementFailed     RequirementStatus = "failed"
	RequirementUntestable RequirementStatus = "untestable"
	RequirementNotCovered RequirementStatus = "not_covered"
)

// requirements is what the run of all (the suite's scripts), with
// results, found of each sentence of sp.
func requirements(sp *spec.Spec, all []*Script, results []*Result, x *ExploreReport) ([]Requirement, error) {
	rows, _, err := Trace(sp, all)
	if err != nil {
		return nil, err
	}
	status := map[string]Status{}
	for _, r := range results {
		status[r.Name] = r.Status
	}
	broken := map[string]bool{} // sentences an explored sequence broke
	if x != nil {
		for _, f := range x.Failures {
			broken[f.Source] = true
		}
	}
	tools := map[string]string{}
	pos := map[string]spec.Pos{}
	for _, t := range sp.Tools {
		for _, s := range t.Sentences {
			tools[s.ID], pos[s.ID] = t.Name, s.Pos
		}
	}
	out := make([]Requirement, 0, len(rows))
	for _, row := range rows {
		q := Requirement{ID: row.ID, Tool: tools[row.ID], Text: row.Text, Pos: pos[row.ID], Reason: row.Reason,
			Scripts: append([]string(nil), row.Scripts...)}
		passed, failed := false, broken[row.ID]
		for _, name := range row.Scripts {
			switch status[name] {
			case Pass:
				passed = true
			case Fail, XFail:
				failed = true
			}
		}
		if broken[row.ID] {
			q.Scripts = append(q.Scripts, ExploreScript)
		}
		switch {
		case failed:
			q.Status = RequirementFailed
		case passed:
			q.Status = RequirementPassed
		case q.Reason != "":
			q.Status = RequirementUntestable
		default:
			q.Status = RequirementNotCovered
		}
		out = append(out, q)
	}
	return out, nil
}
