package conformance_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/report"
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

// TestHandWrittenScripts: each script says what it tests, and each
// fixture is a world the suite can materialize (fresh tokens, relative
// times resolved).
func TestHandWrittenScripts(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := conformance.Suite(sp)
	if err != nil {
		t.Fatal(err)
	}
	var scripts []*conformance.Script
	for _, s := range all {
		if !s.Derived {
			scripts = append(scripts, s)
		}
	}
	if len(scripts) < 15 {
		t.Errorf("only %d hand-written scripts", len(scripts))
	}
	for _, s := range scripts {
		if s.Summary == "" {
			t.Errorf("%s: no summary comment", s.Name)
		}
		if strings.HasPrefix(s.Name, "spec.") || strings.HasPrefix(s.Name, report.ExploreScript) {
			t.Errorf("%s: the spec. prefix is for derived cases, explore for exploration", s.Name)
		}
		if s.Path != "scripts/"+s.Name+".txtar" {
			t.Errorf("%s: path %q", s.Name, s.Path)
		}
		for _, f := range txtar.Parse(s.Archive).Files {
			if f.Name != suite.FixtureFile {
				continue
			}
			var w map[string]any
			if err := json.Unmarshal(f.Data, &w); err != nil {
				t.Errorf("%s: fixture: %v", s.Name, err)
			}
		}
	}
}
