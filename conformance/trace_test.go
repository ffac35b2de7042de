package conformance_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/spec"
)

// TestTraceability fails when a normative sentence of the bundled spec is
// neither covered by a script nor explained in untestable.md, or when a
// script or untestable.md names an ID the spec no longer has: editing a
// sentence changes its ID, and forces the mapping to be updated.
func TestTraceability(t *testing.T) {
	sp, scripts := loadSuite(t)
	rows, problems, err := conformance.Trace(sp, scripts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		// A tool prickled does not implement yet has no scripts yet.
		if !strings.Contains(p, "neither covered") || !namesUnimplemented(p) {
			t.Error(p)
		}
	}
	n := 0
	for _, t := range sp.Tools {
		n += len(t.Sentences)
	}
	if len(rows) != n {
		t.Errorf("trace has %d rows, the spec %d sentences", len(rows), n)
	}
}

// TestTraceCatchesEditedSentence: an edited sentence (new ID) is untracked.
func TestTraceCatchesEditedSentence(t *testing.T) {
	_, scripts := loadSuite(t)
	var srcs []spec.Source
	for _, s := range spec.Bundled() {
		s.Src = bytes.Replace(s.Src, []byte("A mention is never a run's cause."), []byte("A mention is never the cause of a run."), 1)
		srcs = append(srcs, s)
	}
	edited, _, err := spec.LoadLinted(srcs)
	if err != nil {
		t.Fatal(err)
	}
	_, problems, err := conformance.Trace(edited, scripts)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(problems, "\n")
	if !strings.Contains(joined, "A mention is never the cause of a run.") || !strings.Contains(joined, "claim_task#fa24cf09") {
		t.Errorf("editing a sentence went unnoticed; problems:\n%s", joined)
	}
}
