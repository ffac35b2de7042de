package ecmaregex

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

var diffN = flag.Int("ecma.n", 1000, "generated patterns per differential test")

// patternGen writes random patterns from the constructs where dialects
// and engines differ, with strings to match them against.
type patternGen struct {
	r      *rand.Rand
	groups int
	names  int
}

var (
	genChars = []string{"a", "b", "-", "_", ".", "é", "😀", " ", "x", "0", "9", "/", "A", "c", "k", "p", "u", "z", ",", ":"}
	genEsc   = []string{`\d`, `\D`, `\w`, `\W`, `\s`, `\S`, `\.`, `\/`, `\-`, `\cJ`, `\c1`, `\c`, `\x41`, `\x4`,
		`\u0041`, `\u{61}`, `\u{2}`, `\u004`, `\0`, `\01`, `\8`, `\a`, `\e`, `\z`, `\Z`, `\k`, `\p{L}`, `\P{Ll}`,
		`\p{Foo}`, `\u{1F600}`, `\uD83D\uDE00`, `\t`, `\n`, `\u00a0`, `\u2028`, `\ufeff`, `\$`, `\{`, `\]`, `\101`}
	genClassItems = []string{"a", "b", "-", "_", ".", "é", "😀", " ", "a-c", "0-9", "é-ü", "😀-😂", `\d`, `\w`, `\s`,
		`\S`, `\W`, `\b`, `\-`, `\]`, `\c1`, `\c_`, `\cJ`, `\u00a0`, `\x41`, `\1`, `\0`, `\8`, "^", "[", ":", `\p{Lu}`}
	genInputChars = []string{"a", "b", "-", "_", ".", "é", "😀", " ", "x", "0", "9", "/", "A", "c", "k", "p", "u",
		"z", "Z", "e", ",", ":", "\n", "\r", "\u2028", "\u00a0", "\ufeff", "\u0085", "\\", "1", "{", "}", "]", "[",
		"\x00", "\x01", "\x02", "\x08", "\x11", "\x1f", "\t", "\v", "L", "ü", "Ä", "\u1680", "8", "4", "\x07", "\x1b"}
)

func (g *patternGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *patternGen) pattern(depth int) string {
	var b strings.Builder
	alts := 1
	if g.r.IntN(4) == 0 {
		alts = 2 + g.r.IntN(2)
	}
	for i := range alts {
		if i > 0 {
			b.WriteString("|")
		}
		for range g.r.IntN(4) + (1 - i%2) {
			b.WriteString(g.term(depth))
		}
	}
	return b.String()
}

func (g *patternGen) term(depth int) string {
	var atom string
	switch k := g.r.IntN(20); {
	case k < 6:
		atom = g.pick(genChars)
	case k < 10:
		atom = g.pick(genEsc)
	case k < 12:
		atom = g.class()
	case k == 12:
		return g.pick([]string{"^", "$", `\b`, `\B`})
	case k == 13:
		atom = g.pick([]string{"{", "}", "]", "a{", "{1,", "a{,2}", "x{2,1}"})
	case k < 17 && depth < 3:
		inner := g.pattern(depth + 1)
		switch g.r.IntN(10) {
		case 0:
			g.names++
			g.groups++
			atom = fmt.Sprintf("(?<g%d>%s)", g.names, inner)
		case 1:
			atom = g.pick([]string{"(?=", "(?!", "(?<=", "(?<!"}) + inner + ")"
		case 2, 3:
			atom = "(?:" + inner + ")"
		default:
			g.groups++
			atom = "(" + inner + ")"
		}
	case k == 17 && g.groups > 0:
		atom = fmt.Sprintf(`\%d`, 1+g.r.IntN(g.groups+1))
	default:
		atom = g.pick(genChars)
	}
	if g.r.IntN(3) == 0 {
		atom += g.pick([]string{"*", "+", "?", "{2}", "{1,3}", "{0,}", "{0}", "*?", "+?", "??", "{1,2}?"})
	}
	return atom
}

