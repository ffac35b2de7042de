package conformance

import (
	"bytes"
	"encoding/json"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec"
)

// ciRun is a run of the whole suite against the bundled pages in which
// claim_task_credential failed, a derived case failed, a script of the
// user's failed at its line 7, an explored sequence broke claim_task's
// replay sentence, and the rest passed.
func ciRun(t *testing.T) (*Report, *spec.Spec) {
	t.Helper()
	sp := goldenSpec(t)
	all, _, err := Suite(sp)
	if err != nil {
		t.Fatal(err)
	}
	r := &Report{Profile: Core, Seed: 42, Verdict: Failed, RerunArgs: []string{"--server-cmd", "exec my-server --addr $PRICKLE_ADDR"},
		Explore: &report.Exploration{Seed: 42, Sequences: 3, Calls: 30, Failures: []*report.ExploreFailure{
			{Sequence: 2, Source: "claim_task#1d2c6a82", Message: "a replay gave\nanother attempt", Calls: 2, Original: 24, Saved: "out dir/explore-42-2.txtar"},
		}}}
	derived := ""
	for _, s := range all {
		res := &report.Result{Name: s.Name, Path: s.Path, Covers: s.Covers, Derived: s.Derived, Status: report.Pass}
		switch {
		case s.Name == "claim_task_credential":
			res.Status = report.Fail
			res.Log = "> call -as $RUNNER claim_task\nFAIL: scripts/claim_task_credential.txtar:12: no credential\n"
		case s.Derived && derived == "" && strings.HasPrefix(s.Name, "spec.claim_task.") && !strings.HasSuffix(s.Name, ".example"):
			derived = s.Name
			res.Status = report.Fail
			res.Log = "FAIL: derived/" + s.Name + ".txtar:3: not refused\n"
		}
		r.Results = append(r.Results, res)
	}
	r.Results = append(r.Results,
		&report.Result{Name: "mine", Path: "checks/mine.txtar", Status: report.Fail, Log: "FAIL: checks/mine.txtar:7: want 2 agents\n"},
		&report.Result{Name: report.ExploreScript, Status: report.Fail})
	if r.Requirements, err = requirements(sp, all, r.Results, r.Explore); err != nil {
		t.Fatal(err)
	}
	return r, sp
}

// goldenPages are the bundled pages the report goldens were written
// against: a page added to spec/reference later adds its tool's scripts to
// every report, which is the new page's change, not the reports'.
var goldenPages = []string{"claim_discussion.md", "claim_task.md", "discover_team_agents.md"}

