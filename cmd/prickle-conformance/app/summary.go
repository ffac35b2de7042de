package app

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/internal/fsx"
	"github.com/prickle-dev/prickle/spec"
)

// What a certification prints besides the run's progress (the end of a
// run, the list of scripts), and the report files it writes.

// writeSummary writes the end of a run: what failed, what exploration
// found, what is missing, and the verdict as the last line. A run of a
// selection (the --run regex, of a suite of total scripts) says in one
// line that it cannot certify, rather than list all it did not run.
func writeSummary(w io.Writer, rep *conformance.Report, selection string, total int) {
	fmt.Fprintln(w)
	var failed []string
	for _, r := range rep.Results {
		if r.Status == report.Fail {
			failed = append(failed, r.Name)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "failed: %s\n", strings.Join(failed, " "))
	}
	if rep.XFailed > 0 {
		fmt.Fprintf(w, "%d expected failures still fail\n", rep.XFailed)
	}
	if x := rep.Explore; x != nil {
		fmt.Fprintf(w, "exploration: %d sequences, %d calls, seed %d", x.Sequences, x.Calls, x.Seed)
		if len(x.Failures) > 0 {
			fmt.Fprintf(w, ", %d distinct failures", len(x.Failures))
		}
		fmt.Fprintln(w)
		for _, f := range x.Failures {
			where := "printed above"
			if f.Saved != "" {
				where = "saved as " + f.Saved
			}
			fmt.Fprintf(w, "  sequence %d: %s [%s] (%d calls, %s)\n", f.Sequence, oneLine(f.Message), f.Source, f.Calls, where)
		}
	}
	if line := rep.ReplicaSummary(); line != "" {
		fmt.Fprintln(w, line)
	}
	if len(rep.Races) > 0 {
		across := ""
		if rep.Replicas >= 2 {
			across = ", and of those the groups whose calls reached two replicas or more, which count"
		}
		fmt.Fprintf(w, "race evidence (groups whose calls overlapped on the wire, of those run%s; %d sequences of races alone added):\n", across, rep.Explore.RaceSequences)
		for _, e := range rep.Races {
			mark := ""
			if e.Short() {
				mark = "  SHORT"
			}
			fmt.Fprintf(w, "  %s%s\n", e, mark)
		}
	}
	if line := rep.RefusalSummary(); line != "" {
		fmt.Fprintln(w, line)
	}
	switch {
	case len(rep.Missing) > 0 && selection != "":
		fmt.Fprintf(w, "not a certification: --run '%s' selected %d of the suite's %d scripts (exploration among them); only a whole run certifies\n",
			selection, len(rep.Results), total)
	case len(rep.Missing) > 0:
		fmt.Fprintln(w, "missing for a certification:")
		for _, m := range rep.Missing {
			fmt.Fprintf(w, "  - %s\n", m)
		}
	}
	// Each tool's verdict, when they are not all the run's.
	var tools []string
	split := len(rep.Scope) > 0
	for _, t := range rep.Tools {
		tools = append(tools, t.Name+" "+strings.ToUpper(string(t.Verdict)))
		split = split || t.Verdict != rep.Verdict
	}
	if split {
		fmt.Fprintf(w, "tools: %s\n", strings.Join(tools, ", "))
	}
	if rep.Power != nil {
		fmt.Fprintf(w, "power: %s\n", rep.Power)
	}
	fmt.Fprintf(w, "%d checks in %.1fs, %d server starts; suite %s, spec %s, profile %s, seed %d\n", rep.Checks, rep.Duration.Seconds(), rep.Starts,
		rep.Suite, spec.ShortHash(rep.SpecHash), rep.Profile, rep.Seed)
	fmt.Fprintln(w, rep.Summary())
}

// reportFiles are the report files a run writes ("" for one it does not).
type reportFiles struct{ json, junit, markdown, badge, html string }

// writeReports writes the report files, each atomically: a reader never
// sees half a report.
func writeReports(r *conformance.Report, sp *spec.Spec, files reportFiles) error {
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{files.json, r.WriteJSON}, {files.junit, r.WriteJUnit}, {files.markdown, r.WriteMarkdown}, {files.badge, r.WriteBadge},
		{files.html, func(w io.Writer) error { return r.WriteHTML(w, sp) }},
	} {
		if f.name == "" {
			continue
		}
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			return err
		}
		if err := fsx.WriteFileAtomic(f.name, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeList writes the scripts, and exploration when explores: name,
// kind, world, what each tests, in the order of the names.
func writeList(w io.Writer, scripts []*conformance.Script, explores bool) error {
	type row struct{ name, kind, world, summary string }
	var rows []row
	for _, s := range scripts {
		r := row{s.Name, "hand-written", "seed world", s.Summary}
		if s.OwnFixture {
			r.world = "own world"
		}
		if s.Derived {
			r.kind = "derived"
		}
		rows = append(rows, r)
	}
	if explores {
		rows = append(rows, row{report.ExploreScript, "exploration", "generated worlds",
			"stateful exploration: random sequences of calls against generated worlds, every answer compared with the model of the documented rules"})
	}
	slices.SortStableFunc(rows, func(a, b row) int { return strings.Compare(a.name, b.name) })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.name, r.kind, r.world, r.summary)
	}
	return tw.Flush()
}

// oneLine is s on one line, its runs of white space single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
