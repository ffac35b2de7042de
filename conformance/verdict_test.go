package conformance

import (
	"slices"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/spec"
)

// TestToolVerdicts: a tool is certified only when nothing failed anywhere
// and neither the run nor the tool misses anything; a scope is judged on
// its tools alone, and names documented tools only.
func TestToolVerdicts(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	a, b := sp.Tools[0].Name, sp.Tools[1].Name
	verdicts := func(vs []ToolVerdict) map[string]Verdict {
		m := map[string]Verdict{}
		for _, v := range vs {
			m[v.Name] = v.Verdict
		}
		return m
	}
	own := []gap{{a, "a's own gap"}}
	got := verdicts(toolVerdicts(sp, own, false))
	if got[a] != Incomplete || got[b] != Certified || len(got) != len(sp.Tools) {
		t.Errorf("a gap of %s: %v", a, got)
	}
	if got := verdicts(toolVerdicts(sp, []gap{{"", "exploration did not run"}}, false)); got[a] != Incomplete || got[b] != Incomplete {
		t.Errorf("a gap of the run: %v", got)
	}
	if got := verdicts(toolVerdicts(sp, nil, true)); got[a] != Failed || got[b] != Failed {
		t.Errorf("a failure: %v", got)
	}

	r := &Report{Verdict: Incomplete, Tools: toolVerdicts(sp, own, false)}
	for _, c := range []struct {
		scope []string
		want  Verdict
	}{{nil, Incomplete}, {[]string{b}, Certified}, {[]string{a, b}, Incomplete}} {
		r.Scope = c.scope
		if got := r.ScopeVerdict(); got != c.want || r.Clean() != (c.want == Certified) {
			t.Errorf("scope %v: %s (clean %v), want %s", c.scope, got, r.Clean(), c.want)
		}
	}
	r.Failed, r.Verdict, r.Tools, r.Scope = 1, Failed, toolVerdicts(sp, nil, true), []string{b}
	if r.ScopeVerdict() != Failed {
		t.Errorf("a failure, scoped: %s", r.ScopeVerdict())
	}

	if err := (&Options{Spec: sp, Tools: []string{b}}).CheckScope(); err != nil {
		t.Error(err)
	}
	for _, bad := range [][]string{{"no_such_tool"}, {""}, {b, "claim"}} {
		err := (&Options{Spec: sp, Tools: bad}).CheckScope()
		if err == nil || !strings.Contains(err.Error(), "is not a documented tool") || !slices.ContainsFunc(sp.Tools, func(t *spec.Tool) bool { return strings.Contains(err.Error(), t.Name) }) {
			t.Errorf("scope %q: %v", bad, err)
		}
	}
}
