package regexlang

import (
	"flag"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
)

var (
	propN   = flag.Int("lang.n", 200, "pattern pairs in TestAgainstEnumeration")
	propLen = flag.Int("lang.len", 4, "longest string TestAgainstEnumeration enumerates")
)

func show(p *string) string {
	if p == nil {
		return "none"
	}
	return "\"" + *p + "\""
}

func TestKnownPairs(t *testing.T) {
	for _, c := range []struct {
		old, new string
		want     Relation
	}{
		{`^[A-Za-z0-9_-]+$`, `^[A-Za-z0-9_.-]+$`, Widened}, // issue 12
		{`^[A-Za-z0-9_-]+$`, `^[\w-]+$`, Equal},
		{`^[A-Za-z0-9_-]+$`, `^[a-z0-9-]+$`, Narrowed},
		{`^[A-Za-z0-9_-]+$`, `^[a-z0-9.]+$`, Incomparable},
		{`a`, `a+`, Equal}, // unanchored: both are "contains a"
		{`a`, `.*a.*`, Equal},
		{`^a`, `a`, Widened},
		{`^.*a`, `a`, Widened}, // . stops at a line terminator
		{`a|b`, `[ab]`, Equal},
		{`^x{2,3}$`, `^xxx?$`, Equal},
		{`^(?:ab)*$`, `^(?:ab)*(?:ab)*$`, Equal},
		{`\bx`, `x`, Widened},
		{`^\d+$`, `^[0-9]+$`, Equal},
		{`^\s$`, `^[ \t\n\v\f\r\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]$`, Equal},
		{`^.$`, `^[^\n\r\u2028\u2029]$`, Equal},
		{`^a$`, `^a\n?$`, Widened}, // $ is the end of input, never before a final newline
		{`[]`, `[^\s\S]`, Equal},
		{`x[]`, `^$`, Widened},
		{`^[\u{1F600}-\u{1F64F}]+$`, `^\p{So}+$`, Widened},
		{`^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$`, `^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,62}$`, Unknown},
		{`^(a)\1$`, `^aa$`, Unknown},
		{`[z-a]`, `a`, Unknown},
	} {
		r := Compare(c.old, c.new)
		if r.Relation != c.want {
			t.Errorf("%s -> %s: %v (gained %s, lost %s, %s), want %v", c.old, c.new, r.Relation, show(r.Gained), show(r.Lost), r.Reason, c.want)
		}
		if (r.Relation == Unknown) != (r.Reason != "") {
			t.Errorf("%s -> %s: %v with reason %q", c.old, c.new, r.Relation, r.Reason)
		}
		checkWitnesses(t, c.old, c.new, r)
	}
}

