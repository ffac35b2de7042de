package spec

import (
	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/jsonschema"
)

// PointerPos maps a JSON pointer inside the block to its position in the
// page (the nearest indexed ancestor when the pointer names nothing).
func (b *JSONBlock) PointerPos(ptr string) Pos {
	if b.page == nil || !b.parsed {
		return b.Pos
	}
	if b.index == nil {
		idx, err := jsonpointer.NewIndex(b.body)
		if err != nil {
			return b.Pos
		}
		b.index = idx
	}
	return b.PosAt(b.index.Offset(ptr))
}

// Schema returns the block read as a schema document, or nil when the
// block holds no valid JSON. The block is read once: every caller (the
// catalog, lint, the generator) gets the same document, which is safe for
// concurrent use.
func (b *JSONBlock) Schema() *jsonschema.Document {
	if b == nil || !b.parsed {
		return nil
	}
	b.schema.once.Do(func() {
		if d, err := jsonschema.Parse(b.JSON); err == nil {
			b.schema.doc = d
		}
	})
	return b.schema.doc
}
