package store

import (
	"fmt"
	"sync"

	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/world"
)

// worldSchema compiles the world format's schema once, with the bundled
// pages' schemas it refers to.
var worldSchema = sync.OnceValues(func() (*world.Schema, error) {
	pages, err := spec.LoadBundled()
	if err != nil {
		return nil, fmt.Errorf("bundled pages: %w", err)
	}
	return world.CompileSchema(pages.Schemas())
})

// checkID checks a runner, room or discussion claim id against the
// world schema's id, naming what it is in the error.
func checkID(what, id string) error {
	ws, err := worldSchema()
	if err != nil {
		return err
	}
	return ws.CheckValue(world.DefID, what, id)
}
