package spec

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/spec/seed"
)

// seedIDs maps the argument names that name an entity of the seed world
// to the section and the field that hold that entity's ids (the fixture
// format, server/store/FIXTURE.md).
var seedIDs = map[string]struct{ section, field string }{
	"project":    {"projects", "slug"},
	"task_id":    {"tasks", "id"},
	"message_id": {"messages", "id"},
	"room_id":    {"rooms", "id"},
	"attempt_id": {"attempts", "id"},
	"agent_id":   {"agents", "id"},
	"runner_id":  {"runners", "id"},
	"handle":     {"people", "handle"},
}

// seedKnown is the ids of the seed world by argument name.
var seedKnown = sync.OnceValue(func() map[string]map[string]bool {
	var w map[string]json.RawMessage
	if err := json.Unmarshal(seed.JSON(), &w); err != nil {
		panic(fmt.Sprintf("spec: the embedded seed world: %v", err)) // a build-time file
	}
	known := map[string]map[string]bool{}
	for arg, at := range seedIDs {
		known[arg] = map[string]bool{}
		var entries []map[string]any
		if raw, ok := w[at.section]; ok {
			if err := json.Unmarshal(raw, &entries); err != nil {
				panic(fmt.Sprintf("spec: the embedded seed world: %s: %v", at.section, err))
			}
		}
		for _, e := range entries {
			if id, ok := e[at.field].(string); ok {
				known[arg][id] = true
			}
		}
	}
	return known
})

// exampleSeed warns where t's example input names, by an argument that
// names an entity of the seed world (seedIDs, at any depth), an id the
// seed world lacks: the example cannot succeed against it until it is
// extended.
func exampleSeed(t *Tool, ex *JSONBlock) Diagnostics {
	var v any
	if json.Unmarshal(ex.JSON, &v) != nil {
		return nil
	}
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
				if at, named := seedIDs[k]; named && !seedKnown()[k][id] {
					ds = append(ds, Diagnostic{Pos: ex.PointerPos(p), Severity: Warning, Rule: "example-seed",
						Message: fmt.Sprintf("%s: example input at %s: %q is not among the seed world's %s (spec/seed/world.json)", t.Name, p, id, at.section)})
				}
				continue
			}
			walk(p, obj[k])
		}
	}
	walk("", v)
	return ds
}
