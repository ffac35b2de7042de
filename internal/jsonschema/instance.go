package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/regexlang"
)

// InstanceError says where Instance could not make a valid value.
type InstanceError struct {
	Ptr    string // the schema's pointer
	Reason string
}

func (e *InstanceError) Error() string {
	return fmt.Sprintf("no instance at %s: %s", jsonpointer.Show(e.Ptr), e.Reason)
}

// formatSamples are values of the formats the validators assert.
var formatSamples = map[string]string{
	"date-time":     "2026-01-15T09:30:00Z",
	"date":          "2026-01-15",
	"time":          "09:30:00Z",
	"duration":      "P1D",
	"email":         "user@example.com",
	"idn-email":     "user@example.com",
	"hostname":      "example.com",
	"idn-hostname":  "example.com",
	"ipv4":          "192.0.2.1",
	"ipv6":          "2001:db8::1",
	"uri":           "https://example.com/",
	"uri-reference": "https://example.com/",
	"iri":           "https://example.com/",
	"iri-reference": "https://example.com/",
	"uuid":          "00000000-0000-4000-8000-000000000000",
	"json-pointer":  "/a",
	"regex":         "^a$",
}

// Instance returns a small value that is valid against s: objects
// (map[string]any) with every property the schema names, arrays with one
// item (or as many as minItems asks), strings that match the pattern and
// the format within the length bounds (a pattern's sample comes from its
// automaton, see regexlang.Sample), numbers within the bounds (as
// json.Number), the first value of an enum, the const. It reads the
// keywords the model knows; what it cannot satisfy (the schema false, a
// pattern beyond RE2 that no sample matches, an allOf of several shapes)
// is an *InstanceError. Interactions it does not see (not, if/then/else,
// uniqueItems across generated items) are the caller's to check: validate
// the result when it matters.
func (s *Schema) Instance() (any, error) { return s.instance(0) }

func (s *Schema) instance(depth int) (any, error) {
	fail := func(format string, args ...any) (any, error) {
		return nil, &InstanceError{Ptr: s.ptr, Reason: fmt.Sprintf(format, args...)}
	}
	if depth > maxRefDepth {
		return fail("nested too deep (a recursive schema?)")
	}
	if v, ok := s.Bool(); ok {
		if !v {
			return fail("the schema false admits no value")
		}
		return nil, nil
	}
	if s.Invalid() {
		return fail("not a schema")
	}
	if s.Ref() != "" {
		r := s.Resolved()
		if r == s {
			return fail("reference %q cannot be followed", s.Ref())
		}
		return r.instance(depth + 1)
	}
	if k := s.Get("const"); k != nil {
		return k.Decode(), nil
	}
	if k := s.Get("enum"); k != nil {
		vals, _ := k.Elements()
		for _, v := range vals {
			if string(v) != "null" {
				return decodeRaw(v), nil
			}
		}
		if len(vals) > 0 {
			return nil, nil
		}
		return fail("an empty enum")
	}
	if u, ok := s.Union(); ok {
		var errs []error
		for _, v := range append(u.Shaped, u.Narrowing...) {
			inst, err := v.instance(depth + 1)
			if err == nil {
				return s.withOwn(inst, depth)
			}
			errs = append(errs, err)
		}
		if u.Null {
			return nil, nil
		}
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
	}
	if all := s.List("allOf"); len(all) > 0 {
		var shaped []*Schema
		for _, a := range all {
			if !a.ConstraintOnly() {
				shaped = append(shaped, a)
			}
		}
		if len(shaped) > 1 {
			return fail("allOf of several shapes")
		}
		if len(shaped) == 1 && otherShapeThan(s, "allOf") == "" {
			return shaped[0].instance(depth + 1)
		}
	}
	return s.typed(depth)
}

// withOwn returns a union variant's instance, adding the properties the
// schema itself names around the union (an object with a oneOf of
// required sets, say).
func (s *Schema) withOwn(inst any, depth int) (any, error) {
	obj, ok := inst.(map[string]any)
	if !ok || len(s.Properties()) == 0 {
		return inst, nil
	}
	own, err := s.typed(depth)
	if err != nil {
		return inst, nil
	}
	if o, ok := own.(map[string]any); ok {
		for k, v := range o {
			if _, has := obj[k]; !has {
				obj[k] = v
			}
		}
	}
	return obj, nil
}

func otherShapeThan(s *Schema, except string) string {
	for _, k := range s.kws {
		if k.Name != except && Info(k.Name).Shape {
			return k.Name
		}
	}
	return ""
}

