package ecmaregex

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// kind is the kind of a node of a parsed pattern.
type kind uint8

const (
	kEmpty    kind = iota
	kSet           // one code point of set
	kBegin         // ^ (start of input: no m flag)
	kEnd           // $ (end of input: no m flag)
	kWordB         // \b, on ASCII word characters
	kNotWordB      // \B
	kGroup         // a capturing group, numbered index
	kNonCap        // (?:...)
	kLook          // a lookaround: behind, neg
	kBackref       // \N or \k<name>: group index
	kConcat
	kAlt
	kRepeat // min, max (-1: no bound), greedy
)

// node is one construct of a parsed pattern.
type node struct {
	kind        kind
	set         charSet
	subs        []*node
	min, max    int
	greedy      bool
	index       int
	behind, neg bool
	pos         int // byte offset in the pattern
}

// Limits of the parser: a pattern nested deeper than maxDepth, or a repeat
// count above maxCount (ECMA-262 allows any), is refused.
const (
	maxDepth = 250
	maxCount = 1<<31 - 1
)

// SyntaxError reports a pattern that is not an ECMA-262 regular
// expression, or one that uses a construct this package cannot match.
type SyntaxError struct {
	Pattern string
	// Offset is the byte offset of the offending construct.
	Offset int
	Msg    string
	// Unsupported marks a construct ECMA-262 defines that this package
	// cannot match (a Unicode property Go's tables lack); the pattern is
	// then not read with the grammar without flags either.
	Unsupported bool
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at character %d of `%s`", e.Msg, utf8.RuneCountInString(e.Pattern[:min(e.Offset, len(e.Pattern))])+1, e.Pattern)
}

// parser reads one pattern with one grammar: u selects the grammar of the
// u flag, else the grammar of a pattern without flags, Annex B included.
type parser struct {
	src     string
	pos     int
	u       bool
	ngroups int            // capturing groups in the whole pattern
	names   map[string]int // group name -> index; nil when there are none
	opened  int            // capturing groups opened so far
	depth   int
	err     *SyntaxError
}

// parse reads src with the u flag's grammar, which JSON Schema recommends
// (2020-12 core, "Regular Expressions"), and, when that grammar refuses it
// as a syntax error, with the grammar of a pattern without flags (Annex B).
// An unsupported construct (a Unicode property Go's tables lack) is final.
func parse(src string) (*node, *SyntaxError) {
	if !utf8.ValidString(src) {
		return nil, &SyntaxError{Pattern: src, Offset: invalidUTF8At(src), Msg: "invalid UTF-8"}
	}
	n, err := parseWith(src, true)
	if err == nil || err.Unsupported {
		return n, err
	}
	return parseWith(src, false)
}

func invalidUTF8At(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return len(s)
}

func parseWith(src string, u bool) (*node, *SyntaxError) {
	p := &parser{src: src, u: u}
	if err := p.prescan(); err != nil {
		return nil, err
	}
	n := p.disjunction()
	if p.err == nil && p.pos < len(src) {
		p.fail(p.pos, "unmatched )")
	}
	if p.err != nil {
		return nil, p.err
	}
	return n, nil
}

func (p *parser) fail(pos int, format string, args ...any) {
	if p.err == nil {
		p.err = &SyntaxError{Pattern: p.src, Offset: pos, Msg: fmt.Sprintf(format, args...)}
	}
	p.pos = len(p.src)
}

// refuse fails with a construct this package cannot match.
func (p *parser) refuse(pos int, format string, args ...any) {
	if p.err == nil {
		p.fail(pos, format, args...)
		p.err.Unsupported = true
	}
}

// literal returns the code point at p.pos. Without the u flag ECMA-262
// reads a pattern as UTF-16 code units, so a character beyond U+FFFF is
// two units, each an atom or a class member of its own: that cannot be
// matched on code points, and is refused.
func (p *parser) literal() rune {
	start := p.pos
	r := p.next()
	if !p.u && r > 0xFFFF {
		p.refuse(start, "a character beyond U+FFFF in a pattern that is valid only without the u flag")
	}
	return r
}

