package store

import (
	"errors"
	"fmt"
	"sync"

	"github.com/prickle-dev/prickle/internal/schemax"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/world"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fixtureSchemaJSON is the fixture format as JSON Schema 2020-12: the one
// source of the fixture's shapes, enums, lengths and patterns. Where a
// field is the same fact as a field of a documented tool, it refers to the
// tool's schema on its page.
var fixtureSchemaJSON = world.SchemaJSON()

// FixtureSchemaURL is the $id of the fixture schema (a name, never
// fetched).
const FixtureSchemaURL = "https://prickle.invalid/fixtures/v1.schema.json"

// FixtureSchema returns the fixture format's JSON Schema (2020-12), as
// published in spec/world/fixture.schema.json. Its "$ref"s into the tool
// pages' schemas use the URLs of spec.SchemaURL.
func FixtureSchema() []byte { return append([]byte(nil), fixtureSchemaJSON...) }

// fixtureSchemas are the compiled fixture schema and the definitions the
// store checks single values against.
type fixtureSchemas struct {
	world *jsonschema.Schema
	id    *jsonschema.Schema // $defs/id: runner, room and discussion claim ids
	// A message's body and provenance, for replies posted through the
	// store (PostDiscussionReply).
	body, provenance *jsonschema.Schema
}

// compiledFixtureSchemas compiles the fixture schema once, with the
// bundled pages' schemas registered under their spec.SchemaURL names.
var compiledFixtureSchemas = sync.OnceValues(func() (fixtureSchemas, error) {
	var fs fixtureSchemas
	pages, err := spec.LoadBundled()
	if err != nil {
		return fs, fmt.Errorf("bundled pages: %w", err)
	}
	c := schemax.NewCompiler()
	for _, t := range pages.Tools {
		for section, b := range map[string]*spec.JSONBlock{spec.SectionInput: t.InputSchema, spec.SectionOutput: t.OutputSchema} {
			if b == nil {
				continue
			}
			doc, err := schemax.Unmarshal(b.JSON)
			if err != nil {
				return fs, fmt.Errorf("%s %s: %w", t.Name, section, err)
			}
			if err := c.AddResource(spec.SchemaURL(t.Name, section), doc); err != nil {
				return fs, fmt.Errorf("%s %s: %w", t.Name, section, err)
			}
		}
	}
	doc, err := schemax.Unmarshal(fixtureSchemaJSON)
	if err != nil {
		return fs, fmt.Errorf("fixture schema: %w", err)
	}
	if err := c.AddResource(FixtureSchemaURL, doc); err != nil {
		return fs, fmt.Errorf("fixture schema: %w", err)
	}
	if fs.world, err = c.Compile(FixtureSchemaURL); err != nil {
		return fs, fmt.Errorf("fixture schema: %w", err)
	}
	for _, d := range []struct {
		dst **jsonschema.Schema
		ref string
	}{{&fs.id, "#/$defs/id"}, {&fs.body, "#/$defs/message/properties/body"}, {&fs.provenance, "#/$defs/message/properties/provenance"}} {
		if *d.dst, err = c.Compile(FixtureSchemaURL + d.ref); err != nil {
			return fs, fmt.Errorf("fixture schema: %w", err)
		}
	}
	return fs, nil
})

// checkID checks a runner, room or discussion claim id against the
// fixture schema's id, naming what it is in the error.
func checkID(what, id string) error {
	fs, err := compiledFixtureSchemas()
	if err != nil {
		return err
	}
	return checkValue(fs.id, what, id)
}

// checkValue checks a single value against one definition of the fixture
// schema, naming what it is in the error.
func checkValue(def *jsonschema.Schema, what, v string) error {
	err := schemax.ValidateValue(def, v)
	var ve *schemax.ValidationError
	if errors.As(err, &ve) && len(ve.Violations) > 0 {
		return fmt.Errorf("invalid %s %q: %s", what, v, ve.Violations[0].Message)
	}
	return err
}
