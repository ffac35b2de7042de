package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/internal/fsx"
)

// What a run prints: a progress line per script, then the report.

func writeProgress(w io.Writer, r *Result) {
	switch r.Status {
	case Skip:
		fmt.Fprintf(w, "SKIP  %s: %s\n", r.Name, r.Reason)
	case XFail:
		fmt.Fprintf(w, "XFAIL %s (%.2fs, expected failure)\n", r.Name, r.Duration.Seconds())
		writeLog(w, r)
	case Pass:
		fmt.Fprintf(w, "PASS  %s (%.2fs, %d checks)\n", r.Name, r.Duration.Seconds(), r.Checks)
		writeLog(w, r) // kept only with Options.Verbose
	default:
		fmt.Fprintf(w, "FAIL  %s (%.2fs)\n", r.Name, r.Duration.Seconds())
		if r.Reason != "" {
			fmt.Fprintf(w, "      %s\n", r.Reason)
		}
		writeLog(w, r)
	}
}

func writeLog(w io.Writer, r *Result) {
	if r.Log != "" {
		fmt.Fprintln(w, suite.Indent(strings.TrimRight(r.Log, "\n")))
	}
}

// writeHeader writes the first line of a run: what certifies what.
func writeHeader(w io.Writer, o *Options) {
	explore := "exploration off"
	if o.Explore > 0 {
		explore = fmt.Sprintf("exploring %d sequences from seed %d", o.Explore, o.Seed)
	}
	source := o.SpecSource
	if source == "" {
		source = "bundled pages"
	}
	fmt.Fprintf(w, "prickle-conformance %s: profile %s, %s, spec %s (%s), %s\n",
		suiteVersion(), o.Profile, o.Target, shortHash(o.Spec.Hash), source, explore)
}

// WriteSummary writes the end of a run: what failed, what exploration
// found, what is missing, and the verdict as the last line.
func WriteSummary(w io.Writer, rep *Report) {
	fmt.Fprintln(w)
	var failed []string
	for _, r := range rep.Results {
		if r.Status == Fail {
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
			fmt.Fprintf(w, "  sequence %d: %s [%s] (%d calls, %s)\n", f.Sequence, suite.OneLine(f.Message), f.Source, f.Calls, where)
		}
	}
	if len(rep.Missing) > 0 {
		fmt.Fprintln(w, "missing for a certification:")
		for _, m := range rep.Missing {
			fmt.Fprintf(w, "  - %s\n", m)
		}
	}
	fmt.Fprintf(w, "%d checks in %.1fs; suite %s, spec %s, profile %s, seed %d\n", rep.Checks, rep.Duration.Seconds(), rep.Suite, shortHash(rep.SpecHash), rep.Profile, rep.Seed)
	fmt.Fprintln(w, rep.Summary())
}

func shortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// WriteFiles writes the JSON and JUnit reports (an empty name skips one),
// each atomically: a reader never sees half a report.
func (r *Report) WriteFiles(jsonFile, junitFile string) error {
	for _, f := range []struct {
		name  string
		write func(io.Writer, *Report) error
	}{{jsonFile, WriteJSON}, {junitFile, WriteJUnit}} {
		if f.name == "" {
			continue
		}
		var b bytes.Buffer
		if err := f.write(&b, r); err != nil {
			return err
		}
		if err := fsx.WriteFileAtomic(f.name, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WriteList writes the scripts, and exploration when explores: name,
// kind, world, what each tests, in the order of the names.
func WriteList(w io.Writer, scripts []*Script, explores bool) error {
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
		rows = append(rows, row{ExploreScript, "exploration", "generated worlds",
			"stateful exploration: random sequences of calls against generated worlds, every answer compared with the model of the documented rules"})
	}
	slices.SortStableFunc(rows, func(a, b row) int { return strings.Compare(a.name, b.name) })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.name, r.kind, r.world, r.summary)
	}
	return tw.Flush()
}

// WriteTrace writes the traceability matrix, as text or JSON.
func WriteTrace(w io.Writer, rows []TraceRow, problems []string, asJSON bool) error {
	if asJSON {
		if problems == nil {
			problems = []string{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"sentences": rows, "problems": problems})
	}
	covered, explained := 0, 0
	for _, r := range rows {
		fmt.Fprintf(w, "%s  %s\n", r.ID, r.Text)
		if len(r.Scripts) > 0 {
			covered++
			fmt.Fprintf(w, "    tested by: %s\n", strings.Join(r.Scripts, ", "))
		}
		if r.Reason != "" {
			explained++
			fmt.Fprintf(w, "    not testable from outside: %s\n", r.Reason)
		}
		if len(r.Scripts) == 0 && r.Reason == "" {
			fmt.Fprintf(w, "    UNTRACKED\n")
		}
	}
	_, err := fmt.Fprintf(w, "\n%d sentences: %d tested, %d with a reason they cannot be (fully) tested, %d problems\n",
		len(rows), covered, explained, len(problems))
	return err
}
