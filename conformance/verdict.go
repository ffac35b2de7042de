package conformance

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/prickle-dev/prickle/spec"
)

// Verdict is what a run says of the server.
type Verdict string

// Verdicts. A run certifies the server only when nothing failed and the
// coverage is complete; with no failure but something missing, it is
// incomplete: a green run must mean the server conforms.
const (
	Certified  Verdict = "certified"
	Failed     Verdict = "failed"
	Incomplete Verdict = "incomplete"
)

// coverage lists what a run is missing to certify a server against sp,
// given every script of the suite and the results of what ran:
//
//   - the whole suite ran, none skipped, exploration included;
//   - every documented tool is served on tools/list and answered at least
//     one call with a success: a tool that refuses everything (a stub
//     answering not_implemented) is not served;
//   - every tool's example input succeeded against the seed world, unless
//     examples.md names the sentence by which it cannot;
//   - every normative sentence is tested by a script that passed, or
//     explained in untestable.md, and no ID is stale;
//   - every refusal a page states was provoked alone (refusals.go).
func coverage(sp *spec.Spec, all []*Script, results []*Result, refusals []RefusalEvidence) ([]string, error) {
	var missing []string
	ran := map[string]*Result{}
	for _, r := range results {
		ran[r.Name] = r
	}
	// The suite: every script, and exploration, among them by name.
	names := []string{ExploreScript}
	for _, s := range all {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	var notRun, skipped []string
	for _, name := range names {
		r := ran[name]
		switch {
		case r == nil && name == ExploreScript:
			missing = append(missing, "stateful exploration (the script "+name+") did not run")
		case r == nil:
			notRun = append(notRun, name)
		case r.Status == Skip:
			skipped = append(skipped, fmt.Sprintf("%s (%s)", name, r.Reason))
		}
	}
	if len(notRun) > 0 {
		missing = append(missing, fmt.Sprintf("%d of %d scripts did not run (a --run selection): %s", len(notRun), len(names), list(notRun, 8)))
	}
	if len(skipped) > 0 {
		missing = append(missing, fmt.Sprintf("%d scripts were skipped: %s", len(skipped), list(skipped, 4)))
	}

	served := map[string]bool{}
	succeeded := map[string]int{}
	for _, r := range results {
		for _, t := range r.Served {
			served[t] = true
		}
		for t, n := range r.Succeeded {
			succeeded[t] += n
		}
	}
	listRan := slices.ContainsFunc(results, func(r *Result) bool { return len(r.Served) > 0 })
	exceptions, err := exampleExceptions()
	if err != nil {
		return nil, err
	}
	for _, t := range sp.Tools {
		if listRan && !served[t.Name] {
			missing = append(missing, fmt.Sprintf("%s is documented but not served on tools/list", t.Name))
		}
		if len(results) > 0 && succeeded[t.Name] == 0 {
			missing = append(missing, fmt.Sprintf("no call of %s succeeded in the whole run: a documented tool must be served, not refused on every call", t.Name))
		}
		if t.ExampleInput == nil {
			continue
		}
		ex := ran["spec."+t.Name+".example"]
		if ex == nil || ex.Status == Skip {
			continue // said above
		}
		i := slices.IndexFunc(exceptions, func(u untestable) bool { return strings.HasPrefix(u.ID, t.Name+"#") })
		if i >= 0 {
			continue
		}
		if ex.Succeeded[t.Name] == 0 {
			missing = append(missing, fmt.Sprintf("%s's documented example input did not succeed against the seed world (no sentence in examples.md says it cannot)", t.Name))
		}
	}

	rows, problems, err := Trace(sp, all)
	if err != nil {
		return nil, err
	}
	passed := map[string]bool{}
	for _, r := range results {
		if r.Status == Pass {
			passed[r.Name] = true
		}
	}
	var untested []string
	for _, row := range rows {
		if row.Reason != "" || slices.ContainsFunc(row.Scripts, func(n string) bool { return passed[n] }) {
			continue
		}
		if len(row.Scripts) == 0 {
			continue // a problem of Trace, listed below
		}
		untested = append(untested, row.ID)
	}
	sort.Strings(untested)
	if len(untested) > 0 {
		missing = append(missing, fmt.Sprintf("%d sentences have no passing script and no reason in untestable.md: %s", len(untested), list(untested, 8)))
	}
	missing = append(missing, problems...)
	missing = append(missing, refusalGaps(refusals)...)
	return missing, nil
}

// list joins at most n items, saying how many more there are.
func list(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:n], ", "), len(xs)-n)
}
