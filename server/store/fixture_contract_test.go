package store_test

// The fixture contract as a third party meets it: the published schema
// is the one source of the fixture's enums and patterns, and every fixture
// the repository carries loads.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/prickle-dev/prickle/internal/load"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec"
	"github.com/rogpeppe/go-internal/txtar"
)

// walk calls f on every object of a decoded JSON document with its JSON
// pointer.
func walk(ptr string, v any, f func(ptr string, obj map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(ptr, v)
		for k, c := range v {
			walk(ptr+"/"+k, c, f)
		}
	case []any:
		for _, c := range v {
			walk(ptr+"/*", c, f)
		}
	}
}

// TestFixtureSchemaOneSource: no enum and no pattern of the pages is
// copied into the fixture schema (it refers to the pages' definitions),
// the published file is what the store embeds, and the Go constants the
// store keeps for the schema's enums are among them.
func TestFixtureSchemaOneSource(t *testing.T) {
	file, err := os.ReadFile("fixture.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, store.FixtureSchema()) {
		t.Fatal("FixtureSchema() is not fixture.schema.json")
	}
	var fixture any
	if err := json.Unmarshal(file, &fixture); err != nil {
		t.Fatal(err)
	}
	pages, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	pageEnums := map[string]string{}
	pagePatterns := map[string]string{}
	for _, tool := range pages.Tools {
		for _, b := range []*spec.JSONBlock{tool.InputSchema, tool.OutputSchema} {
			var doc any
			if err := json.Unmarshal(b.JSON, &doc); err != nil {
				t.Fatal(err)
			}
			walk(tool.Name, doc, func(ptr string, obj map[string]any) {
				if e, ok := obj["enum"]; ok {
					k, _ := json.Marshal(e)
					pageEnums[string(k)] = ptr
				}
				if p, ok := obj["pattern"].(string); ok {
					pagePatterns[p] = ptr
				}
			})
		}
	}
	enums := map[string][]string{} // by the fixture's pointer
	walk("", fixture, func(ptr string, obj map[string]any) {
		if e, ok := obj["enum"].([]any); ok {
			k, _ := json.Marshal(e)
			if at, dup := pageEnums[string(k)]; dup {
				t.Errorf("fixture schema %s copies the enum of %s: refer to it", ptr, at)
			}
			for _, v := range e {
				s, _ := v.(string)
				enums[ptr] = append(enums[ptr], s)
			}
		}
		if p, ok := obj["pattern"].(string); ok {
			if at, dup := pagePatterns[p]; dup {
				t.Errorf("fixture schema %s copies the pattern of %s: refer to it", ptr, at)
			}
		}
		if v, ok := obj["const"]; ok && ptr == "/properties/version" && v != float64(store.FixtureVersion) {
			t.Errorf("schema version %v, FixtureVersion %d", v, store.FixtureVersion)
		}
	})
	states := enums["/$defs/turn/properties/state"]
	for _, c := range []string{store.TurnWaiting, store.TurnEnded, store.TurnStopped, store.TurnTimedOut, store.TurnReplaced} {
		if !slices.Contains(states, c) {
			t.Errorf("turn state %q is not in the fixture schema's %v", c, states)
		}
	}
	var roles []string
	walk("", mustJSON(t, pages.Tool("claim_discussion").OutputSchema.JSON), func(ptr string, obj map[string]any) {
		if ptr == "/properties/role" {
			for _, v := range obj["enum"].([]any) {
				roles = append(roles, v.(string))
			}
		}
	})
	if want := []string{store.RoleDraft, store.RoleReview, store.RoleRevise, store.RoleCombine}; !reflect.DeepEqual(roles, want) {
		t.Errorf("the page's roles %v, the store's %v", roles, want)
	}
}

func mustJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRepositoryFixturesLoad: every fixture of the repository, and the
// fixtures "prickle-load fixture" writes, load into an empty store.
func TestRepositoryFixturesLoad(t *testing.T) {
	fixtures := map[string][]byte{}
	for _, f := range []string{"testdata/world.json", "../testdata/world.json", "../../conformance/worlds/seed.json",
		"../../e2e/testdata/world.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fixtures[f] = b
	}
	scripts, err := filepath.Glob("../../conformance/scripts/*.txtar")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no conformance scripts: %v", err)
	}
	for _, f := range scripts {
		a, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, af := range a.Files {
			if af.Name == "fixture.json" {
				fixtures[f] = af.Data
			}
		}
	}
	world, _, err := load.Fixture(3)
	if err != nil {
		t.Fatal(err)
	}
	fixtures["prickle-load fixture -tasks 3"] = world
	for name, b := range fixtures {
		st, err := store.Open(context.Background(), ":memory:", store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.LoadFixture(context.Background(), bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		st.Close()
	}
}
