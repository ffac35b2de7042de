package spec

import "iter"

// Schemas yields the input and output schema of every tool of s (the JSON
// of its block) under its SchemaURL: the documents that a schema referring
// to the pages' schemas, such as the world format's, needs registered.
func (s *Spec) Schemas() iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for _, t := range s.Tools {
			for _, b := range []struct {
				section string
				block   *JSONBlock
			}{{SectionInput, t.InputSchema}, {SectionOutput, t.OutputSchema}} {
				if b.block != nil && !yield(SchemaURL(t.Name, b.section), b.block.JSON) {
					return
				}
			}
		}
	}
}
