package jsonschema

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Canonical renders a JSON value so that two values JSON Schema calls
// equal render the same: object members sorted by name, numbers by value
// (1.0 and 1 are equal), no white space, no HTML escaping. What is not JSON
// is returned as it is.
func Canonical(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	v, err := DecodeValue(raw)
	if err != nil {
		return string(raw)
	}
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

// Equal reports whether two JSON values are equal as JSON Schema compares
// them (enum, const).
func Equal(a, b []byte) bool { return Canonical(a) == Canonical(b) }

func writeCanonical(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeCanonical(b, v[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(CanonicalNumber(string(v)))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	default:
		b.WriteString("null")
	}
}

func writeString(b *strings.Builder, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a Go string always encodes
	b.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// CanonicalNumber renders a JSON number literal by value: an integer in
// full (2.0 and 2e0 are 2), any other number as the shortest float64
// literal.
func CanonicalNumber(lit string) string {
	r, ok := new(big.Rat).SetString(lit)
	if !ok {
		return lit
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Quote renders s as a JSON string, as Canonical writes strings.
func Quote(s string) string {
	var b strings.Builder
	writeString(&b, s)
	return b.String()
}
