package jsonschema

import (
	"encoding/json"
	"slices"
	"strconv"
)

// maxRefDepth bounds how many references are followed in a row: a cycle of
// references that never reaches a schema is not followed for ever.
const maxRefDepth = 32

// TypeSet returns the "type" keyword as a set, and whether it is present
// and well formed.
func (s *Schema) TypeSet() ([]string, bool) {
	k := s.Get("type")
	if k == nil {
		return nil, false
	}
	if t, ok := k.String(); ok {
		return []string{t}, true
	}
	return k.Strings()
}

// OnlyNull reports a schema that admits null and nothing else: its type
// is "null", or its const is null, or its enum is [null], and no
// applicator or reference narrows it further.
func (s *Schema) OnlyNull() bool {
	if !s.IsObject() {
		return false
	}
	for _, k := range s.kws {
		if c := Info(k.Name).Class; c == Applicator || c == Reference {
			return false
		}
	}
	if ts, ok := s.TypeSet(); ok && len(ts) == 1 && ts[0] == "null" {
		return true
	}
	if k := s.Get("const"); k != nil && string(k.Value) == "null" {
		return true
	}
	if k := s.Get("enum"); k != nil {
		vals, _ := k.Elements()
		return len(vals) == 1 && string(vals[0]) == "null"
	}
	return false
}

// ConstraintOnly reports a schema none of whose keywords decides a shape
// (see KeywordInfo.Shape): it only narrows or informs.
func (s *Schema) ConstraintOnly() bool {
	if _, ok := s.Bool(); ok {
		return false
	}
	for _, k := range s.kws {
		if Info(k.Name).Shape {
			return false
		}
	}
	return true
}

// AcceptsNull reports whether null is valid against s as far as its type,
// enum, const, references and applicators decide: a oneOf is taken to
// accept null when one of its variants does.
func (s *Schema) AcceptsNull() bool { return s.acceptsNull(0) }

