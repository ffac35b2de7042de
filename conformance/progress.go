package conformance

import (
	"fmt"
	"io"
	"strings"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec"
)

// What a run prints as it goes (Options.Progress): a header, then a line
// per script and one for exploration.

func writeProgress(w io.Writer, r *report.Result) {
	switch r.Status {
	case report.Skip:
		fmt.Fprintf(w, "SKIP  %s: %s\n", r.Name, r.Reason)
	case report.XFail:
		fmt.Fprintf(w, "XFAIL %s (%.2fs, expected failure)\n", r.Name, r.Duration.Seconds())
		writeLog(w, r)
	case report.Pass:
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

func writeLog(w io.Writer, r *report.Result) {
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
	replicas := ""
	if n := replicasOf(o.Target); n >= 2 {
		replicas = fmt.Sprintf(" (%d replicas)", n)
	}
	fmt.Fprintf(w, "prickle-conformance %s: profile %s, %s%s, spec %s (%s), %s\n",
		suiteVersion(), o.Profile, o.Target, replicas, spec.ShortHash(o.Spec.Hash()), source, explore)
}
