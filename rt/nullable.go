package rt

import (
	"bytes"
	"encoding/json"
)

// Nullable is an optional field that may also be null: absent (the zero
// value), null, or a value. Generated types use it, with the omitzero
// option, for properties that are neither required nor non-nullable, so
// that all three states survive a round trip.
type Nullable[T any] struct {
	// Set is true when the field is present (null or a value).
	Set bool
	// Null is true when the field is present and null.
	Null bool
	// Value is the value when Set and not Null.
	Value T
}

// Some returns a present, non-null value.
func Some[T any](v T) Nullable[T] { return Nullable[T]{Set: true, Value: v} }

// Null returns a present null.
func Null[T any]() Nullable[T] { return Nullable[T]{Set: true, Null: true} }

// IsZero reports an absent field (for omitzero).
func (n Nullable[T]) IsZero() bool { return !n.Set }

// Get returns the value and whether there is one (present and not null).
func (n Nullable[T]) Get() (T, bool) { return n.Value, n.Set && !n.Null }

// MarshalJSON writes null or the value. An absent field is omitted by its
// omitzero tag; marshalled on its own it is null.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if !n.Set || n.Null {
		return []byte("null"), nil
	}
	return json.Marshal(n.Value)
}

// UnmarshalJSON reads null or a value (with Unmarshal); either way the
// field is present.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		var zero T
		*n = Nullable[T]{Set: true, Null: true, Value: zero}
		return nil
	}
	var v T
	if err := Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Nullable[T]{Set: true, Value: v}
	return nil
}
