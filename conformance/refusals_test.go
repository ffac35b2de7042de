package conformance

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/conformance/internal/explore"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec"
)

// TestUnprovokableEntries: untestable.md's refusals no call can provoke
// alone parse, and each is a refusal a page states (unprovokable checks
// it); the core profile's one is there.
func TestUnprovokableEntries(t *testing.T) {
	got, err := unprovokable()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("untestable.md lists no refusal that cannot be provoked alone")
	}
	for k, why := range got {
		if why == "" || k.profile != Core && k.profile != Reference {
			t.Errorf("entry %+v: %q", k, why)
		}
	}
}

// TestRefusalGaps: a refusal a page states that exploration never
// provoked alone keeps the run from certifying, named in what is missing;
// one untestable.md says cannot be, in the run's profile, does not.
func TestRefusalGaps(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	pages := explore.PageRefusals()
	x := &report.Exploration{Provoked: map[string]int{}}
	for _, r := range pages {
		x.Provoked[r.Key()] = 3
	}
	never := pages[0].Key()
	delete(x.Provoked, never)
	exempt, err := unprovokable()
	if err != nil {
		t.Fatal(err)
	}
	for _, prof := range []Profile{Core, Reference} {
		ev, err := refusalEvidence(prof, x)
		if err != nil {
			t.Fatal(err)
		}
		if len(ev) != len(pages) {
			t.Fatalf("%d refusals, want %d", len(ev), len(pages))
		}
		gaps := texts(refusalGaps(ev))
		if len(gaps) != 1 || !strings.Contains(gaps[0], never) {
			t.Errorf("%s: gaps %q, want one naming %s", prof, gaps, never)
		}
		// What a run misses to certify says it.
		gs, err := coverage(sp, nil, nil, nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		missing := strings.Join(texts(gs), "\n")
		if !strings.Contains(missing, never) {
			t.Errorf("%s: missing for a certification does not name %s:\n%s", prof, never, missing)
		}
	}
	// One that untestable.md says cannot be provoked alone in a profile
	// is no gap there, and is one in the other.
	for k := range exempt {
		x := &report.Exploration{Provoked: map[string]int{}}
		for _, r := range pages {
			x.Provoked[r.Key()] = 1
		}
		x.Provoked[k.key] = 0
		for _, prof := range []Profile{Core, Reference} {
			ev, err := refusalEvidence(prof, x)
			if err != nil {
				t.Fatal(err)
			}
			if gap := strings.Contains(strings.Join(texts(refusalGaps(ev)), ""), k.key); gap != (prof != k.profile) {
				t.Errorf("%s: %s never provoked (untestable.md: cannot be in %s): a gap %v", prof, k.key, k.profile, gap)
			}
		}
	}
	full := &report.Exploration{Provoked: map[string]int{}}
	for _, r := range pages {
		full.Provoked[r.Key()] = 1
	}
	ev, err := refusalEvidence(Reference, full)
	if err != nil {
		t.Fatal(err)
	}
	if gaps := refusalGaps(ev); gaps != nil {
		t.Errorf("every refusal provoked: gaps %q", gaps)
	}
}

// TestRefusalEvidenceReports: the JSON, the Markdown summary and the HTML
// report carry the evidence, a refusal never provoked marked as such.
func TestRefusalEvidenceReports(t *testing.T) {
	pages := explore.PageRefusals()
	x := &report.Exploration{Provoked: map[string]int{}}
	for _, r := range pages[1:] {
		x.Provoked[r.Key()] = 7
	}
	ev, err := refusalEvidence(Core, x)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Profile: Core, Verdict: Incomplete, Explore: x, Refusals: ev, Missing: texts(refusalGaps(ev))}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Refusals []report.RefusalEvidence `json:"refusals"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Refusals) != len(pages) || back.Refusals[0].Provoked != 0 || back.Refusals[1].Provoked != 7 {
		t.Errorf("JSON refusals: %+v (%v)", back.Refusals, err)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "**never**") || !strings.Contains(md.String(), pages[0].Sentence) {
		t.Errorf("Markdown:\n%s", md.String())
	}
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page, sp); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "provoked alone") || !strings.Contains(page.String(), `status-failed">never`) {
		t.Error("the HTML report has no refusal evidence, or does not mark the refusal never provoked")
	}
	if !strings.Contains(rep.RefusalSummary(), pages[0].Key()) {
		t.Errorf("summary %q does not name the refusal never provoked", rep.RefusalSummary())
	}
}

// TestRefusalGapOwnedByItsPage: a refusal never provoked is a gap of the
// tool whose page states it, not of the tool refused: a discussion
// credential refused by discover_team_agents needs claim_discussion, so a
// scope of discover_team_agents alone is not kept from certifying by it.
func TestRefusalGapOwnedByItsPage(t *testing.T) {
	ev := []report.RefusalEvidence{
		{Tool: "discover_team_agents", Code: "tool_not_allowed", Sentence: "claim_discussion#373f9dbc"},
		{Tool: "discover_team_agents", Code: "project_not_visible", Sentence: "discover_team_agents#05161da5"},
		{Tool: "discover_team_agents", Code: "project_not_visible", Sentence: "discover_team_agents#05161da5", Situation: "provoked", Provoked: 3},
	}
	gaps := refusalGaps(ev)
	if len(gaps) != 2 || gaps[0].tool != "claim_discussion" || gaps[1].tool != "discover_team_agents" {
		t.Fatalf("gaps %+v, want one of claim_discussion (tool_not_allowed), one of discover_team_agents (project_not_visible)", gaps)
	}
	if !strings.Contains(gaps[0].text, "tool_not_allowed") || strings.Contains(gaps[0].text, "project_not_visible") {
		t.Errorf("claim_discussion's gap: %s", gaps[0].text)
	}
}
