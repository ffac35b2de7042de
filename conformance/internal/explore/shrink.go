package explore

import (
	"cmp"
	"context"
	"slices"

	"github.com/prickle-dev/prickle/spec/world"
)

// Shrinking: a failing sequence becomes a minimal one that fails the same
// way (the same rule broken): first its concurrent groups sent one call at
// a time, if the failure still shows so (a failure that needs no race
// saves as a script that fails every run, not only when a race goes one
// way); then fewer calls (chunks, then single calls, as delta debugging
// does); then a smaller world (one entity at a time, with everything that
// referred to it). Every candidate runs against a fresh server; the
// number of runs is bounded.

// sameFailure reports whether x fails the way the original did.
func sameFailure(x *exploreRun, src string) bool { return x.failAt >= 0 && x.source() == src }

// removeSteps drops the steps in del, and every step that uses a
// credential of a dropped step, renumbering credential references.
func removeSteps(cmds []*command, del map[int]bool) []*command {
	newIdx := map[int]int{}
	var out []*command
	for i, c := range cmds {
		if del[i] {
			continue
		}
		if c.p.kind == "cred" {
			j, ok := newIdx[c.p.step]
			if !ok {
				del[i] = true
				continue
			}
			cc := *c
			cc.p.step = j
			c = &cc
		}
		newIdx[i] = len(out)
		out = append(out, c)
	}
	return out
}

// shrink makes a failing sequence minimal: fewer calls first, then a
// smaller world, keeping the failure (the same rule broken).
func (e *explorer) shrink(ctx context.Context, name string, w *world.World, cmds []*command, first *exploreRun) (*world.World, []*command, *exploreRun) {
	src := first.source()
	best := first
	cmds = cmds[:first.failAt+1]
	runs := 0
	try := func(w2 *world.World, c2 []*command) bool {
		if runs >= shrinkRuns || ctx.Err() != nil || len(c2) == 0 {
			return false
		}
		// A race may need several runs to show again.
		for range retriesOf(c2) {
			if runs >= shrinkRuns {
				break
			}
			runs++
			if x := e.run(ctx, name, w2, c2); sameFailure(x, src) {
				best = x
				return true
			}
		}
		return false
	}
	if c2, ok := serialized(cmds, best); ok && try(w, c2) {
		cmds = c2[:best.failAt+1]
	}
	for chunk := max(len(cmds)/2, 1); chunk >= 1; chunk /= 2 {
		for start := 0; start < len(cmds); {
			del := map[int]bool{}
			for i := start; i < start+chunk && i < len(cmds); i++ {
				del[i] = true
			}
			wholeGroups(cmds, del)
			c2 := removeSteps(cmds, del)
			if try(w, c2) {
				cmds = c2[:best.failAt+1]
				continue
			}
			start += chunk
		}
		if chunk == 1 {
			break
		}
	}
	// A smaller world: drop what the calls do not need, one entity at a
	// time, largest first.
	for _, kind := range []string{"project", "person", "agent", "runner", "task", "turn", "message", "attempt", "claim", "membership"} {
		for i := 0; ; i++ {
			w2, ok := withoutEntity(w, kind, i)
			if !ok {
				break
			}
			if isRaceEntity(w, kind, i) {
				continue // every try's copy stays: a saved race runs them all
			}
			if try(w2, cmds) {
				w = w2
				cmds = cmds[:best.failAt+1]
				i--
			}
		}
	}
	return w, cmds, best
}

// serialized is cmds with every concurrent group's calls made one at a
// time, credential references renumbered; ok is false if cmds has no
// group. A group's calls go in the order the model accepted for them in
// x, else in the order their answers came back (calls x did not answer
// last): so made, a failure that needs no race shows the same way.
func serialized(cmds []*command, x *exploreRun) (out []*command, ok bool) {
	order := make([]int, len(cmds))
	for i := range order {
		order[i] = i
	}
	// key orders a group's calls: by place, then by answer.
	key := func(i int) (int, int64) {
		if i < len(x.steps) {
			switch st := x.steps[i]; {
			case st.place > 0:
				return 0, int64(st.place)
			case st.ans != nil:
				return 1, st.ans.end.UnixNano()
			}
		}
		return 2, 0
	}
	for i := 0; i < len(cmds); {
		j := groupEnd(cmds, i, cmdGroup)
		if cmds[i].group != 0 {
			ok = true
			slices.SortStableFunc(order[i:j], func(a, b int) int {
				ka, ta := key(a)
				kb, tb := key(b)
				return cmp.Or(cmp.Compare(ka, kb), cmp.Compare(ta, tb))
			})
		}
		i = j
	}
	if !ok {
		return nil, false
	}
	at := make([]int, len(cmds)) // at[old] is the new index
	for n, i := range order {
		at[i] = n
	}
	for _, i := range order {
		c := *cmds[i]
		c.group, c.class = 0, ""
		if c.p.kind == "cred" {
			c.p.step = at[c.p.step]
		}
		out = append(out, &c)
	}
	return out, true
}