func (p *parser) more() bool { return p.err == nil && p.pos < len(p.src) }

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) at(s string) bool { return strings.HasPrefix(p.src[p.pos:], s) }

func (p *parser) next() rune {
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += size
	return r
}

// prescan counts the capturing groups and collects the group names, which
// decide how \N and \k read (ECMA-262 22.2.1.1, Annex B.1.2).
func (p *parser) prescan() *SyntaxError {
	s := p.src
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			for i++; i < len(s) && s[i] != ']'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '(':
			if i+1 < len(s) && s[i+1] == '?' {
				if i+2 < len(s) && s[i+2] == '<' && i+3 < len(s) && s[i+3] != '=' && s[i+3] != '!' {
					p.ngroups++
					name, _, ok := groupName(s, i+2)
					if !ok {
						continue // the parser reports it
					}
					if p.names == nil {
						p.names = map[string]int{}
					}
					if _, dup := p.names[name]; dup {
						p.fail(i+3, "duplicate group name %q", name)
						return p.err
					}
					p.names[name] = p.ngroups
				}
				continue
			}
			p.ngroups++
		}
	}
	return nil
}

func (p *parser) disjunction() *node {
	start := p.pos
	var alts []*node
	for {
		alts = append(alts, p.alternative())
		if p.more() && p.peek() == '|' {
			p.pos++
			continue
		}
		break
	}
	if len(alts) == 1 {
		return alts[0]
	}
	return &node{kind: kAlt, subs: alts, pos: start}
}

func (p *parser) alternative() *node {
	start := p.pos
	var terms []*node
	for p.more() && p.peek() != '|' && p.peek() != ')' {
		terms = append(terms, p.term())
	}
	switch len(terms) {
	case 0:
		return &node{kind: kEmpty, pos: start}
	case 1:
		return terms[0]
	}
	return &node{kind: kConcat, subs: terms, pos: start}
}

func (p *parser) term() *node {
	start := p.pos
	var atom *node
	quantifiable := true
	switch c := p.peek(); c {
	case '^', '$':
		p.pos++
		atom, quantifiable = &node{kind: kBegin, pos: start}, false
		if c == '$' {
			atom.kind = kEnd
		}
	case '\\':
		if p.at(`\b`) || p.at(`\B`) {
			p.pos += 2
			atom, quantifiable = &node{kind: kWordB, pos: start}, false
			if c := p.src[start+1]; c == 'B' {
				atom.kind = kNotWordB
			}
			break
		}
		p.pos++
		atom = p.atomEscape(start)
	case '(':
		atom = p.group()
		// Annex B lets a lookahead be quantified, without the u flag.
		if atom != nil && atom.kind == kLook && (p.u || atom.behind) {
			quantifiable = false
		}
	case '.':
		p.pos++
		atom = &node{kind: kSet, set: dotSet, pos: start}
	case '[':
		atom = p.class()
	case '*', '+', '?':
		p.fail(start, "nothing to repeat")
		return nil
	case '{':
		if _, _, _, ok := braces(p.src, p.pos); ok || p.u {
			if ok {
				p.fail(start, "nothing to repeat")
			} else {
				p.fail(start, "lone quantifier bracket")
			}
			return nil
		}
		p.pos++
		atom = &node{kind: kSet, set: single('{'), pos: start}
	case '}', ']':
		if p.u {
			p.fail(start, "lone %c", c)
			return nil
		}
		p.pos++
		atom = &node{kind: kSet, set: single(rune(c)), pos: start}
	default:
		atom = &node{kind: kSet, set: single(p.literal()), pos: start}
	}
	if p.err != nil {
		return nil
	}
	return p.quantifier(atom, quantifiable)
}

