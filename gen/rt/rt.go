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
	valid   validMemo // documents found valid, for ValidateRemembered
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

// ValidateRemembered is Validate for documents that repeat byte for byte
// (a tool output that is the same for every caller until the data behind
// it changes): a document found valid is remembered, and the same bytes
// are not validated again. Validation depends on the bytes alone, so a
// remembered answer is never stale; only valid documents are remembered,
// at most memoEntries of at most memoMaxBytes each (when full, the memory
// starts again empty). Never use it for documents that hold secrets:
// remembered documents stay in memory.
func (v *Validator) ValidateRemembered(raw []byte) error {
	if v.valid.has(raw) {
		return nil
	}
	err := v.Validate(raw)
	if err == nil {
		v.valid.add(raw)
	}
	return err
}

// The bounds of a validator's memory of valid documents.
const (
	memoEntries  = 64
	memoMaxBytes = 64 << 10
)

// validMemo is a set of documents found valid.
type validMemo struct {
	mu  sync.Mutex
	set map[string]struct{}
}

func (m *validMemo) has(raw []byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.set[string(raw)]
	return ok
}

func (m *validMemo) add(raw []byte) {
	if len(raw) > memoMaxBytes {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.set == nil || len(m.set) >= memoEntries {
		m.set = make(map[string]struct{}, memoEntries)
	}
	m.set[string(raw)] = struct{}{}
}

// ValidateValue marshals x with encoding/json and validates the result.
func (v *Validator) ValidateValue(x any) error {
	b, err := json.Marshal(x)
	if err != nil {
		return err
	}
	return v.Validate(b)
}
