package gen

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/prickle-dev/prickle/internal/schemax"
)

// node is one schema object (or boolean schema) of a document, with its
// JSON pointer and its keys in the order written.
type node struct {
	ptr  string
	raw  json.RawMessage
	keys []string
	m    map[string]json.RawMessage
	// boolean is set for the boolean schemas true and false.
	boolean *bool
}

// parseNode reads raw as a schema. Anything that is not an object or a
// boolean is returned as an empty object (the lint has already checked the
// schema against the meta-schema, so this does not happen in practice).
func parseNode(ptr string, raw json.RawMessage) *node {
	n := &node{ptr: ptr, raw: raw, m: map[string]json.RawMessage{}}
	t := bytes.TrimSpace(raw)
	switch {
	case bytes.Equal(t, []byte("true")):
		v := true
		n.boolean = &v
		return n
	case bytes.Equal(t, []byte("false")):
		v := false
		n.boolean = &v
		return n
	}
	n.keys, n.m = orderedObject(raw)
	return n
}

// orderedObject splits a JSON object into its members, keeping the key
// order, in one pass over the bytes (the schemas were checked when the
// pages were linted). Anything that is not an object gives no members.
func orderedObject(raw json.RawMessage) ([]string, map[string]json.RawMessage) {
	m := map[string]json.RawMessage{}
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, m
	}
	var keys []string
	i++
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] == '}' {
			return keys, m
		}
		if raw[i] == ',' {
			i++
			continue
		}
		if raw[i] != '"' {
			return keys, m
		}
		end := stringEnd(raw, i)
		var k string
		if json.Unmarshal(raw[i:end], &k) != nil {
			return keys, m
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return keys, m
		}
		i = skipSpace(raw, i+1)
		vend := valueEnd(raw, i)
		if _, dup := m[k]; !dup {
			keys = append(keys, k)
		}
		m[k] = raw[i:vend]
		i = vend
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] ('"').
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the JSON value starting at b[i].
func valueEnd(b []byte, i int) int {
	depth := 0
	for j := i; j < len(b); j++ {
		switch c := b[j]; c {
		case '"':
			j = stringEnd(b, j) - 1
			if depth == 0 {
				return j + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j
			}
			depth--
			if depth == 0 {
				return j + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return j
			}
		}
	}
	return len(b)
}

func (n *node) has(k string) bool { _, ok := n.m[k]; return ok }

func (n *node) hasAny(ks ...string) bool {
	for _, k := range ks {
		if n.has(k) {
			return true
		}
	}
	return false
}

func (n *node) str(k string) (string, bool) {
	var s string
	if raw, ok := n.m[k]; ok && json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	return "", false
}

func (n *node) strs(k string) []string {
	var ss []string
	if raw, ok := n.m[k]; ok {
		if json.Unmarshal(raw, &ss) != nil {
			return nil
		}
	}
	return ss
}

// types is the "type" keyword as a list.
func (n *node) types() []string {
	if s, ok := n.str("type"); ok {
		return []string{s}
	}
	return n.strs("type")
}

func (n *node) child(k string) *node {
	raw, ok := n.m[k]
	if !ok {
		return nil
	}
	return parseNode(n.ptr+"/"+schemax.EscapeToken(k), raw)
}

func (n *node) children(k string) []*node {
	var arr []json.RawMessage
	if json.Unmarshal(n.m[k], &arr) != nil {
		return nil
	}
	out := make([]*node, len(arr))
	for i, raw := range arr {
		out[i] = parseNode(n.ptr+"/"+k+"/"+strconv.Itoa(i), raw)
	}
	return out
}

type prop struct {
	name string
	n    *node
}

// props lists the "properties" in the order written.
func (n *node) props() []prop {
	raw, ok := n.m["properties"]
	if !ok {
		return nil
	}
	keys, m := orderedObject(raw)
	out := make([]prop, len(keys))
	for i, k := range keys {
		out[i] = prop{k, parseNode(n.ptr+"/properties/"+schemax.EscapeToken(k), m[k])}
	}
	return out
}

// lookup finds the JSON value at ptr (an RFC 6901 pointer) inside raw.
func lookup(raw json.RawMessage, ptr string) (json.RawMessage, bool) {
	if ptr == "" {
		return raw, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := raw
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		t := bytes.TrimSpace(cur)
		switch {
		case len(t) > 0 && t[0] == '{':
			var m map[string]json.RawMessage
			if json.Unmarshal(t, &m) != nil {
				return nil, false
			}
			v, ok := m[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case len(t) > 0 && t[0] == '[':
			var arr []json.RawMessage
			i, err := strconv.Atoi(tok)
			if json.Unmarshal(t, &arr) != nil || err != nil || i < 0 || i >= len(arr) {
				return nil, false
			}
			cur = arr[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// shapeKeys decide the Go type of a schema; every other keyword only
// narrows the values (and is left to the validator).
var shapeKeys = []string{"type", "properties", "patternProperties", "additionalProperties", "items", "prefixItems",
	"$ref", "$dynamicRef", "const", "enum", "anyOf", "oneOf", "allOf"}

// isNullSchema reports a schema that admits only null.
func isNullSchema(n *node) bool {
	if n.boolean != nil {
		return false
	}
	if ts := n.types(); len(ts) == 1 && ts[0] == "null" {
		return true
	}
	if raw, ok := n.m["const"]; ok && bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return true
	}
	var enum []json.RawMessage
	if json.Unmarshal(n.m["enum"], &enum) == nil && len(enum) == 1 && bytes.Equal(bytes.TrimSpace(enum[0]), []byte("null")) {
		return true
	}
	return false
}

// constraintOnly reports a schema that only narrows values: no keyword of
// it decides a type.
func constraintOnly(n *node) bool {
	return n.boolean == nil && !n.hasAny(shapeKeys...)
}
