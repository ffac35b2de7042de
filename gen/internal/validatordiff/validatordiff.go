// Package validatordiff is the differential test of the validators
// prickle-gen generates: it makes documents to validate from a spec's
// pages (examples, the conformance suite's derived cases, sampled values
// and their mutations) and compares what a generated validator says of
// each with what the compiled schema says (santhosh-tekuri/jsonschema
// through internal/schemacompile, the oracle). A disagreement is the
// generated validator's fault until shown otherwise.
//
// Only tests import it: gen's, on validators generated from pages, and its
// own, on the bundled pages' validators in package api (with their fuzz
// targets). It imports the conformance suite for its derived cases, which
// is why it lives here, under gen/, rather than in the module's internal/.
package validatordiff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/internal/schemacompile"
	"github.com/prickle-dev/prickle/internal/validation"
	"github.com/prickle-dev/prickle/spec"
	tekuri "github.com/santhosh-tekuri/jsonschema/v6"
)

// Case is one document to validate against one schema of a tool.
type Case struct {
	Tool    string `json:"tool"`
	Section string `json:"section"` // "input" or "output"
	// Source says where the document comes from: example, derived,
	// sample, mutation or text.
	Source string `json:"source"`
	// Doc is the document, byte for byte (not always UTF-8).
	Doc []byte `json:"doc"`
}

func (c Case) String() string {
	return fmt.Sprintf("%s %s (%s) %q", c.Tool, c.Section, c.Source, c.Doc)
}

// Schema is the schema of a tool's section in s, as the page writes it.
func Schema(s *spec.Spec, tool, section string) []byte {
	for _, t := range s.Tools {
		if t.Name != tool {
			continue
		}
		if section == "input" {
			return t.InputSchema.JSON
		}
		return t.OutputSchema.JSON
	}
	return nil
}

// Cases returns the documents to validate for every tool of s: the
// page's example input, every case the conformance suite derives from the
// input schema, and, for both schemas, a value the schema model samples
// (jsonschema.Schema.Instance) with each of its mutations (Mutations),
// then documents that are not I-JSON.
func Cases(s *spec.Spec) []Case {
	var out []Case
	add := func(tool, section, source string, docs ...[]byte) {
		for _, d := range docs {
			out = append(out, Case{Tool: tool, Section: section, Source: source, Doc: d})
		}
	}
	derived := derivedArgs(s)
	for _, t := range s.Tools {
		if t.ExampleInput != nil && len(t.ExampleInput.JSON) > 0 {
			add(t.Name, "input", "example", t.ExampleInput.JSON)
		}
		add(t.Name, "input", "derived", derived[t.Name]...)
		for _, sec := range []struct {
			name string
			blk  *spec.JSONBlock
		}{{"input", t.InputSchema}, {"output", t.OutputSchema}} {
			doc, err := jsonschema.Parse(sec.blk.JSON)
			if err != nil {
				continue
			}
			inst, err := doc.Root().Instance()
			if err != nil {
				continue
			}
			valid, err := json.Marshal(inst)
			if err != nil {
				continue
			}
			add(t.Name, sec.name, "sample", valid)
			add(t.Name, sec.name, "mutation", Mutations(valid)...)
			add(t.Name, sec.name, "text", TextMutations(valid)...)
		}
	}
	return out
}

// derivedArgs are the arguments of the cases the conformance suite
// derives from the spec, by tool.
func derivedArgs(s *spec.Spec) map[string][][]byte {
	out := map[string][][]byte{}
	scripts, _, _ := conformance.Suite(s)
	for _, sc := range scripts {
		if !sc.Derived {
			continue
		}
		lines := bufio.NewScanner(bytes.NewReader(sc.Archive))
		for lines.Scan() {
			tool, args, ok := callArgs(lines.Text())
			if ok {
				out[tool] = append(out[tool], []byte(args))
			}
		}
	}
	return out
}

// callArgs reads a script line "call -as WHO TOOL 'ARGS'".
func callArgs(line string) (tool, args string, ok bool) {
	rest, ok := strings.CutPrefix(line, "call -as ")
	if !ok {
		return "", "", false
	}
	f := strings.SplitN(rest, " ", 3)
	if len(f) < 3 || !strings.HasPrefix(f[2], "'") || !strings.HasSuffix(f[2], "'") {
		return "", "", false
	}
	return f[1], strings.ReplaceAll(f[2][1:len(f[2])-1], "''", "'"), true
}

// Result is what a validator says of a document: valid, invalid with its
// violations (sorted), or neither (an error that is no violation).
type Result struct {
	Valid      bool                   `json:"valid"`
	Violations []validation.Violation `json:"violations,omitempty"`
	Err        string                 `json:"err,omitempty"`
}

// ResultOf is the Result of a validator's error.
func ResultOf(err error) Result {
	var ve *validation.ValidationError
	switch {
	case err == nil:
		return Result{Valid: true}
	case errors.As(err, &ve):
		return Result{Violations: ve.Violations}
	}
	return Result{Err: err.Error()}
}

// Oracle validates with compiled schemas, each compiled once.
type Oracle struct {
	compiled map[string]*tekuri.Schema
}

// NewOracle returns an empty oracle.
func NewOracle() *Oracle { return &Oracle{compiled: map[string]*tekuri.Schema{}} }

// Judge validates doc against schema, which it names name.
func (o *Oracle) Judge(name string, schema, doc []byte) (Result, error) {
	key := name + "\x00" + string(schema)
	s, ok := o.compiled[key]
	if !ok {
		var err error
		if s, err = schemacompile.Compile("prickle:"+name, schema); err != nil {
			return Result{}, err
		}
		o.compiled[key] = s
	}
	return ResultOf(schemacompile.Validate(s, doc)), nil
}

// Diff says how got differs from want, or "" when they agree: the same
// verdict, and when invalid the same violations (pointer, keyword,
// keyword location and message). Errors that are no verdict agree
// whatever they say.
func Diff(got, want Result) string {
	switch {
	case got.Err != "" || want.Err != "":
		if (got.Err != "") != (want.Err != "") {
			return fmt.Sprintf("generated: %s; oracle: %s", show(got), show(want))
		}
		return ""
	case got.Valid != want.Valid:
		return fmt.Sprintf("generated: %s; oracle: %s", show(got), show(want))
	case !slices.Equal(comparable(got.Violations), comparable(want.Violations)):
		return fmt.Sprintf("violations differ:\n  generated: %s\n  oracle:    %s", show(got), show(want))
	}
	return ""
}

// comparable is vs as the two validators must agree on it. Of a violation
// that a property name causes (propertyNames) the library reports the
// pointer of the name as a document of its own, the root, while the
// generated validators report the object's (TestPropertyNamesPointer in
// package rt): only there the pointer is left out.
func comparable(vs []validation.Violation) []validation.Violation {
	out := slices.Clone(vs)
	for i, v := range out {
		if strings.Contains(v.KeywordLocation+"/", "/propertyNames/") {
			out[i].Pointer = ""
		}
	}
	validation.SortViolations(out)
	return out
}

func show(r Result) string {
	switch {
	case r.Err != "":
		return "error " + r.Err
	case r.Valid:
		return "valid"
	}
	parts := make([]string, len(r.Violations))
	for i, v := range r.Violations {
		parts[i] = fmt.Sprintf("%s %s (%s at %s)", ptr(v.Pointer), v.Message, v.Keyword, v.KeywordLocation)
	}
	return strings.Join(parts, "; ")
}

func ptr(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