// braces reads a braced quantifier at s[i] ('{'): {n}, {n,} or {n,m}.
// max is -1 for {n,}; counts saturate at maxCount.
func braces(s string, i int) (lo, hi, end int, ok bool) {
	digits := func(j int) (int, int) {
		n, k := 0, j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			n = min(n*10+int(s[k]-'0'), maxCount)
			k++
		}
		return n, k
	}
	j := i + 1
	lo, k := digits(j)
	if k == j {
		return 0, 0, 0, false
	}
	switch {
	case k < len(s) && s[k] == '}':
		return lo, lo, k + 1, true
	case k < len(s) && s[k] == ',':
		if k+1 < len(s) && s[k+1] == '}' {
			return lo, -1, k + 2, true
		}
		hi, m := digits(k + 1)
		if m == k+1 || m >= len(s) || s[m] != '}' {
			return 0, 0, 0, false
		}
		return lo, hi, m + 1, true
	}
	return 0, 0, 0, false
}

func (p *parser) quantifier(atom *node, quantifiable bool) *node {
	start := p.pos
	var lo, hi int
	switch p.peek() {
	case '*':
		lo, hi = 0, -1
		p.pos++
	case '+':
		lo, hi = 1, -1
		p.pos++
	case '?':
		lo, hi = 0, 1
		p.pos++
	case '{':
		l, h, end, ok := braces(p.src, p.pos)
		if !ok {
			if p.u {
				p.fail(start, "incomplete quantifier")
				return nil
			}
			return atom // a literal '{', read as the next term
		}
		if h >= 0 && l > h {
			p.fail(start, "numbers out of order in {} quantifier")
			return nil
		}
		lo, hi = l, h
		p.pos = end
	default:
		return atom
	}
	if !quantifiable {
		p.fail(start, "nothing to repeat")
		return nil
	}
	greedy := true
	if p.peek() == '?' {
		greedy = false
		p.pos++
	}
	return &node{kind: kRepeat, subs: []*node{atom}, min: lo, max: hi, greedy: greedy, pos: start}
}

func (p *parser) group() *node {
	start := p.pos
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		p.fail(start, "groups nested deeper than %d", maxDepth)
		return nil
	}
	n := &node{pos: start}
	switch {
	case p.at("(?:"):
		n.kind = kNonCap
		p.pos += 3
	case p.at("(?="), p.at("(?!"):
		n.kind, n.neg = kLook, p.src[p.pos+2] == '!'
		p.pos += 3
	case p.at("(?<="), p.at("(?<!"):
		n.kind, n.behind, n.neg = kLook, true, p.src[p.pos+3] == '!'
		p.pos += 4
	case p.at("(?<"):
		_, end, ok := groupName(p.src, p.pos+2)
		if !ok {
			p.fail(p.pos+2, "invalid capture group name")
			return nil
		}
		p.opened++
		n.kind, n.index = kGroup, p.opened
		p.pos = end
	case p.at("(?"):
		p.fail(start, "invalid group")
		return nil
	default:
		p.opened++
		n.kind, n.index = kGroup, p.opened
		p.pos++
	}
	n.subs = []*node{p.disjunction()}
	if p.err != nil {
		return nil
	}
	if p.peek() != ')' {
		p.fail(start, "unterminated group")
		return nil
	}
	p.pos++
	return n
}

