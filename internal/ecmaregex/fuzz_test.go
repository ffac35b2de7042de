package ecmaregex

import (
	"errors"
	"regexp/syntax"
	"testing"

	"github.com/dlclark/regexp2"
)

// FuzzCompile: any pattern compiles or is refused with a *SyntaxError
// placed inside it, never a panic; a translation parses as RE2 syntax;
// and on a pattern RE2 can express, regexp2 given the same reading
// answers as RE2 does.
func FuzzCompile(f *testing.F) {
	for _, c := range matchCases {
		f.Add(c.pattern, c.s)
	}
	for _, p := range invalidPatterns {
		f.Add(p, "a")
	}
	for _, c := range generate(3, 100, 1) {
		f.Add(c.pattern, c.inputs[0])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 256 || len(s) > 64 {
			return // bounded: regexp2 backtracks, and the fuzzer is about reading
		}
		re, err := compile(pattern)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pattern != pattern || se.Offset < 0 || se.Offset > len(pattern) {
				t.Fatalf("Compile(%q): %#v", pattern, err)
			}
			return
		}
		if bt, _ := re.Backtracking(); bt {
			if _, err := re.MatchString(s); err != nil && !IsTimeout(err) {
				t.Fatalf("%q on %q: %v", pattern, s, err)
			}
			return
		}
		re2, err := Translate(pattern)
		if err != nil {
			t.Fatalf("Translate(%q) after Compile: %v", pattern, err)
		}
		if _, err := syntax.Parse(re2, syntax.Perl); err != nil {
			t.Fatalf("Translate(%q) = %q: %v", pattern, re2, err)
		}
		n, _ := parse(pattern)
		bt, err := regexp2.Compile(backtrackSyntax(n), regexp2.ECMAScript)
		if err != nil {
			t.Fatalf("%q: regexp2 refuses %q: %v", pattern, backtrackSyntax(n), err)
		}
		bt.MatchTimeout = MatchTimeout
		want, err := bt.MatchString(s)
		if err != nil {
			return
		}
		if got, _ := re.MatchString(s); got != want {
			t.Fatalf("%q on %q: RE2 (%s) %v, regexp2 (%s) %v", pattern, s, re2, got, backtrackSyntax(n), want)
		}
	})
}
