package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/internal/schemacompile"
	"github.com/prickle-dev/prickle/internal/validation"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// Rules lists every lint rule with its severity and what it finds.
var Rules = []struct {
	ID       string
	Severity Severity
	Doc      string
}{
	{"title-missing", Error, "the page has no # title, or text comes before it"},
	{"heading-duplicate", Error, "a second # title"},
	{"heading-level", Error, "a heading of level 4 or deeper"},
	{"tool-missing", Error, "no ## tool heading"},
	{"tool-multiple", Error, "more than one ## tool heading on a page"},
	{"tool-name", Error, "a tool name that is not snake_case"},
	{"tool-duplicate", Error, "two pages document the same tool"},
	{"description-missing", Error, "no description paragraph under the tool heading"},
	{"section-missing", Error, "Example input, Input schema or Output schema is missing"},
	{"section-duplicate", Error, "a section appears twice"},
	{"section-order", Error, "sections out of order, or text between them"},
	{"section-unknown", Error, "a ### heading that is not a known section"},
	{"fence-missing", Error, "a section heading with no ```json fence after it"},
	{"fence-language", Error, "a section fence whose language is not json"},
	{"fence-unexpected", Error, "a code fence outside a section"},
	{"block-unexpected", Error, "a list, quote, rule or HTML block: pages hold none"},
	{"json-syntax", Error, "a fence that is not valid JSON (line and column in the page)"},
	{"link-missing", Error, "the page does not end with [Read online](URL)"},
	{"link-url", Error, "the doc link is not an absolute URL"},
	{"link-tool", Error, "the doc link's tool= disagrees with the heading, or is missing"},
	{"schema-root", Error, "an input or output schema whose root is not type object"},
	{"schema-invalid", Error, "a schema that is not valid JSON Schema 2020-12"},
	{"pattern-invalid", Error, "a pattern that is not a valid ECMA-262 regular expression"},
	{"required-unknown", Error, "required names a property the schema does not define"},
	{"example-invalid", Error, "the example input does not validate against the input schema (format asserted)"},
	{"example-unchecked", Error, "the example input could not be checked: a pattern match on it did not finish in time"},
	{"example-seed", Warning, "the example input names an id the seed world lacks (spec/seed/world.json: extend it, so that the example can succeed)"},
	{"shared-drift", Warning, "pages disagree on text they share: title, preamble, notes, docs host"},
	{"catalog-undocumented", Info, "a catalog name (from allowed_tools) with no page"},
}

// Lint parses the pages and runs every rule. Findings are sorted.
func Lint(pages []*Page, parseDiags Diagnostics) (*Spec, Diagnostics) {
	ds := append(Diagnostics(nil), parseDiags...)
	s, bd := Build(pages)
	ds = append(ds, bd...)
	for _, tds := range lintTools(s.Tools) {
		ds = append(ds, tds...)
	}
	ds.Sort()
	return s, ds
}

// lintTools lints the tools on every CPU: compiling and checking the
// schemas is most of lint's cost, and tools are independent (each touches
// only its own blocks; the regexp cache is safe for concurrent use).
func lintTools(tools []*Tool) []Diagnostics {
	out := make([]Diagnostics, len(tools))
	workers := min(runtime.GOMAXPROCS(0), len(tools))
	if workers <= 1 {
		for i, t := range tools {
			out[i] = lintTool(t)
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(tools) {
					return
				}
				out[i] = lintTool(tools[i])
			}
		})
	}
	wg.Wait()
	return out
}

func lintTool(t *Tool) Diagnostics {
	var ds Diagnostics
	var input *santhosh.Schema
	for _, sec := range []struct {
		name string
		b    *JSONBlock
	}{{SectionInput, t.InputSchema}, {SectionOutput, t.OutputSchema}} {
		if sec.b == nil || !sec.b.Valid() {
			continue
		}
		sch, bad, sd := lintSchema(t, sec.name, sec.b)
		ds = append(ds, sd...)
		if sec.name == SectionInput {
			input = sch
			if input == nil {
				// The example is still checked against what does
				// compile, so that every error shows at once.
				input = compileWithout(SchemaURL(t.Name, sec.name), sec.b.JSON, bad)
			}
		}
	}
	if ex := t.ExampleInput; ex != nil && ex.Valid() && input != nil {
		// The example is decoded once, for the schema and the seed world.
		// Its values may point into ex.JSON, which stays as it is.
		inst, err := schemacompile.Instance(ex.JSON)
		if err == nil {
			err = schemacompile.ValidateValue(input, inst)
		}
		if err == nil {
			// A valid example must also be able to succeed: the ids it
			// names exist in the seed world.
			ds = append(ds, exampleSeed(t, ex, inst)...)
		} else {
			var ve *validation.ValidationError
			if errors.As(err, &ve) {
				for _, v := range ve.Violations {
					ds = append(ds, Diagnostic{Pos: ex.PointerPos(v.Pointer), Severity: Error, Rule: "example-invalid",
						Message: fmt.Sprintf("%s: example input at %s: %s (%s)", t.Name, ptrOrRoot(v.Pointer), v.Message, v.Keyword)})
				}
			} else {
				// Neither valid nor invalid: a pattern too slow on this value.
				ds = append(ds, Diagnostic{Pos: ex.Pos, Severity: Error, Rule: "example-unchecked",
					Message: fmt.Sprintf("%s: example input: %v", t.Name, err)})
			}
		}
	}
	return ds
}

