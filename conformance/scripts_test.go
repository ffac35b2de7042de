package conformance_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec"
	"github.com/rogpeppe/go-internal/txtar"
)

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
