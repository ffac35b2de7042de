package spec

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/prickle-dev/prickle/internal/jsonpos"
	"github.com/prickle-dev/prickle/internal/schemax"
)

// PointerPos maps a JSON pointer inside the block to its position in the
// page (the nearest indexed ancestor when the pointer names nothing).
func (b *JSONBlock) PointerPos(ptr string) Pos {
	if b.page == nil || !b.parsed {
		return b.Pos
	}
	if b.index == nil {
		idx, err := jsonpos.Build(b.body)
		if err != nil {
			return b.Pos
		}
		b.index = idx
	}
	return b.PosAt(b.index.Lookup(ptr))
}

// Keywords whose value is a schema, an array of schemas, or an object of
// schemas (JSON Schema 2020-12 applicators, plus the legacy definitions).
var (
	schemaKeywords      = []string{"additionalProperties", "items", "contains", "not", "if", "then", "else", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaArrayKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMapKeywords   = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

// walkSchema calls fn for every schema object in the block, with its JSON
// pointer, parents before children, in a deterministic order. The block is
// decoded once (numbers as json.Number); fn must not modify the node.
func walkSchema(b *JSONBlock, fn func(ptr string, node map[string]any)) {
	if b == nil || !b.parsed {
		return
	}
	v, err := decodeJSON(b.JSON)
	if err != nil {
		return
	}
	walkValue("", v, fn)
}

// decodeJSON decodes one JSON value keeping numbers exact.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func walkValue(ptr string, v any, fn func(string, map[string]any)) {
	node, ok := v.(map[string]any)
	if !ok {
		return
	}
	fn(ptr, node)
	for _, k := range schemaKeywords {
		if v, ok := node[k]; ok {
			walkValue(ptr+"/"+k, v, fn)
		}
	}
	for _, k := range schemaArrayKeywords {
		arr, _ := node[k].([]any)
		for i, v := range arr {
			walkValue(ptr+"/"+k+"/"+itoa(i), v, fn)
		}
	}
	for _, k := range schemaMapKeywords {
		m, _ := node[k].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(m)) {
			walkValue(ptr+"/"+k+"/"+schemax.EscapeToken(name), m[name], fn)
		}
	}
}

// objectAt returns v[key] when v is an object and that member an object.
func objectAt(v map[string]any, key string) map[string]any {
	m, _ := v[key].(map[string]any)
	return m
}

// stringsOf returns the array's elements when all of them are strings.
func stringsOf(v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}
