// Package cireport writes what CI systems and their readers take from a
// run of the project's commands: GitHub Actions annotations (workflow
// commands that mark a line of a file in a pull request) and Markdown for
// a job summary or a pull-request comment.
//
// It imports nothing of this module: the commands that report (prickle-gen,
// the conformance suite) import it.
package cireport

import (
	"fmt"
	"io"
	"strings"
)

// Level is an annotation's level, as GitHub Actions names it.
type Level string

// The levels GitHub Actions shows: an error fails nothing by itself, the
// command's exit status does.
const (
	Error   Level = "error"
	Warning Level = "warning"
	Notice  Level = "notice"
)

// Annotation is one GitHub Actions annotation: a message shown on a line
// of a file (or on the run alone, when File is empty).
type Annotation struct {
	Level   Level
	File    string // relative to the repository's root, as the workflow sees it
	Line    int    // 1-based; 0 for none
	Col     int    // 1-based; 0 for none
	Title   string
	Message string
}

// String renders the workflow command:
// ::LEVEL file=F,line=L,col=C,title=T::MESSAGE.
func (a Annotation) String() string {
	var props []string
	add := func(k, v string) { props = append(props, k+"="+escapeProperty(v)) }
	if a.File != "" {
		add("file", a.File)
		if a.Line > 0 {
			add("line", fmt.Sprint(a.Line))
			if a.Col > 0 {
				add("col", fmt.Sprint(a.Col))
			}
		}
	}
	if a.Title != "" {
		add("title", a.Title)
	}
	level := a.Level
	if level == "" {
		level = Error
	}
	cmd := "::" + string(level)
	if len(props) > 0 {
		cmd += " " + strings.Join(props, ",")
	}
	return cmd + "::" + escapeData(a.Message)
}

// WriteAnnotations writes each annotation on a line of its own.
func WriteAnnotations(w io.Writer, as []Annotation) error {
	for _, a := range as {
		if _, err := fmt.Fprintln(w, a); err != nil {
			return err
		}
	}
	return nil
}

// escapeData escapes a workflow command's message the way the Actions
// toolkit does (@actions/core's escapeData).
var dataEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")

func escapeData(s string) string { return dataEscaper.Replace(s) }

// escapeProperty escapes a property value (@actions/core's
// escapeProperty): the message's escapes, and the separators ':' and ','.
var propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")

func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
