package validatordiff_test

import (
	"testing"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/gen/internal/validatordiff"
	"github.com/prickle-dev/prickle/spec"
)

// fuzzValidators fuzzes the generated validators of one tool's input and
// output against the oracle, seeded with the tool's differential cases
// (validatordiff.Cases): any document, the same verdict and violations,
// also when validated again by the pool's checkers, which then hold what
// the first validation left.
func fuzzValidators(f *testing.F, tool api.ToolName) {
	s, err := spec.LoadBundled()
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range validatordiff.Cases(s) {
		if c.Tool == string(tool) {
			f.Add(c.Section == "output", c.Doc)
		}
	}
	t := api.Tool(tool)
	oracle := validatordiff.NewOracle()
	f.Fuzz(func(tt *testing.T, output bool, doc []byte) {
		v, section := t.Input, "input"
		if output {
			v, section = t.Output, "output"
		}
		want, err := oracle.Judge(t.Name+"/"+section, v.Schema(), doc)
		if err != nil {
			tt.Fatal(err)
		}
		for _, run := range []string{"first", "again"} {
			if d := validatordiff.Diff(validatordiff.ResultOf(v.Validate(doc)), want); d != "" {
				tt.Fatalf("%s %s %q, validated %s: %s", t.Name, section, doc, run, d)
			}
		}
	})
}

func FuzzValidateClaimTask(f *testing.F)          { fuzzValidators(f, api.ToolClaimTask) }
func FuzzValidateClaimDiscussion(f *testing.F)    { fuzzValidators(f, api.ToolClaimDiscussion) }
func FuzzValidateDiscoverTeamAgents(f *testing.F) { fuzzValidators(f, api.ToolDiscoverTeamAgents) }
