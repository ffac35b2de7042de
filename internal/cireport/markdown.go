package cireport

import (
	"io"
	"strings"
)

// Cell escapes s for a cell of a Markdown (GitHub Flavored) table: a pipe
// would end the cell, inside a code span too, and a line break the row.
func Cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\r\n", "<br>")
	return strings.ReplaceAll(s, "\n", "<br>")
}

// Code renders s as inline code, with a fence of backticks longer than any
// run of them inside s, so that any text can be quoted.
func Code(s string) string {
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || longest > 0 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// Table writes a Markdown table with header and rows, each cell escaped
// with Cell (a cell may hold Markdown such as a Code span). It writes
// nothing when there are no rows.
func Table(w io.Writer, header []string, rows [][]string) error {
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	escaped := func(cells []string) []string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = Cell(c)
		}
		return out
	}
	line(escaped(header))
	b.WriteString("|" + strings.Repeat(" --- |", len(header)) + "\n")
	for _, r := range rows {
		line(escaped(r))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
