package conformance_test

import (
	"testing"

	"github.com/prickle-dev/prickle/conformance"
)

// TestSavedRacePrefix: a saved race passes against the reference server
// when calls before its group use a credential on two parts of the model
// (a task and a message), and when its tries use them again
// (testdata/savedraces: the shape exploration saves when a probe of
// not_runner comes before a race). Each failed with "unknown": the calls
// before the first group went through the check's parts, where a call on
// two parts that each had states was undecided; and a group on two parts
// that one try's group had left together counted them as two.
func TestSavedRacePrefix(t *testing.T) {
	sp, _ := loadSuite(t)
	saved, err := conformance.LoadScripts("testdata/savedraces")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range saved {
		for _, prof := range []conformance.Profile{conformance.Reference, conformance.Core} {
			o := conformance.Options{Target: referenceTarget("reference", nil, nil), Profile: prof, Spec: sp}
			if got := runSaved(t, []*conformance.Script{s}, o); got.Status != conformance.Pass {
				t.Errorf("%s, %s profile: %s, want pass\n%s", s.Name, prof, got.Status, got.Log)
			}
		}
	}
}
