package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/prickle-dev/prickle/conformance/internal/explore"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/internal/cireport"
	"github.com/prickle-dev/prickle/spec"
)

// The reports CI systems and people read: GitHub Actions annotations, a
// Markdown summary for a job summary or a pull-request comment, and a
// shields.io badge. (WriteHTML is the report a person opens.)

// Rerun is the command that runs the named script (or exploration) again
// against the same server and pages: the run's profile, exploration's
// seed, a --run selecting it alone and the run's RerunArgs.
func (r *Report) Rerun(name string) string {
	args := []string{"prickle-conformance", "--profile", string(r.Profile)}
	if name == report.ExploreScript {
		args = append(args, "--seed", strconv.FormatInt(r.Seed, 10))
	}
	args = append(args, "--run", "^"+regexp.QuoteMeta(name)+"$")
	args = append(args, r.RerunArgs...)
	for i, a := range args {
		if q, err := syntax.Quote(a, syntax.LangPOSIX); err == nil {
			args[i] = q
		}
	}
	return strings.Join(args, " ")
}

// rerunFailure is the command that reruns a failing explored sequence: the
// script --save wrote, or exploration with the run's seed.
func (r *Report) rerunFailure(f *report.ExploreFailure) string {
	if f.Saved == "" {
		return r.Rerun(report.ExploreScript)
	}
	dir, file := filepath.Split(f.Saved)
	cmd := r.Rerun(strings.TrimSuffix(file, ".txtar"))
	q, err := syntax.Quote(filepath.Clean(dir), syntax.LangPOSIX)
	if err != nil {
		return cmd
	}
	return strings.Replace(cmd, " --run ", " --scripts "+q+" --run ", 1)
}

// failLine matches the line of a script's log that says where it failed:
// "FAIL: PATH:LINE: message".
var failLine = regexp.MustCompile(`FAIL: (\S+?):(\d+): (.*)`)

// scriptFailure reads where and why a script's log says it failed; line
// is 0 when the log names no line.
func scriptFailure(res *report.Result) (file string, line int, msg string) {
	if m := failLine.FindStringSubmatch(res.Log); m != nil {
		line, _ = strconv.Atoi(m[2])
		return m[1], line, strings.TrimSpace(m[3])
	}
	if res.Reason != "" {
		return "", 0, res.Reason
	}
	return "", 0, firstFailure(res.Log)
}

// Annotations are the run's GitHub Actions annotations, one per failure:
// at the page line of each sentence a failing script tests or an explored
// sequence broke, else at the input schema of the tool a failing derived
// case breaks, else at the line of a failing script read from a folder
// (--scripts); a failure with none of these, and each thing an incomplete
// run is missing, is annotated on the run itself. sp is the spec the run
// certified against.
func (r *Report) annotations(sp *spec.Spec) []cireport.Annotation {
	var out []cireport.Annotation
	reqs := map[string]report.Requirement{}
	for _, q := range r.Requirements {
		reqs[q.ID] = q
	}
	at := func(level cireport.Level, p spec.Pos, title, msg string) {
		out = append(out, cireport.Annotation{Level: level, File: p.File, Line: p.Line, Col: p.Col, Title: title, Message: msg})
	}
	for _, res := range r.Results {
		if res.Status != report.Fail || res.Name == report.ExploreScript {
			continue
		}
		file, line, why := scriptFailure(res)
		msg := fmt.Sprintf("%s failed: %s\nRerun: %s", res.Name, why, r.Rerun(res.Name))
		switch {
		case len(res.Covers) > 0:
			for _, id := range res.Covers {
				at(cireport.Error, reqs[id].Pos, "prickle-conformance: "+id, fmt.Sprintf("%q is not met: %s", reqs[id].Text, msg))
			}
		case res.Derived:
			var p spec.Pos
			if t := sp.Tool(derivedTool(res.Name)); t != nil && t.InputSchema != nil {
				p = t.InputSchema.Pos
			}
			at(cireport.Error, p, "prickle-conformance: "+res.Name, msg)
		case res.Path != "" && !strings.HasPrefix(res.Path, "scripts/") && file != "":
			at(cireport.Error, spec.Pos{File: file, Line: line}, "prickle-conformance: "+res.Name, msg)
		default:
			at(cireport.Error, spec.Pos{}, "prickle-conformance: "+res.Name, msg)
		}
	}
	if x := r.Explore; x != nil {
		for _, f := range x.Failures {
			msg := fmt.Sprintf("explored sequence %d (%d calls) breaks it: %s\nRerun: %s", f.Sequence, f.Calls, oneLine(f.Message), r.rerunFailure(f))
			q, ok := reqs[f.Source]
			if !ok {
				at(cireport.Error, spec.Pos{}, "prickle-conformance: "+f.Source, msg)
				continue
			}
			at(cireport.Error, q.Pos, "prickle-conformance: "+f.Source, fmt.Sprintf("%q is not met: %s", q.Text, msg))
		}
	}
	if r.Verdict == Incomplete {
		for _, m := range r.Missing {
			at(cireport.Warning, spec.Pos{}, "prickle-conformance: incomplete", m)
		}
	}
	return out
}

