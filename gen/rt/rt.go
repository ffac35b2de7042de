// Package rt is the runtime of the code prickle-gen generates: schema
// validators compiled once, the registration of typed tool handlers on an
// MCP server, the typed client calls, tool errors and the caller's identity.
//
// Generated packages import only rt, the MCP Go SDK and the standard
// library, so they compile in any module that requires
// github.com/prickle-dev/prickle.
package rt

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/prickle-dev/prickle/internal/schemax"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Violation is one reason a JSON value fails a schema: the value's JSON
// pointer, the failing keyword, an English message and the keyword's place
// in the schema.
type Violation = schemax.Violation

// ValidationError is a failed validation. Its violations are sorted by
// pointer, then keyword location, then message, so the same bad value
// always gives the same error.
type ValidationError = schemax.ValidationError

// Validator validates JSON against one schema. The schema is compiled the
// first time it is needed (JSON Schema 2020-12, ECMA-262 patterns,
// format asserted) and never again; a Validator is safe for
// concurrent use.
type Validator struct {
	name    string
	schema  []byte
	compile func() (*jsonschema.Schema, error)
}

// NewValidator returns a validator for the schema document raw, named name
// in errors (e.g. "claim_task/input"). Nothing is compiled until the first
// use, so a program that imports a generated package but never validates
// pays nothing at start-up.
func NewValidator(name string, raw []byte) *Validator {
	v := &Validator{name: name, schema: raw}
	v.compile = sync.OnceValues(func() (*jsonschema.Schema, error) {
		return schemax.Compile("prickle:"+name, raw) // an absolute URL: local $refs resolve inside it
	})
	return v
}

// Name is the validator's name.
func (v *Validator) Name() string { return v.name }

// Schema returns the schema document, as given to NewValidator.
func (v *Validator) Schema() json.RawMessage { return json.RawMessage(v.schema) }

// Compile compiles the schema now, if that has not happened yet, and
// reports a schema that does not compile. Servers may call it at start-up
// to move the cost out of the first call.
func (v *Validator) Compile() error {
	_, err := v.compile()
	if err != nil {
		return fmt.Errorf("rt: schema %s: %w", v.name, err)
	}
	return nil
}

// Validate validates the JSON document raw. It returns nil, a
// *ValidationError (JSON that does not parse is a violation at the root,
// keyword "json"; so is, at its pointer, what decoders read differently:
// a member named twice, invalid UTF-8, a lone surrogate), or another error
// when the schema itself does not compile or a pattern match did not
// finish in time (the document is then neither valid nor invalid).
func (v *Validator) Validate(raw []byte) error {
	s, err := v.compile()
	if err != nil {
		return fmt.Errorf("rt: schema %s: %w", v.name, err)
	}
	return schemax.Validate(s, raw)
}

// ValidateValue marshals x with encoding/json and validates the result.
func (v *Validator) ValidateValue(x any) error {
	b, err := json.Marshal(x)
	if err != nil {
		return err
	}
	return v.Validate(b)
}
