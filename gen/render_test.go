package gen

import (
	"strings"
	"testing"
)

// commentLines wraps each paragraph's words, in order, into // lines of at
// most 77 columns (a longer word has a line of its own), with a // line
// between paragraphs.
func TestCommentLines(t *testing.T) {
	long := strings.Repeat("x", 90)
	for _, text := range []string{
		"", "  ", "one", "one two\nthree", "a\n\nb", "a\n \nb",
		strings.Repeat("word ", 40), "short " + long + " tail", long, strings.Repeat("abcd ", 14) + "abcde z",
		"é " + strings.Repeat("ü", 60) + " z", "tab\tsep\u00a0nbsp",
	} {
		lines := commentLines(text)
		var paras [][]string
		words := []string(nil)
		for _, l := range lines {
			if !strings.HasPrefix(l, "//") {
				t.Fatalf("%q: line %q is not a comment", text, l)
			}
			if l == "//" {
				paras, words = append(paras, words), nil
				continue
			}
			if !strings.HasPrefix(l, "// ") || strings.HasSuffix(l, " ") {
				t.Errorf("%q: line %q", text, l)
			}
			f := strings.Fields(l[2:])
			if len(l) > 77 && len(f) > 1 {
				t.Errorf("%q: line %q is %d bytes", text, l, len(l))
			}
			words = append(words, f...)
		}
		if len(lines) > 0 {
			paras = append(paras, words)
		}
		var want [][]string
		for _, p := range strings.Split(strings.TrimSpace(text), "\n\n") {
			if f := strings.Fields(p); len(f) > 0 || strings.TrimSpace(text) != "" {
				want = append(want, f)
			}
		}
		if strings.TrimSpace(text) == "" {
			want = nil
		}
		if got := strings.Join(flat(paras), "|"); got != strings.Join(flat(want), "|") || len(paras) != len(want) {
			t.Errorf("%q: paragraphs %q, want %q", text, paras, want)
		}
	}
}

func flat(paras [][]string) []string {
	var out []string
	for _, p := range paras {
		out = append(append(out, p...), "¶")
	}
	return out
}
