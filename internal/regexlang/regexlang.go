// Package regexlang decides how the languages of two ECMA-262 patterns
// relate: the same, one inside the other, or neither. It backs the
// grading of pattern changes in `prickle-gen diff`.
//
// A pattern's language is what JSON Schema's pattern keyword accepts: the
// strings in which the pattern matches somewhere (patterns are not
// anchored), over Unicode scalar values. Patterns are read by
// internal/ecmaregex and decided on its RE2 translation: Go's regexp/syntax
// compiles it to an NFA, whose subset construction is run on both
// patterns at once (a product automaton), over an alphabet of disjoint
// rune ranges on which every instruction of both programs, and the word
// and line-feed tests of the empty-width assertions, are constant.
//
// What RE2 cannot express (lookaround, backreferences, counts beyond RE2's
// bound) is not decided: the result is Unknown, with the reason. So is a
// comparison whose automaton would exceed the state budget.
//
// It imports only internal/ecmaregex of this module.
package regexlang

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"
	"unicode"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
)

// Relation is how the new pattern's language relates to the old one's.
type Relation int

// The relations.
const (
	// Unknown: not decided (see Result.Reason).
	Unknown Relation = iota
	// Equal: the same language, however written.
	Equal
	// Widened: the new language holds the old one and more.
	Widened
	// Narrowed: the new language is part of the old one.
	Narrowed
	// Incomparable: each accepts a string the other refuses.
	Incomparable
)

func (r Relation) String() string {
	switch r {
	case Equal:
		return "equal"
	case Widened:
		return "widened"
	case Narrowed:
		return "narrowed"
	case Incomparable:
		return "incomparable"
	}
	return "unknown"
}

// Result is the outcome of Compare.
type Result struct {
	Relation Relation
	// Gained is a shortest string the new pattern accepts and the old one
	// refuses, and Lost one the old accepts and the new refuses; nil when
	// there is none (or the relation is Unknown).
	Gained, Lost *string
	// Reason says why the relation is Unknown.
	Reason string
}

// DefaultMaxStates bounds the product automaton Compare builds.
const DefaultMaxStates = 20000

// maxWork bounds the transitions computed: states times alphabet size.
const maxWork = 20_000_000

// Compare decides how the language of the pattern new relates to that of
// old, within DefaultMaxStates.
func Compare(old, new string) Result { return CompareWithin(old, new, DefaultMaxStates) }

// CompareWithin is Compare with a budget of product states.
func CompareWithin(old, new string, maxStates int) Result {
	a, why := load("old", old)
	if why != "" {
		return Result{Reason: why}
	}
	b, why := load("new", new)
	if why != "" {
		return Result{Reason: why}
	}
	syms := alphabet(a.prog, b.prog)
	a.syms, b.syms = syms, syms
	return product(a, b, syms, maxStates)
}

// load translates a pattern and compiles it to an NFA, or says why it
// cannot.
func load(side, pattern string) (*machine, string) {
	re2, err := ecmaregex.Translate(pattern)
	var nre *ecmaregex.NotRegularError
	var se *ecmaregex.SyntaxError
	switch {
	case errors.As(err, &nre):
		return nil, fmt.Sprintf("the %s pattern is beyond RE2: %s", side, nre.Reason)
	case errors.As(err, &se):
		return nil, fmt.Sprintf("the %s pattern is not valid: %s", side, se.Msg)
	case err != nil:
		return nil, fmt.Sprintf("the %s pattern: %v", side, err)
	}
	re, err := syntax.Parse(re2, syntax.Perl)
	if err != nil {
		return nil, fmt.Sprintf("the %s pattern's translation does not parse: %v", side, err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, fmt.Sprintf("the %s pattern's translation does not compile: %v", side, err)
	}
	return newMachine(prog), ""
}

// symbol is one range of the alphabet, and the rune that stands for it.
type symbol struct {
	lo, hi rune
	rep    rune
}

// alphabet partitions the Unicode scalar values into ranges on which
// every rune instruction of the programs matches all or nothing, and
// syntax.EmptyOpContext gives the same answer. The symbols come in the
// order of their representatives' readability, so that witnesses read
// well.
func alphabet(progs ...*syntax.Prog) []symbol {
	cuts := map[rune]bool{0: true, unicode.MaxRune + 1: true, 0xD800: true, 0xE000: true}
	cut := func(lo, hi rune) { cuts[lo], cuts[hi+1] = true, true }
	cut('\n', '\n')
	for _, r := range []rune{'0', '9', 'A', 'Z', '_', '_', 'a', 'z'} {
		cut(r, r)
	}
	cut('0', '9')
	cut('A', 'Z')
	cut('a', 'z')
	for _, p := range progs {
		for _, in := range p.Inst {
			switch in.Op {
			case syntax.InstRune:
				if len(in.Rune) == 1 { // with FoldCase, every rune of its orbit
					r := in.Rune[0]
					for {
						cut(r, r)
						if in.Arg&uint32(syntax.FoldCase) == 0 {
							break
						}
						if r = unicode.SimpleFold(r); r == in.Rune[0] {
							break
						}
					}
					continue
				}
				for i := 0; i+1 < len(in.Rune); i += 2 {
					cut(in.Rune[i], in.Rune[i+1])
				}
			case syntax.InstRune1:
				cut(in.Rune[0], in.Rune[0])
			}
		}
	}
	points := make([]rune, 0, len(cuts))
	for r := range cuts {
		points = append(points, r)
	}
	slices.Sort(points)
	var syms []symbol
	for i := 0; i+1 < len(points); i++ {
		lo, hi := points[i], points[i+1]-1
		if lo >= 0xD800 && hi <= 0xDFFF {
			continue // surrogates are not scalar values: no string holds one
		}
		syms = append(syms, symbol{lo, hi, representative(lo, hi)})
	}
	slices.SortStableFunc(syms, func(x, y symbol) int { return rank(x.rep) - rank(y.rep) })
	return syms
}

// preferred lists, best first, the characters a witness is written with.
var preferred = []struct{ lo, hi rune }{
	{'a', 'z'}, {'A', 'Z'}, {'0', '9'}, {'_', '_'}, {'-', '-'}, {'.', '.'}, {'!', '~'}, {' ', ' '},
}

func representative(lo, hi rune) rune {
	for _, p := range preferred {
		if l, h := max(lo, p.lo), min(hi, p.hi); l <= h {
			return l
		}
	}
	for r := lo; r <= hi && r < lo+512; r++ {
		if unicode.IsPrint(r) {
			return r
		}
	}
	return lo
}

// rank orders representatives: preferred ones first, then printable,
// then the rest, each by code point.
func rank(r rune) int {
	base := 0
	for _, p := range preferred {
		if r >= p.lo && r <= p.hi {
			return base + int(r-p.lo)
		}
		base += int(p.hi-p.lo) + 1
	}
	if unicode.IsPrint(r) {
		return base + int(r)
	}
	return base + unicode.MaxRune + 1 + int(r)
}