func (s *Schema) acceptsNull(depth int) bool {
	if depth > maxRefDepth {
		return true
	}
	if v, ok := s.Bool(); ok {
		return v
	}
	if s.Invalid() {
		return false
	}
	ok := true
	if set, has := s.TypeSet(); has {
		ok = slices.Contains(set, "null")
	}
	if k := s.Get("enum"); k != nil {
		if vals, isArr := k.Elements(); isArr {
			ok = ok && slices.ContainsFunc(vals, func(v json.RawMessage) bool { return Canonical(v) == "null" })
		}
	}
	if k := s.Get("const"); k != nil {
		ok = ok && Canonical(k.Value) == "null"
	}
	if ref := s.Ref(); ref != "" {
		if t, err := s.doc.Resolve(ref); err == nil {
			ok = ok && t.acceptsNull(depth+1)
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if s.union != kw && !s.Has(kw) {
			continue
		}
		some := false
		for _, v := range s.Variants(kw) {
			some = some || v.acceptsNull(depth+1)
		}
		ok = ok && some
	}
	for _, v := range s.List("allOf") {
		ok = ok && v.acceptsNull(depth+1)
	}
	return ok
}

// NullSite returns the pointer of what makes s accept null: the "null" in
// its type, or the variant that admits it; s's own pointer otherwise.
func (s *Schema) NullSite() string {
	if set, has := s.TypeSet(); has {
		if i := slices.Index(set, "null"); i >= 0 {
			k := s.Get("type")
			if _, one := k.String(); one {
				return k.Ptr
			}
			return k.Ptr + "/" + strconv.Itoa(i)
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if s.union != kw && !s.Has(kw) {
			continue
		}
		for _, v := range s.Variants(kw) {
			if v.AcceptsNull() {
				return v.ptr
			}
		}
	}
	return s.ptr
}

// Union is a schema's anyOf or oneOf, its variants sorted by what they do.
type Union struct {
	// Keyword is "anyOf" or "oneOf".
	Keyword string
	// Shaped are the variants that decide a shape, in order.
	Shaped []*Schema
	// Null is set when a variant admits only null (OnlyNull).
	Null bool
	// Narrowing are the variants that only narrow (ConstraintOnly), such as
	// "one of these two properties is required".
	Narrowing []*Schema
}

// Union returns s's anyOf (or else its oneOf), its variants sorted.
func (s *Schema) Union() (Union, bool) {
	for _, kw := range []string{"anyOf", "oneOf"} {
		if !s.Has(kw) && s.union != kw {
			continue
		}
		u := Union{Keyword: kw}
		for _, v := range s.Variants(kw) {
			switch {
			case v.OnlyNull():
				u.Null = true
			case v.ConstraintOnly():
				u.Narrowing = append(u.Narrowing, v)
			default:
				u.Shaped = append(u.Shaped, v)
			}
		}
		return u, true
	}
	return Union{}, false
}

// UnionKeyword names s's union keyword: "anyOf", "oneOf", "" for none, or
// "both".
func (s *Schema) UnionKeyword() string {
	if s.union != "" {
		return s.union
	}
	a, o := s.Has("anyOf"), s.Has("oneOf")
	switch {
	case a && o:
		return "both"
	case a:
		return "anyOf"
	case o:
		return "oneOf"
	}
	return ""
}

// Variants returns the variants of the union keyword kw (of a lifted view:
// the one variant Lift made).
func (s *Schema) Variants(kw string) []*Schema {
	if s.union == kw {
		return s.variants
	}
	return s.List(kw)
}

// Lift returns s as a union (kw is "anyOf" or "oneOf") of one variant that
// holds s's assertions and applicators, while its meta keywords and
// annotations stay on the outer schema. A schema without a union then
// compares with a version that has one: typically {"type": "string"}
// against anyOf [string, null].
func (s *Schema) Lift(kw string) *Schema {
	variant := &Schema{doc: s.doc, ptr: s.ptr, raw: s.raw, shape: s.shape}
	out := &Schema{doc: s.doc, ptr: s.ptr, raw: s.raw, shape: s.shape, ref: s.ref, union: kw}
	for _, k := range s.kws {
		if c := Info(k.Name).Class; c == Meta || c == Annotation {
			out.kws = append(out.kws, k)
		} else {
			variant.kws = append(variant.kws, k)
		}
	}
	out.variants = []*Schema{variant}
	return out
}

// Without returns a view of s without the keyword name.
func (s *Schema) Without(name string) *Schema {
	c := *s
	c.kws = slices.DeleteFunc(slices.Clone(s.kws), func(k *Keyword) bool { return k.Name == name })
	return &c
}

// Resolved returns s with its chain of local references replaced by their
// target, s's other keywords laid over it (each keeps its own pointer; the
// view keeps s's pointer and records the reference in Via). It returns s
// itself when there is nothing to resolve, or when the reference cannot be
// followed (remote, dangling, or a cycle of references that never reaches
// a schema).
func (s *Schema) Resolved() *Schema {
	if r, ok := s.resolveChain(0); ok {
		return r
	}
	return s
}

func (s *Schema) resolveChain(depth int) (*Schema, bool) {
	ref := s.Ref()
	if ref == "" || !s.IsObject() {
		return s, true
	}
	if depth > maxRefDepth {
		return nil, false
	}
	t, err := s.doc.Resolve(ref)
	if err != nil {
		return nil, false
	}
	t, ok := t.resolveChain(depth + 1)
	if !ok || t.Invalid() {
		return nil, false
	}
	siblings := s.Without("$ref")
	if v, isBool := t.Bool(); isBool {
		if !v || len(siblings.kws) == 0 {
			return t, true
		}
		siblings.ref = ref
		return siblings, true
	}
	m := *t
	m.ptr, m.ref = s.ptr, ref
	m.kws = slices.Clone(t.kws)
	for _, k := range siblings.kws {
		if i := indexOf(m.kws, k.Name); i >= 0 {
			m.kws[i] = k
		} else {
			m.kws = append(m.kws, k)
		}
	}
	return &m, true
}

// Object returns s with the boolean schema true read as the empty schema
// {}, which it is equivalent to; any other schema is returned as it is.
func (s *Schema) Object() *Schema {
	if s.shape != shapeTrue {
		return s
	}
	return &Schema{doc: s.doc, ptr: s.ptr, raw: s.raw, shape: shapeObject, ref: s.ref}
}

// Applied returns the subschema of keyword name as it applies: the one
// written, or, when the keyword is absent and its absence means true
// (KeywordInfo.AbsentIsTrue), the schema true at the place it would have.
// It returns nil for an absent keyword whose absence means something else.
func (s *Schema) Applied(name string) *Schema {
	if sub := s.Sub(name); sub != nil {
		return sub
	}
	if s.Has(name) || !Info(name).AbsentIsTrue {
		return nil
	}
	return &Schema{doc: s.doc, ptr: s.KeywordPointer(name), raw: json.RawMessage("true"), shape: shapeTrue}
}
