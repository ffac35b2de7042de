package ecmaregex

import (
	"slices"
	"unicode"
)

// span is an inclusive range of code points.
type span struct{ lo, hi rune }

// charSet is a set of code points: sorted, disjoint, non-adjacent spans.
type charSet []span

func single(r rune) charSet { return charSet{{r, r}} }

// anyChar is every code point.
var anyChar = charSet{{0, unicode.MaxRune}}

// union returns the set of code points in a or b.
func union(a, b charSet) charSet {
	all := append(append(make([]span, 0, len(a)+len(b)), a...), b...)
	slices.SortFunc(all, func(x, y span) int { return int(x.lo) - int(y.lo) })
	var out charSet
	for _, s := range all {
		if n := len(out); n > 0 && s.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, s.hi)
			continue
		}
		out = append(out, s)
	}
	return out
}

// negate returns the code points not in c.
func negate(c charSet) charSet {
	var out charSet
	next := rune(0)
	for _, s := range c {
		if s.lo > next {
			out = append(out, span{next, s.lo - 1})
		}
		next = s.hi + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, span{next, unicode.MaxRune})
	}
	return out
}

func (c charSet) contains(r rune) bool {
	_, found := slices.BinarySearchFunc(c, r, func(s span, r rune) int {
		switch {
		case s.hi < r:
			return -1
		case s.lo > r:
			return 1
		}
		return 0
	})
	return found
}

// fromTable converts a Unicode range table.
func fromTable(t *unicode.RangeTable) charSet {
	var spans charSet
	add := func(lo, hi, stride rune) {
		if stride == 1 {
			spans = append(spans, span{lo, hi})
			return
		}
		for r := lo; r <= hi; r += stride {
			spans = append(spans, span{r, r})
		}
	}
	for _, r := range t.R16 {
		add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	for _, r := range t.R32 {
		add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	return union(spans, nil)
}

// The class escapes of ECMA-262 (22.2.2.9, CharacterClassEscape), without
// the i flag: \d and \w are ASCII; \s is WhiteSpace (TAB, VT, FF, ZWNBSP
// and the space separators Zs) and LineTerminator (LF, CR, LS, PS).
var (
	digitSet = charSet{{'0', '9'}}
	wordSet  = charSet{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	spaceSet = union(fromTable(unicode.Zs), charSet{
		{'\t', '\r'}, // TAB, LF, VT, FF, CR
		{0x2028, 0x2029},
		{0xFEFF, 0xFEFF},
	})
	// dotSet is what . matches without the s flag: any code point but a
	// LineTerminator.
	dotSet = negate(charSet{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}})
)