func (g *patternGen) class() string {
	switch g.r.IntN(12) {
	case 0:
		return "[]"
	case 1:
		return "[^]"
	}
	var b strings.Builder
	b.WriteString("[")
	if g.r.IntN(3) == 0 {
		b.WriteString("^")
	}
	for range 1 + g.r.IntN(3) {
		b.WriteString(g.pick(genClassItems))
	}
	b.WriteString("]")
	return b.String()
}

func (g *patternGen) input() string {
	var b strings.Builder
	for range g.r.IntN(7) {
		b.WriteString(g.pick(genInputChars))
	}
	return b.String()
}

type genCase struct {
	pattern string
	inputs  []string
}

func generate(seed uint64, n, inputs int) []genCase {
	out := make([]genCase, n)
	for i := range out {
		g := &patternGen{r: rand.New(rand.NewPCG(seed, uint64(i)))}
		c := genCase{pattern: g.pattern(0)}
		for range inputs {
			c.inputs = append(c.inputs, g.input())
		}
		// Strings made of the pattern's own characters hit more matches.
		c.inputs = append(c.inputs, c.pattern, strings.Trim(c.pattern, "^$"))
		out[i] = c
	}
	return out
}

// Both engines get the pattern as this package reads it: on every
// pattern RE2 can express, regexp2 must give the answers RE2 gives.
func TestEnginesAgree(t *testing.T) {
	pairs, regular := 0, 0
	for _, c := range generate(1, *diffN, 12) {
		n, perr := parse(c.pattern)
		if perr != nil || blocker(n) != nil {
			continue
		}
		re2, err := Translate(c.pattern)
		if err != nil {
			continue // beyond RE2's repeat bound
		}
		regular++
		bt, err := regexp2.Compile(backtrackSyntax(n), regexp2.ECMAScript)
		if err != nil {
			t.Errorf("%q: regexp2 refuses %q: %v", c.pattern, backtrackSyntax(n), err)
			continue
		}
		re := MustCompile(c.pattern)
		for _, s := range c.inputs {
			pairs++
			want, _ := bt.MatchString(s)
			if got, _ := re.MatchString(s); got != want {
				t.Errorf("%q on %q: RE2 (%s) says %v, regexp2 (%s) says %v", c.pattern, s, re2, got, backtrackSyntax(n), want)
			}
		}
	}
	t.Logf("%d regular patterns, %d pairs", regular, pairs)
}

// oracleVerdicts runs the patterns in V8 (node), with the u flag and
// without: nil where V8 refuses the pattern.
type oracleVerdict struct {
	U []bool `json:"u"`
	N []bool `json:"n"`
	T bool   `json:"t"` // V8 timed out
}

// oracleScript matches in a vm context with a timeout: V8 backtracks
// without bound, and a generated pattern may be catastrophic. A pattern
// that times out gets no verdict ("t").
const oracleScript = `
const vm = require('vm');
const data = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const ctx = vm.createContext({});
const script = new vm.Script('(() => { const re = new RegExp(p, f); return inputs.map(s => re.test(s)); })()');
const run = (p, f, inputs) => { Object.assign(ctx, {p, f, inputs}); return script.runInContext(ctx, {timeout: 500}); };
process.stdout.write(JSON.stringify(data.map(([p, inputs]) => {
  const r = {u: null, n: null, t: false};
  for (const [k, f] of [['u', 'u'], ['n', '']]) {
    try { r[k] = Array.from(run(p, f, inputs)); }
    catch (e) { if (!(e instanceof SyntaxError) && e.constructor.name !== 'SyntaxError') r.t = true; }
  }
  return r;
})));`

