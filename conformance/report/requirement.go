package report

import "github.com/prickle-dev/prickle/spec"

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

// TraceRow is one line of the traceability matrix (conformance.Trace): a
// normative sentence, the scripts that cover it, and the reason it cannot
// be tested from outside, if any.
type TraceRow struct {
	ID      string   `json:"id"`
	Text    string   `json:"text"`
	Scripts []string `json:"scripts"`
	Reason  string   `json:"reason,omitempty"`
}
