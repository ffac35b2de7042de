package conformance

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/yuin/goldmark"

	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec"
)

//go:embed report.html.tmpl
var reportHTML string

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	// reqID is a requirement's element id ("claim_task#1d2c6a82" has a
	// '#', which a fragment cannot carry as it is).
	"reqID":   func(id string) string { return "req-" + strings.ReplaceAll(id, "#", "-") },
	"label":   func(s report.RequirementStatus) string { return strings.ReplaceAll(string(s), "_", " ") },
	"upper":   strings.ToUpper,
	"seconds": func(ms int64) string { return fmt.Sprintf("%.1f s", float64(ms)/1000) },
}).Parse(reportHTML))

// The HTML report's view of a run: the pages, each sentence marked with
// its requirement's result.
type (
	htmlReport struct {
		*Report
		Summary string
		Counts  map[string]int // by report.RequirementStatus
		Tools   []htmlTool
		Scripts []htmlScript
		// Outcomes are exploration's answers by tool and outcome, sorted.
		Outcomes []htmlOutcome
		// ReplicaLine is Report.ReplicaSummary: "" against one server.
		ReplicaLine string
		// PowerLine is the suite's power, "" without it.
		PowerLine string
	}
	htmlTool struct {
		Name                       string
		Paragraphs                 [][]htmlSentence // the description, each sentence marked
		Requirements               []report.Requirement
		Example, Input, Output     string
		Notes                      template.HTML
		ExamplePos, InputPos, Page string
	}
	htmlSentence struct {
		report.Requirement
		Found bool // a requirement of the run: some sentences of a page may not be
	}
	htmlScript struct {
		*report.Result
		Rerun string
		Why   string
		// ShowLog is false for exploration, whose failures have a
		// section of their own.
		ShowLog bool
	}
	htmlOutcome struct {
		Outcome string
		Count   int
	}
)

// WriteHTML writes the run as one self-contained HTML page that opens
// offline: the verdict and counts; each tool's page with every normative
// sentence marked by its result (passed, failed, untestable with its
// reason, not covered) and linked to the scripts that test it; every
// script with its log and rerun command when it failed; exploration's
// outcome counts and its shrunk failing sequences. sp is the spec the run
// certified against.
func (r *Report) WriteHTML(w io.Writer, sp *spec.Spec) error {
	v := htmlReport{Report: r, Summary: r.Summary(), Counts: map[string]int{}, ReplicaLine: r.ReplicaSummary(), PowerLine: r.powerText()}
	reqs := map[string]report.Requirement{}
	for _, q := range r.Requirements {
		reqs[q.ID] = q
		v.Counts[string(q.Status)]++
	}
	for _, t := range sp.Tools {
		ht := htmlTool{Name: t.Name, Page: t.Page.File, Paragraphs: paragraphs(t, reqs)}
		for _, s := range t.Sentences {
			if q, ok := reqs[s.ID]; ok {
				ht.Requirements = append(ht.Requirements, q)
			}
		}
		if b := t.ExampleInput; b != nil {
			ht.Example, ht.ExamplePos = string(b.Body()), b.Pos.String()
		}
		if b := t.InputSchema; b != nil {
			ht.Input, ht.InputPos = string(b.Body()), b.Pos.String()
		}
		if b := t.OutputSchema; b != nil {
			ht.Output = string(b.Body())
		}
		notes, err := markdownHTML(t.Notes)
		if err != nil {
			return err
		}
		ht.Notes = notes
		v.Tools = append(v.Tools, ht)
	}
	for _, res := range r.Results {
		s := htmlScript{Result: res, ShowLog: res.Name != report.ExploreScript}
		if res.Status == report.Fail || res.Status == report.XFail {
			_, _, s.Why = scriptFailure(res)
			s.Rerun = r.Rerun(res.Name)
		}
		v.Scripts = append(v.Scripts, s)
	}
	if r.Explore != nil {
		for _, k := range slices.Sorted(maps.Keys(r.Explore.Outcomes)) {
			v.Outcomes = append(v.Outcomes, htmlOutcome{k, r.Explore.Outcomes[k]})
		}
	}
	return reportTemplate.Execute(w, v)
}

// paragraphs is t's description, paragraph by paragraph, each a list of
// its sentences with their requirements' results: a sentence belongs to
// the last paragraph that starts before it.
func paragraphs(t *spec.Tool, reqs map[string]report.Requirement) [][]htmlSentence {
	out := make([][]htmlSentence, len(t.Description))
	before := func(a, b spec.Pos) bool { return a.Line < b.Line || a.Line == b.Line && a.Col <= b.Col }
	for _, s := range t.Sentences {
		i := len(t.Description) - 1
		for i > 0 && !before(t.Description[i].Pos, s.Pos) {
			i--
		}
		if i < 0 {
			continue
		}
		q, found := reqs[s.ID]
		if !found {
			q = report.Requirement{ID: s.ID, Text: s.Text, Pos: s.Pos}
		}
		out[i] = append(out[i], htmlSentence{Requirement: q, Found: found})
	}
	return out
}

// markdownHTML renders paragraphs of a page as HTML; a page's raw HTML is
// left out (goldmark's default), so the report runs no script of a page.
func markdownHTML(ps []spec.Paragraph) (template.HTML, error) {
	var b strings.Builder
	for _, p := range ps {
		if err := goldmark.Convert([]byte(p.Text), &b); err != nil {
			return "", fmt.Errorf("render %s: %w", p.Pos, err)
		}
	}
	return template.HTML(b.String()), nil // goldmark escapes the text and omits raw HTML
}
