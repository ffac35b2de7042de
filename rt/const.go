package rt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/prickle-dev/prickle/internal/validation"
)

// CheckConst reports whether the JSON b equals the constant want as JSON
// Schema's const does (numbers by value: 1 equals 1.0; objects regardless
// of key order). Generated constant types call it from UnmarshalJSON.
func CheckConst(typeName string, b []byte, want string) error {
	got, err := validation.Unmarshal(b)
	if err != nil {
		return fmt.Errorf("%s: %w", typeName, err)
	}
	w, err := validation.Unmarshal([]byte(want))
	if err != nil {
		return fmt.Errorf("%s: %w", typeName, err)
	}
	if !jsonEqual(got, w) {
		return fmt.Errorf("%s: got %s, want the constant %s", typeName, bytes.TrimSpace(b), want)
	}
	return nil
}

func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		rx, ok1 := new(big.Rat).SetString(string(x))
		ry, ok2 := new(big.Rat).SetString(string(y))
		return ok1 && ok2 && rx.Cmp(ry) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	}
	return a == b
}