// withoutEntity returns a copy of w without the i-th entity of kind and
// everything that referred to it; ok is false past the last one.
func withoutEntity(w *world.World, kind string, i int) (*world.World, bool) {
	c := w.Clone()
	var ok bool
	switch kind {
	case "project":
		ok = deleteAt(&c.Projects, i)
	case "person":
		ok = deleteAt(&c.People, i)
	case "agent":
		ok = deleteAt(&c.Agents, i)
	case "runner":
		ok = deleteAt(&c.Runners, i)
	case "task":
		ok = deleteAt(&c.Tasks, i)
	case "turn":
		ok = deleteAt(&c.Turns, i)
	case "message":
		ok = deleteAt(&c.Messages, i)
	case "attempt":
		ok = deleteAt(&c.Attempts, i)
	case "claim":
		ok = deleteAt(&c.DiscussionClaims, i)
	case "membership":
		ok = deleteAt(&c.Memberships, i)
	}
	if !ok {
		return nil, false
	}
	fixup(c)
	return c, true
}

// deleteAt deletes the i-th element of *xs; false when there is none.
func deleteAt[T any](xs *[]T, i int) bool {
	if i >= len(*xs) {
		return false
	}
	*xs = slices.Delete(*xs, i, i+1)
	return true
}

// fixup drops everything that refers to something the world no longer
// has, until nothing changes, so that the world stays loadable.
func fixup(w *world.World) {
	for changed := true; changed; {
		changed = false
		keep := func(n int, ok func(int) bool) []int {
			var idx []int
			for i := range n {
				if ok(i) {
					idx = append(idx, i)
				} else {
					changed = true
				}
			}
			return idx
		}
		has := func(list int, f func(int) bool) bool {
			for i := range list {
				if f(i) {
					return true
				}
			}
			return false
		}
		project := func(s string) bool {
			return has(len(w.Projects), func(i int) bool { return w.Projects[i].Slug == s })
		}
		person := func(h string) bool {
			return has(len(w.People), func(i int) bool { return w.People[i].Handle == h })
		}
		agent := func(id string) bool {
			return has(len(w.Agents), func(i int) bool { return w.Agents[i].ID == id })
		}
		runnerAgent := func(id string) string {
			for _, r := range w.Runners {
				if r.ID == id {
					return r.Agent
				}
			}
			return ""
		}
		room := func(id string) *world.Room {
			for i := range w.Rooms {
				if w.Rooms[i].ID == id {
					return &w.Rooms[i]
				}
			}
			return nil
		}
		message := func(id string) *world.Message {
			for i := range w.Messages {
				if w.Messages[i].ID == id {
					return &w.Messages[i]
				}
			}
			return nil
		}
		turn := func(id string) *world.Turn {
			for i := range w.Turns {
				if w.Turns[i].Message == id {
					return &w.Turns[i]
				}
			}
			return nil
		}
		w.Memberships = pickIdx(w.Memberships, keep(len(w.Memberships), func(i int) bool {
			return project(w.Memberships[i].Project) && person(w.Memberships[i].Person)
		}))
		w.Agents = pickIdx(w.Agents, keep(len(w.Agents), func(i int) bool { return person(ownerOf(w.Agents[i].ID)) }))
		w.Runners = pickIdx(w.Runners, keep(len(w.Runners), func(i int) bool { return agent(w.Runners[i].Agent) }))
		w.Rooms = pickIdx(w.Rooms, keep(len(w.Rooms), func(i int) bool {
			r := w.Rooms[i]
			return project(r.Project) && (r.Owner == nil || person(*r.Owner))
		}))
		for i := range w.Turns {
			t := &w.Turns[i]
			n := len(t.Agents)
			t.Agents = slices.DeleteFunc(t.Agents, func(a world.TurnAgent) bool { return !agent(a.Agent) })
			changed = changed || n != len(t.Agents)
		}
		w.Turns = pickIdx(w.Turns, keep(len(w.Turns), func(i int) bool {
			return len(w.Turns[i].Agents) > 0 && message(w.Turns[i].Message) != nil
		}))
		w.Messages = pickIdx(w.Messages, keep(len(w.Messages), func(i int) bool {
			m := w.Messages[i]
			if room(m.Room) == nil || !(person(m.Author) || agent(m.Author)) {
				return false
			}
			return m.ReplyTurn == nil || m.ReplyRole != nil && roleFits(turn(*m.ReplyTurn), m.Author, *m.ReplyRole)
		}))
		w.Tasks = pickIdx(w.Tasks, keep(len(w.Tasks), func(i int) bool { return project(w.Tasks[i].Project) && agent(w.Tasks[i].Agent) }))
		for i := range w.Tasks {
			if rm := w.Tasks[i].RequestMessage; rm != nil && message(*rm) == nil {
				w.Tasks[i].RequestMessage = nil
				changed = true
			}
		}
		w.Attempts = pickIdx(w.Attempts, keep(len(w.Attempts), func(i int) bool {
			a := w.Attempts[i]
			for _, t := range w.Tasks {
				if t.ID == a.Task {
					return runnerAgent(a.Runner) == t.Agent
				}
			}
			return false
		}))
		w.DiscussionClaims = pickIdx(w.DiscussionClaims, keep(len(w.DiscussionClaims), func(i int) bool {
			c := w.DiscussionClaims[i]
			a := runnerAgent(c.Runner)
			if a == "" || !roleFits(turn(c.Message), a, c.Role) {
				return false
			}
			if c.Reviewing != nil && message(*c.Reviewing) == nil {
				return false
			}
			return c.ReplyMessage == nil || message(*c.ReplyMessage) != nil
		}))
	}
	deriveReplyPosted(w)
}

func pickIdx[T any](xs []T, idx []int) []T {
	out := make([]T, 0, len(idx))
	for _, i := range idx {
		out = append(out, xs[i])
	}
	return out
}
