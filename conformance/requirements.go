package conformance

import (
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec"
)

// requirements is what the run of all (the suite's scripts), with
// results, found of each sentence of sp.
func requirements(sp *spec.Spec, all []*Script, results []*report.Result, x *report.Exploration) ([]report.Requirement, error) {
	rows, _, err := Trace(sp, all)
	if err != nil {
		return nil, err
	}
	status := map[string]report.Status{}
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
	out := make([]report.Requirement, 0, len(rows))
	for _, row := range rows {
		q := report.Requirement{ID: row.ID, Tool: tools[row.ID], Text: row.Text, Pos: pos[row.ID], Reason: row.Reason,
			Scripts: append([]string(nil), row.Scripts...)}
		passed, failed := false, broken[row.ID]
		for _, name := range row.Scripts {
			switch status[name] {
			case report.Pass:
				passed = true
			case report.Fail, report.XFail:
				failed = true
			}
		}
		if broken[row.ID] {
			q.Scripts = append(q.Scripts, report.ExploreScript)
		}
		switch {
		case failed:
			q.Status = report.RequirementFailed
		case passed:
			q.Status = report.RequirementPassed
		case q.Reason != "":
			q.Status = report.RequirementUntestable
		default:
			q.Status = report.RequirementNotCovered
		}
		out = append(out, q)
	}
	return out, nil
}
