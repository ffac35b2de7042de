package conformance

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/prickle-dev/prickle/conformance/report"
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
//
// Each gap names the tool it keeps from certifying, or none for the run's.
func coverage(sp *spec.Spec, all []*Script, results []*report.Result, scope []string, refusals []report.RefusalEvidence) ([]gap, error) {
	var missing gapList
	missing.suite(sp, all, results, scope)
	if err := missing.tools(sp, results); err != nil {
		return nil, err
	}
	if err := missing.sentences(sp, all, results); err != nil {
		return nil, err
	}
	return append(missing, refusalGaps(refusals)...), nil
}

// gapList collects what a run is missing, in the order coverage tells it.
type gapList []gap

// run adds a gap of the whole run.
func (l *gapList) run(format string, args ...any) {
	*l = append(*l, gap{"", fmt.Sprintf(format, args...)})
}

// of adds a gap of the documented tool named tool.
func (l *gapList) of(tool, format string, args ...any) {
	*l = append(*l, gap{tool, fmt.Sprintf(format, args...)})
}

// suite adds what the run left out of the suite (all, and exploration):
// scripts that did not run, were skipped, or called a tool the scope
// leaves out.
func (l *gapList) suite(sp *spec.Spec, all []*Script, results []*report.Result, scope []string) {
	ran := map[string]*report.Result{}
	for _, r := range results {
		ran[r.Name] = r
	}
	// The suite: every script, and exploration, among them by name.
	names := []string{report.ExploreScript}
	byName := map[string]*Script{}
	for _, s := range all {
		names = append(names, s.Name)
		byName[s.Name] = s
	}
	sort.Strings(names)
	var notRun, skipped []string
	unclaimed := map[string][]string{} // a tool outside the scope → the scripts not run for it
	for _, name := range names {
		r := ran[name]
		switch {
		case r == nil && name == report.ExploreScript:
			l.run("stateful exploration (the script %s) did not run", name)
		case r == nil:
			notRun = append(notRun, name)
		case r.Status == report.Skip && byName[name] != nil && len(outside(byName[name], scope)) > 0:
			for _, tool := range outside(byName[name], scope) {
				unclaimed[tool] = append(unclaimed[tool], name)
			}
		case r.Status == report.Skip:
			skipped = append(skipped, fmt.Sprintf("%s (%s)", name, r.Reason))
		}
	}
	for _, tool := range slices.Sorted(maps.Keys(unclaimed)) {
		// A tool of no page (a script's typo, say) is the run's own gap.
		t := tool
		if sp.Tool(tool) == nil {
			t = ""
		}
		l.of(t, "%d scripts calling %s did not run (--tools leaves it out): %s", len(unclaimed[tool]), tool, list(unclaimed[tool], 8))
	}
	if len(notRun) > 0 {
		l.run("%d of %d scripts did not run (a --run selection): %s", len(notRun), len(names), list(notRun, 8))
	}
	if len(skipped) > 0 {
		l.run("%d scripts were skipped: %s", len(skipped), list(skipped, 4))
	}
}

// tools adds, for each documented tool, that it was not served, no call
// of it succeeded, or its example input did not succeed.
func (l *gapList) tools(sp *spec.Spec, results []*report.Result) error {
	ran := map[string]*report.Result{}
	for _, r := range results {
		ran[r.Name] = r
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
	listRan := slices.ContainsFunc(results, func(r *report.Result) bool { return len(r.Served) > 0 })
	exceptions, err := exampleExceptions()
	if err != nil {
		return err
	}
	for _, t := range sp.Tools {
		if listRan && !served[t.Name] {
			l.of(t.Name, "%s is documented but not served on tools/list", t.Name)
		}
		if len(results) > 0 && succeeded[t.Name] == 0 {
			l.of(t.Name, "no call of %s succeeded in the whole run: a documented tool must be served, not refused on every call", t.Name)
		}
		if t.ExampleInput == nil {
			continue
		}
		ex := ran["spec."+t.Name+".example"]
		if ex == nil || ex.Status == report.Skip {
			continue // said above
		}
		i := slices.IndexFunc(exceptions, func(u untestable) bool { return strings.HasPrefix(u.ID, t.Name+"#") })
		if i >= 0 {
			continue
		}
		if ex.Succeeded[t.Name] == 0 {
			l.of(t.Name, "%s's documented example input did not succeed against the seed world (no sentence in examples.md says it cannot)", t.Name)
		}
	}
	return nil
}

// sentences adds, for each tool, the sentences no passing script tests
// and untestable.md does not explain, then the traceability's problems
// (a sentence neither covered nor explained, a stale ID).
func (l *gapList) sentences(sp *spec.Spec, all []*Script, results []*report.Result) error {
	rows, problems, err := trace(sp, all)
	if err != nil {
		return err
	}
	passed := map[string]bool{}
	for _, r := range results {
		if r.Status == report.Pass {
			passed[r.Name] = true
		}
	}
	// Each tool's untested sentences in one line, in the order of the tools.
	untested := map[string][]string{}
	for _, row := range rows {
		if row.Reason != "" || slices.ContainsFunc(row.Scripts, func(n string) bool { return passed[n] }) {
			continue
		}
		if len(row.Scripts) == 0 {
			continue // a problem of Trace, listed below
		}
		untested[sentenceTool(row.ID)] = append(untested[sentenceTool(row.ID)], row.ID)
	}
	for _, t := range sp.Tools {
		if ids := untested[t.Name]; len(ids) > 0 {
			sort.Strings(ids)
			l.of(t.Name, "%d sentences of %s have no passing script and no reason in untestable.md: %s", len(ids), t.Name, list(ids, 8))
		}
	}
	*l = append(*l, problems...)
	return nil
}

// list joins at most n items, saying how many more there are.
func list(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:n], ", "), len(xs)-n)
}

// gap is one thing a run misses to certify: of the documented tool named
// tool, or, with tool "", of the whole run.
type gap struct{ tool, text string }

// texts are the gaps' texts, in order.
func texts(gaps []gap) []string {
	var out []string
	for _, g := range gaps {
		out = append(out, g.text)
	}
	return out
}

// sentenceTool is the tool a sentence ID ("<tool>#<hex>") belongs to.
func sentenceTool(id string) string {
	tool, _, _ := strings.Cut(id, "#")
	return tool
}

// ToolVerdict is what a run says of one documented tool: certified only
// when nothing in the whole run failed (a failure is not traced to one
// tool: a script may call several), nothing the run as a whole misses
// (every script and exploration ran), and nothing of the tool's own is
// missing (served, a call succeeded, its example input succeeded, each of
// its sentences tested).
type ToolVerdict struct {
	Name    string  `json:"name"`
	Verdict Verdict `json:"verdict"`
	// Missing is what holds the tool back: the run's gaps and its own.
	Missing []string `json:"missing,omitempty"`
}

// toolVerdicts judges each documented tool of sp, in the spec's order.
func toolVerdicts(sp *spec.Spec, gaps []gap, failed bool) []ToolVerdict {
	var out []ToolVerdict
	for _, t := range sp.Tools {
		v := ToolVerdict{Name: t.Name, Verdict: Certified}
		for _, g := range gaps {
			if g.tool == "" || g.tool == t.Name {
				v.Missing = append(v.Missing, g.text)
			}
		}
		switch {
		case failed:
			v.Verdict = Failed
		case len(v.Missing) > 0:
			v.Verdict = Incomplete
		}
		out = append(out, v)
	}
	return out
}
