package regexlang

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
)

// machine is the subset construction of one program, built lazily. A
// state is the set of threads waiting at one position, before the
// empty-width instructions there are decided (they depend on the next
// rune), and the class of the previous rune. Every state also restarts
// the program (the search is unanchored); once the program has matched,
// the machine is in the accepting sink, state 0.
type machine struct {
	prog   *syntax.Prog
	syms   []symbol
	states []mstate
	index  map[string]int32
	next   [][]int32 // state -> symbol -> state, -1 not yet computed
	final  []int8    // state -> accepts at the end of input: -1 unknown, 0, 1
	stack  []uint32
	mark   []bool
}

type mstate struct {
	pcs  []uint32
	prev rune // -1 at the start, '\n', 'a' for a word rune, '!' otherwise
}

const sink = 0

func newMachine(prog *syntax.Prog) *machine {
	m := &machine{prog: prog, index: map[string]int32{}, mark: make([]bool, len(prog.Inst))}
	m.states = append(m.states, mstate{prev: '!'}) // the sink
	m.next = append(m.next, nil)
	m.final = append(m.final, 1)
	m.intern(nil, -1) // the start, state 1
	return m
}

func (m *machine) intern(pcs []uint32, prev rune) int32 {
	var key strings.Builder
	key.WriteRune(prev + 1)
	for _, pc := range pcs {
		fmt.Fprintf(&key, ",%d", pc)
	}
	if i, ok := m.index[key.String()]; ok {
		return i
	}
	i := int32(len(m.states))
	m.index[key.String()] = i
	m.states = append(m.states, mstate{pcs: pcs, prev: prev})
	m.next = append(m.next, nil)
	m.final = append(m.final, -1)
	return i
}

// closure follows the instructions that consume nothing from the state's
// threads and the program's start, with the empty-width flags of the
// position. It returns the rune instructions reached and whether the
// program matched.
func (m *machine) closure(st mstate, flags syntax.EmptyOp) (runes []uint32, matched bool) {
	clear(m.mark)
	m.stack = append(append(m.stack[:0], st.pcs...), uint32(m.prog.Start))
	for len(m.stack) > 0 {
		pc := m.stack[len(m.stack)-1]
		m.stack = m.stack[:len(m.stack)-1]
		if m.mark[pc] {
			continue
		}
		m.mark[pc] = true
		in := &m.prog.Inst[pc]
		switch in.Op {
		case syntax.InstMatch:
			matched = true
		case syntax.InstAlt, syntax.InstAltMatch:
			m.stack = append(m.stack, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop:
			m.stack = append(m.stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^flags == 0 {
				m.stack = append(m.stack, in.Out)
			}
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			runes = append(runes, pc)
		}
	}
	return runes, matched
}

func prevClass(r rune) rune {
	switch {
	case syntax.IsWordChar(r):
		return 'a'
	case r == '\n':
		return '\n'
	}
	return '!'
}

// step is the transition of state s on symbol i.
func (m *machine) step(s int32, i int) int32 {
	if s == sink {
		return sink
	}
	if m.next[s] == nil {
		m.next[s] = slices.Repeat([]int32{-1}, len(m.syms))
	}
	if t := m.next[s][i]; t >= 0 {
		return t
	}
	st := m.states[s]
	r := m.syms[i].rep
	runes, matched := m.closure(st, syntax.EmptyOpContext(st.prev, r))
	t := int32(sink)
	if !matched {
		var out []uint32
		for _, pc := range runes {
			if in := &m.prog.Inst[pc]; in.MatchRune(r) {
				out = append(out, in.Out)
			}
		}
		slices.Sort(out)
		t = m.intern(slices.Compact(out), prevClass(r))
	}
	m.next[s][i] = t
	return t
}

// accepts reports whether state s accepts at the end of the input.
func (m *machine) accepts(s int32) bool {
	if m.final[s] < 0 {
		st := m.states[s]
		_, matched := m.closure(st, syntax.EmptyOpContext(st.prev, -1))
		m.final[s] = 0
		if matched {
			m.final[s] = 1
		}
	}
	return m.final[s] == 1
}

// product explores the pairs of states of a and b reachable on the same
// input, breadth first, so that the first pair found where one accepts and
// the other does not gives a shortest witness.
func product(a, b *machine, syms []symbol, maxStates int) Result {
	type pair struct{ a, b int32 }
	type visit struct {
		parent int32 // index in visits; -1 for the start
		sym    int32
	}
	start := pair{1, 1}
	seen := map[pair]int32{start: 0}
	pairs := []pair{start}
	visits := []visit{{-1, -1}}
	witness := func(i int32) *string {
		var rs []rune
		for ; visits[i].parent >= 0; i = visits[i].parent {
			rs = append(rs, syms[visits[i].sym].rep)
		}
		slices.Reverse(rs)
		s := string(rs)
		return &s
	}
	// The budget: maxStates pairs, fewer when the alphabet is large.
	limit := min(maxStates, maxWork/max(len(syms), 1))
	var res Result
	for i := 0; i < len(pairs); i++ {
		p := pairs[i]
		fa, fb := a.accepts(p.a), b.accepts(p.b)
		switch {
		case fa && !fb && res.Lost == nil:
			res.Lost = witness(int32(i))
		case fb && !fa && res.Gained == nil:
			res.Gained = witness(int32(i))
		}
		if res.Lost != nil && res.Gained != nil {
			break
		}
		if p.a == sink && p.b == sink {
			continue // both accept whatever follows
		}
		for si := range syms {
			q := pair{a.step(p.a, si), b.step(p.b, si)}
			if _, ok := seen[q]; ok {
				continue
			}
			if len(pairs) >= limit {
				return Result{Reason: fmt.Sprintf("deciding needs more than %d automaton states", limit)}
			}
			seen[q] = int32(len(pairs))
			pairs = append(pairs, q)
			visits = append(visits, visit{int32(i), int32(si)})
		}
	}
	switch {
	case res.Lost != nil && res.Gained != nil:
		res.Relation = Incomparable
	case res.Gained != nil:
		res.Relation = Widened
	case res.Lost != nil:
		res.Relation = Narrowed
	default:
		res.Relation = Equal
	}
	return res
}
