package load

import (
	"fmt"
	"slices"
	"time"

	"github.com/prickle-dev/prickle/spec/seed"
	"github.com/prickle-dev/prickle/spec/world"
)

// MaxFixtureTasks bounds the tasks Fixture adds.
const MaxFixtureTasks = 10_000_000

// Fixture returns a world (package world) for load runs: the standard
// seed world (package seed, so DefaultWorld names work on it) plus tasks
// FreshTaskPrefix+0 ... +(tasks-1) in the seed project, routed to the seed
// runner's agent, for fresh claims. Every agent and runner gets a fresh
// random token; tokens lists them in the tokens-file format.
func Fixture(tasks int) (fixture []byte, tokens []world.Token, err error) {
	if tasks < 0 || tasks > MaxFixtureTasks {
		return nil, nil, fmt.Errorf("tasks must be between 0 and %d, got %d", MaxFixtureTasks, tasks)
	}
	w := seed.World()
	if tokens, err = w.Materialize(time.Now(), world.NewToken); err != nil {
		return nil, nil, fmt.Errorf("seed world: %w", err)
	}
	w.Tasks = slices.Grow(w.Tasks, tasks)
	for n := range tasks {
		w.Tasks = append(w.Tasks, world.Task{ID: FreshTaskID(FreshTaskPrefix, n), Project: seed.Project, Agent: seed.BuilderAgent})
	}
	return w.Marshal(), tokens, nil
}
