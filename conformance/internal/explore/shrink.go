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
	f := &fixer{w: w}
	for f.changed = true; f.changed; {
		f.changed = false
		f.directory()
		f.conversations()
		f.tasks()
		f.discussionClaims()
	}
	deriveReplyPosted(w)
}

// fixer is a pass of fixup over w: changed says whether it dropped
// anything.
type fixer struct {
	w       *world.World
	changed bool
}

// keep is the indexes i of n for which ok holds; dropping any is a
// change.
func (f *fixer) keep(n int, ok func(int) bool) []int {
	var idx []int
	for i := range n {
		if ok(i) {
			idx = append(idx, i)
		} else {
			f.changed = true
		}
	}
	return idx
}

func (f *fixer) project(s string) bool {
	return slices.ContainsFunc(f.w.Projects, func(p world.Project) bool { return p.Slug == s })
}

func (f *fixer) person(h string) bool {
	return slices.ContainsFunc(f.w.People, func(p world.Person) bool { return p.Handle == h })
}

func (f *fixer) agent(id string) bool {
	return slices.ContainsFunc(f.w.Agents, func(a world.Agent) bool { return a.ID == id })
}

// runnerAgent is the agent of runner id, "" if the world has no such
// runner.
func (f *fixer) runnerAgent(id string) string {
	for _, r := range f.w.Runners {
		if r.ID == id {
			return r.Agent
		}
	}
	return ""
}

func (f *fixer) room(id string) *world.Room {
	for i := range f.w.Rooms {
		if f.w.Rooms[i].ID == id {
			return &f.w.Rooms[i]
		}
	}
	return nil
}

func (f *fixer) message(id string) *world.Message {
	for i := range f.w.Messages {
		if f.w.Messages[i].ID == id {
			return &f.w.Messages[i]
		}
	}
	return nil
}

// turn is the turn of message id, nil if it has none.
func (f *fixer) turn(id string) *world.Turn {
	for i := range f.w.Turns {
		if f.w.Turns[i].Message == id {
			return &f.w.Turns[i]
		}
	}
	return nil
}

// directory drops the memberships, agents, runners and rooms of people
// and projects the world no longer has.
func (f *fixer) directory() {
	w := f.w
	w.Memberships = pickIdx(w.Memberships, f.keep(len(w.Memberships), func(i int) bool {
		return f.project(w.Memberships[i].Project) && f.person(w.Memberships[i].Person)
	}))
	w.Agents = pickIdx(w.Agents, f.keep(len(w.Agents), func(i int) bool { return f.person(ownerOf(w.Agents[i].ID)) }))
	w.Runners = pickIdx(w.Runners, f.keep(len(w.Runners), func(i int) bool { return f.agent(w.Runners[i].Agent) }))
	w.Rooms = pickIdx(w.Rooms, f.keep(len(w.Rooms), func(i int) bool {
		r := w.Rooms[i]
		return f.project(r.Project) && (r.Owner == nil || f.person(*r.Owner))
	}))
}

// conversations drops the turns' agents the world no longer has, the
// turns left without an agent or a message, and the messages without a
// room, an author, or the turn and role they reply in.
func (f *fixer) conversations() {
	w := f.w
	for i := range w.Turns {
		t := &w.Turns[i]
		n := len(t.Agents)
		t.Agents = slices.DeleteFunc(t.Agents, func(a world.TurnAgent) bool { return !f.agent(a.Agent) })
		f.changed = f.changed || n != len(t.Agents)
	}
	w.Turns = pickIdx(w.Turns, f.keep(len(w.Turns), func(i int) bool {
		return len(w.Turns[i].Agents) > 0 && f.message(w.Turns[i].Message) != nil
	}))
	w.Messages = pickIdx(w.Messages, f.keep(len(w.Messages), func(i int) bool {
		m := w.Messages[i]
		if f.room(m.Room) == nil || !(f.person(m.Author) || f.agent(m.Author)) {
			return false
		}
		return m.ReplyTurn == nil || m.ReplyRole != nil && roleFits(f.turn(*m.ReplyTurn), m.Author, *m.ReplyRole)
	}))
}

// tasks drops the tasks of a project or agent the world no longer has,
// a request message it no longer has, and the attempts of a task it no
// longer has or of a runner not its agent's.
func (f *fixer) tasks() {
	w := f.w
	w.Tasks = pickIdx(w.Tasks, f.keep(len(w.Tasks), func(i int) bool { return f.project(w.Tasks[i].Project) && f.agent(w.Tasks[i].Agent) }))
	for i := range w.Tasks {
		if rm := w.Tasks[i].RequestMessage; rm != nil && f.message(*rm) == nil {
			w.Tasks[i].RequestMessage = nil
			f.changed = true
		}
	}
	w.Attempts = pickIdx(w.Attempts, f.keep(len(w.Attempts), func(i int) bool {
		a := w.Attempts[i]
		for _, t := range w.Tasks {
			if t.ID == a.Task {
				return f.runnerAgent(a.Runner) == t.Agent
			}
		}
		return false
	}))
}

// discussionClaims drops the claims of a runner, a turn, a role, a draft
// reviewed or a reply the world no longer has.
func (f *fixer) discussionClaims() {
	w := f.w
	w.DiscussionClaims = pickIdx(w.DiscussionClaims, f.keep(len(w.DiscussionClaims), func(i int) bool {
		c := w.DiscussionClaims[i]
		a := f.runnerAgent(c.Runner)
		if a == "" || !roleFits(f.turn(c.Message), a, c.Role) {
			return false
		}
		if c.Reviewing != nil && f.message(*c.Reviewing) == nil {
			return false
		}
		return c.ReplyMessage == nil || f.message(*c.ReplyMessage) != nil
	}))
}

func pickIdx[T any](xs []T, idx []int) []T {
	out := make([]T, 0, len(idx))
	for _, i := range idx {
		out = append(out, xs[i])
	}
	return out
}
