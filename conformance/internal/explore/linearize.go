package explore

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Linearizability of concurrent groups: a history is a chain of groups,
// each of 1 to maxGroup calls that started together after the previous
// group's calls had all returned. It is linearizable when, from some state
// the earlier groups can have left, some order of each group's calls that
// respects real time (a call that returned before another began comes
// first) has every answer accepted by the model, call after call.
//
// The check is exhaustive, not porcupine's. Porcupine's search (Wing &
// Gong's, with Lowe's memo of (calls done, state)) is what this does; its
// partitioning gains nothing here, since every group is at most maxGroup
// calls that are all concurrent with one another, and the calls outside
// groups are totally ordered. What porcupine cannot do without a rewrite
// of the model is the model itself: the model is mutable state with
// judging closures (model.go), so a state is copied (clone) before each
// call is judged, and two states are the same when their fingerprints are
// (what the model remembers, not the script variable names). The search
// keeps every distinct state a group can leave, so a later group is
// judged against all of them, as porcupine's would be; the states and the
// nodes it visits are bounded, and a search past either bound is unknown,
// never a pass.

// maxGroup is the largest concurrent group.
const maxGroup = 8

// searchBudget bounds the nodes (a state and the calls done) one group's
// search visits; maxStates the states carried from one group to the next.
var searchBudget = 200_000 // a variable for tests

const maxStates = 256

// scope is the part of the model a search may change: the attempts of
// its tasks and the claims of its messages, with their credentials.
// Nil is the whole model.
type scope map[string]bool

func (sc scope) has(kind, id string) bool { return sc == nil || sc[kind+" "+id] }

// clone copies the part of the model its scope says calls may change (the
// rest, and the world, are shared and never written).
func (m *model) clone() *model {
	c := *m
	creds := make(map[*mCred]*mCred)
	cp := func(x *mCred) *mCred {
		if y, ok := creds[x]; ok {
			return y
		}
		y := *x
		creds[x] = &y
		return &y
	}
	cpAll := func(xs []*mCred) []*mCred {
		out := make([]*mCred, len(xs))
		for j, x := range xs {
			out[j] = cp(x)
		}
		return out
	}
	c.attempts = slices.Clone(m.attempts)
	for i, a := range c.attempts {
		if !m.scope.has("task", a.task) {
			continue
		}
		b := *a
		b.creds = cpAll(a.creds)
		c.attempts[i] = &b
	}
	c.claims = slices.Clone(m.claims)
	for i, a := range c.claims {
		if !m.scope.has("message", a.message) {
			continue
		}
		b := *a
		b.creds = cpAll(a.creds)
		c.claims[i] = &b
	}
	c.creds = maps.Clone(m.creds)
	for k, v := range c.creds {
		if y, ok := creds[v]; ok {
			c.creds[k] = y
		}
	}
	c.seen = maps.Clone(m.seen)
	return &c
}

// fingerprint identifies what the model remembers: two states with the
// same fingerprint judge every later call alike.
func (m *model) fingerprint() string {
	b := make([]byte, 0, 256)
	str := func(s string) { b = append(b, s...); b = append(b, '|') }
	num := func(n int64) { b = strconv.AppendInt(b, n, 36); b = append(b, '|') }
	// The credentials of a claim, in an order of their own: the order
	// they were issued in is no part of what the model remembers.
	creds := func(xs []*mCred) {
		toks := make([]string, 0, len(xs))
		for _, x := range xs {
			t := x.token
			if x.revoked {
				t += "!"
			}
			toks = append(toks, t)
		}
		slices.Sort(toks)
		for _, t := range toks {
			str(t)
		}
	}
	for _, a := range m.attempts {
		if !m.scope.has("task", a.task) {
			continue
		}
		str("A" + a.id)
		str(a.task)
		str(a.runner)
		str(a.key)
		num(a.claimedAt.UnixNano())
		num(a.liveUntil.UnixNano())
		num(int64(a.superseded))
		creds(a.creds)
	}
	for _, c := range m.claims {
		if !m.scope.has("message", c.message) {
			continue
		}
		str("C" + c.message)
		str(c.runner)
		str(c.key)
		str(c.role)
		str(fmt.Sprint(c.lead, c.replied, c.reviewing))
		num(c.liveUntil.UnixNano())
		num(int64(c.superseded))
		creds(c.creds)
	}
	str(m.notVisibleText)
	return string(b)
}

// op is one call of a group as the search judges it.
type op struct {
	st   *stepRun
	step int
	// wire are the wire checks the answer failed.
	wire []failure
	// judge judges the answer in state m (which it may change) and says
	// what is wrong, nil if the model accepts it.
	judge func(m *model) []failure
}

// searchResult is the outcome of one group's search.
type searchResult struct {
	// states are the distinct states the group can leave (nil if none).
	states []*model
	// unknown: the search ran out of budget before it could decide.
	unknown bool
	// deepest is a longest order the model accepted a prefix of, and
	// fails what the next call broke.
	deepest []int
	fails   []failure
	// order is the first whole order the model accepted.
	order []int
	nodes int
}

// linearize searches the orders of ops, from each of states, that respect
// real time, for those the model accepts; it returns every state they
// leave.
func linearize(states []*model, ops []*op) *searchResult {
	n := len(ops)
	// before[i] is the set of calls that returned before call i began.
	before := make([]uint, n)
	for i := range ops {
		for j := range ops {
			if i != j && ops[j].st.ans.end.Before(ops[i].st.ans.start) {
				before[i] |= 1 << j
			}
		}
	}
	res := &searchResult{}
	seen := map[string]bool{}   // memo: done set and state fingerprint
	leaves := map[string]bool{} // fingerprints of the states kept
	full := uint(1)<<n - 1
	var order []int
	var dfs func(m *model, done uint) bool
	dfs = func(m *model, done uint) bool {
		if res.nodes++; res.nodes > searchBudget {
			res.unknown = true
			return false
		}
		fp := m.fingerprint()
		if done == full {
			if res.order == nil {
				res.order = slices.Clone(order)
			}
			if !leaves[fp] {
				if len(res.states) >= maxStates {
					res.unknown = true
					return false
				}
				leaves[fp] = true
				res.states = append(res.states, m)
			}
			return true
		}
		key := fmt.Sprintf("%x/%s", done, fp)
		if seen[key] {
			return true
		}
		seen[key] = true
		for i := range n {
			if done&(1<<i) != 0 || before[i]&^done != 0 {
				continue
			}
			c := m.clone()
			order = append(order, i)
			if fs := ops[i].judge(c); len(fs) > 0 {
				if len(order) > len(res.deepest) || res.fails == nil {
					res.deepest, res.fails = slices.Clone(order), fs
				}
			} else if !dfs(c, done|1<<i) {
				return false
			}
			order = order[:len(order)-1]
		}
		return true
	}
	for _, m := range states {
		if !dfs(m, 0) {
			break
		}
	}
	return res
}
