package world

import (
	_ "embed"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/prickle-dev/prickle/internal/schemacompile"
	"github.com/prickle-dev/prickle/internal/validation"
)

// schemaJSON is the format as JSON Schema 2020-12: the one source of a
// world's shapes, enums, lengths and patterns. Where a field is the same
// fact as a field of a documented tool, it refers to the tool's schema on
// its page.
//
//go:embed fixture.schema.json
var schemaJSON []byte

// SchemaURL is the $id of the world schema (a name, never fetched; it
// keeps the format's older name, "fixtures").
const SchemaURL = "https://prickle.invalid/fixtures/v1.schema.json"

// SchemaJSON returns the world format's JSON Schema (2020-12), as
// published in spec/world/fixture.schema.json. Its "$ref"s name the tool
// pages' schemas by URL (see CompileSchema).
func SchemaJSON() []byte { return append([]byte(nil), schemaJSON...) }

// Definitions of the schema that a server also checks alone, as JSON
// pointers into it (for Schema.CheckValue).
const (
	// DefID is the rule of a runner's, room's or discussion claim's id:
	// the rule of every id on the pages.
	DefID = "/$defs/id"
	// DefMessageBody and DefMessageProvenance are a message's body and
	// provenance.
	DefMessageBody       = "/$defs/message/properties/body"
	DefMessageProvenance = "/$defs/message/properties/provenance"
)

// maxErrors bounds the schema violations one Parse reports.
const maxErrors = 10

// Schema is the world schema, compiled with the pages' schemas it
// refers to. It is safe for concurrent use.
type Schema struct {
	world *jsonschema.Schema
	defs  map[string]*jsonschema.Schema // by DefID, DefMessageBody ...
}

// CompileSchema compiles the world schema. pages yields every schema its
// "$ref"s may name, under its URL: each tool page's input and output
// schema (spec.SchemaURL names them
// https://prickle.invalid/tools/TOOL/input.json and output.json; they are
// names, never fetched).
func CompileSchema(pages iter.Seq2[string, []byte]) (*Schema, error) {
	c := schemacompile.NewCompiler()
	for url, raw := range pages {
		doc, err := validation.Unmarshal(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", url, err)
		}
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("%s: %w", url, err)
		}
	}
	doc, err := validation.Unmarshal(schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("fixture schema: %w", err)
	}
	if err := c.AddResource(SchemaURL, doc); err != nil {
		return nil, fmt.Errorf("fixture schema: %w", err)
	}
	s := &Schema{defs: map[string]*jsonschema.Schema{}}
	if s.world, err = c.Compile(SchemaURL); err != nil {
		return nil, fmt.Errorf("fixture schema: %w", err)
	}
	for _, def := range []string{DefID, DefMessageBody, DefMessageProvenance} {
		if s.defs[def], err = c.Compile(SchemaURL + "#" + def); err != nil {
			return nil, fmt.Errorf("fixture schema: %w", err)
		}
	}
	return s, nil
}

// Parse reads a world a server is to load: data must be one JSON document
// valid against the schema, so its times are absolute. A problem is an
// *Error; several schema violations are joined with errors.Join, in the
// order of the text, the reasons for one value together, at most ten
// (errors.As finds the first).
func (s *Schema) Parse(data []byte) (*World, error) {
	doc := &document{data: data}
	if e := doc.syntaxError(); e != nil {
		return nil, e
	}
	if err := schemacompile.Validate(s.world, data); err != nil {
		var ve *validation.ValidationError
		if !errors.As(err, &ve) {
			// A pattern match that did not finish: neither valid nor invalid.
			return nil, fmt.Errorf("fixture: %w", err)
		}
		return nil, doc.violations(ve.Violations)
	}
	return doc.decode()
}

// violations reports schema violations in the order of the text, the
// reasons for one value together, at most maxErrors values.
func (doc *document) violations(vs []validation.Violation) error {
	var ptrs []string
	reasons := map[string][]string{}
	for _, v := range vs {
		if _, ok := reasons[v.Pointer]; !ok {
			ptrs = append(ptrs, v.Pointer)
		}
		reasons[v.Pointer] = append(reasons[v.Pointer], v.Message)
	}
	errs := make([]*Error, len(ptrs))
	for i, p := range ptrs {
		errs[i] = doc.errAt(p, errors.New(strings.Join(reasons[p], "; ")))
	}
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
	})
	var out []error
	for i, e := range errs {
		if i == maxErrors {
			out = append(out, fmt.Errorf("fixture: %d more problems", len(errs)-i))
			break
		}
		out = append(out, e)
	}
	if len(out) == 1 {
		return out[0]
	}
	return errors.Join(out...)
}

// CheckValue checks v against the schema's definition def (DefID, ...),
// naming what it is in the error: `invalid WHAT "V": reason`.
func (s *Schema) CheckValue(def, what, v string) error {
	d := s.defs[def]
	if d == nil {
		return fmt.Errorf("fixture schema: no definition %s", def)
	}
	err := schemacompile.ValidateValue(d, v)
	var ve *validation.ValidationError
	if errors.As(err, &ve) && len(ve.Violations) > 0 {
		return fmt.Errorf("invalid %s %q: %s", what, v, ve.Violations[0].Message)
	}
	return err
}
