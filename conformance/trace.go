package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec"
)

// The traceability matrix: every normative sentence of the pages, with
// the scripts that test it (their "# covers:" lines) or the reason
// untestable.md gives that it cannot be tested from outside.

// untestable is a sentence the suite cannot test from outside the server,
// with the reason.
type untestable struct {
	ID     string
	Reason string
}

var untestableRe = regexp.MustCompile("^- `?([a-z0-9_]+#[0-9a-f]{8}(?:-[0-9]+)?)`?:\\s*(.+)$")

// untestableSentences returns the entries of untestable.md: lines of the
// form "- TOOL#HASH: reason".
func untestableSentences() ([]untestable, error) { return readReasons("untestable.md", untestableMD) }

// exampleExceptions returns the entries of examples.md: the sentences by
// which a tool's documented example input cannot succeed against the seed
// world ("- TOOL#HASH: reason"; the tool is the sentence's).
func exampleExceptions() ([]untestable, error) { return readReasons("examples.md", examplesMD) }

// readReasons reads "- TOOL#HASH: reason" lines.
func readReasons(file string, src []byte) ([]untestable, error) {
	var out []untestable
	sc := bufio.NewScanner(bytes.NewReader(src))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			break // the sections after the sentences (refusals.go)
		}
		if !strings.HasPrefix(line, "- ") {
			continue
		}
		m := untestableRe.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: want \"- TOOL#HASH: reason\", got %q", file, n, line)
		}
		out = append(out, untestable{ID: m[1], Reason: m[2]})
	}
	return out, nil
}

// Trace maps every normative sentence of sp to the scripts that cover it
// and the reason it cannot be tested, if any. Problems lists sentences that
// are neither covered nor explained, and IDs in scripts or untestable.md
// that the spec does not have (a sentence was edited).
func Trace(sp *spec.Spec, scripts []*Script) (rows []report.TraceRow, problems []string, err error) {
	rows, gaps, err := trace(sp, scripts)
	for _, g := range gaps {
		problems = append(problems, g.text)
	}
	return rows, problems, err
}

// trace is Trace with each problem told as a gap of the tool whose
// sentence it is about ("" for a stale ID).
func trace(sp *spec.Spec, scripts []*Script) (rows []report.TraceRow, problems []gap, err error) {
	unt, err := untestableSentences()
	if err != nil {
		return nil, nil, err
	}
	reasons := map[string]string{}
	for _, u := range unt {
		reasons[u.ID] = u.Reason
	}
	covered := map[string][]string{}
	for _, s := range scripts {
		for _, id := range s.Covers {
			covered[id] = append(covered[id], s.Name)
		}
	}
	known := map[string]bool{}
	for _, t := range sp.Tools {
		for _, se := range t.Sentences {
			known[se.ID] = true
			r := report.TraceRow{ID: se.ID, Text: se.Text, Scripts: covered[se.ID], Reason: reasons[se.ID]}
			if r.Scripts == nil {
				r.Scripts = []string{}
			}
			if len(r.Scripts) == 0 && r.Reason == "" {
				problems = append(problems, gap{t.Name, fmt.Sprintf("sentence %s is neither covered by a script (# covers:) nor listed in untestable.md: %q", se.ID, se.Text)})
			}
			rows = append(rows, r)
		}
	}
	var stale []string
	for id, names := range covered {
		if !known[id] {
			stale = append(stale, fmt.Sprintf("scripts %s cover %s, which the spec does not have (was the sentence edited?)", strings.Join(names, ", "), id))
		}
	}
	for _, u := range unt {
		if !known[u.ID] {
			stale = append(stale, fmt.Sprintf("untestable.md lists %s, which the spec does not have (was the sentence edited?)", u.ID))
		}
	}
	exc, err := exampleExceptions()
	if err != nil {
		return nil, nil, err
	}
	for _, u := range exc {
		if !known[u.ID] {
			stale = append(stale, fmt.Sprintf("examples.md lists %s, which the spec does not have (was the sentence edited?)", u.ID))
		}
	}
	sort.Strings(stale)
	for _, p := range stale {
		problems = append(problems, gap{"", p})
	}
	return rows, problems, nil
}
