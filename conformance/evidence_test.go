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

// racesRun is a run whose exploration raced: task-same-key short of K
// (40 of 70 groups overlapped), the other classes at K.
func racesRun(t *testing.T) (*Report, *spec.Spec) {
	t.Helper()
	r, sp := ciRun(t)
	x := r.Explore
	x.RaceK, x.RaceP, x.RaceBudget = explore.RaceK, explore.RaceP, "1m0s"
	for _, c := range explore.RaceClasses {
		n := report.RaceCount{Class: string(c), Groups: 80, Overlapped: explore.RaceK}
		if c == explore.TaskSameKey {
			n.Groups, n.Overlapped = 70, 40
		}
		x.Races = append(x.Races, n)
	}
	r.Races = raceEvidence(x, 0)
	r.Missing = texts(raceGaps(r.Races, x.RaceBudget, nil))
	r.Verdict = Incomplete
	return r, sp
}

// TestRaceEvidenceMissing: a class short of K is named, with its numbers
// and what to do; a run that raced nothing says races were not checked.
func TestRaceEvidenceMissing(t *testing.T) {
	r, _ := racesRun(t)
	if len(r.Missing) != 1 {
		t.Fatalf("missing: %q, want the one short class", r.Missing)
	}
	for _, want := range []string{"task-same-key", "40 of 70", "66 needed", "--race-budget", "quieter machine", "--parallel"} {
		if !strings.Contains(r.Missing[0], want) {
			t.Errorf("missing %q lacks %q", r.Missing[0], want)
		}
	}
	if m := raceGaps(nil, "1m0s", nil); len(m) != 1 || m[0].tool != "" || !strings.Contains(m[0].text, "races were not checked") {
		t.Errorf("no races run: %q", m)
	}
	// A scope that leaves the class's tool out: the class was not raced,
	// a gap of that tool alone, which the scope's verdict does not count.
	if m := raceGaps(r.Races, "1m0s", []string{"discover_team_agents"}); len(m) != 1 || m[0].tool != "claim_task" || !strings.Contains(m[0].text, "--tools leaves claim_task out") {
		t.Errorf("scope discover_team_agents, task-same-key short: %q", m)
	}
	ev := raceEvidence(&report.Exploration{RaceK: 66, RaceP: 0.1, Races: []report.RaceCount{{Class: "x", Groups: 70, Overlapped: 66}}}, 1)
	if ev[0].Short() || ev[0].MissBound >= 1e-3 || ev[0].MissBound < 9e-4 {
		t.Errorf("66 overlapping groups at p 0.1: %+v, want not short, miss bound in [0.0009, 0.001)", ev[0])
	}
}

// TestRaceEvidenceReports: every report shows each class's groups run,
// overlapped, K and miss bound; the badge names the class short of K.
func TestRaceEvidenceReports(t *testing.T) {
	r, sp := racesRun(t)
	short := "task-same-key: 40 of 70 groups overlapped (66 needed), miss bound 0.0148"
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Races []report.RaceEvidence `json:"race_evidence"`
	}
	if err := json.Unmarshal(js.Bytes(), &parsed); err != nil || len(parsed.Races) != len(explore.RaceClasses) || parsed.Races[0] != r.Races[0] {
		t.Errorf("JSON race_evidence: %+v (%v), want %+v first", parsed.Races, err, r.Races[0])
	}
	var ju bytes.Buffer
	if err := r.WriteJUnit(&ju); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ju.String(), `<property name="race_evidence.task-same-key" value="`+short+`">`) {
		t.Errorf("JUnit lacks the short class's property:\n%s", ju.String())
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "### Race evidence") || !strings.Contains(md.String(), "| task-same-key | 70 | 40 | 66 (short) | 0.0148 |") {
		t.Errorf("Markdown lacks the race evidence table:\n%s", md.String())
	}
	var html bytes.Buffer
	if err := r.WriteHTML(&html, sp); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), `<tr class="short"><td><code>task-same-key</code></td><td>70</td><td>40</td><td>66 <span class="status status-failed">short</span></td><td>0.1</td><td>0.0148</td></tr>`) {
		t.Errorf("HTML lacks the short class's row")
	}
	var b bytes.Buffer
	if err := r.WriteBadge(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `races short: task-same-key 40/66"`) {
		t.Errorf("badge: %s", b.String())
	}
}