// lintSchema checks one schema and returns it compiled when it is valid;
// otherwise bad holds the pointers of what keeps it from compiling.
func lintSchema(t *Tool, section string, b *JSONBlock) (_ *santhosh.Schema, bad []string, _ Diagnostics) {
	var ds Diagnostics
	add := func(ptr, rule, format string, args ...any) {
		ds = append(ds, Diagnostic{Pos: b.PointerPos(ptr), Severity: Error, Rule: rule,
			Message: fmt.Sprintf("%s: %s at %s: ", t.Name, section, ptrOrRoot(ptr)) + fmt.Sprintf(format, args...)})
	}
	doc := b.Schema()
	if typ, ok := doc.Root().String("type"); !ok || typ != "object" {
		add("", "schema-root", "a tool's schema must be an object schema (\"type\": \"object\")")
	}
	badPattern := map[string]bool{}
	doc.Walk(func(s *jsonschema.Schema) {
		if k := s.Get("pattern"); k != nil {
			if pat, ok := k.String(); ok {
				if _, err := ecmaregex.Compile(pat); err != nil {
					add(k.Ptr, "pattern-invalid", "%v", err)
					badPattern[k.Ptr] = true
					bad = append(bad, k.Ptr)
				}
			}
		}
		patternProps := s.Members("patternProperties")
		for _, m := range patternProps {
			if _, err := ecmaregex.Compile(m.Name); err != nil {
				add(m.Schema.Pointer(), "pattern-invalid", "%v", err)
				badPattern[m.Schema.Pointer()] = true
				bad = append(bad, m.Schema.Pointer())
			}
		}
		req := s.Get("required")
		names, ok := s.Strings("required")
		if !ok || len(patternProps) > 0 {
			return // a pattern may define the name
		}
		for i, r := range names {
			if s.Property(r) == nil {
				add(jsonpointer.AppendIndex(req.Ptr, i), "required-unknown", "required property %q is not among the schema's properties", r)
			}
		}
	})
	sch, err := schemacompile.Compile(SchemaURL(t.Name, section), b.JSON)
	if err != nil {
		var se *schemacompile.SchemaError
		if errors.As(err, &se) {
			// One finding per place: the meta-schema may give several
			// reasons for one value (each branch of an anyOf).
			var ptrs []string
			reasons := map[string][]string{}
			for _, v := range se.Violations {
				if badPattern[v.Pointer] {
					continue // already reported as pattern-invalid
				}
				if _, ok := reasons[v.Pointer]; !ok {
					ptrs = append(ptrs, v.Pointer)
				}
				reasons[v.Pointer] = append(reasons[v.Pointer], fmt.Sprintf("%s (%s)", v.Message, v.Keyword))
			}
			for _, p := range ptrs {
				add(p, "schema-invalid", "not valid JSON Schema 2020-12: %s", strings.Join(reasons[p], "; "))
			}
			bad = append(bad, ptrs...)
		} else {
			add("", "schema-invalid", "%v", err)
			bad = append(bad, "")
		}
		return nil, bad, ds
	}
	return sch, nil, ds
}

// maxPrunes bounds the rounds of compileWithout: removing a part may show
// a problem the compiler had not reached.
const maxPrunes = 8

// compileWithout compiles the schema doc without the members at the
// pointers bad and whatever else keeps it from compiling, or returns nil
// when nothing is left to compile. A member is removed from the nearest
// object that holds it: a bad keyword's value drops the keyword, a bad
// subschema in an array of them drops the array's keyword.
func compileWithout(url string, doc []byte, bad []string) *santhosh.Schema {
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	for range maxPrunes {
		for _, p := range bad {
			if !removeMember(v, p) {
				return nil
			}
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		sch, err := schemacompile.Compile(url, b)
		if err == nil {
			return sch
		}
		var se *schemacompile.SchemaError
		if !errors.As(err, &se) {
			return nil
		}
		bad = bad[:0]
		for _, vi := range se.Violations {
			bad = append(bad, vi.Pointer)
		}
	}
	return nil
}

// removeMember removes from doc the object member that holds the value at
// ptr (ptr itself, or its nearest ancestor that is an object's member).
// It reports false when there is none: ptr is the root, or names nothing.
func removeMember(doc any, ptr string) bool {
	tokens, err := jsonpointer.Split(ptr)
	if err != nil {
		return false
	}
	// Walk down, remembering the deepest object member on the way.
	var obj map[string]any
	var name string
	cur := doc
	for _, tok := range tokens {
		switch n := cur.(type) {
		case map[string]any:
			next, ok := n[tok]
			if !ok {
				return false
			}
			obj, name, cur = n, tok, next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return false
			}
			cur = n[i]
		default:
			return false
		}
	}
	if obj == nil {
		return false
	}
	delete(obj, name)
	return true
}

func ptrOrRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// SchemaURL names a tool's schema for the JSON Schema compiler: an
// absolute URL that is never fetched, so local "$ref"s resolve inside the
// schema and remote ones fail instead of reading files.
func SchemaURL(tool, section string) string {
	s := "input"
	if section == SectionOutput {
		s = "output"
	}
	return "https://prickle.invalid/tools/" + tool + "/" + s + ".json"
}
