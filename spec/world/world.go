// Package world is the world fixture format: the contract between a
// Prickle server and whoever drives it (FIXTURE.md, fixture.schema.json).
package world

import _ "embed"

//go:embed fixture.schema.json
var schemaJSON []byte

// SchemaJSON returns the fixture format's JSON Schema (2020-12), as
// published in spec/world/fixture.schema.json.
func SchemaJSON() []byte { return append([]byte(nil), schemaJSON...) }