// atomEscape reads an escape outside a class; p.pos is after the '\' at
// start.
func (p *parser) atomEscape(start int) *node {
	if p.pos >= len(p.src) {
		p.fail(start, `\ at end of pattern`)
		return nil
	}
	lit := func(r rune) *node { return &node{kind: kSet, set: single(r), pos: start} }
	switch c := p.peek(); {
	case c >= '1' && c <= '9':
		n, end := decimal(p.src, p.pos)
		if n <= p.ngroups {
			p.pos = end
			return &node{kind: kBackref, index: n, pos: start}
		}
		if p.u {
			p.fail(start, "invalid escape: there is no group %d", n)
			return nil
		}
		if c >= '8' { // Annex B: an identity escape
			p.pos++
			return lit(rune(c))
		}
		return lit(p.legacyOctal())
	case c == 'k' && (p.u || p.names != nil):
		name, end, ok := groupName(p.src, p.pos+1)
		idx, defined := p.names[name]
		if !ok || !defined {
			p.fail(start, "invalid named reference")
			return nil
		}
		p.pos = end
		return &node{kind: kBackref, index: idx, pos: start}
	}
	set, _ := p.charEscape(start, false)
	if p.err != nil {
		return nil
	}
	return &node{kind: kSet, set: set, pos: start}
}

// decimal reads the digits at s[i:].
func decimal(s string, i int) (n, end int) {
	for end = i; end < len(s) && s[end] >= '0' && s[end] <= '9'; end++ {
		n = min(n*10+int(s[end]-'0'), maxCount)
	}
	return n, end
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// legacyOctal reads Annex B's LegacyOctalEscapeSequence at p.pos, an octal
// digit: up to three digits, the value at most 0o377.
func (p *parser) legacyOctal() rune {
	d0 := p.src[p.pos]
	v := rune(d0 - '0')
	p.pos++
	if p.pos < len(p.src) && isOctal(p.src[p.pos]) {
		v = v*8 + rune(p.src[p.pos]-'0')
		p.pos++
		if d0 <= '3' && p.pos < len(p.src) && isOctal(p.src[p.pos]) {
			v = v*8 + rune(p.src[p.pos]-'0')
			p.pos++
		}
	}
	return v
}

func isSyntaxChar(c rune) bool { return c < utf8.RuneSelf && strings.ContainsRune(`^$\.*+?()[]{}|`, c) }

func hexVal(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10, true
	}
	return 0, false
}

// hexN reads exactly n hex digits at s[i:].
func hexN(s string, i, n int) (rune, bool) {
	if i+n > len(s) {
		return 0, false
	}
	var v rune
	for k := i; k < i+n; k++ {
		d, ok := hexVal(s[k])
		if !ok {
			return 0, false
		}
		v = v*16 + d
	}
	return v, true
}

func isLead(r rune) bool  { return r >= 0xD800 && r <= 0xDBFF }
func isTrail(r rune) bool { return r >= 0xDC00 && r <= 0xDFFF }

// unicodeEscape reads what follows `\u` at s[i:]: four hex digits, a
// surrogate pair of such escapes and, with braces, {CodePoint} (braces
// only when braced is set: with the u flag, and in group names).
func unicodeEscape(s string, i int, braced bool) (r rune, end int, ok bool) {
	if braced && i < len(s) && s[i] == '{' {
		var v rune
		j := i + 1
		for ; j < len(s) && s[j] != '}'; j++ {
			d, ok := hexVal(s[j])
			if !ok {
				return 0, 0, false
			}
			if v = v*16 + d; v > unicode.MaxRune {
				return 0, 0, false
			}
		}
		if j == i+1 || j >= len(s) {
			return 0, 0, false
		}
		return v, j + 1, true
	}
	v, ok := hexN(s, i, 4)
	if !ok {
		return 0, 0, false
	}
	end = i + 4
	if braced && isLead(v) && strings.HasPrefix(s[end:], `\u`) {
		if t, ok := hexN(s, end+2, 4); ok && isTrail(t) {
			return utf16Pair(v, t), end + 6, true
		}
	}
	return v, end, true
}

func utf16Pair(lead, trail rune) rune { return (lead-0xD800)<<10 + (trail - 0xDC00) + 0x10000 }

