package app

import (
	"flag"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
)

var update = flag.Bool("update", false, "rewrite the txtar goldens of testdata/summary with the actual output")

// goldenReport is a fixed run for the summary goldens: a failure, an
// explored sequence's failure, a race class short of K, what is missing;
// against replicas (2 or more), the calls each answered and every class's
// overlapped groups across replicas.
func goldenReport(replicas int) *conformance.Report {
	r := &conformance.Report{Suite: "v0.0.0-golden", Profile: conformance.Reference, SpecHash: "sha256:00000000000000000000", Seed: 42,
		Verdict: conformance.Failed, Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Duration: 12345 * time.Millisecond,
		Passed: 50, Failed: 1, Checks: 4321, Starts: 24,
		Missing: []string{"race class task-same-key is short of evidence"},
		Results: []*report.Result{{Name: "claim_task_replay", Status: report.Fail}, {Name: "explore", Status: report.Pass}},
		Power: &report.Power{Profile: conformance.Reference, Mutants: 42, Caught: 39, Races: 3, Replicas: 4,
			List: "https://github.com/prickle-dev/prickle/blob/v0.0.0-golden/conformance/POWER.md"},
		Explore: &report.Exploration{Seed: 42, Sequences: 100, Calls: 3800, RaceSequences: 3, Failures: []*report.ExploreFailure{
			{Sequence: 2, Source: "claim_task#1d2c6a82", Message: "a replay gave\nanother attempt", Calls: 2, Saved: "out/explore-42-2.txtar"}}},
	}
	for _, c := range []string{"task-same-key", "task-different-keys", "task-mixed-keys", "discussion", "credential-replay"} {
		e := report.RaceEvidence{Class: c, Tool: "claim_task", Groups: 80, Overlapped: 66, K: 66, P: 0.1, MissBound: 0.00096}
		if c == "task-same-key" {
			e.Groups, e.Overlapped, e.MissBound = 70, 40, 0.0148
		}
		r.Races = append(r.Races, e)
	}
	if replicas >= 2 {
		r.Replicas, r.ReplicaCalls = replicas, []int{1800, 1750}
		for i := range r.Races {
			r.Races[i].CrossReplica, r.Races[i].AcrossReplicas = r.Races[i].Overlapped, true
		}
	}
	return r
}

// TestSummaryGoldens prints the end of one fixed run and compares it with
// its golden in testdata/summary (-update rewrites them).
func TestSummaryGoldens(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/summary",
		UpdateScripts: *update,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// summary [-replicas N]: the end of the run, as the command
			// prints it.
			"summary": func(ts *testscript.TestScript, neg bool, args []string) {
				replicas := 0
				if len(args) == 2 && args[0] == "-replicas" {
					replicas, _ = strconv.Atoi(args[1])
					args = args[2:]
				}
				if neg || len(args) != 0 {
					ts.Fatalf("usage: summary [-replicas N]")
				}
				writeSummary(ts.Stdout(), goldenReport(replicas), "", 60)
			},
		},
	})
}
