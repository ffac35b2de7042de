package spec

import (
	"encoding/json"
	"sort"

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
// pointer, parents before children, in a deterministic order.
func walkSchema(b *JSONBlock, fn func(ptr string, node map[string]json.RawMessage)) {
	if b == nil || !b.parsed {
		return
	}
	walkRaw("", b.JSON, fn)
}

func walkRaw(ptr string, raw json.RawMessage, fn func(string, map[string]json.RawMessage)) {
	node := objectOf(raw)
	if node == nil {
		return
	}
	fn(ptr, node)
	for _, k := range schemaKeywords {
		if v, ok := node[k]; ok {
			walkRaw(ptr+"/"+k, v, fn)
		}
	}
	for _, k := range schemaArrayKeywords {
		var arr []json.RawMessage
		if json.Unmarshal(node[k], &arr) == nil {
			for i, v := range arr {
				walkRaw(ptr+"/"+k+"/"+itoa(i), v, fn)
			}
		}
	}
	for _, k := range schemaMapKeywords {
		m := objectOf(node[k])
		keys := make([]string, 0, len(m))
		for name := range m {
			keys = append(keys, name)
		}
		sort.Strings(keys)
		for _, name := range keys {
			walkRaw(ptr+"/"+k+"/"+schemax.EscapeToken(name), m[name], fn)
		}
	}
}
