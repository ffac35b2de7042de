package ecmaregex

import (
	"errors"
	"strings"
	"testing"
)

// matchCases are ECMA-262 answers (checked against V8 by TestOracle when
// node is installed), one pattern and one string each: does the pattern
// match somewhere in the string?
var matchCases = []struct {
	pattern, s string
	want       bool
}{
	// \d, \w are ASCII; \s is WhiteSpace and LineTerminator.
	{`^\d$`, "٣", false}, {`^\d$`, "7", true}, {`^\D$`, "٣", true},
	{`^\w$`, "é", false}, {`^\w$`, "_", true}, {`^\W$`, "é", true},
	{`^\s$`, "\u00a0", true}, {`^\s$`, "\ufeff", true}, {`^\s$`, "\u2028", true},
	{`^\s$`, "\u2029", true}, {`^\s$`, "\u3000", true}, {`^\s$`, "\v", true},
	{`^\s$`, "\u0085", false}, {`^\s$`, "\u180e", false}, {`^\S$`, "\u0085", true},
	{`^[\s]$`, "\u00a0", true}, {`^[\S]$`, " ", false}, {`^[^\s]$`, "x", true},
	// . is anything but a line terminator; one code point.
	{`^.$`, "\n", false}, {`^.$`, "\r", false}, {`^.$`, "\u2028", false},
	{`^.$`, "\u2029", false}, {`^.$`, "\u0085", true}, {`^.$`, "😀", true},
	// ^ and $ are the ends of the input (no m flag).
	{`a$`, "a\n", false}, {`^a`, "\na", false}, {`^a$`, "a", true}, {`$^`, "", true},
	{`a$|b`, "xb", true}, {`(?:^|,)x`, "a,x", true},
	// \b and \B on ASCII word characters.
	{`\bé`, "é", false}, {`a\b`, "aé", true}, {`\Bé`, "é", true}, {`\ba\b`, "-a-", true},
	{`\ba`, "ba", false},
	// Classes.
	{`[^]`, "\n", true}, {`^[^]$`, "😀", true}, {`a[]`, "a", false}, {`[]|x`, "x", true},
	{`^[^a]$`, "😀", true}, {`[a-]`, "-", true}, {`[-a]`, "-", true}, {`^[a-c-e]$`, "-", true},
	{`^[a-c-e]$`, "d", false}, {`^[\b]$`, "\b", true}, {`^[\-]$`, "-", true},
	{`^[a-\d]$`, "-", true}, {`^[\d-z]$`, "y", false}, {`^[\w-]+$`, "a-b", true},
	{`^[😀-😂]$`, "😁", true}, {`^[]a]$`, "]", false}, {`^[^]a]$`, "xa]", true}, {`^[^]a]$`, "a]", false},
	{`[[:alpha:]]`, ":]", true}, {`[[:alpha:]]`, "b", false},
	// Escapes.
	{`\/`, "/", true}, {`^\cJ$`, "\n", true}, {`^\cj$`, "\n", true}, {`\c1`, `\c1`, true},
	{`^[\c1]$`, "\x11", true}, {`^[\c_]$`, "\x1f", true}, {`\c`, `\c`, true},
	{`^\x41$`, "A", true}, {`^\x4$`, "x4", true}, {`^\u0041$`, "A", true}, {`^\u004$`, "u004", true},
	{`^\u{41}$`, "A", true}, {`^\u{1F600}$`, "😀", true}, {`^\uD83D\uDE00$`, "😀", true},
	{`^\0$`, "\x00", true}, {`^\01$`, "\x01", true}, {`^\1$`, "\x01", true}, {`^\8$`, "8", true},
	{`^\101$`, "A", true}, {`^[\101]$`, "A", true}, {`^\400$`, " 0", true}, {`^\08$`, "\x008", true},
	{`^\a$`, "a", true}, {`^\e$`, "e", true}, {`^\z$`, "z", true}, {`^\Z$`, "Z", true},
	{`^\A$`, "A", true}, {`^\k$`, "k", true}, {`^\p{L}$`, "p{L}", false}, {`^\p{L}$`, "é", true},
	{`^\P{L}$`, "1", true}, {`^\p{Lu}+$`, "ÉA", true}, {`^\p{Script=Greek}$`, "α", true},
	{`^\p{gc=Nd}$`, "٣", true}, {`^\p{Any}$`, "😀", true}, {`^\p{ASCII}$`, "é", false},
	{`^\p{Foo}$`, "p{Foo}", true}, {`\ `, " ", true}, {`^\$$`, "$", true},
	// Braces: literal without the u flag where they cannot be a quantifier.
	{`^a{$`, "a{", true}, {`^a{1$`, "a{1", true}, {`^a{1,$`, "a{1,", true},
	{`^a{,2}$`, "a{,2}", true}, {`^}$`, "}", true}, {`^]$`, "]", true},
	{`^x{2}$`, "xx", true}, {`^x{2,}$`, "xxx", true}, {`^x{1,2}$`, "xxx", false},
	{`^x{1,2}?$`, "xx", true}, {`^x*?$`, "xxx", true},
	// Groups.
	{`^(?:ab)+$`, "abab", true}, {`^(?<n>a)b$`, "ab", true}, {`^(a)|b$`, "b", true},
	{`^(?<$x_1>a)$`, "a", true},
	// Backreferences and lookaround (the backtracking engine).
	{`^(a)\1$`, "aa", true}, {`^(a)\1$`, "ab", false}, {`(a)|\1b`, "b", true},
	{`^\2(a)(b)$`, "ab", true}, {`^(a)\10$`, "a\b", true}, {`^(?<n>a)\k<n>$`, "aa", true},
	{`^a(?=b)`, "ab", true}, {`^a(?!b)`, "ab", false}, {`(?<=a)b`, "ab", true},
	{`(?<!a)b`, "ab", false}, {`^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$`, "website-v2", true},
	{`^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$`, "a--b", false}, {`(?=.)\bé`, "é", false},
	{`^(?=\s).$`, "\u2028", false},
	// The bundled patterns.
	{`^[A-Za-z0-9_-]+$`, "example-message-id", true}, {`^[A-Za-z0-9_-]+$`, "a.b", false},
}

