package rt

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// decimal is a JSON number literal taken apart without arithmetic: its
// value is ±digits × 10^exp, digits without leading or trailing zeros
// ("" for zero). digits is held as the literal's integer and fraction
// parts, so that taking a literal apart allocates nothing.
type decimal struct {
	neg        bool
	int, frac  string // the digits before and after the point
	lead, tail int    // leading zeros of int+frac, trailing zeros of int+frac
	exp        int    // of the last digit of int+frac, trailing zeros included
}

// maxExp bounds the exponents a decimal holds: beyond it every literal
// compares the same with any bound a schema writes.
const maxExp = math.MaxInt32 / 4

// parseDecimal takes apart a JSON number literal (the decoder has checked
// its form).
func parseDecimal(lit string) decimal {
	var d decimal
	if strings.HasPrefix(lit, "-") {
		d.neg, lit = true, lit[1:]
	}
	mant := lit
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		mant = lit[:i]
		e, err := strconv.Atoi(strings.TrimPrefix(lit[i+1:], "+"))
		switch {
		case err != nil && strings.HasPrefix(lit[i+1:], "-"), e < -maxExp:
			e = -maxExp
		case err != nil, e > maxExp:
			e = maxExp
		}
		d.exp = e
	}
	d.int, d.frac, _ = strings.Cut(mant, ".")
	d.exp -= len(d.frac)
	n := len(d.int) + len(d.frac)
	for d.lead < n && d.digit(d.lead) == '0' {
		d.lead++
	}
	for d.tail < n-d.lead && d.digit(n-1-d.tail) == '0' {
		d.tail++
	}
	if d.lead == n {
		d.neg = false // -0 is 0
	}
	return d
}

// digit is the i-th digit of int+frac.
func (d decimal) digit(i int) byte {
	if i < len(d.int) {
		return d.int[i]
	}
	return d.frac[i-len(d.int)]
}

// sig is the number of significant digits; 0 for zero.
func (d decimal) sig() int { return len(d.int) + len(d.frac) - d.lead - d.tail }

// sigDigit is the i-th significant digit.
func (d decimal) sigDigit(i int) byte { return d.digit(d.lead + i) }

// isZero reports the value 0.
func (d decimal) isZero() bool { return d.sig() == 0 }

// isInteger reports whether the value is an integer (1.0 and 1e2 are).
func (d decimal) isInteger() bool { return d.isZero() || d.exp+d.tail >= 0 }

// magnitude is the power of ten of the leading significant digit's place
// plus one: 5 has 1, 50 has 2, 0.5 has 0.
func (d decimal) magnitude() int { return d.sig() + d.exp + d.tail }

// cmpDecimal compares a and b exactly: -1, 0 or +1.
func cmpDecimal(a, b decimal) int {
	switch {
	case a.isZero() && b.isZero():
		return 0
	case a.isZero():
		if b.neg {
			return 1
		}
		return -1
	case b.isZero():
		if a.neg {
			return -1
		}
		return 1
	case a.neg != b.neg:
		if a.neg {
			return -1
		}
		return 1
	}
	c := cmpAbs(a, b)
	if a.neg {
		return -c
	}
	return c
}

// cmpAbs compares the magnitudes of two nonzero decimals.
func cmpAbs(a, b decimal) int {
	if ma, mb := a.magnitude(), b.magnitude(); ma != mb {
		if ma < mb {
			return -1
		}
		return 1
	}
	na, nb := a.sig(), b.sig()
	for i := 0; i < na || i < nb; i++ {
		da, db := byte('0'), byte('0')
		if i < na {
			da = a.sigDigit(i)
		}
		if i < nb {
			db = b.sigDigit(i)
		}
		if da != db {
			if da < db {
				return -1
			}
			return 1
		}
	}
	return 0
}

// rat is the decimal's exact value, for a message.
func (d decimal) rat() *big.Rat {
	var b strings.Builder
	if d.neg {
		b.WriteByte('-')
	}
	if d.isZero() {
		b.WriteByte('0')
	} else {
		for i := 0; i < d.sig(); i++ {
			b.WriteByte(d.sigDigit(i))
		}
		b.WriteString("e")
		b.WriteString(strconv.Itoa(d.exp + d.tail))
	}
	r, ok := new(big.Rat).SetString(b.String())
	if !ok {
		panic(errBadSchema)
	}
	return r
}

// isMultiple reports whether a is an integer multiple of b (b > 0).
func isMultiple(a, b decimal) bool {
	if a.isZero() {
		return true
	}
	// a/b = (A / B) × 10^k with A, B the significant digits.
	k := (a.exp + a.tail) - (b.exp + b.tail)
	A, B := digitsInt(a), digitsInt(b)
	if k < 0 {
		if -k > a.sig()+1 { // B × 10^-k has more digits than A: A / (B × 10^-k) < 1
			return false
		}
		B.Mul(B, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-k)), nil))
		return new(big.Int).Rem(A, B).Sign() == 0
	}
	// A × 10^k / B is an integer when B, stripped of the twos and fives
	// that 10^k supplies, divides A.
	two, five := big.NewInt(2), big.NewInt(5)
	for _, p := range []*big.Int{two, five} {
		for n := 0; n < k; n++ {
			q, m := new(big.Int).QuoRem(B, p, new(big.Int))
			if m.Sign() != 0 {
				break
			}
			B = q
		}
	}
	return new(big.Int).Rem(A, B).Sign() == 0
}

// digitsInt is the significant digits of d as an integer.
func digitsInt(d decimal) *big.Int {
	var b strings.Builder
	for i := 0; i < d.sig(); i++ {
		b.WriteByte(d.sigDigit(i))
	}
	n, ok := new(big.Int).SetString(b.String(), 10)
	if !ok {
		panic(errBadSchema)
	}
	return n
}

// canonicalNumber appends the value of the literal lit in one form for
// every literal of the same value (1, 1.0 and 10e-1 alike).
func canonicalNumber(buf []byte, lit string) []byte {
	d := parseDecimal(lit)
	if d.isZero() {
		return append(buf, '0')
	}
	if d.neg {
		buf = append(buf, '-')
	}
	for i := 0; i < d.sig(); i++ {
		buf = append(buf, d.sigDigit(i))
	}
	buf = append(buf, 'e')
	return strconv.AppendInt(buf, int64(d.exp+d.tail), 10)
}
