// Package seed is the seed world: the world the pages' examples refer to
// ("the seeded website-v2 project and example task IDs"), kept in
// world.json as a world (package world) without tokens. prickled
// seeds it into an empty database, minting the tokens; the conformance
// suite hands it, with tokens of each run, to the server under test, and
// checks that every example input succeeds against it. Lint warns when an
// example names an id it lacks (rule example-seed).
//
// It imports only package world of this module.
package seed

import (
	"bytes"
	_ "embed"

	"github.com/prickle-dev/prickle/spec/world"
)

//go:embed world.json
var worldJSON []byte

// JSON returns the seed world's document, world.json.
func JSON() []byte { return bytes.Clone(worldJSON) }

// World returns the seed world, a fresh copy each time.
func World() *world.World {
	w, err := world.Decode(worldJSON)
	if err != nil {
		panic("seed: world.json: " + err.Error()) // a file of the build, checked by the tests
	}
	return w
}

// Names in the seed world, for the tests and tools that refer to them.
const (
	Project       = "website-v2"
	TaskID        = "example-task-id"
	MessageID     = "example-message-id"
	TaskRequestID = "example-task-request-id"
	MentionID     = "example-mention-id"
	RunnerID      = "maya-laptop"
	BuilderAgent  = "maya/builder"
	ReviewerAgent = "theo/reviewer"
	GeneralRoomID = "website-v2-general"
	PrivateRoomID = "maya-private"
	// OutsideProject is a project none of the seed world's agents
	// belongs to: "a project you cannot see".
	OutsideProject = "billing-api"
)
