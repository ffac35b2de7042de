package rt

import (
	"reflect"
	"testing"
)

type unimpl struct{}

func (unimpl) Claim() error { return NotImplemented("claim") }
func (unimpl) List() error  { return NotImplemented("list") }
func (unimpl) Post() error  { return NotImplemented("post") }

type poster struct{}

func (poster) Post() error { return nil }

// handler declares Claim, takes Post from poster and List from unimpl.
type handler struct {
	unimpl
	*poster
}

func (*handler) Claim() error { return nil }

// deep takes everything through another struct that embeds unimpl.
type deep struct{ handler }

type valueHandler struct{ unimpl }

func (valueHandler) List() error { return nil }

func TestPromotedFrom(t *testing.T) {
	u := reflect.TypeFor[unimpl]()
	for _, c := range []struct {
		h    any
		name string
		want bool
	}{
		{&handler{}, "Claim", false}, // declared
		{&handler{}, "List", true},   // left to unimpl
		{&handler{}, "Post", false},  // from another embedded field, shallower than none
		{&deep{}, "List", true},
		{&deep{}, "Claim", false}, // handler's, promoted through deep: not unimpl's
		{valueHandler{}, "List", false},
		{valueHandler{}, "Post", true},
		{&handler{}, "Missing", false},
		{nil, "List", false},
	} {
		if got := PromotedFrom(c.h, c.name, u); got != c.want {
			t.Errorf("PromotedFrom(%T, %s) = %v, want %v", c.h, c.name, got, c.want)
		}
	}
	if err := NotImplemented("claim"); err.Code != CodeNotImplemented {
		t.Errorf("NotImplemented code %q", err.Code)
	}
}