// goldenSpec is the linted spec of goldenPages alone.
func goldenSpec(t *testing.T) *spec.Spec {
	t.Helper()
	var srcs []spec.Source
	for _, s := range spec.Bundled() {
		if slices.Contains(goldenPages, path.Base(s.File)) {
			srcs = append(srcs, s)
		}
	}
	if len(srcs) != len(goldenPages) {
		t.Fatalf("the bundled pages lack one of %q", goldenPages)
	}
	sp, _, err := spec.LoadLinted(srcs)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func TestRequirements(t *testing.T) {
	r, _ := ciRun(t)
	got := map[string]report.Requirement{}
	for _, q := range r.Requirements {
		got[q.ID] = q
	}
	for id, want := range map[string]report.RequirementStatus{
		"claim_task#d58db1d3":           report.RequirementFailed,     // claim_task_credential covers it
		"claim_task#1d2c6a82":           report.RequirementFailed,     // its script passed, exploration broke it
		"claim_task#e94d1a5d":           report.RequirementPassed,     // claim_task_runner_only
		"discover_team_agents#33fcd84b": report.RequirementUntestable, // advice to the caller
	} {
		if q := got[id]; q.Status != want {
			t.Errorf("%s: %s (%+v), want %s", id, q.Status, q, want)
		}
	}
	if q := got["claim_task#1d2c6a82"]; !strings.Contains(strings.Join(q.Scripts, " "), report.ExploreScript) || q.Pos.Line == 0 || q.Tool != "claim_task" {
		t.Errorf("a sentence exploration broke: %+v; want explore among its scripts, its tool and page position", q)
	}
	// A selection that ran none of a sentence's scripts leaves it not covered.
	sp, _ := spec.LoadBundled()
	all, _, _ := Suite(sp)
	qs, err := requirements(sp, all, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Status != report.RequirementNotCovered && q.Status != report.RequirementUntestable {
			t.Errorf("%s with no result: %s", q.ID, q.Status)
		}
	}
}

func TestRerun(t *testing.T) {
	r, _ := ciRun(t)
	for name, want := range map[string]string{
		"claim_task_credential": `prickle-conformance --profile core --run '^claim_task_credential$' --server-cmd 'exec my-server --addr $PRICKLE_ADDR'`,
		"spec.claim_task.x.y":   `prickle-conformance --profile core --run '^spec\.claim_task\.x\.y$' --server-cmd 'exec my-server --addr $PRICKLE_ADDR'`,
		report.ExploreScript:    `prickle-conformance --profile core --seed 42 --run '^explore$' --server-cmd 'exec my-server --addr $PRICKLE_ADDR'`,
	} {
		if got := r.Rerun(name); got != want {
			t.Errorf("Rerun(%q):\n got %s\nwant %s", name, got, want)
		}
	}
	if got, want := r.rerunFailure(r.Explore.Failures[0]), `--scripts 'out dir' --run '^explore-42-2$'`; !strings.Contains(got, want) {
		t.Errorf("the saved sequence's rerun: %s; want it to contain %s", got, want)
	}
}

func TestAnnotations(t *testing.T) {
	r, sp := ciRun(t)
	var b bytes.Buffer
	if err := r.WriteGitHubAnnotations(&b, sp); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	ct := sp.Tool("claim_task")
	var replay spec.Sentence
	for _, s := range ct.Sentences {
		if s.ID == "claim_task#1d2c6a82" {
			replay = s
		}
	}
	for _, want := range []string{
		// Each sentence the failing script covers, at its page line.
		"::error file=spec/reference/claim_task.md,line=9,col=87,title=prickle-conformance%3A claim_task#d58db1d3::",
		// The derived case, at the input schema of its tool.
		"::error file=spec/reference/claim_task.md,line=" + itoa(ct.InputSchema.Pos.Line) + ",",
		// The user's script, at its line.
		"::error file=checks/mine.txtar,line=7,title=prickle-conformance%3A mine::mine failed: want 2 agents%0ARerun: ",
		// The explored sequence, at the sentence it broke, with its rerun.
		"::error file=spec/reference/claim_task.md,line=" + itoa(replay.Pos.Line) + ",col=" + itoa(replay.Pos.Col) + ",title=prickle-conformance%3A claim_task#1d2c6a82::",
		"--scripts 'out dir' --run '^explore-42-2$'",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("annotations lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "title=prickle-conformance%3A explore::") {
		t.Errorf("exploration annotated as a script, not at what it broke:\n%s", out)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "::error ") {
			t.Errorf("not an annotation: %q", l)
		}
	}
	// An incomplete run warns of each thing it misses.
	r.Verdict, r.Missing = Incomplete, []string{"stateful exploration did not run"}
	b.Reset()
	r.WriteGitHubAnnotations(&b, sp)
	if !strings.Contains(b.String(), "::warning title=prickle-conformance%3A incomplete::stateful exploration did not run") {
		t.Errorf("an incomplete run's annotations:\n%s", b.String())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// The summary, rendered as GitHub renders Markdown, shows the verdict,
// each failure with its rerun command in one table row, exploration's
// failure, and every requirement.
func TestMarkdown(t *testing.T) {
	r, _ := ciRun(t)
	r.Passed, r.Failed = len(r.Results)-4, 4
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.Table)).Convert(md.Bytes(), &html); err != nil {
		t.Fatal(err)
	}
	got := html.String()
	for _, want := range []string{
		"<h2>Prickle conformance: ❌ FAILED (core profile)</h2>",
		"<td><code>claim_task_credential</code></td>\n<td>no credential</td>\n<td><code>prickle-conformance --profile core --run '^claim_task_credential$' --server-cmd 'exec my-server --addr $PRICKLE_ADDR'</code></td>",
		"<td><code>mine</code></td>\n<td>want 2 agents</td>",
		"<td>a replay gave another attempt</td>",
		"<td><code>claim_task#e94d1a5d</code></td>\n<td>passed</td>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered summary lacks %q:\n%s", want, got)
		}
	}
	_, failures, _ := strings.Cut(got, "<h3>Failures</h3>")
	failures, _, _ = strings.Cut(failures, "<h3>")
	if strings.Contains(failures, "<code>explore</code>") {
		t.Errorf("exploration listed among the failing scripts:\n%s", failures)
	}
}

func TestBadge(t *testing.T) {
	r := &Report{Profile: Reference, Verdict: Certified, Passed: 52}
	var b bytes.Buffer
	if err := r.WriteBadge(&b); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"schemaVersion": 1.0, "label": "prickle conformance (reference)", "message": "certified 52/52", "color": "brightgreen"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v (%s)", k, got[k], v, b.String())
		}
	}
	r.Verdict, r.Passed, r.Failed = Failed, 50, 2
	b.Reset()
	r.WriteBadge(&b)
	if !strings.Contains(b.String(), `"message":"failed 50/52","color":"red"`) {
		t.Errorf("a failed run's badge: %s", b.String())
	}
}

// The HTML report marks every sentence of every page with its result and
// gives each requirement, script and failure an anchor the marks link to.
func TestHTMLMarksEverySentence(t *testing.T) {
	r, sp := ciRun(t)
	var b bytes.Buffer
	if err := r.WriteHTML(&b, sp); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, q := range r.Requirements {
		anchor := "req-" + strings.ReplaceAll(q.ID, "#", "-")
		for _, want := range []string{
			`<a class="req req-` + string(q.Status) + `" href="#` + anchor + `"`,
			`<li id="` + anchor + `">`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("%s (%s): the page lacks %s", q.ID, q.Status, want)
			}
		}
	}
	for _, want := range []string{`id="script-claim_task_credential"`, `id="script-mine"`, `id="sequence-2"`,
		`Rerun: <code>prickle-conformance --profile core --run &#39;^claim_task_credential$&#39;`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "<link") || strings.Contains(page, " src=") || strings.Contains(page, "@import") {
		t.Error("the report runs a script or loads something: it must be one self-contained file")
	}
}