// typed makes a value of the schema's type, or of the type its keywords
// imply.
func (s *Schema) typed(depth int) (any, error) {
	types, null := s.NonNullTypes()
	if len(types) == 0 {
		switch {
		case s.HasAny("properties", "additionalProperties", "patternProperties", "required", "minProperties"):
			types = []string{"object"}
		case s.HasAny("items", "prefixItems", "minItems", "contains"):
			types = []string{"array"}
		case s.HasAny("minLength", "maxLength", "pattern", "format"):
			types = []string{"string"}
		case s.HasAny("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
			types = []string{"number"}
		case null:
			return nil, nil
		default:
			return "example", nil // any JSON value is valid
		}
	}
	switch types[0] {
	case "object":
		return s.object(depth)
	case "array":
		return s.array(depth)
	case "string":
		return s.str()
	case "integer":
		return s.number(true)
	case "number":
		return s.number(false)
	case "boolean":
		return true, nil
	}
	return nil, &InstanceError{Ptr: s.ptr, Reason: fmt.Sprintf("unknown type %q", types[0])}
}

func (s *Schema) object(depth int) (any, error) {
	obj := map[string]any{}
	req := map[string]bool{}
	for _, r := range s.Required() {
		req[r] = true
	}
	limit := -1
	if n, ok := s.intKeyword("maxProperties"); ok {
		limit = n
	}
	// Required properties first, then the others as far as maxProperties
	// allows: each generated property exercises the code that reads it.
	for _, pass := range []bool{true, false} {
		for _, p := range s.Properties() {
			if req[p.Name] != pass || (limit >= 0 && len(obj) >= limit) {
				continue
			}
			v, err := p.Schema.instance(depth + 1)
			if err != nil {
				if pass {
					return nil, err
				}
				continue // an optional property may stay out
			}
			obj[p.Name] = v
		}
	}
	for name := range req {
		if _, ok := obj[name]; !ok {
			v, err := s.unnamed(name, depth)
			if err != nil {
				return nil, err
			}
			obj[name] = v
		}
	}
	if n, ok := s.intKeyword("minProperties"); ok && len(obj) < n {
		if err := s.moreProperties(obj, n, depth); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// unnamed returns a value for property name, which properties does not
// name (see ValueSchema).
func (s *Schema) unnamed(name string, depth int) (any, error) {
	v, _ := s.ValueSchema(name)
	if v == nil {
		return nil, &InstanceError{Ptr: s.ptr, Reason: fmt.Sprintf("property %q is not among the properties it allows", name)}
	}
	return v.instance(depth + 1)
}

// maxExtraTries bounds the names tried for the properties minProperties
// asks beyond the named ones.
const maxExtraTries = 64

// AddProperties adds properties to obj, a value of object schema s, until
// it has n, each valid where it lands: the properties s names that obj
// lacks, in the order of their names, each a Minimal value; then names
// that a patternProperties pattern accepts (its shortest ones), then names
// for additionalProperties. It fails with an *InstanceError when s allows
// no more.
func (s *Schema) AddProperties(obj map[string]any, n int) error {
	named := s.Properties()
	slices.SortFunc(named, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range named {
		if len(obj) >= n {
			return nil
		}
		if _, has := obj[p.Name]; !has && p.Schema.IsObject() {
			if v, err := p.Schema.Minimal(); err == nil {
				obj[p.Name] = v
			}
		}
	}
	if len(obj) >= n {
		return nil
	}
	return s.moreProperties(obj, n, 0)
}

func (s *Schema) moreProperties(obj map[string]any, n, depth int) error {
	free := func(name string) bool {
		_, has := obj[name]
		return !has && s.Property(name) == nil
	}
	for _, pp := range s.Members("patternProperties") {
		for lo, tries := 1, 0; len(obj) < n && tries < maxExtraTries; lo, tries = lo+1, tries+1 {
			name, err := regexlang.Sample(pp.Name, lo, -1)
			if err != nil {
				break
			}
			lo = utf8.RuneCountInString(name)
			if !free(name) {
				continue
			}
			v, err := s.unnamed(name, depth)
			if err != nil {
				break // this pattern's properties admit no value
			}
			obj[name] = v
		}
	}
	for i := 1; len(obj) < n && i <= n+maxExtraTries; i++ {
		name := fmt.Sprintf("key%d", i)
		if !free(name) {
			continue
		}
		v, err := s.unnamed(name, depth)
		if err != nil {
			var ie *InstanceError
			if errors.As(err, &ie) && ie.Ptr == s.ptr {
				break // additionalProperties forbids it
			}
			return err
		}
		obj[name] = v
	}
	if len(obj) < n {
		return &InstanceError{Ptr: s.ptr, Reason: "minProperties beyond the properties it allows"}
	}
	return nil
}

func (s *Schema) array(depth int) (any, error) {
	arr := []any{}
	for _, p := range s.List("prefixItems") {
		v, err := p.instance(depth + 1)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
	want := max(len(arr), 1)
	if n, ok := s.intKeyword("minItems"); ok {
		want = max(len(arr), n)
	}
	if n, ok := s.intKeyword("maxItems"); ok {
		want = min(want, n)
	}
	if b := s.Get("uniqueItems"); b != nil && string(b.Value) == "true" && want > max(len(arr), 1) {
		return nil, &InstanceError{Ptr: s.ptr, Reason: "several unique items"}
	}
	items := s.Applied("items")
	for len(arr) < want {
		if items == nil {
			arr = append(arr, "example")
			continue
		}
		v, err := items.instance(depth + 1)
		if err != nil {
			if len(arr) == 0 && !s.Has("minItems") {
				return arr, nil // an empty array is valid
			}
			return nil, err
		}
		arr = append(arr, v)
	}
	return arr, nil
}

func (s *Schema) str() (any, error) {
	lo, hasLo := s.intKeyword("minLength")
	hi, hasHi := s.intKeyword("maxLength")
	if !hasHi {
		hi = -1
	}
	fits, matches := s.FitsLength, s.MatchesPattern
	pattern, hasPattern := s.String("pattern")
	if f, ok := s.String("format"); ok {
		if v, known := formatSamples[f]; known && fits(v) && matches(v) {
			return v, nil
		}
	}
	if hasPattern {
		v, err := regexlang.Sample(pattern, lo, hi)
		if err == nil {
			return v, nil
		}
		// A pattern beyond RE2: try a few readable strings, of the shapes
		// ids take (a word, words joined by a hyphen or a slash).
		for _, c := range []string{"example", "example-id", "a", "x1", "example-v2", "example/example", "A", "0"} {
			for !fits(c) && (hi < 0 || utf8.RuneCountInString(c) < hi) && utf8.RuneCountInString(c) < lo {
				c += "a"
			}
			if fits(c) && matches(c) {
				return c, nil
			}
		}
		return nil, &InstanceError{Ptr: s.KeywordPointer("pattern"), Reason: err.Error()}
	}
	v := "example"
	if hasLo && utf8.RuneCountInString(v) < lo {
		v += strings.Repeat("a", lo-utf8.RuneCountInString(v))
	}
	if hi >= 0 && utf8.RuneCountInString(v) > hi {
		v = string([]rune(v)[:hi])
	}
	if !fits(v) {
		return nil, &InstanceError{Ptr: s.ptr, Reason: "minLength above maxLength"}
	}
	return v, nil
}

// number picks the smallest value at or above the lower bound (1 when
// there is none below it), a multiple of multipleOf, under the upper
// bound.
func (s *Schema) number(integer bool) (any, error) {
	lo, hasLo := s.rat("minimum")
	if x, ok := s.rat("exclusiveMinimum"); ok && (!hasLo || x.Cmp(lo) >= 0) {
		lo, hasLo = new(big.Rat).Add(x, smallStep(integer)), true
	}
	hi, hasHi := s.rat("maximum")
	if x, ok := s.rat("exclusiveMaximum"); ok && (!hasHi || x.Cmp(hi) <= 0) {
		hi, hasHi = new(big.Rat).Sub(x, smallStep(integer)), true
	}
	v := big.NewRat(1, 1)
	switch {
	case hasLo && (v.Cmp(lo) < 0 || hasHi && hi.Cmp(v) < 0):
		v = lo
	case hasHi && hi.Cmp(v) < 0:
		v = hi
	}
	if integer && !v.IsInt() {
		v = new(big.Rat).SetInt(ceil(v))
	}
	if m, ok := s.rat("multipleOf"); ok && m.Sign() > 0 {
		q := new(big.Rat).Quo(v, m)
		v = new(big.Rat).Mul(new(big.Rat).SetInt(ceil(q)), m)
	}
	if hasHi && v.Cmp(hi) > 0 || hasLo && v.Cmp(lo) < 0 || integer && !v.IsInt() {
		return nil, &InstanceError{Ptr: s.ptr, Reason: "no number within the bounds"}
	}
	if v.IsInt() {
		return json.Number(v.Num().String()), nil
	}
	return json.Number(CanonicalNumber(v.FloatString(20))), nil
}

func smallStep(integer bool) *big.Rat {
	if integer {
		return big.NewRat(1, 1)
	}
	return big.NewRat(1, 1000)
}

func ceil(r *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

func (s *Schema) rat(name string) (*big.Rat, bool) {
	if k := s.Get(name); k != nil {
		return k.Number()
	}
	return nil, false
}

func (s *Schema) intKeyword(name string) (int, bool) {
	r, ok := s.rat(name)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return int(r.Num().Int64()), true
}

func decodeRaw(raw []byte) any {
	v, _ := DecodeValue(raw)
	return v
}

// Minimal returns the smallest value valid against s: an object with its
// required properties only, each Minimal; an array with as many items as
// minItems asks, all one Minimal item; any other value as Instance makes
// it (a const, an enum, a union, a string, a number). An object whose
// minProperties its required properties do not reach is Instance's.
func (s *Schema) Minimal() (any, error) {
	fail := func(format string, args ...any) (any, error) {
		return nil, &InstanceError{Ptr: s.ptr, Reason: fmt.Sprintf(format, args...)}
	}
	types := s.Types()
	if s.HasAny("const", "enum") || len(types) == 0 || types[0] != "array" && types[0] != "object" {
		return s.Instance()
	}
	if types[0] == "array" {
		arr := []any{}
		lo, ok := s.float("minItems")
		if !ok || lo < 1 {
			return arr, nil
		}
		items := s.Sub("items")
		if items == nil {
			return fail("minItems without items")
		}
		v, err := items.Minimal()
		if err != nil {
			return nil, err
		}
		if s.Has("uniqueItems") && lo > 1 {
			return fail("several unique items")
		}
		for len(arr) < int(lo) {
			arr = append(arr, v)
		}
		return arr, nil
	}
	obj := map[string]any{}
	required := slices.Clone(s.Required())
	slices.Sort(required)
	for _, r := range required {
		p := s.Property(r)
		if p == nil || !p.IsObject() {
			return fail("required property %q is not among the properties", r)
		}
		v, err := p.Minimal()
		if err != nil {
			return nil, err
		}
		obj[r] = v
	}
	if lo, ok := s.float("minProperties"); ok && len(obj) < int(lo) {
		return s.Instance()
	}
	return obj, nil
}

// DistinctItems grows arr, an array of items of schema s, to n items, each
// valid against s and none equal to another, for enumerated, string and
// integer items. It reports whether it could.
func (s *Schema) DistinctItems(arr []any, n int) ([]any, bool) {
	if s == nil || n > 10000 {
		return nil, false
	}
	key := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	seen := map[string]bool{}
	for _, v := range arr {
		seen[key(v)] = true
	}
	add := func(v any) {
		if k := key(v); !seen[k] && len(arr) < n {
			seen[k] = true
			arr = append(arr, v)
		}
	}
	if k := s.Get("enum"); k != nil {
		enum, _ := k.Decode().([]any)
		for _, e := range enum {
			add(e)
		}
		return arr, len(arr) == n
	}
	types := s.Types()
	switch {
	case slices.Contains(types, "string"):
		base, _ := s.Minimal()
		b, _ := base.(string)
		for i := 0; len(arr) < n && i < 4*n+100; i++ {
			for _, v := range []string{b + strconv.Itoa(i), strconv.Itoa(i), b + string(rune('a'+i%26)) + strconv.Itoa(i/26)} {
				if s.MatchesPattern(v) && s.FitsLength(v) {
					add(v)
				}
			}
		}
	case slices.Contains(types, "integer"):
		lo, _ := s.float("minimum") // 0 when there is none
		hi, hasHi := s.float("maximum")
		for i := 0; len(arr) < n && (!hasHi || lo+float64(i) <= hi); i++ {
			add(json.Number(fmt.Sprint(math.Round(lo + float64(i)))))
		}
	}
	return arr, len(arr) == n
}

// MatchPattern matches v against s's pattern (true without one). decided
// is false when the pattern does not compile or the match did not finish
// in time: v then proves nothing either way.
func (s *Schema) MatchPattern(v string) (ok, decided bool) {
	p, has := s.String("pattern")
	if !has {
		return true, true
	}
	re, err := ecmaregex.Compile(p)
	if err != nil {
		return false, false
	}
	m, err := re.MatchString(v)
	return m, err == nil
}

// MatchesPattern reports whether v is known to match s's pattern.
func (s *Schema) MatchesPattern(v string) bool {
	ok, decided := s.MatchPattern(v)
	return ok && decided
}

// FitsLength reports whether v, counted in characters, is within s's
// minLength and maxLength.
func (s *Schema) FitsLength(v string) bool {
	n := float64(utf8.RuneCountInString(v))
	if lo, ok := s.float("minLength"); ok && n < lo {
		return false
	}
	if hi, ok := s.float("maxLength"); ok && n > hi {
		return false
	}
	return true
}

// float returns keyword name of s as a float64.
func (s *Schema) float(name string) (float64, bool) {
	r, ok := s.rat(name)
	if !ok {
		return 0, false
	}
	f, _ := r.Float64()
	return f, true
}