func oracle(t *testing.T, cases []genCase) []oracleVerdict {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: no ECMA-262 oracle")
	}
	in := make([][2]any, len(cases))
	for i, c := range cases {
		in[i] = [2]any{c.pattern, c.inputs}
	}
	body, _ := json.Marshal(in)
	cmd := exec.Command(node, "-e", oracleScript)
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var vs []oracleVerdict
	if err := json.Unmarshal(out, &vs); err != nil || len(vs) != len(cases) {
		t.Fatalf("node answered %d verdicts (%v)", len(vs), err)
	}
	return vs
}

func hasAstral(s string) bool {
	for _, r := range s {
		if r > 0xFFFF {
			return true
		}
	}
	return false
}

// TestOracle checks the dialect against V8: the generated patterns and
// the cases of TestMatch and TestInvalid. It also counts how often raw
// regexp2 in ECMAScript mode (what validated patterns before) disagrees
// with V8, and logs examples.
func TestOracle(t *testing.T) {
	cases := generate(2, *diffN, 12)
	for _, c := range matchCases {
		cases = append(cases, genCase{c.pattern, []string{c.s}})
	}
	for _, p := range invalidPatterns {
		if utf8.ValidString(p) { // V8 would see U+FFFD
			cases = append(cases, genCase{p, []string{"a"}})
		}
	}
	verdicts := oracle(t, cases)
	var pairs, skipped, unsupported, timeouts, accepted, refused, rawWrong, rawRefused int
	rawExamples := map[string]int{}
	for i, c := range cases {
		v := verdicts[i]
		if v.T {
			timeouts += len(c.inputs)
			continue
		}
		_, uerr := parseWith(c.pattern, true)
		re, err := Compile(c.pattern)
		var se *SyntaxError
		if errors.As(err, &se) && se.Unsupported {
			unsupported++
			continue
		}
		var want []bool
		switch {
		case v.U != nil && uerr == nil:
			want = v.U
		case v.U != nil:
			t.Errorf("%q: V8 accepts it with the u flag, the u grammar here refuses it: %v", c.pattern, uerr)
			continue
		case uerr == nil:
			t.Errorf("%q: V8 refuses it with the u flag, the u grammar here accepts it", c.pattern)
			continue
		case v.N != nil:
			want = v.N
		}
		if want == nil {
			refused++
			if err == nil {
				t.Errorf("%q: V8 refuses it, Compile accepts it", c.pattern)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: V8 accepts it, Compile refuses it: %v", c.pattern, err)
			continue
		}
		accepted++
		raw, rawErr := regexp2.Compile(c.pattern, regexp2.ECMAScript)
		if rawErr != nil {
			rawRefused++
		} else {
			raw.MatchTimeout = MatchTimeout
		}
		for j, s := range c.inputs {
			if uerr != nil && hasAstral(s) {
				skipped++ // without the u flag V8 matches UTF-16 code units
				continue
			}
			pairs++
			got, merr := re.MatchString(s)
			if IsTimeout(merr) {
				timeouts++
				continue
			}
			if merr != nil || got != want[j] {
				t.Errorf("%q on %q: %v (%v), V8 says %v", c.pattern, s, got, merr, want[j])
			}
			if raw != nil {
				if r, err := raw.MatchString(s); err == nil && r != want[j] {
					rawWrong++
					if len(rawExamples) < 40 {
						rawExamples[fmt.Sprintf("%q on %q: regexp2 %v, V8 %v", c.pattern, s, r, want[j])]++
					}
				}
			}
		}
	}
	t.Logf("patterns: %d (%d valid, %d refused by V8, %d unsupported here); pairs compared: %d, skipped: %d, timed out: %d",
		len(cases), accepted, refused, unsupported, pairs, skipped, timeouts)
	t.Logf("raw regexp2 (ECMAScript mode) on the valid patterns: %d refused, %d wrong answers", rawRefused, rawWrong)
	ex := make([]string, 0, len(rawExamples))
	for e := range rawExamples {
		ex = append(ex, e)
	}
	sort.Strings(ex)
	for _, e := range ex {
		t.Log("  " + e)
	}
}
