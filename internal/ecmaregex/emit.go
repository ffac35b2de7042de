package ecmaregex

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// blocker returns the first construct of n that RE2 cannot express (a
// lookaround or a backreference), or nil.
func blocker(n *node) *node {
	if n == nil {
		return nil
	}
	if n.kind == kLook || n.kind == kBackref {
		return n
	}
	for _, s := range n.subs {
		if b := blocker(s); b != nil {
			return b
		}
	}
	return nil
}

func describe(n *node) string {
	switch {
	case n.kind == kBackref:
		return "a backreference"
	case n.behind:
		return "a lookbehind"
	}
	return "a lookahead"
}

// A writer renders a parsed pattern in one engine's syntax. Both engines
// get the meaning this package gave the pattern, spelled out: every class
// as explicit code point ranges, ^ and $ as anchors at the ends of the
// input, \b on ASCII word characters, no escape left to the engine's own
// reading.
type writer struct {
	strings.Builder
	re2 bool // RE2 (Go's regexp); else regexp2 in ECMAScript mode
}

// re2Syntax renders n for Go's regexp package; n has no blocker.
func re2Syntax(n *node) string {
	w := &writer{re2: true}
	w.node(n)
	return w.String()
}

// backtrackSyntax renders n for regexp2.
func backtrackSyntax(n *node) string {
	w := &writer{}
	w.node(n)
	return w.String()
}

// asciiWord is the class of \w, as regexp2 reads it in a lookaround.
const asciiWord = "[0-9A-Z_a-z]"

func (w *writer) node(n *node) {
	switch n.kind {
	case kEmpty:
		w.WriteString("(?:)")
	case kSet:
		w.set(n.set)
	case kBegin:
		if w.re2 {
			w.WriteString(`\A`)
		} else {
			w.WriteString(`^`)
		}
	case kEnd:
		w.WriteString(`\z`)
	case kWordB, kNotWordB:
		switch {
		case w.re2 && n.kind == kWordB:
			w.WriteString(`\b`)
		case w.re2:
			w.WriteString(`\B`)
		case n.kind == kWordB:
			// regexp2 reads \b on Unicode letters; ECMA-262 on ASCII.
			w.WriteString(`(?:(?<=` + asciiWord + `)(?!` + asciiWord + `)|(?<!` + asciiWord + `)(?=` + asciiWord + `))`)
		default:
			w.WriteString(`(?:(?<=` + asciiWord + `)(?=` + asciiWord + `)|(?<!` + asciiWord + `)(?!` + asciiWord + `))`)
		}
	case kGroup, kNonCap, kLook:
		switch {
		case n.kind == kGroup && !w.re2:
			w.WriteString("(") // numbered as ECMA-262 numbers them, for backreferences
		case n.kind != kLook:
			w.WriteString("(?:")
		case n.behind && n.neg:
			w.WriteString("(?<!")
		case n.behind:
			w.WriteString("(?<=")
		case n.neg:
			w.WriteString("(?!")
		default:
			w.WriteString("(?=")
		}
		w.node(n.subs[0])
		w.WriteString(")")
	case kBackref:
		fmt.Fprintf(w, `(?:\%d)`, n.index)
	case kConcat:
		for _, s := range n.subs {
			w.node(s)
		}
	case kAlt:
		w.WriteString("(?:")
		for i, s := range n.subs {
			if i > 0 {
				w.WriteString("|")
			}
			w.node(s)
		}
		w.WriteString(")")
	case kRepeat:
		w.WriteString("(?:")
		w.node(n.subs[0])
		w.WriteString(")")
		switch {
		case n.min == 0 && n.max == -1:
			w.WriteString("*")
		case n.min == 1 && n.max == -1:
			w.WriteString("+")
		case n.min == 0 && n.max == 1:
			w.WriteString("?")
		case n.max == -1:
			fmt.Fprintf(w, "{%d,}", n.min)
		case n.min == n.max:
			fmt.Fprintf(w, "{%d}", n.min)
		default:
			fmt.Fprintf(w, "{%d,%d}", n.min, n.max)
		}
		if !n.greedy {
			w.WriteString("?")
		}
	}
}

func (w *writer) set(c charSet) {
	switch {
	case len(c) == 0:
		if w.re2 {
			w.WriteString(`[^\x00-\x{10FFFF}]`)
		} else {
			w.WriteString(`(?!)`)
		}
		return
	case len(c) == 1 && c[0].lo == c[0].hi:
		w.char(c[0].lo)
		return
	}
	w.WriteString("[")
	if neg := negate(c); len(neg) > 0 && len(neg) < len(c) {
		w.WriteString("^")
		c = neg
	}
	for _, s := range c {
		w.char(s.lo)
		if s.hi != s.lo {
			if s.hi > s.lo+1 {
				w.WriteString("-")
			}
			w.char(s.hi)
		}
	}
	w.WriteString("]")
}

// char writes one code point, outside or inside a class: ASCII letters
// and digits as themselves, anything else escaped.
func (w *writer) char(r rune) {
	switch {
	case r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
		w.WriteRune(r)
	case w.re2:
		w.WriteString(`\x{` + strconv.FormatInt(int64(r), 16) + `}`)
	case r <= 0xFFFF:
		fmt.Fprintf(w, `\u%04X`, r)
	default:
		// regexp2 reads the pattern as code points and has no escape
		// beyond \uFFFF.
		w.WriteRune(r)
	}
}
