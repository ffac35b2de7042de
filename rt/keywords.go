package rt

import (
	"bytes"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/prickle-dev/prickle/internal/validation"
)

// The checks of the keywords, as generated validators call them. loc is
// the keyword's JSON pointer in the schema document, as a violation
// reports it; a check that finds the value wrong reports a violation at
// the value's pointer, and a check that reads no value (Required, after an
// object's members) reports at the value the check function read last.

// Types is a set of the types a "type" keyword lists.
type Types uint8

// The types of JSON Schema.
const (
	TypeNull Types = 1 << iota
	TypeBoolean
	TypeNumber
	TypeInteger
	TypeString
	TypeArray
	TypeObject
)

// typeNames are the types' names, in the order a message lists them.
var typeNames = [...]string{"null", "boolean", "number", "integer", "string", "array", "object"}

func (t Types) names() []string {
	var out []string
	for i, n := range typeNames {
		if t&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// has reports whether v is of one of the types; a number is an integer
// when its value is one (1.0 is).
func (t Types) has(v Value) bool {
	switch v.Kind {
	case KindNull:
		return t&TypeNull != 0
	case KindBool:
		return t&TypeBoolean != 0
	case KindNumber:
		return t&TypeNumber != 0 || t&TypeInteger != 0 && parseDecimal(stringUnsafe(v.text)).isInteger()
	case KindString:
		return t&TypeString != 0
	case KindArray:
		return t&TypeArray != 0
	case KindObject:
		return t&TypeObject != 0
	}
	return true // nothing was read: the document is unreadable
}

// Type reports whether v is of one of the types want; when it is not, it
// reports "type" and reads what is left of v.
func (c *Checker) Type(v Value, loc string, want Types) bool {
	if want.has(v) {
		return true
	}
	if c.report() {
		c.add("type", loc, validation.TypeMessage(kindName(jsontext.Kind(v.Kind)), want.names()))
	}
	c.Rest(v)
	return false
}

// Const reports whether v equals the one value of want; when it does not,
// it reports "const".
func (c *Checker) Const(v Value, loc string, want *Values) bool {
	if want.has(c, v) {
		return true
	}
	if c.report() {
		c.add("const", loc, validation.ConstMessage(want.want[0]))
	}
	c.Rest(v)
	return false
}

// Enum reports whether v is among want; when it is not, it reports
// "enum".
func (c *Checker) Enum(v Value, loc string, want *Values) bool {
	if want.has(c, v) {
		return true
	}
	if c.report() {
		c.add("enum", loc, validation.EnumMessage(want.want))
	}
	c.Rest(v)
	return false
}

// Format reports whether v, when a string, is of the format (any other
// value is); when it is not, it reports "format". A format the validators
// do not assert (validation.Format) accepts every string.
func (c *Checker) Format(v Value, loc, format string) bool {
	check := validation.Format(format)
	if v.Kind != KindString || check == nil {
		return true
	}
	err := check(stringUnsafe(v.text))
	if err == nil {
		return true
	}
	if c.report() {
		c.add("format", loc, validation.FormatMessage(string(v.text), format, err))
	}
	return false
}

// MinLength checks that the string v has at least n characters (code
// points).
func (c *Checker) MinLength(v Value, loc string, n int) {
	if got := utf8.RuneCount(v.text); got < n && c.report() {
		c.add("minLength", loc, validation.MinLengthMessage(got, n))
	}
}

// MaxLength checks that the string v has at most n characters.
func (c *Checker) MaxLength(v Value, loc string, n int) {
	if got := utf8.RuneCount(v.text); got > n && c.report() {
		c.add("maxLength", loc, validation.MaxLengthMessage(got, n))
	}
}

// Pattern checks that the string v matches p somewhere (patterns are not
// anchored). A match that did not finish stops the validation with an
// error: the value is neither valid nor invalid.
func (c *Checker) Pattern(v Value, loc string, p *Pattern) {
	ok, err := p.match(v.text)
	switch {
	case err != nil:
		c.stop(err)
	case !ok && c.report():
		c.add("pattern", loc, validation.PatternMessage(string(v.text), p.src))
	}
}

// bound compares the number v with the literal bound exactly.
func bound(v Value, lit string) (cmp int, got, want decimal) {
	got, want = parseDecimal(stringUnsafe(v.text)), parseDecimal(lit)
	return cmpDecimal(got, want), got, want
}

// Minimum checks that the number v is at least the literal min.
func (c *Checker) Minimum(v Value, loc, min string) {
	if cmp, got, want := bound(v, min); cmp < 0 && c.report() {
		c.add("minimum", loc, validation.MinimumMessage(got.rat(), want.rat()))
	}
}

// Maximum checks that the number v is at most max.
func (c *Checker) Maximum(v Value, loc, max string) {
	if cmp, got, want := bound(v, max); cmp > 0 && c.report() {
		c.add("maximum", loc, validation.MaximumMessage(got.rat(), want.rat()))
	}
}

// ExclusiveMinimum checks that the number v is more than min.
func (c *Checker) ExclusiveMinimum(v Value, loc, min string) {
	if cmp, got, want := bound(v, min); cmp <= 0 && c.report() {
		c.add("exclusiveMinimum", loc, validation.ExclusiveMinimumMessage(got.rat(), want.rat()))
	}
}

// ExclusiveMaximum checks that the number v is less than max.
func (c *Checker) ExclusiveMaximum(v Value, loc, max string) {
	if cmp, got, want := bound(v, max); cmp >= 0 && c.report() {
		c.add("exclusiveMaximum", loc, validation.ExclusiveMaximumMessage(got.rat(), want.rat()))
	}
}

// MultipleOf checks that the number v is an integer multiple of the
// literal m (more than 0).
func (c *Checker) MultipleOf(v Value, loc, m string) {
	got, want := parseDecimal(stringUnsafe(v.text)), parseDecimal(m)
	if !isMultiple(got, want) && c.report() {
		c.add("multipleOf", loc, validation.MultipleOfMessage(got.rat(), want.rat()))
	}
}

// MinItems checks that an array of n items has at least min, after its
// items.
func (c *Checker) MinItems(loc string, n, min int) {
	if n < min && c.report() {
		c.add("minItems", loc, validation.MinItemsMessage(n, min))
	}
}

// MaxItems checks that an array of n items has at most max.
func (c *Checker) MaxItems(loc string, n, max int) {
	if n > max && c.report() {
		c.add("maxItems", loc, validation.MaxItemsMessage(n, max))
	}
}

// MinProperties checks that an object of n members has at least min,
// after its members.
func (c *Checker) MinProperties(loc string, n, min int) {
	if n < min && c.report() {
		c.add("minProperties", loc, validation.MinPropertiesMessage(n, min))
	}
}

// MaxProperties checks that an object of n members has at most max.
func (c *Checker) MaxProperties(loc string, n, max int) {
	if n > max && c.report() {
		c.add("maxProperties", loc, validation.MaxPropertiesMessage(n, max))
	}
}

// Required reports the required properties an object lacks, after its
// members; none is no violation.
func (c *Checker) Required(loc string, missing []string) {
	if len(missing) > 0 && c.report() {
		c.add("required", loc, validation.RequiredMessage(missing))
	}
}

// DependentRequired reports the properties an object lacks that prop,
// which it has, requires. The violation's keyword is prop, as the
// library's is.
func (c *Checker) DependentRequired(loc, prop string, missing []string) {
	if len(missing) > 0 && c.report() {
		c.add(prop, loc, validation.DependentRequiredMessage(prop, missing))
	}
}

// AdditionalProperties reports the members of an object that
// "additionalProperties": false refuses, after its members.
func (c *Checker) AdditionalProperties(loc string, names []string) {
	if len(names) > 0 && c.report() {
		c.add("additionalProperties", loc, validation.AdditionalPropertiesMessage(names))
	}
}

// False reads a value the schema false refuses, and reports it (its
// keyword empty; loc is the schema's pointer).
func (c *Checker) False(loc string) {
	c.Skip()
	if c.report() {
		c.add("", loc, validation.FalseMessage())
	}
}

// Match reports whether the name the object's last member has matches p
// (patternProperties). A match that did not finish stops the validation.
func (c *Checker) Match(name []byte, p *Pattern) bool {
	ok, err := p.match(name)
	if err != nil {
		c.stop(err)
	}
	return ok
}

// PropertyName checks the name of the member Member read last, as a JSON
// string, with check (propertyNames); what it finds is reported at the
// object.
func (c *Checker) PropertyName(check func(*Checker)) {
	q, err := jsontext.AppendQuote(c.quoted[:0], c.nameText)
	if err != nil { // the decoder has checked the name
		panic(err)
	}
	c.quoted = q
	s := c.sub(q, false)
	s.up = true
	check(s)
	if s.failed {
		c.failed = true
	}
	c.release(s)
}

// AllOf checks raw, a value read whole, against every schema.
func (c *Checker) AllOf(raw []byte, all ...func(*Checker)) {
	for _, check := range all {
		c.Check(raw, check)
	}
}

// AnyOf checks that raw passes one of the alternatives; when it passes
// none, every alternative's violations are reported.
func (c *Checker) AnyOf(raw []byte, alts ...func(*Checker)) {
	for _, check := range alts {
		if c.Matches(raw, check) {
			return
		}
	}
	c.every(raw, alts)
}

// OneOf checks that raw passes exactly one of the alternatives: none, and
// every alternative's violations are reported; two, and "oneOf" names the
// first two (loc is the keyword's pointer).
func (c *Checker) OneOf(raw []byte, loc string, alts ...func(*Checker)) {
	first := -1
	for i, check := range alts {
		if !c.Matches(raw, check) {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		if c.report() {
			c.add("oneOf", loc, validation.OneOfMessage(first, i))
		}
		return
	}
	if first < 0 {
		c.every(raw, alts)
	}
}

// every reports the violations of every alternative raw fails.
func (c *Checker) every(raw []byte, alts []func(*Checker)) {
	if !c.report() {
		return
	}
	for _, check := range alts {
		c.Check(raw, check)
	}
}

// Not checks that raw fails check; loc is the schema's pointer (the
// violation's keyword is empty, as the library's is).
func (c *Checker) Not(raw []byte, loc string, check func(*Checker)) {
	if c.Matches(raw, check) && c.report() {
		c.add("", loc, validation.NotMessage())
	}
}

// If checks raw against then when it passes cond, else against els;
// then and els may be nil.
func (c *Checker) If(raw []byte, cond, then, els func(*Checker)) {
	next := els
	if c.Matches(raw, cond) {
		next = then
	}
	if next != nil {
		c.Check(raw, next)
	}
}

// UniqueItems checks that no two items of the array raw are equal; loc is
// the keyword's pointer.
func (c *Checker) UniqueItems(raw []byte, loc string) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.ReadToken(); err != nil {
		return
	}
	seen := map[string]int{}
	for i := 0; dec.PeekKind() != ']'; i++ {
		item, err := dec.ReadValue()
		if err != nil {
			return
		}
		key := string(canonical(nil, item))
		if j, ok := seen[key]; ok {
			if c.report() {
				c.add("uniqueItems", loc, validation.UniqueItemsMessage(j, i))
			}
			return
		}
		seen[key] = i
	}
}

// Contains checks that the items of the array raw that pass check number
// at least min (1 when min < 0, which is no minContains) and at most max
// (none when max < 0); loc is the array schema's pointer.
func (c *Checker) Contains(raw []byte, loc string, check func(*Checker), min, max int) {
	var matched []int
	n := 0
	c.eachItem(raw, true, func(s *Checker, item []byte) {
		if s.Matches(item, check) {
			matched = append(matched, n)
		}
		n++
	})
	few := min >= 0 && len(matched) < min || min < 0 && len(matched) == 0
	if few && c.report() {
		switch {
		case len(matched) < n: // the items that fail say why
			i := 0
			c.eachItem(raw, false, func(s *Checker, item []byte) {
				if len(matched) == 0 || matched[0] != i {
					s.Check(item, check)
				} else {
					matched = matched[1:]
				}
				i++
			})
		case min >= 0:
			c.add("minContains", loc+"/minContains", validation.MinContainsMessage(matched, min))
		default:
			c.add("contains", loc+"/contains", validation.ContainsMessage())
		}
		return
	}
	if max >= 0 && len(matched) > max && c.report() {
		c.add("maxContains", loc+"/maxContains", validation.MaxContainsMessage(matched, max))
	}
}

// eachItem calls fn with each item of the array raw, read by a checker of
// raw.
func (c *Checker) eachItem(raw []byte, quiet bool, fn func(s *Checker, item []byte)) {
	s := c.sub(raw, quiet)
	defer c.release(s)
	if s.Read().Kind != KindArray {
		return
	}
	for s.Item() {
		fn(s, s.Raw())
	}
	if s.failed {
		c.failed = true
	}
}

// Any is the check of a schema every value passes.
func Any(c *Checker) { c.Skip() }

// Each gathers the schemas that apply to one member's value: its
// property's, those of the patterns its name matches, or
// additionalProperties.
type Each struct {
	first [4]func(*Checker)
	n     int
	more  []func(*Checker)
}

// Add adds the check of one schema.
func (e *Each) Add(check func(*Checker)) {
	if e.n < len(e.first) {
		e.first[e.n] = check
	} else {
		e.more = append(e.more, check)
	}
	e.n++
}

// None reports whether no schema applies.
func (e *Each) None() bool { return e.n == 0 }

// CheckEach checks the next value against every schema of e (none: it is
// read and passes).
func (c *Checker) CheckEach(e *Each) {
	switch e.n {
	case 0:
		c.Skip()
		return
	case 1:
		e.first[0](c)
		return
	}
	raw := c.Raw()
	for i := 0; i < e.n; i++ {
		if i < len(e.first) {
			c.Check(raw, e.first[i])
		} else {
			c.Check(raw, e.more[i-len(e.first)])
		}
	}
}

// Has reports whether the object raw, read whole, has a member name.
func (c *Checker) Has(raw []byte, name string) bool {
	s := c.sub(raw, true)
	defer c.release(s)
	if s.Read().Kind != KindObject {
		return false
	}
	found := false
	for s.Member() {
		found = found || string(s.Name()) == name
		s.Skip()
	}
	return found
}