func TestMatch(t *testing.T) {
	for _, c := range matchCases {
		re, err := Compile(c.pattern)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.pattern, err)
			continue
		}
		got, err := re.MatchString(c.s)
		if err != nil || got != c.want {
			t.Errorf("%q matches %q: %v, %v; want %v", c.pattern, c.s, got, err, c.want)
		}
	}
}

// invalidPatterns are not ECMA-262 patterns with or without the u flag.
var invalidPatterns = []string{
	`[z-a]`, `(?<`, `(?<n>a)(?<n>b)`, `a**`, `a{1}{2}`, `*`, `a|*`, `+a`, `{1}`, `a{2,1}`,
	`(`, `)`, `(?:a`, `[a`, `\`, `a\`, `(?i)a`, `(?#c)a`, `(?'n'a)`, `(?P<n>a)`, `^*`, `$+`,
	`\b+`, `(?<=a)*`, `(?<n>a)\k<m>`, `(?<n>a)\k`, `(?<1>a)`, `[\d-\w`, "\xff",
}

func TestInvalid(t *testing.T) {
	for _, p := range invalidPatterns {
		re, err := Compile(p)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Compile(%q) = %v, %v; want a *SyntaxError", p, re, err)
			continue
		}
		if se.Pattern != p || se.Offset < 0 || se.Offset > len(p) || !strings.Contains(se.Error(), "at character") {
			t.Errorf("Compile(%q): %#v", p, se)
		}
	}
}

// An unsupported construct is refused, never read another way.
func TestUnsupported(t *testing.T) {
	for _, p := range []string{`\p{Alphabetic}`, `\p{scx=Grek}`, `\p{Script=Grek}`, `[\p{Emoji}]`} {
		_, err := Compile(p)
		var se *SyntaxError
		if !errors.As(err, &se) || !se.Unsupported {
			t.Errorf("Compile(%q): %v; want an unsupported construct", p, err)
		}
	}
}

// What RE2 can express runs on RE2; lookaround and backreferences on
// regexp2.
func TestEngines(t *testing.T) {
	for p, backtrack := range map[string]bool{
		`^[A-Za-z0-9_-]+$`: false, `\bx\B`: false, `a{1000}`: false, `(a)|b`: false,
		`a(?=b)`: true, `(?<!a)b`: true, `(a)\1`: true, `(?<n>a)\k<n>`: true, `a{1001}`: true,
	} {
		re := MustCompile(p)
		got, why := re.Backtracking()
		if got != backtrack || got != (why != "") {
			t.Errorf("%q: backtracking %v (%q), want %v", p, got, why, backtrack)
		}
		_, err := Translate(p)
		var nre *NotRegularError
		if backtrack != errors.As(err, &nre) {
			t.Errorf("Translate(%q): %v", p, err)
		}
	}
}
