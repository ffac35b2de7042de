// Package rt is the runtime of the code prickle-gen generates: the checks
// its schema validators call, the registration of typed tool handlers on
// an MCP server, the typed client calls, tool errors and the caller's
// identity.
//
// Generated packages import only rt, the MCP Go SDK and the standard
// library, so they compile in any module that requires
// github.com/prickle-dev/prickle.
//
// Of this module rt imports only internal/validation and
// internal/ecmaregex: never the generator, the spec, the server or
// internal/schemacompile (a program that validates with generated code does
// not link the schema library).
package rt

import (
	"encoding/json"
	"sync"

	"github.com/prickle-dev/prickle/internal/validation"
)

// Violation is one reason a JSON value fails a schema: the value's JSON
// pointer, the failing keyword, an English message and the keyword's place
// in the schema.
type Violation = validation.Violation

// ValidationError is a failed validation. Its violations are sorted by
// pointer, then keyword location, then message, so the same bad value
// always gives the same error.
type ValidationError = validation.ValidationError

// Validator validates JSON against one schema with a check function the
// generator wrote for it (see Checker); it is safe for concurrent use.
type Validator struct {
	name   string
	schema []byte
	check  func(*Checker)
	valid  validMemo // documents found valid, for ValidateRemembered
}

// NewValidator returns the validator of the schema document schema, named
// name in errors (e.g. "claim_task/input"), that check checks.
func NewValidator(name string, schema []byte, check func(*Checker)) *Validator {
	return &Validator{name: name, schema: schema, check: check}
}

// Name is the validator's name.
func (v *Validator) Name() string { return v.name }

// Schema returns the schema document, as given to NewValidator.
func (v *Validator) Schema() json.RawMessage { return json.RawMessage(v.schema) }

// Validate validates the JSON document raw: nil, a *ValidationError (JSON
// that does not parse is a violation at the root, keyword "json"; so is,
// at its pointer, what decoders read differently: a member named twice,
// invalid UTF-8, a lone surrogate), or another error when a pattern match
// did not finish in time (the document is then neither valid nor
// invalid).
func (v *Validator) Validate(raw []byte) error { return Validate(raw, v.check) }

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

// ValidateValue marshals x as Handle marshals an output (MarshalJSON) and
// validates the result.
func (v *Validator) ValidateValue(x any) error {
	b, err := MarshalJSON(x)
	if err != nil {
		return err
	}
	return v.Validate(b)
}
