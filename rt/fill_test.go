package rt

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestFillEmpty(t *testing.T) {
	marshal := func(v any) string {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	groups := map[string][]int{"a": nil, "b": {1}}
	if got := marshal(FillEmpty(groups, false)); got != `{"a":[],"b":[1]}` {
		t.Errorf("map of slices: %s", got)
	}
	if groups["a"] != nil {
		t.Error("FillEmpty changed its argument")
	}
	nested := map[string]map[string][]string{"x": nil, "y": {"z": nil}}
	if got := marshal(FillEmpty(nested, false, false)); got != `{"x":{},"y":{"z":[]}}` {
		t.Errorf("two levels: %s", got)
	}
	if got := marshal(FillEmpty(nested, false, true)); got != `{"x":{},"y":{"z":null}}` {
		t.Errorf("nullable second level: %s", got)
	}
	if got := marshal(FillEmpty(nested, true, false)); got != `{"x":null,"y":{"z":[]}}` {
		t.Errorf("nullable first level: %s", got)
	}
	grid := [][]int{{1}, nil}
	if got := marshal(FillEmpty(grid, false)); got != `[[1],[]]` {
		t.Errorf("slice of slices: %s", got)
	}
	if grid[1] != nil {
		t.Error("FillEmpty changed its argument")
	}
	var none map[string][]int
	if FillEmpty(none, false) != nil {
		t.Error("a nil container is the caller's")
	}
	same := map[string][]int{"a": {}}
	if got := FillEmpty(same, false); reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(same).UnsafePointer() {
		t.Error("a map with nothing to fill was copied")
	}
}
