package validatordiff

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// Mutations returns documents made from valid, one JSON value, each with
// one value changed: every value at every depth replaced by values of
// each JSON type, strings and numbers moved past the usual bounds,
// members removed and added, arrays emptied and items repeated. Most are
// invalid somewhere; each is a case where validators may disagree.
func Mutations(valid []byte) [][]byte {
	root, err := decode(valid)
	if err != nil {
		return nil
	}
	var out [][]byte
	seen := map[string]bool{string(valid): true}
	emit := func() {
		b, err := json.Marshal(root.v)
		if err == nil && !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, b)
		}
	}
	walk(root, emit)
	return out
}

// slot is a place in a decoded document that holds a value.
type slot struct{ v any }

func decode(raw []byte) (*slot, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return &slot{v}, nil
}

// kinds are values of every JSON type, and a few that bounds see.
var kinds = []any{nil, true, false, json.Number("0"), json.Number("-1"), json.Number("1.5"), json.Number("2.0"),
	json.Number("12345678901234567890123"), json.Number("1e400"), "", "x", []any{}, map[string]any{}}

// walk mutates the value in s and everything inside it, calling emit with
// each mutation in place, and restores it.
func walk(s *slot, emit func()) {
	orig := s.v
	for _, k := range kinds {
		s.v = k
		emit()
	}
	for _, v := range variants(orig) {
		s.v = v
		emit()
	}
	s.v = orig
	switch v := orig.(type) {
	case map[string]any:
		names := make([]string, 0, len(v))
		for k := range v {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			child := v[k]
			delete(v, k)
			emit()
			cs := &slot{child}
			v[k] = child
			walkIn(cs, emit, func(x any) { v[k] = x })
			v[k] = child
		}
		v["zz_extra"] = json.Number("1")
		emit()
		delete(v, "zz_extra")
	case []any:
		for i, child := range v {
			cs := &slot{child}
			walkIn(cs, emit, func(x any) { v[i] = x })
			v[i] = child
		}
	}
}

// walkIn walks the child in cs, whose changes put writes back into its
// parent.
func walkIn(cs *slot, emit func(), put func(any)) {
	walk(cs, func() {
		put(cs.v)
		emit()
	})
}

// variants are values near v: strings longer, shorter, of other
// characters; numbers one off, negative, fractional, large; arrays empty,
// with an item repeated or added.
func variants(v any) []any {
	switch x := v.(type) {
	case string:
		return []any{x + x, strings.Repeat("a", 300), strings.ToUpper(x), "-" + x, x + "-", x + "--" + x,
			"é" + x, "\u00e9\u0301", x + " ", strings.ReplaceAll(x, "-", "_"), "not a uri", "2026-13-45T99:99:99Z",
			"2026-01-15T09:30:00+01:00", "2026-01-15", "https://example.com/a b", "user@example.com"}
	case json.Number:
		s := string(x)
		return []any{json.Number("-" + s), json.Number(s + "0"), json.Number(s + ".5"), json.Number(s + "e0"),
			json.Number("1" + s), json.Number("8"), json.Number("9"), json.Number("1000"), json.Number("1001"),
			json.Number("0.1"), json.Number("3e2")}
	case []any:
		out := []any{[]any{}}
		if len(x) > 0 {
			out = append(out, append(append([]any{}, x...), x[0]), x[:1])
		}
		return append(out, append(append([]any{}, x...), "zz"))
	case bool:
		return []any{!x}
	}
	return nil
}

// TextMutations returns documents that are not one I-JSON value, made
// from valid: a member named twice, invalid UTF-8, a lone surrogate, a
// second value, a truncated one.
func TextMutations(valid []byte) [][]byte {
	var out [][]byte
	add := func(b []byte) { out = append(out, b) }
	if len(valid) > 2 && valid[0] == '{' && valid[1] == '"' {
		end := bytes.IndexByte(valid[2:], '"')
		if end >= 0 {
			name := valid[1 : end+3]
			add(append(append([]byte{'{'}, name...), append([]byte(`:1,`), valid[1:]...)...))
		}
	}
	if i := bytes.IndexByte(valid, '"'); i >= 0 {
		add(append(append(append([]byte{}, valid[:i+1]...), 0xff), valid[i+1:]...))
		add(append(append(append([]byte{}, valid[:i+1]...), []byte(`\ud800`)...), valid[i+1:]...))
	}
	add(append(append([]byte{}, valid...), []byte(" {}")...))
	add(valid[:len(valid)/2])
	add([]byte(""))
	return out
}
