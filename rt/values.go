package rt

import (
	"bytes"
	"slices"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/prickle-dev/prickle/internal/validation"
)

// Values are the values of an enum or a const, as a schema writes them:
// a value is among them when it equals one as JSON Schema compares values
// (numbers by value, objects whatever the order of their members).
type Values struct {
	src  string
	once sync.Once
	strs map[string]bool // the strings among them
	rest map[string]bool // the canonical form of every other value
	want []any           // decoded as validation.Unmarshal decodes, for a message
}

// NewValues returns the values of the JSON array src (an enum's value, or
// a one-element array of a const), read on first use.
func NewValues(src string) *Values { return &Values{src: src} }

func (vs *Values) init() {
	vs.once.Do(func() {
		vs.strs, vs.rest = map[string]bool{}, map[string]bool{}
		raw := []byte(vs.src)
		dec := jsontext.NewDecoder(bytes.NewReader(raw))
		if _, err := dec.ReadToken(); err != nil {
			panic(errBadSchema)
		}
		for dec.PeekKind() != ']' {
			v, err := dec.ReadValue()
			if err != nil {
				panic(errBadSchema)
			}
			if v.Kind() == '"' {
				vs.strs[string(unquote(v))] = true
			} else {
				vs.rest[string(canonical(nil, v))] = true
			}
		}
		all, err := validation.Unmarshal(raw)
		if err != nil {
			panic(errBadSchema)
		}
		vs.want = all.([]any)
	})
}

// has reports whether v is among the values.
func (vs *Values) has(c *Checker, v Value) bool {
	vs.init()
	switch {
	case v.Kind == KindString:
		return vs.strs[string(v.text)]
	case len(vs.rest) == 0:
		return false
	case v.Kind == KindNumber:
		c.quoted = canonicalNumber(append(c.quoted[:0], 'n'), stringUnsafe(v.text))
	case v.Kind == KindObject || v.Kind == KindArray:
		if v.raw == nil {
			// Read as it comes: the generator reads a value whole where
			// the values hold an object or an array, so none is equal.
			return false
		}
		c.quoted = canonical(c.quoted[:0], v.raw)
	default: // true, false, null
		c.quoted = append(c.quoted[:0], v.text...)
	}
	return vs.rest[string(c.quoted)]
}

// canonical appends raw, one JSON value, in a form that two values have
// alike exactly when JSON Schema finds them equal: numbers by value,
// object members sorted by name.
func canonical(buf, raw []byte) []byte {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	v, err := dec.ReadValue()
	if err != nil {
		panic(errBadSchema)
	}
	return appendCanonical(buf, v)
}

func appendCanonical(buf []byte, v jsontext.Value) []byte {
	switch v.Kind() {
	case '0':
		return canonicalNumber(append(buf, 'n'), string(v))
	case '"':
		return strconv.AppendQuote(append(buf, 's'), string(unquote(v)))
	case '[':
		buf = append(buf, '[')
		dec := jsontext.NewDecoder(bytes.NewReader(v))
		dec.ReadToken()
		for dec.PeekKind() != ']' {
			item, err := dec.ReadValue()
			if err != nil {
				panic(errBadSchema)
			}
			buf = append(appendCanonical(buf, item), ',')
		}
		return append(buf, ']')
	case '{':
		type member struct{ name, value []byte }
		var ms []member
		dec := jsontext.NewDecoder(bytes.NewReader(v))
		dec.ReadToken()
		for dec.PeekKind() != '}' {
			name, err := dec.ReadValue()
			if err != nil {
				panic(errBadSchema)
			}
			n := bytes.Clone(unquote(name))
			value, err := dec.ReadValue()
			if err != nil {
				panic(errBadSchema)
			}
			ms = append(ms, member{n, appendCanonical(nil, value)})
		}
		slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(a.name, b.name) })
		buf = append(buf, '{')
		for _, m := range ms {
			buf = strconv.AppendQuote(buf, string(m.name))
			buf = append(append(buf, ':'), m.value...)
			buf = append(buf, ',')
		}
		return append(buf, '}')
	}
	return append(buf, v...) // true, false, null
}
