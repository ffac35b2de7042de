package world_test

import (
	"reflect"
	"testing"

	"github.com/prickle-dev/prickle/spec/seed"
	"github.com/prickle-dev/prickle/spec/world"
)

// TestMerge: a merged world has every entity of every part, of every
// kind World has, in the parts' order.
func TestMerge(t *testing.T) {
	part := func() *world.World {
		w := &world.World{Version: world.Version}
		v := reflect.ValueOf(w).Elem()
		for i := range v.NumField() {
			if f := v.Field(i); f.Kind() == reflect.Slice && f.CanSet() {
				f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			}
		}
		return w
	}
	a, b := part(), part()
	a.Tasks[0].ID, b.Tasks[0].ID = "a", "b"
	m := reflect.ValueOf(world.Merge(a, b)).Elem()
	for i := range m.NumField() {
		if f := m.Field(i); f.Kind() == reflect.Slice && f.Len() != 2 {
			t.Errorf("%s: %d entities of 2", m.Type().Field(i).Name, f.Len())
		}
	}
	if got := world.Merge(a, b).Tasks; got[0].ID != "a" || got[1].ID != "b" {
		t.Errorf("tasks %v, want a's then b's", got)
	}
}

// TestPrefixed: the seed world prefixed has its ids and references
// prefixed, and the world it copied is untouched. (Package explore's
// TestPartsShareNoName checks that no name is left out.)
func TestPrefixed(t *testing.T) {
	w, err := world.Decode(seed.JSON())
	if err != nil {
		t.Fatal(err)
	}
	p := w.Prefixed("s1-")
	if p.Tasks[0].ID != "s1-"+w.Tasks[0].ID || p.Tasks[0].Project != "s1-"+w.Tasks[0].Project || p.Agents[0].ID != "s1-"+w.Agents[0].ID {
		t.Errorf("task %+v, agent %s: not prefixed", p.Tasks[0], p.Agents[0].ID)
	}
	if w.Tasks[0].ID == p.Tasks[0].ID {
		t.Error("Prefixed changed the world it copied")
	}
}
