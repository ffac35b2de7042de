package regexlang

import (
	"errors"
	"fmt"
	"slices"
)

// ErrEmpty is returned by Sample when no string of the asked lengths is
// in the pattern's language.
var ErrEmpty = errors.New("no string of those lengths matches the pattern")

// UndecidedError says why Sample could not decide.
type UndecidedError struct{ Reason string }

func (e *UndecidedError) Error() string { return "undecided: " + e.Reason }

// Sample returns a shortest string of at least minLen code points that the
// pattern accepts (matches somewhere in), no longer than maxLen (a
// negative maxLen sets no bound), written in the most readable characters
// (letters, then digits, then punctuation). It fails with ErrEmpty when
// there is none, or an *UndecidedError when the pattern is beyond RE2 or
// the search would exceed DefaultMaxStates.
func Sample(pattern string, minLen, maxLen int) (string, error) {
	m, why := load("the", pattern)
	if why != "" {
		return "", &UndecidedError{why}
	}
	m.syms = alphabet(m.prog)
	minLen = max(minLen, 0)
	// A node is a state and the length so far, counted up to minLen (past
	// it, lengths no longer differ), reached breadth first so that the
	// first accepting node found is a shortest string.
	type node struct {
		s int32
		n int
	}
	type visit struct {
		parent, sym int32
		depth       int
	}
	start := node{1, 0}
	seen := map[node]bool{start: true}
	nodes := []node{start}
	visits := []visit{{-1, -1, 0}}
	limit := min(DefaultMaxStates*(minLen+1), maxWork/max(len(m.syms), 1))
	for i := 0; i < len(nodes); i++ {
		nd, v := nodes[i], visits[i]
		if nd.n >= minLen && m.accepts(nd.s) {
			var rs []rune
			for j := int32(i); visits[j].parent >= 0; j = visits[j].parent {
				rs = append(rs, m.syms[visits[j].sym].rep)
			}
			slices.Reverse(rs)
			return string(rs), nil
		}
		if maxLen >= 0 && v.depth >= maxLen {
			continue
		}
		for si := range m.syms {
			next := node{m.step(nd.s, si), min(nd.n+1, minLen)}
			if seen[next] {
				continue
			}
			if len(nodes) >= limit {
				return "", &UndecidedError{fmt.Sprintf("sampling needs more than %d automaton states", limit)}
			}
			seen[next] = true
			nodes = append(nodes, next)
			visits = append(visits, visit{int32(i), int32(si), v.depth + 1})
		}
	}
	return "", ErrEmpty
}
