package spec

import (
	"strings"
	"testing"
)

var collapseCases = []string{
	"", " ", "a", "a b", " a", "a ", "a  b", "a\tb", "a\nb", "a \n b", "\v\fa\r",
	"one two three.", "a é", "é\u00a0b", "a\u2003b", "a \x85b", "a\xffb", "  \xc2", "a \xc2\xa0",
}

// collapseSpace is strings.Join(strings.Fields(s), " ").
func TestCollapseSpace(t *testing.T) {
	for _, s := range collapseCases {
		checkCollapse(t, s)
	}
}

func checkCollapse(t *testing.T, s string) {
	t.Helper()
	if got, want := collapseSpace(s), strings.Join(strings.Fields(s), " "); got != want {
		t.Errorf("collapseSpace(%q) = %q, want %q", s, got, want)
	}
}

func FuzzCollapseSpace(f *testing.F) {
	for _, s := range collapseCases {
		f.Add(s)
	}
	f.Fuzz(checkCollapse)
}
