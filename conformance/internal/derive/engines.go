package derive

import (
	"strings"
	"unicode"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/jsonschema"
)

// Patterns as other engines read them. A server that checks a pattern with
// its language's regex engine (Python's re, PCRE, Java, Ruby, .NET)
// instead of ECMA-262's accepts values JSON Schema refuses. For each
// pattern the derivation looks for a value that ECMA-262 refuses and one
// such reading accepts, and makes it a case: a server that reads the
// pattern that way lets it through, and fails.

// An engineDiff is one way common engines read a pattern unlike ECMA-262.
type engineDiff struct {
	variant string // the case's name: pattern-VARIANT
	why     string // what the engines do
	// rewrite returns the pattern as those engines read it, in ECMA-262
	// syntax; nil when the candidates are accepted by construction.
	rewrite func(pattern string) string
	// candidates returns values near valid, a value the pattern accepts.
	candidates func(valid string) []string
}

var engineDiffs = []engineDiff{
	{
		variant: "newline-end",
		why:     "$ matches before a final newline in Python's re, PCRE, Java and Ruby, never in ECMA-262",
		rewrite: func(p string) string { return rewritePattern(p, map[string]string{"$": `(?=\n?$)`}) },
		candidates: func(v string) []string {
			return []string{v + "\n"}
		},
	},
	{
		variant: "newline-start",
		why:     "^ and $ match at every line in Ruby, only at the ends of the input in ECMA-262",
		rewrite: func(p string) string {
			return rewritePattern(p, map[string]string{"^": `(?:^|(?<=\n))`, "$": `(?=\n|$)`})
		},
		candidates: func(v string) []string {
			return []string{"\n" + v, v + "\n!", "!\n" + v}
		},
	},
	{
		variant: "unicode-digit",
		why:     `\d is any Unicode digit in Python's re and .NET, only 0-9 in ECMA-262`,
		rewrite: func(p string) string {
			return rewritePattern(p, map[string]string{`\d`: `\p{Nd}`, `[\d`: `\p{Nd}`, `\D`: `\P{Nd}`})
		},
		candidates: func(v string) []string { return substitutions(v, "\u0663", "\uff13", "\u0967") },
	},
	{
		variant: "unicode-word",
		why:     `\w is any Unicode letter or digit in Python's re and .NET, only A-Za-z0-9_ in ECMA-262`,
		rewrite: func(p string) string {
			return rewritePattern(p, map[string]string{`\w`: `[\p{L}\p{Mn}\p{Nd}\p{Pc}]`, `[\w`: `\p{L}\p{Mn}\p{Nd}\p{Pc}`, `\W`: `[^\p{L}\p{Mn}\p{Nd}\p{Pc}]`})
		},
		candidates: func(v string) []string { return substitutions(v, "é", "ж", "\u0663") },
	},
	{
		variant: "unicode-space",
		why:     `\s takes U+001C-U+001F and U+0085 in Python's re, not U+FEFF; ECMA-262 the other way round`,
		rewrite: func(p string) string {
			return rewritePattern(p, map[string]string{`\s`: `(?:(?!\uFEFF)[\s\x1c-\x1f\x85])`, `[\s`: `\s\x1c-\x1f\x85`, `\S`: `(?:[^\s\x1c-\x1f\x85]|\uFEFF)`})
		},
		candidates: func(v string) []string { return substitutions(v, "\u0085", "\x1c", "\ufeff") },
	},
	{
		variant: "dot-terminator",
		why:     ". matches CR, U+2028 and U+2029 in Python's re and PCRE, no line terminator in ECMA-262",
		rewrite: func(p string) string { return rewritePattern(p, map[string]string{".": `[^\n]`}) },
		candidates: func(v string) []string {
			return substitutions(v, "\r", "\u2028", "\u2029")
		},
	},
	{
		variant: "case-fold",
		why:     "a validator that folds case (an i flag; Unicode folding reads ſ as s, K as k) accepts it; ECMA-262 patterns are case-sensitive",
		// A value that folds to a valid one is accepted by any engine
		// that folds case.
		candidates: func(v string) []string {
			var out []string
			r := []rune(v)
			for i, c := range r {
				for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
					out = append(out, string(r[:i])+string(f)+string(r[i+1:]))
				}
			}
			return out
		},
	},
}

// substitutions returns valid with one character replaced by one of subs,
// at every place in turn.
func substitutions(valid string, subs ...string) []string {
	var out []string
	r := []rune(valid)
	for i := range r {
		for _, s := range subs {
			out = append(out, string(r[:i])+s+string(r[i+1:]))
		}
	}
	return out
}

// engineBreakers returns, for each engineDiff that changes the verdict on
// some value near valid (or near the schema's minimal value, which leaves
// more room within a maxLength), that value: ECMA-262 refuses it (within
// the length bounds, so only the pattern breaks), the other reading
// accepts it.
func engineBreakers(n *jsonschema.Schema, pattern, valid string) []breaker {
	bases := []string{valid}
	if v, ok := minimal(n); ok {
		if s, ok := v.(string); ok && s != valid {
			bases = append(bases, s)
		}
	}
	var out []breaker
	for _, d := range engineDiffs {
		var alt *ecmaregex.Regexp
		if d.rewrite != nil {
			src := d.rewrite(pattern)
			if src == pattern {
				continue // nothing in the pattern reads differently
			}
			re, err := ecmaregex.Compile(src)
			if err != nil {
				continue
			}
			alt = re
		}
		var candidates []string
		for _, b := range bases {
			candidates = append(candidates, d.candidates(b)...)
		}
		for _, c := range candidates {
			if ok, decided := n.MatchPattern(c); !decided || ok || !n.FitsLength(c) {
				continue
			}
			if alt != nil {
				if ok, err := alt.MatchString(c); err != nil || !ok {
					continue
				}
			}
			out = append(out, breaker{kw: "pattern", variant: d.variant, why: "does not match the pattern, read as ECMA-262 reads it (" + d.why + ")", bad: c})
			break
		}
	}
	return out
}

// rewritePattern returns pattern with each of its unescaped atoms that sub
// names replaced: "$", "^", "." and escapes such as `\d` outside a
// class; an escape inside a class by its key with a leading "[" (`[\d`),
// kept as it is when sub has no such key.
func rewritePattern(pattern string, sub map[string]string) string {
	var b strings.Builder
	r := []rune(pattern)
	inClass := false
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '\\' && i+1 < len(r):
			esc := `\` + string(r[i+1])
			key := esc
			if inClass {
				key = "[" + esc
			}
			if s, ok := sub[key]; ok {
				b.WriteString(s)
			} else {
				b.WriteString(esc)
			}
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteRune(c)
		case c == '[':
			inClass = true
			b.WriteRune(c)
			// A ] right after [ or [^ ends the class in ECMA-262 ([] and
			// [^] are classes of their own), so nothing to skip.
		case c == '$' || c == '^' || c == '.':
			if s, ok := sub[string(c)]; ok {
				b.WriteString(s)
			} else {
				b.WriteRune(c)
			}
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}
