package store_test

// The world format as a third party meets it: the published schema is
// the one source of the format's enums and patterns, and every world the
// repository carries loads.

import (
	"bytes"
	"context"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/prickle-dev/prickle/cmd/prickle-load/load"
	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/internal/pgtest"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/world"
	"github.com/rogpeppe/go-internal/txtar"
)

// TestWorldSchemaOneSource: no enum and no pattern of the pages is
// copied into the world schema (it refers to the pages' definitions),
// and the Go constants the store keeps for the schema's enums are among
// them. The pages are the first published ones (testdata/pages/snapshot),
// which the schema was written against: a page added later may state a
// fact the schema already holds without the schema having copied it.
func TestWorldSchemaOneSource(t *testing.T) {
	file := world.SchemaJSON()
	schema, err := jsonschema.Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := spec.ReadPaths([]string{"../../testdata/pages/snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	pages, _, err := spec.LoadLinted(srcs)
	if err != nil {
		t.Fatal(err)
	}
	pageEnums := map[string]string{}
	pagePatterns := map[string]string{}
	for _, tool := range pages.Tools {
		for _, b := range []*spec.JSONBlock{tool.InputSchema, tool.OutputSchema} {
			b.Schema().Walk(func(s *jsonschema.Schema) {
				if k := s.Get("enum"); k != nil {
					pageEnums[jsonschema.Canonical(k.Value)] = tool.Name + k.Ptr
				}
				if p, ok := s.String("pattern"); ok {
					pagePatterns[p] = tool.Name + s.KeywordPointer("pattern")
				}
			})
		}
	}
	enums := map[string][]string{} // by the world schema's pointer
	schema.Walk(func(s *jsonschema.Schema) {
		if k := s.Get("enum"); k != nil {
			if at, dup := pageEnums[jsonschema.Canonical(k.Value)]; dup {
				t.Errorf("world schema %s copies the enum of %s: refer to it", k.Ptr, at)
			}
			enums[s.Pointer()], _ = k.Strings()
		}
		if p, ok := s.String("pattern"); ok {
			if at, dup := pagePatterns[p]; dup {
				t.Errorf("world schema %s copies the pattern of %s: refer to it", s.KeywordPointer("pattern"), at)
			}
		}
	})
	if v, ok := schema.Root().Property("version").Get("const").Number(); !ok || v.Cmp(big.NewRat(world.Version, 1)) != 0 {
		t.Errorf("schema version %v, world.Version %d", v, world.Version)
	}
	states := enums["/$defs/turn/properties/state"]
	for _, c := range []string{store.TurnWaiting, store.TurnEnded, store.TurnStopped, store.TurnTimedOut, store.TurnReplaced} {
		if !slices.Contains(states, c) {
			t.Errorf("turn state %q is not in the world schema's %v", c, states)
		}
	}
	bundled, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	roles, _ := bundled.Tool("claim_discussion").OutputSchema.Schema().Root().Property("role").Strings("enum")
	if want := []string{store.RoleDraft, store.RoleReview, store.RoleRevise, store.RoleCombine}; !reflect.DeepEqual(roles, want) {
		t.Errorf("the page's roles %v, the store's %v", roles, want)
	}
}

// TestRepositoryWorldsLoad: every world of the repository, and the
// worlds "prickle-load fixture" writes, load into an empty store.
func TestRepositoryWorldsLoad(t *testing.T) {
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) { repositoryWorldsLoad(t, db) })
	}
}

func repositoryWorldsLoad(t *testing.T, db string) {
	newDSN := func() string { return ":memory:" }
	if db == "postgres" {
		pg := pgtest.Start(t)
		newDSN = func() string { return pg.NewDSN(t) }
	}
	{
		worlds := map[string][]byte{}
		for _, f := range []string{"testdata/world.json", "../testdata/world.json", "../../spec/seed/world.json",
			"../../e2e/testdata/world.json"} {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			worlds[f] = b
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
					worlds[f] = af.Data
				}
			}
		}
		generated, _, err := load.Fixture(3)
		if err != nil {
			t.Fatal(err)
		}
		worlds["prickle-load fixture -tasks 3"] = generated
		for name, b := range worlds {
			st, err := store.Open(context.Background(), newDSN(), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.LoadWorld(context.Background(), bytes.NewReader(b)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			st.Close()
		}
	}
}