// charEscape reads the escapes atoms and classes share (p.pos after the
// '\' at start): class escapes (isClass) and character escapes.
func (p *parser) charEscape(start int, inClass bool) (set charSet, isClass bool) {
	c := p.next()
	switch c {
	case 'd':
		return digitSet, true
	case 'D':
		return negate(digitSet), true
	case 's':
		return spaceSet, true
	case 'S':
		return negate(spaceSet), true
	case 'w':
		return wordSet, true
	case 'W':
		return negate(wordSet), true
	case 'p', 'P':
		return p.propertyEscape(start, c)
	case 'f':
		return single('\f'), false
	case 'n':
		return single('\n'), false
	case 'r':
		return single('\r'), false
	case 't':
		return single('\t'), false
	case 'v':
		return single('\v'), false
	case 'c':
		return p.controlEscape(start), false
	case 'x':
		if v, ok := hexN(p.src, p.pos, 2); ok {
			p.pos += 2
			return single(v), false
		}
		if p.u {
			p.fail(start, "invalid hexadecimal escape")
			return nil, false
		}
		return single('x'), false
	case 'u':
		if v, end, ok := unicodeEscape(p.src, p.pos, p.u); ok {
			if !p.u && v >= 0xD800 && v <= 0xDFFF {
				p.refuse(start, "a surrogate escape in a pattern that is valid only without the u flag")
				return nil, false
			}
			p.pos = end
			return single(v), false
		}
		if p.u {
			p.fail(start, "invalid Unicode escape")
			return nil, false
		}
		return single('u'), false
	case '0':
		if d := p.peek(); d < '0' || d > '9' {
			return single(0), false
		}
		if p.u {
			p.fail(start, "invalid decimal escape")
			return nil, false
		}
		p.pos--
		return single(p.legacyOctal()), false
	}
	return p.identityEscape(start, c, inClass), false
}

// propertyEscape reads \p{...} or \P{...} (c is 'p' or 'P'): a property's
// class with the u flag, else the letter itself.
func (p *parser) propertyEscape(start int, c rune) (set charSet, isClass bool) {
	if !p.u {
		return single(c), false
	}
	end := strings.IndexByte(p.src[p.pos:], '}')
	if p.peek() != '{' || end < 0 {
		p.fail(start, "invalid property name")
		return nil, false
	}
	body := p.src[p.pos+1 : p.pos+end]
	set, err := property(body)
	if err != nil {
		var ue *unsupportedError
		if errors.As(err, &ue) {
			p.refuse(start, "%v", err)
		} else {
			p.fail(start, "invalid property name: %v", err)
		}
		return nil, false
	}
	p.pos += end + 1
	if c == 'P' {
		set = negate(set)
	}
	return set, true
}

// controlEscape reads \c (p.pos after the 'c'): a control letter's
// character, or without the u flag and a letter, the '\' itself.
func (p *parser) controlEscape(start int) charSet {
	if l := p.peek(); l >= 'a' && l <= 'z' || l >= 'A' && l <= 'Z' {
		p.pos++
		return single(rune(l) % 32)
	}
	if p.u {
		p.fail(start, `invalid control escape \c`)
		return nil
	}
	p.pos-- // Annex B: the '\' is itself; 'c' is read next
	return single('\\')
}

// identityEscape reads an escape of c that no other rule takes: with the
// u flag only a syntax character (or '/', or '-' in a class) escapes
// itself; without it, any character but a named reference's k does.
func (p *parser) identityEscape(start int, c rune, inClass bool) charSet {
	switch {
	case p.u && (isSyntaxChar(c) || c == '/' || inClass && c == '-'):
		return single(c)
	case p.u:
		p.fail(start, `invalid escape \%c`, c)
		return nil
	case c == 'k' && p.names != nil:
		p.fail(start, "invalid named reference")
		return nil
	}
	return single(c) // Annex B: an identity escape
}

