package spec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Pos is a place in a page: the file as given, a 1-based line and a 1-based
// column counted in bytes.
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// String renders the position as file:line:col.
func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// MarshalText renders the position as file:line:col, its JSON form.
func (p Pos) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses file:line:col.
func (p *Pos) UnmarshalText(b []byte) error {
	s := string(b)
	j := strings.LastIndexByte(s, ':')
	if j < 0 {
		return fmt.Errorf("position %q is not file:line:col", s)
	}
	i := strings.LastIndexByte(s[:j], ':')
	if i < 0 {
		return fmt.Errorf("position %q is not file:line:col", s)
	}
	line, err1 := strconv.Atoi(s[i+1 : j])
	col, err2 := strconv.Atoi(s[j+1:])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("position %q is not file:line:col", s)
	}
	*p = Pos{File: s[:i], Line: line, Col: col}
	return nil
}

// Severity grades a diagnostic.
type Severity int

// The severities, most serious first.
const (
	Error Severity = iota
	Warning
	Info
)

// String names the severity as it appears in diagnostics.
func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	default:
		return "info"
	}
}

// MarshalText renders the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	switch string(b) {
	case "error":
		*s = Error
	case "warning":
		*s = Warning
	case "info":
		*s = Info
	default:
		return fmt.Errorf("unknown severity %q", b)
	}
	return nil
}

// Diagnostic is one finding about the pages.
type Diagnostic struct {
	Pos      Pos      `json:"pos"`
	Severity Severity `json:"severity"`
	Rule     string   `json:"rule"`
	Message  string   `json:"message"`
}

// String renders the diagnostic as file:line:col: severity: message [rule].
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s [%s]", d.Pos, d.Severity, d.Message, d.Rule)
}

// Diagnostics is a list of findings.
type Diagnostics []Diagnostic

// HasErrors reports whether any finding is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Summary counts the findings by severity: "1 error, 2 warnings, 0 infos".
func (ds Diagnostics) Summary() string {
	var n [Info + 1]int
	for _, d := range ds {
		n[d.Severity]++
	}
	plural := func(k int, word string) string {
		if k == 1 {
			return fmt.Sprintf("%d %s", k, word)
		}
		return fmt.Sprintf("%d %ss", k, word)
	}
	return plural(n[Error], "error") + ", " + plural(n[Warning], "warning") + ", " + plural(n[Info], "info")
}

// Errors returns only the findings of severity error.
func (ds Diagnostics) Errors() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == Error {
			out = append(out, d)
		}
	}
	return out
}

// Sort orders findings by file, line, column, rule and message.
func (ds Diagnostics) Sort() {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Pos.File != b.Pos.File {
			return a.Pos.File < b.Pos.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.Pos.Col != b.Pos.Col {
			return a.Pos.Col < b.Pos.Col
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
}

// PagesError reports pages that cannot be turned into a spec; it carries
// the error diagnostics.
type PagesError struct {
	Diagnostics Diagnostics
}

func (e *PagesError) Error() string {
	if len(e.Diagnostics) == 0 {
		return "invalid pages"
	}
	msg := e.Diagnostics[0].String()
	if n := len(e.Diagnostics) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return msg
}
