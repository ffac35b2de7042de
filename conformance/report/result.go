// Package report holds what a conformance run reports beside its verdict
// (conformance.Report): each script's Result, every requirement's,
// exploration's outcome and its shrunk failing sequences, the race and
// refusal evidence, the suite's power, and the rows of the traceability
// matrix. Their JSON is the report's (prickle-conformance --json).
//
// It is data, written by the suite and read by its reports and by a Go
// program that runs the suite: it may import the spec and the vocabulary
// the suite's engines share (conformance/internal/suite); the engines
// import it, and it must not import package conformance or an engine.
package report

import "time"

// ExploreScript is the name exploration has among a run's scripts: its
// Result's name, a name in Requirement.Scripts, and what
// conformance.Options.Run matches to select it.
const ExploreScript = "explore"

// Status is a script's outcome.
type Status string

// Outcomes. An expected failure that fails is XFail (clean); one that
// passes is Fail (the baseline is stale and must be updated).
const (
	Pass  Status = "pass"
	Fail  Status = "fail"
	Skip  Status = "skip"
	XFail Status = "xfail"
)

// Result is one script's outcome.
type Result struct {
	Name string `json:"name"`
	// Path is where the script comes from (scripts/NAME.txtar for an
	// embedded one), as failures cite it.
	Path     string        `json:"path,omitempty"`
	Status   Status        `json:"status"`
	Duration time.Duration `json:"-"`
	Millis   int64         `json:"duration_ms"`
	Checks   int           `json:"checks"`
	Covers   []string      `json:"covers,omitempty"`
	Derived  bool          `json:"derived,omitempty"`
	// Calls counts the tool calls made; Succeeded, per tool, those that
	// succeeded; Served lists the tools tools/list served. The coverage
	// verdict reads them.
	Calls     int            `json:"calls"`
	Succeeded map[string]int `json:"succeeded,omitempty"`
	Served    []string       `json:"served,omitempty"`
	// ReplicaCalls counts, against a deployment of two replicas or more,
	// the tool calls each replica answered (by replica number).
	ReplicaCalls []int `json:"replica_calls,omitempty"`
	// Kept is the materialized script kept by --keep.
	Kept string `json:"kept,omitempty"`
	// Reason says why a script was skipped, or why an expected failure
	// failed the run.
	Reason string `json:"reason,omitempty"`
	// Log is the script's log (on failure, the failing phase).
	Log string `json:"log,omitempty"`
}