func (p *parser) class() *node {
	start := p.pos
	p.pos++
	neg := false
	if p.peek() == '^' {
		neg = true
		p.pos++
	}
	var set charSet // members, merged at the end
	for {
		if !p.more() {
			p.fail(start, "unterminated character class")
			return nil
		}
		if p.peek() == ']' {
			p.pos++
			break
		}
		a, aClass := p.classAtom()
		if p.err != nil {
			return nil
		}
		if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			dash := p.pos
			p.pos++
			b, bClass := p.classAtom()
			if p.err != nil {
				return nil
			}
			if aClass || bClass {
				if p.u {
					p.fail(dash, "invalid character class range")
					return nil
				}
				set = append(append(append(set, a...), span{'-', '-'}), b...) // Annex B
				continue
			}
			if lo, hi := a[0].lo, b[0].lo; lo <= hi {
				set = append(set, span{lo, hi})
				continue
			}
			p.fail(dash, "range out of order in character class")
			return nil
		}
		set = append(set, a...)
	}
	set = union(set, nil)
	if neg {
		set = negate(set)
	}
	return &node{kind: kSet, set: set, pos: start}
}

// classAtom reads one member of a class: a code point, or a class escape
// (isClass) such as \d.
func (p *parser) classAtom() (set charSet, isClass bool) {
	start := p.pos
	if p.peek() != '\\' {
		return single(p.literal()), false
	}
	p.pos++
	if p.pos >= len(p.src) {
		p.fail(start, `\ at end of pattern`)
		return nil, false
	}
	switch c := p.peek(); {
	case c == 'b':
		p.pos++
		return single('\b'), false
	case c == 'c' && !p.u && p.pos+1 < len(p.src) && (p.src[p.pos+1] >= '0' && p.src[p.pos+1] <= '9' || p.src[p.pos+1] == '_'):
		// Annex B's ClassControlLetter also takes digits and '_'.
		p.pos += 2
		return single(rune(p.src[p.pos-1]) % 32), false
	case c >= '1' && c <= '9':
		if p.u {
			p.fail(start, "invalid class escape")
			return nil, false
		}
		if c >= '8' {
			p.pos++
			return single(rune(c)), false
		}
		return single(p.legacyOctal()), false
	}
	return p.charEscape(start, true)
}

// Identifier characters of group names (ECMA-262 RegExpIdentifierName):
// ID_Start and ID_Continue as UAX #31 defines them.
var (
	idExcluded = union(fromTable(unicode.Pattern_Syntax), fromTable(unicode.Pattern_White_Space))
	idStart    = minus(union(union(fromTable(unicode.L), fromTable(unicode.Nl)), fromTable(unicode.Other_ID_Start)), idExcluded)
	idContinue = minus(union(idStart, union(union(fromTable(unicode.Mn), fromTable(unicode.Mc)),
		union(union(fromTable(unicode.Nd), fromTable(unicode.Pc)), fromTable(unicode.Other_ID_Continue)))), idExcluded)
)

func minus(a, b charSet) charSet { return negate(union(negate(a), b)) }

// groupName reads <RegExpIdentifierName> at s[i] ('<') and returns the
// name with its escapes decoded, and the offset after '>'.
func groupName(s string, i int) (name string, end int, ok bool) {
	if i >= len(s) || s[i] != '<' {
		return "", 0, false
	}
	var b strings.Builder
	j := i + 1
	for j < len(s) && s[j] != '>' {
		var r rune
		if s[j] == '\\' {
			if j+1 >= len(s) || s[j+1] != 'u' {
				return "", 0, false
			}
			v, e, ok := unicodeEscape(s, j+2, true)
			if !ok {
				return "", 0, false
			}
			r, j = v, e
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(s[j:])
			j += size
		}
		first := b.Len() == 0
		switch {
		case r == '$' || r == '_':
		case first && idStart.contains(r):
		case !first && (idContinue.contains(r) || r == 0x200C || r == 0x200D):
		default:
			return "", 0, false
		}
		b.WriteRune(r)
	}
	if j >= len(s) || b.Len() == 0 {
		return "", 0, false
	}
	return b.String(), j + 1, true
}
