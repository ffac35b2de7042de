package world

import "reflect"

// Prefixed returns a copy of w with every name in it prefixed with pre:
// the ids of its entities, every reference to one, and idempotency keys.
// (An agent's id is owner/name, so its owner is prefixed.) Two worlds
// prefixed differently share no name, so no rule relates them.
func (w *World) Prefixed(pre string) *World {
	c := w.Clone()
	p := func(s *string) {
		if s != nil {
			*s = pre + *s
		}
	}
	for i := range c.Projects {
		p(&c.Projects[i].Slug)
	}
	for i := range c.People {
		p(&c.People[i].Handle)
	}
	for i := range c.Memberships {
		p(&c.Memberships[i].Project)
		p(&c.Memberships[i].Person)
	}
	for i := range c.Agents {
		p(&c.Agents[i].ID) // owner/name: the owner is prefixed
	}
	for i := range c.Runners {
		r := &c.Runners[i]
		if r.Name == r.ID {
			p(&r.Name)
		}
		p(&r.ID)
		p(&r.Agent)
	}
	for i := range c.Rooms {
		p(&c.Rooms[i].ID)
		p(&c.Rooms[i].Project)
		p(c.Rooms[i].Owner)
	}
	for i := range c.Messages {
		m := &c.Messages[i]
		p(&m.ID)
		p(&m.Room)
		p(&m.Author) // a person or an agent
		p(m.ReplyTurn)
	}
	for i := range c.Turns {
		p(&c.Turns[i].Message)
		for j := range c.Turns[i].Agents {
			p(&c.Turns[i].Agents[j].Agent)
		}
	}
	for i := range c.Tasks {
		t := &c.Tasks[i]
		p(&t.ID)
		p(&t.Project)
		p(&t.Agent)
		p(t.RequestMessage)
	}
	for i := range c.Attempts {
		a := &c.Attempts[i]
		if a.ID != "" {
			p(&a.ID)
		}
		p(&a.Task)
		p(&a.Runner)
		p(&a.IdempotencyKey)
	}
	for i := range c.DiscussionClaims {
		d := &c.DiscussionClaims[i]
		if d.ID != "" {
			p(&d.ID)
		}
		p(&d.Message)
		p(&d.Runner)
		p(&d.IdempotencyKey)
		p(d.Reviewing)
		p(d.ReplyMessage)
	}
	return c
}

// Merge is one world of every entity of parts, in their order.
func Merge(parts ...*World) *World {
	w := &World{Version: Version}
	out := reflect.ValueOf(w).Elem()
	for _, p := range parts {
		in := reflect.ValueOf(p).Elem()
		for i := range out.NumField() {
			if f := out.Field(i); f.Kind() == reflect.Slice {
				f.Set(reflect.AppendSlice(f, in.Field(i)))
			}
		}
	}
	return w
}
