package spec

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/spec/seed"
	"github.com/prickle-dev/prickle/spec/world"
)

// seedEntities are the entities of one section of the seed world: the
// section's name and their ids.
type seedEntities struct {
	section string
	ids     map[string]bool
}

// seedKnown is the entities of the seed world by the argument name that
// names one.
var seedKnown = sync.OnceValue(func() map[string]seedEntities {
	w := seed.World()
	return map[string]seedEntities{
		"project":    entities(w, &w.Projects, func(p world.Project) string { return p.Slug }),
		"task_id":    entities(w, &w.Tasks, func(t world.Task) string { return t.ID }),
		"message_id": entities(w, &w.Messages, func(m world.Message) string { return m.ID }),
		"room_id":    entities(w, &w.Rooms, func(r world.Room) string { return r.ID }),
		"attempt_id": entities(w, &w.Attempts, func(a world.Attempt) string { return a.ID }),
		"agent_id":   entities(w, &w.Agents, func(a world.Agent) string { return a.ID }),
		"runner_id":  entities(w, &w.Runners, func(r world.Runner) string { return r.ID }),
		"handle":     entities(w, &w.People, func(p world.Person) string { return p.Handle }),
	}
})

// entities returns the ids of the entries of section of w.
func entities[T any](w *world.World, section *[]T, id func(T) string) seedEntities {
	e := seedEntities{section: jsonpointer.Last(w.Pointer(section)), ids: map[string]bool{}}
	for _, x := range *section {
		e.ids[id(x)] = true
	}
	return e
}

// exampleSeed warns where t's example input names, by an argument that
// names an entity of the seed world (seedKnown, at any depth), an id the
// seed world lacks: the example cannot succeed against it until it is
// extended. v is the example decoded.
func exampleSeed(t *Tool, ex *JSONBlock, v any) Diagnostics {
	var ds Diagnostics
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			p := jsonpointer.Append(ptr, k)
			if id, ok := obj[k].(string); ok {
				if e, named := seedKnown()[k]; named && !e.ids[id] {
					ds = append(ds, Diagnostic{Pos: ex.PointerPos(p), Severity: Warning, Rule: "example-seed",
						Message: fmt.Sprintf("%s: example input at %s: %q is not among the seed world's %s (spec/seed/world.json)", t.Name, p, id, e.section)})
				}
				continue
			}
			walk(p, obj[k])
		}
	}
	walk("", v)
	return ds
}
