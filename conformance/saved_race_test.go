package conformance_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
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
			// A loaded machine may keep the tries apart: short evidence,
			// never a failure.
			if got := runSaved(t, []*conformance.Script{s}, o); got.Status != report.Pass && !conformance.ShortEvidence(got) {
				t.Errorf("%s, %s profile: %s (%s), want pass\n%s", s.Name, prof, got.Status, got.Reason, got.Log)
			}
		}
	}
}

// TestSavedRaceShortEvidence: a script whose concurrently tries did not
// overlap on the wire tested no race, so it is skipped with the count
// (and its run is incomplete), never passed; a failure in it still
// fails.
func TestSavedRaceShortEvidence(t *testing.T) {
	sp, _ := loadSuite(t)
	saved, err := conformance.LoadScripts("testdata/savedraces")
	if err != nil {
		t.Fatal(err)
	}
	conformance.KeepCallsApart(t)
	o := conformance.Options{Target: referenceTarget("reference", nil, nil), Profile: conformance.Reference, Spec: sp}
	for _, s := range saved {
		got := runSaved(t, []*conformance.Script{s}, o)
		if !conformance.ShortEvidence(got) || !strings.Contains(got.Reason, ": 0 of 3 tries") {
			t.Errorf("%s, its tries kept apart: %s (%s), want skipped for short race evidence, 0 of 3 tries", s.Name, got.Status, got.Reason)
		}
	}
	// The first claim's key replayed succeeds: a script that then wants it
	// refused fails, whatever its race evidence.
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/savedraces/credential-prefix.txtar")
	if err != nil {
		t.Fatal(err)
	}
	src = bytes.Replace(src, []byte("concurrently -tries 3\n"), []byte("concurrently -tries 3\n\ncall -as runner:ana-builder-r1 claim_task '{\"idempotency_key\":\"k\",\"task_id\":\"t1\"}'\nrefused\n"), 1)
	if err := os.WriteFile(filepath.Join(dir, "fails-after.txtar"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	failing, err := conformance.LoadScripts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := runSaved(t, failing, o); got.Status != report.Fail {
		t.Errorf("a failing script with short race evidence: %s (%s), want fail", got.Status, got.Reason)
	}
}