// WriteGitHubAnnotations writes the run's GitHub Actions annotations (see
// annotations), a workflow command a line: printed in a GitHub Actions
// job, each marks its line in the pull request. sp is the spec the run
// certified against.
func (r *Report) WriteGitHubAnnotations(w io.Writer, sp *spec.Spec) error {
	return cireport.WriteAnnotations(w, r.annotations(sp))
}

// derivedTool is the tool a derived case's name ("spec.TOOL. ...") names.
func derivedTool(name string) string {
	rest := strings.TrimPrefix(name, "spec.")
	tool, _, _ := strings.Cut(rest, ".")
	return tool
}

// oneLine is s on one line, its runs of white space single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// verdictMark is the verdict as a summary's heading shows it.
func verdictMark(v Verdict) string {
	switch v {
	case Certified:
		return "✅ CERTIFIED"
	case Failed:
		return "❌ FAILED"
	}
	return "⚠️ INCOMPLETE"
}

// WriteMarkdown writes the run as Markdown for a GitHub job summary
// ($GITHUB_STEP_SUMMARY) or a pull-request comment: the verdict and
// counts, each failure with its rerun command, exploration's failures,
// what an incomplete run misses, and every requirement's result.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	r.writeHeadingMarkdown(&b)
	r.writeToolsMarkdown(&b)
	r.writeFailuresMarkdown(&b)
	r.writeExplorationMarkdown(&b)
	if line := r.ReplicaSummary(); line != "" {
		fmt.Fprintf(&b, "\n### Replicas\n\n%s.\n", line)
	}
	r.writeRacesMarkdown(&b)
	r.writeRefusalsMarkdown(&b)
	if len(r.Missing) > 0 {
		b.WriteString("\n### Missing for a certification\n\n")
		for _, m := range r.Missing {
			fmt.Fprintf(&b, "- %s\n", m)
		}
	}
	r.writeRequirementsMarkdown(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHeadingMarkdown writes the summary's heading, the verdict, the
// counts, the suite's power, and the requirements' results counted.
func (r *Report) writeHeadingMarkdown(b *strings.Builder) {
	scope := ""
	if len(r.Scope) > 0 {
		scope = " for " + strings.Join(r.Scope, ", ")
	}
	fmt.Fprintf(b, "## Prickle conformance: %s%s (%s profile)\n\n", verdictMark(r.ScopeVerdict()), scope, r.Profile)
	fmt.Fprintf(b, "**%d passed, %d failed, %d skipped**", r.Passed, r.Failed, r.Skipped)
	if r.XFailed > 0 {
		fmt.Fprintf(b, ", %d expected failures", r.XFailed)
	}
	fmt.Fprintf(b, " · %d checks in %.1f s · suite %s · spec %s · seed %d · %s\n\n",
		r.Checks, r.Duration.Seconds(), cireport.Code(r.Suite), cireport.Code(spec.ShortHash(r.SpecHash)), r.Seed, cireport.Code(r.Target))
	if p := r.powerText(); p != "" {
		fmt.Fprintf(b, "%s: [the list](%s).\n\n", p, r.Power.List)
	}

	counts := map[report.RequirementStatus]int{}
	for _, q := range r.Requirements {
		counts[q.Status]++
	}
	cireport.Table(b, []string{"Requirements", "passed", "failed", "untestable", "not covered"}, [][]string{{
		strconv.Itoa(len(r.Requirements)), strconv.Itoa(counts[report.RequirementPassed]), strconv.Itoa(counts[report.RequirementFailed]),
		strconv.Itoa(counts[report.RequirementUntestable]), strconv.Itoa(counts[report.RequirementNotCovered]),
	}})
}

// writeToolsMarkdown writes each tool's verdict, and whether the scope
// holds it.
func (r *Report) writeToolsMarkdown(b *strings.Builder) {
	if len(r.Tools) == 0 {
		return
	}
	var rows [][]string
	for _, t := range r.Tools {
		scoped := ""
		if slices.Contains(r.Scope, t.Name) {
			scoped = "yes"
		}
		rows = append(rows, []string{cireport.Code(t.Name), verdictMark(t.Verdict), scoped})
	}
	b.WriteString("\n")
	cireport.Table(b, []string{"Tool", "Verdict", "In scope (--tools)"}, rows)
}

// writeFailuresMarkdown writes each script that failed (or failed as
// expected), what failed and its rerun command.
func (r *Report) writeFailuresMarkdown(b *strings.Builder) {
	var failures [][]string
	for _, res := range r.Results {
		if res.Status != report.Fail && res.Status != report.XFail || res.Name == report.ExploreScript {
			continue
		}
		_, _, why := scriptFailure(res)
		name := cireport.Code(res.Name)
		if res.Status == report.XFail {
			name += " (expected)"
		}
		failures = append(failures, []string{name, why, cireport.Code(r.Rerun(res.Name))})
	}
	if len(failures) > 0 {
		b.WriteString("\n### Failures\n\n")
		cireport.Table(b, []string{"Script", "What failed", "Rerun"}, failures)
	}
}

// writeExplorationMarkdown writes what exploration ran and the sequences
// it shrank, with the command that reruns one.
func (r *Report) writeExplorationMarkdown(b *strings.Builder) {
	x := r.Explore
	if x == nil {
		return
	}
	fmt.Fprintf(b, "\n### Exploration\n\n%d sequences, %d calls, seed %d", x.Sequences, x.Calls, x.Seed)
	if len(x.Failures) == 0 {
		b.WriteString(": every answer as the model expects.\n")
		return
	}
	fmt.Fprintf(b, ": %d distinct failures, each shrunk to a script.\n\n", len(x.Failures))
	var rows [][]string
	for _, f := range x.Failures {
		saved := "in the report's JSON"
		if f.Saved != "" {
			saved = cireport.Code(f.Saved)
		}
		rows = append(rows, []string{strconv.Itoa(f.Sequence), cireport.Code(f.Source), oneLine(f.Message), fmt.Sprintf("%d of %d", f.Calls, f.Original), saved})
	}
	cireport.Table(b, []string{"Sequence", "Rule", "What was wrong", "Calls (shrunk of)", "Script"}, rows)
	fmt.Fprintf(b, "\nRerun a sequence: %s\n", cireport.Code(r.rerunFailure(x.Failures[0])))
}

// writeRacesMarkdown writes the race evidence as a table.
func (r *Report) writeRacesMarkdown(b *strings.Builder) {
	if len(r.Races) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### Race evidence\n\nConcurrent groups whose calls overlapped on the wire, per race class; a bug showing in %g of them is missed with at most the miss bound.", explore.RaceP)
	if r.Replicas >= 2 {
		b.WriteString(" Against replicas, the groups that count are those whose calls also reached two replicas or more (across replicas).")
	}
	b.WriteString("\n\n")
	header, rows := raceTable(r.Races)
	cireport.Table(b, header, rows)
}

// writeRequirementsMarkdown writes every requirement's result, folded.
func (r *Report) writeRequirementsMarkdown(b *strings.Builder) {
	if len(r.Requirements) == 0 {
		return
	}
	b.WriteString("\n<details><summary>Every requirement</summary>\n\n")
	var rows [][]string
	for _, q := range r.Requirements {
		by := make([]string, len(q.Scripts))
		for i, s := range q.Scripts {
			by[i] = cireport.Code(s)
		}
		note := strings.Join(by, ", ")
		if q.Reason != "" {
			note = strings.TrimPrefix(note+"; untestable: "+q.Reason, "; ")
		}
		rows = append(rows, []string{cireport.Code(q.ID), string(q.Status), q.Text, note})
	}
	cireport.Table(b, []string{"Requirement", "Result", "Sentence", "Tested by"}, rows)
	b.WriteString("\n</details>\n")
}

// badge is a shields.io endpoint badge
// (https://shields.io/badges/endpoint-badge).
type badge struct {
	SchemaVersion int    `json:"schemaVersion"`
	Label         string `json:"label"`
	Message       string `json:"message"`
	Color         string `json:"color"`
}

// WriteBadge writes the run as a shields.io endpoint badge: the verdict
// (of the scope, if any) and the scripts passed of those run, the race
// classes short of evidence and the suite's power, labelled with the profile, the replicas
// (two or more) and the scope.
func (r *Report) WriteBadge(w io.Writer) error {
	v := r.ScopeVerdict()
	color := map[Verdict]string{Certified: "brightgreen", Failed: "red", Incomplete: "yellow"}[v]
	total := r.Passed + r.Failed + r.Skipped + r.XFailed
	msg := fmt.Sprintf("%s %d/%d", v, r.Passed, total)
	if short := shortClasses(r.Races, r.Scope); short != "" {
		msg += ", races short: " + short
	}
	if p := r.Power; p != nil {
		msg += fmt.Sprintf(", catches %d/%d mutants", p.Caught, p.Mutants)
		if p.Selection {
			msg += fmt.Sprintf(" (%d run)", p.Ran)
		}
	}
	label := string(r.Profile)
	if r.Replicas >= 2 {
		label += fmt.Sprintf(", %d replicas", r.Replicas)
	}
	if len(r.Scope) > 0 {
		label += ": " + strings.Join(r.Scope, ", ")
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(badge{SchemaVersion: 1, Label: "prickle conformance (" + label + ")",
		Message: msg, Color: color})
}
