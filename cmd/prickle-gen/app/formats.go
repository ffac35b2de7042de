package app

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/prickle-dev/prickle/internal/cireport"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/specdiff"
)

// format is how lint and diff print their findings.
type format string

// The formats. Text is the default; json is also -json.
const (
	formatText     format = "text"
	formatJSON     format = "json"
	formatGitHub   format = "github"
	formatMarkdown format = "markdown"
)

var formats = []format{formatText, formatJSON, formatGitHub, formatMarkdown}

// formatFlags adds -format and its shorthand -json to fs; the returned
// function reads them once fs is parsed.
func formatFlags(fs *flag.FlagSet, jsonUsage string) func() (format, error) {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	f := fs.String("format", string(formatText), "print the findings as `FORMAT`: text, json, github (GitHub Actions "+
		"annotations) or markdown (a job summary or pull-request comment)")
	asJSON := fs.Bool("json", false, jsonUsage+" (-format json)")
	return func() (format, error) {
		got := format(*f)
		if *asJSON {
			if got != formatText && got != formatJSON {
				return "", fmt.Errorf("-json and -format %s exclude each other", got)
			}
			return formatJSON, nil
		}
		for _, known := range formats {
			if got == known {
				return got, nil
			}
		}
		return "", fmt.Errorf("-format %q: want one of %s", got, strings.Join(names, ", "))
	}
}

// writeJSON writes v as indented JSON, with HTML characters as they are.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeLint prints lint's findings in f.
func writeLint(w io.Writer, f format, ds spec.Diagnostics) error {
	switch f {
	case formatJSON:
		if ds == nil {
			ds = spec.Diagnostics{}
		}
		return writeJSON(w, ds)
	case formatGitHub:
		as := make([]cireport.Annotation, len(ds))
		for i, d := range ds {
			as[i] = cireport.Annotation{
				Level: lintLevel(d.Severity), File: d.Pos.File, Line: d.Pos.Line, Col: d.Pos.Col,
				Title: "prickle-gen lint: " + d.Rule, Message: d.Message,
			}
		}
		return cireport.WriteAnnotations(w, as)
	case formatMarkdown:
		return writeLintMarkdown(w, ds)
	}
	for _, d := range ds {
		if _, err := fmt.Fprintln(w, d); err != nil {
			return err
		}
	}
	return nil
}

func lintLevel(s spec.Severity) cireport.Level {
	switch s {
	case spec.Error:
		return cireport.Error
	case spec.Warning:
		return cireport.Warning
	}
	return cireport.Notice
}

func writeLintMarkdown(w io.Writer, ds spec.Diagnostics) error {
	if _, err := fmt.Fprintf(w, "### prickle-gen lint: %s\n\n", ds.Summary()); err != nil {
		return err
	}
	rows := make([][]string, len(ds))
	for i, d := range ds {
		rows[i] = []string{d.Severity.String(), cireport.Code(d.Pos.String()), cireport.Code(d.Rule), d.Message}
	}
	return cireport.Table(w, []string{"Severity", "Where", "Rule", "Finding"}, rows)
}

// writeDiff prints diff's report in f.
func writeDiff(w io.Writer, f format, r specdiff.Report, failGo bool) error {
	switch f {
	case formatJSON:
		return writeJSON(w, r)
	case formatGitHub:
		as := make([]cireport.Annotation, len(r.Changes))
		for i, c := range r.Changes {
			p := c.Pos()
			as[i] = cireport.Annotation{
				Level: diffLevel(c, failGo), File: p.File, Line: p.Line, Col: p.Col,
				Title: "prickle-gen diff: " + c.Grade() + " " + c.Kind, Message: c.Tool + " " + where(c) + ": " + c.Message,
			}
		}
		return cireport.WriteAnnotations(w, as)
	case formatMarkdown:
		return writeDiffMarkdown(w, r)
	}
	for _, c := range r.Changes {
		if _, err := fmt.Fprintln(w, c); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, r.Summary())
	return err
}

// diffLevel marks as errors the changes that fail the command.
func diffLevel(c specdiff.Change, failGo bool) cireport.Level {
	switch {
	case c.Breaking, failGo && c.Side == specdiff.SideGo:
		return cireport.Error
	case c.Side == specdiff.SideGo:
		return cireport.Warning
	}
	return cireport.Notice
}

// where names the part of the tool a change is in: its side, and the
// pointer or Go identifier when there is one.
func where(c specdiff.Change) string {
	if c.Pointer == "" {
		if c.Side == specdiff.SideInput || c.Side == specdiff.SideOutput {
			return c.Side + " /"
		}
		return c.Side
	}
	return c.Side + " " + c.Pointer
}

func writeDiffMarkdown(w io.Writer, r specdiff.Report) error {
	if _, err := fmt.Fprintf(w, "### prickle-gen diff: %s\n\n", r.Summary()); err != nil {
		return err
	}
	rows := make([][]string, len(r.Changes))
	for i, c := range r.Changes {
		grade := c.Grade()
		if c.Breaking {
			grade = "**" + grade + "**"
		}
		pos := ""
		if p := c.Pos(); p != (spec.Pos{}) {
			pos = cireport.Code(p.String())
		}
		rows[i] = []string{grade, cireport.Code(c.Tool), cireport.Code(where(c)), c.Message + " (" + cireport.Code(c.Kind) + ")", pos}
	}
	return cireport.Table(w, []string{"Grade", "Tool", "Where", "Change", "Page"}, rows)
}