// checkWitnesses matches the witnesses with the real matchers and checks
// that the relation agrees with them.
func checkWitnesses(t *testing.T, old, new string, r Result) {
	t.Helper()
	if r.Relation == Unknown {
		if r.Gained != nil || r.Lost != nil {
			t.Errorf("%s -> %s: unknown with witnesses", old, new)
		}
		return
	}
	o, n := ecmaregex.MustCompile(old), ecmaregex.MustCompile(new)
	match := func(re *ecmaregex.Regexp, s string) bool {
		ok, err := re.MatchString(s)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if g := r.Gained; g != nil && (!match(n, *g) || match(o, *g)) {
		t.Errorf("%s -> %s: gained %q is not new-only", old, new, *g)
	}
	if l := r.Lost; l != nil && (!match(o, *l) || match(n, *l)) {
		t.Errorf("%s -> %s: lost %q is not old-only", old, new, *l)
	}
	want := map[[2]bool]Relation{{false, false}: Equal, {true, false}: Widened, {false, true}: Narrowed, {true, true}: Incomparable}[[2]bool{r.Gained != nil, r.Lost != nil}]
	if r.Relation != want {
		t.Errorf("%s -> %s: relation %v with gained %s, lost %s", old, new, r.Relation, show(r.Gained), show(r.Lost))
	}
}

// langGen writes small patterns over few characters.
type langGen struct{ r *rand.Rand }

func (g *langGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *langGen) pattern(depth int) string {
	var b strings.Builder
	for i := range 1 + g.r.IntN(2) {
		if i > 0 {
			b.WriteString("|")
		}
		for range 1 + g.r.IntN(3) {
			b.WriteString(g.term(depth))
		}
	}
	return b.String()
}

func (g *langGen) term(depth int) string {
	var atom string
	switch k := g.r.IntN(12); {
	case k < 4:
		atom = g.pick("a", "b", "-", "é")
	case k < 7:
		atom = g.pick("[ab]", "[^a]", ".", `\w`, `\W`, `\s`, "[a-é]", "[]", "[^]")
	case k == 7:
		return g.pick("^", "$", `\b`, `\B`)
	case k < 10 && depth < 2:
		atom = "(?:" + g.pattern(depth+1) + ")"
	default:
		atom = g.pick("a", "b")
	}
	if g.r.IntN(3) == 0 {
		atom += g.pick("*", "+", "?", "{0,2}", "{2}", "*?", "{1,}")
	}
	return atom
}

// strs lists every string of up to n runes over the alphabet.
func strs(alphabet []string, n int) []string {
	out := []string{""}
	layer := []string{""}
	for range n {
		var next []string
		for _, s := range layer {
			for _, c := range alphabet {
				next = append(next, s+c)
			}
		}
		out = append(out, next...)
		layer = next
	}
	return out
}

// TestAgainstEnumeration compares the decisions with brute force: every
// string of up to 4 characters (-lang.len) over a, b, -, é and a newline.
// A string one pattern accepts and the other refuses needs a witness no
// longer than it; a witness must be matched by its side only; equal
// languages agree on every string; and the decision is symmetric.
func TestAgainstEnumeration(t *testing.T) {
	all := strs([]string{"a", "b", "-", "é", "\n"}, *propLen)
	rng := rand.New(rand.NewPCG(7, 12))
	relations := map[Relation]int{}
	for range *propN {
		g := &langGen{rng}
		old, new := g.pattern(0), g.pattern(0)
		if rng.IntN(4) == 0 {
			new = old + g.pick("", "|"+g.term(1), g.term(1)) // related pairs
		}
		r := Compare(old, new)
		relations[r.Relation]++
		if r.Relation == Unknown {
			t.Errorf("%s -> %s: unknown: %s", old, new, r.Reason)
			continue
		}
		checkWitnesses(t, old, new, r)
		o, n := ecmaregex.MustCompile(old), ecmaregex.MustCompile(new)
		for _, s := range all {
			om, _ := o.MatchString(s)
			nm, _ := n.MatchString(s)
			l := utf8.RuneCountInString(s)
			if nm && !om && (r.Gained == nil || utf8.RuneCountInString(*r.Gained) > l) {
				t.Errorf("%s -> %s: %q is new-only, gained %s", old, new, s, show(r.Gained))
				break
			}
			if om && !nm && (r.Lost == nil || utf8.RuneCountInString(*r.Lost) > l) {
				t.Errorf("%s -> %s: %q is old-only, lost %s", old, new, s, show(r.Lost))
				break
			}
		}
		back := Compare(new, old)
		if show(back.Gained) != show(r.Lost) || show(back.Lost) != show(r.Gained) {
			t.Errorf("%s -> %s: not symmetric: %+v, back %+v", old, new, r, back)
		}
		if self := Compare(old, old); self.Relation != Equal {
			t.Errorf("%s -> itself: %v", old, self.Relation)
		}
	}
	t.Logf("%d pairs over %d strings: %v", *propN, len(all), relations)
}

// A comparison that needs more states than its budget is unknown.
func TestBudget(t *testing.T) {
	old, new := `^(?:a|b)*a(?:a|b){11}$`, `^(?:a|b)*a(?:a|b){12}$` // 2^12 states and more
	if r := CompareWithin(old, new, 1000); r.Relation != Unknown || !strings.Contains(r.Reason, "more than 1000 automaton states") {
		t.Errorf("within 1000 states: %+v", r)
	}
	if r := Compare(old, new); r.Relation != Incomparable {
		t.Errorf("within the default budget: %v %s", r.Relation, r.Reason)
	}
}
