package store

import (
	"fmt"
	"sync"

	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/world"
)

// fixtureSchema compiles the fixture schema once, with the bundled pages'
// schemas it refers to.
var fixtureSchema = sync.OnceValues(func() (*world.Schema, error) {
	pages, err := spec.LoadBundled()
	if err != nil {
		return nil, fmt.Errorf("bundled pages: %w", err)
	}
	return world.CompileSchema(pages.Schemas())
})

// checkID checks a runner, room or discussion claim id against the
// fixture schema's id, naming what it is in the error.
func checkID(what, id string) error {
	fs, err := fixtureSchema()
	if err != nil {
		return err
	}
	return fs.CheckValue(world.DefID, what, id)
}
