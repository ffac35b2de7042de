package conformance_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
)

// TestExplorationProvokesEveryPageRefusal: at the default budget, in both
// profiles, exploration of the reference server provokes every refusal a
// page states alone, in each situation in which it applies, but for what
// untestable.md says cannot be: a generator that stopped drawing a
// situation would let a server that ignores the rule there pass.
func TestExplorationProvokesEveryPageRefusal(t *testing.T) {
	sp, scripts := loadSuite(t)
	for _, prof := range []conformance.Profile{conformance.Core, conformance.Reference} {
		rep, err := conformance.Run(context.Background(), scripts, conformance.Options{Target: referenceTarget("reference", nil, nil),
			Profile: prof, Spec: sp, Run: regexp.MustCompile("^explore$"), Explore: conformance.DefaultExplore, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r := rep.Result(report.ExploreScript); r == nil || r.Status != report.Pass {
			t.Fatalf("%s: exploration of the reference server did not pass: %+v", prof, r)
		}
		if len(rep.Refusals) == 0 {
			t.Fatalf("%s: no refusal evidence", prof)
		}
		for _, e := range rep.Refusals {
			if e.Provoked == 0 && e.Untestable == "" {
				t.Errorf("%s: exploration never provoked %s alone (%s)", prof, e.Name(), e.What)
			}
		}
		for _, m := range rep.Missing {
			if strings.Contains(m, "never provoked alone") {
				t.Errorf("%s: missing %q", prof, m)
			}
		}
		t.Logf("%s: %s", prof, rep.RefusalSummary())
	}
}
