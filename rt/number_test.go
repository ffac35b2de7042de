package rt

import (
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// literals are JSON numbers of many forms: zeros, signs, fractions,
// exponents, leading and trailing zeros, integers past 64 bits.
func literals(rng *rand.Rand, n int) []string {
	out := []string{"0", "-0", "0.0", "-0.0e5", "1", "1.0", "10", "1e1", "0.1e2", "100e-2", "-1", "1.5", "15e-1",
		"9007199254740993", "9007199254740992.5", "12345678901234567890123", "1.2345678901234567890123e22",
		"1e400", "-1e400", "1e-400", "0.25", "2.5e-1", "1E+2", "3e0", "0.000", "5e-324"}
	for len(out) < n {
		var b []byte
		if rng.IntN(3) == 0 {
			b = append(b, '-')
		}
		if rng.IntN(4) == 0 {
			b = append(b, '0')
		} else {
			b = append(b, byte('1'+rng.IntN(9)))
			for range rng.IntN(6) {
				b = append(b, byte('0'+rng.IntN(10)))
			}
		}
		if rng.IntN(2) == 0 {
			b = append(b, '.')
			for range 1 + rng.IntN(4) {
				b = append(b, byte('0'+rng.IntN(10)))
			}
		}
		if rng.IntN(3) == 0 {
			b = append(b, 'e')
			b = strconv.AppendInt(b, int64(rng.IntN(13)-6), 10)
		}
		out = append(out, string(b))
	}
	return out
}

func ratOf(t *testing.T, lit string) *big.Rat {
	r, ok := new(big.Rat).SetString(lit)
	if !ok {
		t.Fatalf("not a number: %s", lit)
	}
	return r
}

// The decimal arithmetic of the bounds, multipleOf, "integer" and the
// equality of numbers agrees with exact rationals on every pair.
func TestDecimalsAreExact(t *testing.T) {
	lits := literals(rand.New(rand.NewPCG(1, 2)), 160)
	for _, a := range lits {
		ra, da := ratOf(t, a), parseDecimal(a)
		if got, want := da.isInteger(), ra.IsInt(); got != want {
			t.Errorf("isInteger(%s) = %v, want %v", a, got, want)
		}
		if got := da.rat(); got.Cmp(ra) != 0 {
			t.Errorf("rat(%s) = %s", a, got)
		}
		for _, b := range lits {
			rb, db := ratOf(t, b), parseDecimal(b)
			if got, want := cmpDecimal(da, db), ra.Cmp(rb); got != want {
				t.Errorf("cmp(%s, %s) = %d, want %d", a, b, got, want)
			}
			if got, want := string(canonicalNumber(nil, a)) == string(canonicalNumber(nil, b)), ra.Cmp(rb) == 0; got != want {
				t.Errorf("canonical(%s) == canonical(%s): %v, want %v", a, b, got, want)
			}
			if rb.Sign() > 0 {
				if got, want := isMultiple(da, db), new(big.Rat).Quo(ra, rb).IsInt(); got != want {
					t.Errorf("isMultiple(%s, %s) = %v, want %v", a, b, got, want)
				}
			}
		}
	}
}
