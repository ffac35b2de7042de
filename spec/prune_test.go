package spec

import (
	"encoding/json"
	"testing"
)

// removeMember drops the member of the nearest object that holds the
// value at a pointer: the keyword itself, or the keyword of the array
// that holds it; nothing for the root or a pointer that names nothing.
func TestRemoveMember(t *testing.T) {
	doc := `{"properties":{"a":{"type":"string","minLength":-1}},"anyOf":[{"type":7},true],"required":["a"]}`
	for _, c := range []struct {
		ptr  string
		ok   bool
		want string
	}{
		{"/properties/a/minLength", true, `{"anyOf":[{"type":7},true],"properties":{"a":{"type":"string"}},"required":["a"]}`},
		{"/anyOf/0/type", true, `{"anyOf":[{},true],"properties":{"a":{"minLength":-1,"type":"string"}},"required":["a"]}`},
		{"/anyOf/1", true, `{"properties":{"a":{"minLength":-1,"type":"string"}},"required":["a"]}`},
		{"/required/0", true, `{"anyOf":[{"type":7},true],"properties":{"a":{"minLength":-1,"type":"string"}}}`},
		{"", false, ""},
		{"/properties/b", false, ""},
		{"/anyOf/5", false, ""},
	} {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		ok := removeMember(v, c.ptr)
		if ok != c.ok {
			t.Errorf("%q: removed %v, want %v", c.ptr, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		if got, _ := json.Marshal(v); string(got) != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.ptr, got, c.want)
		}
	}
}
