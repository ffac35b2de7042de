package validatordiff_test

import (
	"testing"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/gen/internal/validatordiff"
	"github.com/prickle-dev/prickle/spec"
)

// The generated validators of the bundled pages, package api's, say what
// the compiled schemas say (the oracle), violation for violation, of every
// page's example, every case the conformance suite derives, and a sampled
// value of each schema with its mutations.
func TestValidatorsMatchTheOracle(t *testing.T) {
	s, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	cases := validatordiff.Cases(s)
	oracle := validatordiff.NewOracle()
	bySource := map[string]int{}
	for _, c := range cases {
		tool := api.Tool(api.ToolName(c.Tool))
		v := tool.Input
		if c.Section == "output" {
			v = tool.Output
		}
		got := validatordiff.ResultOf(v.Validate(c.Doc))
		want, err := oracle.Judge(c.Tool+"/"+c.Section, v.Schema(), c.Doc)
		if err != nil {
			t.Fatal(err)
		}
		if d := validatordiff.Diff(got, want); d != "" {
			t.Errorf("%s: %s", c, d)
		}
		bySource[c.Source]++
	}
	t.Logf("%d cases: %v", len(cases), bySource)
}
