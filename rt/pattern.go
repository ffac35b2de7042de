package rt

import (
	"sync"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
)

// Pattern is an ECMA-262 regular expression of a schema (pattern,
// patternProperties), compiled on first use: on Go's regexp when RE2 can
// express it, else on a backtracking engine with a match timeout (see
// internal/ecmaregex).
type Pattern struct {
	src     string
	compile func() (*ecmaregex.Regexp, error)
}

// NewPattern returns the pattern src; the generator has compiled it once
// already, so it compiles.
func NewPattern(src string) *Pattern {
	return &Pattern{src: src, compile: sync.OnceValues(func() (*ecmaregex.Regexp, error) { return ecmaregex.Compile(src) })}
}

// String is the pattern as the schema writes it.
func (p *Pattern) String() string { return p.src }

// Compile compiles the pattern now, if it has not been, and reports an
// error if it does not compile.
func (p *Pattern) Compile() error {
	_, err := p.compile()
	return err
}

// match reports whether s matches, or the error of a match that did not
// finish (or of a pattern that does not compile).
func (p *Pattern) match(s []byte) (bool, error) {
	re, err := p.compile()
	if err != nil {
		return false, err
	}
	return re.Match(s)
}
