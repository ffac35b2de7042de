package seed_test

import (
	"slices"
	"testing"

	"github.com/prickle-dev/prickle/spec/seed"
	"github.com/prickle-dev/prickle/spec/world"
)

// TestNames: every name the package gives is an entry of the seed world,
// of the kind the name says.
func TestNames(t *testing.T) {
	w := seed.World()
	ids := func(n int, id func(int) string) []string {
		var out []string
		for i := range n {
			out = append(out, id(i))
		}
		return out
	}
	projects := ids(len(w.Projects), func(i int) string { return w.Projects[i].Slug })
	tasks := ids(len(w.Tasks), func(i int) string { return w.Tasks[i].ID })
	messages := ids(len(w.Messages), func(i int) string { return w.Messages[i].ID })
	runners := ids(len(w.Runners), func(i int) string { return w.Runners[i].ID })
	agents := ids(len(w.Agents), func(i int) string { return w.Agents[i].ID })
	rooms := ids(len(w.Rooms), func(i int) string { return w.Rooms[i].ID })
	for _, c := range []struct {
		name string
		in   []string
	}{
		{seed.Project, projects}, {seed.TaskID, tasks}, {seed.MessageID, messages}, {seed.TaskRequestID, messages},
		{seed.MentionID, messages}, {seed.RunnerID, runners}, {seed.BuilderAgent, agents}, {seed.ReviewerAgent, agents},
		{seed.GeneralRoomID, rooms}, {seed.PrivateRoomID, rooms},
	} {
		if !slices.Contains(c.in, c.name) {
			t.Errorf("%q is not in the seed world (among %v)", c.name, c.in)
		}
	}
	if len(w.Tokens()) != 0 {
		t.Errorf("the seed world gives tokens: %v", w.Tokens())
	}
	if w.Version != world.Version {
		t.Errorf("version %d", w.Version)
	}
}
