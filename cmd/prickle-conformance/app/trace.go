package app

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/internal/cmdline"
)

// runTrace is "prickle-conformance trace": the traceability matrix.
func runTrace(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("prickle-conformance trace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the matrix as JSON")
	pages := fs.String("pages", "", "trace these pages instead of the bundled ones (a folder, a page or a spec file)")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: prickle-conformance trace [--json] [--pages PATH]

Print the traceability matrix: every normative sentence of the pages, with
the scripts that test it or the reason it cannot be tested from outside.
Exit status 1 when a sentence is neither, or an ID is stale.

flags:
`)
		fs.PrintDefaults()
	}
	if code, ok := cmdline.Parse(fs, args, false); !ok {
		return code
	}
	sp, _, scripts, ok := loadSpec(stderr, *pages, "")
	if !ok {
		return exitUsage
	}
	rows, problems, err := conformance.Trace(sp, scripts)
	if err != nil {
		fmt.Fprintf(stderr, "prickle-conformance: %v\n", err)
		return exitUsage
	}
	if err := writeTrace(stdout, rows, problems, *asJSON); err != nil {
		return exitUsage
	}
	for _, p := range problems {
		fmt.Fprintf(stderr, "prickle-conformance: %s\n", p)
	}
	if len(problems) > 0 {
		return exitFail
	}
	return exitOK
}

// writeTrace writes the traceability matrix, as text or JSON.
func writeTrace(w io.Writer, rows []report.TraceRow, problems []string, asJSON bool) error {
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
