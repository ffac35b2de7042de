package conformance

import (
	"flag"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/prickle-dev/prickle/conformance/internal/explore"
	"github.com/prickle-dev/prickle/conformance/report"
)

var update = flag.Bool("update", false, "rewrite the txtar goldens of testdata/reports with the actual output")

// goldenReport is a fixed run for the report goldens: racesRun's, its
// times and version fixed; against replicas (2 or more), every class's
// overlapped groups across replicas, but 3 of task-same-key's.
func goldenReport(t *testing.T, replicas int) *Report {
	r, _ := racesRun(t)
	if replicas >= 2 {
		r.Replicas, r.ReplicaCalls = replicas, make([]int, replicas)
		for i := range r.ReplicaCalls {
			r.ReplicaCalls[i] = 1800 - 50*i
		}
		for i, c := range r.Explore.Races {
			r.Explore.Races[i].CrossReplica = c.Overlapped
			if c.Class == string(explore.TaskSameKey) {
				r.Explore.Races[i].CrossReplica -= 3
			}
		}
		r.Races = raceEvidence(r.Explore, replicas)
		r.Missing = texts(raceGaps(r.Races, r.Explore.RaceBudget, nil))
	}
	r.Suite = "v0.0.0-golden"
	r.Target = "server-cmd exec my-server --addr $PRICKLE_ADDR"
	r.SpecHash = "sha256:0000"
	r.SpecSource = "bundled pages"
	r.Started = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r.Duration, r.Millis = 12345*time.Millisecond, 12345
	r.Starts = 24
	r.Explore.RaceSequences = 3
	// A score of its own: the goldens do not follow power.json.
	r.Power = &report.Power{Profile: r.Profile, Mutants: 42, Caught: 24, Races: 1, Replicas: 1, List: powerList(r.Suite)}
	r.tally()
	return r
}

// TestReportGoldens renders one fixed run in every report format and
// compares each with its golden in testdata/reports (go test -run
// TestReportGoldens ./conformance -update rewrites them).
func TestReportGoldens(t *testing.T) {
	_, sp := racesRun(t)
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/reports",
		UpdateScripts: *update,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// report [-replicas N] FORMAT: the run as that report.
			"report": func(ts *testscript.TestScript, neg bool, args []string) {
				replicas := 0
				if len(args) == 3 && args[0] == "-replicas" {
					replicas, _ = strconv.Atoi(args[1])
					args = args[2:]
				}
				if neg || len(args) != 1 {
					ts.Fatalf("usage: report [-replicas N] json|junit|markdown|html|badge|annotations")
				}
				r := goldenReport(t, replicas)
				writers := map[string]func(io.Writer) error{
					"json": r.WriteJSON, "junit": r.WriteJUnit, "markdown": r.WriteMarkdown, "badge": r.WriteBadge,
					"html":        func(w io.Writer) error { return r.WriteHTML(w, sp) },
					"annotations": func(w io.Writer) error { return r.WriteGitHubAnnotations(w, sp) },
				}
				write, ok := writers[args[0]]
				if !ok {
					ts.Fatalf("report: unknown format %q", args[0])
				}
				ts.Check(write(ts.Stdout()))
			},
		},
	})
}
