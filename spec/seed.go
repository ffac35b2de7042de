package spec

import (
	"bytes"
	_ "embed"
)

//go:embed seed/world.json
var seedWorld []byte

// SeedWorld returns the seed world: the world the pages' examples refer
// to ("the seeded website-v2 project and example task IDs"), as a world
// fixture (server/store/FIXTURE.md) without tokens. prickled seeds it into
// an empty database, minting the tokens; the conformance suite hands it,
// with tokens of each run, to the server under test, and checks that every
// example input succeeds against it. Lint warns when an example names an
// id it lacks (rule example-seed).
func SeedWorld() []byte { return bytes.Clone(seedWorld) }
