package conformance_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec"
)

// The power file (conformance/power.json, and POWER.md made from it):
// what the mutant self-test measured of every mutant. TestMutants and
// TestMutantsFullRun compare what they measure with it and fail on a
// difference; with -update they write it.

const (
	powerFile = "power.json"
	powerMD   = "POWER.md"
)

// measured is what the self-test measured of one mutant: its catchers
// with the runs and sequences each needed, as counted; unknown are the
// profiles in which a race mutant's run ended short of race evidence
// (neither caught nor missed: not measured).
type measured struct {
	conformance.PowerMutant
	unknown map[conformance.Profile]bool
}

// describe is m as power.json lists it, its catchers yet to be measured.
func describe(sp *spec.Spec, m mutant) conformance.PowerMutant {
	class := conformance.ClassPage
	switch {
	case m.replicas > 0:
		class = conformance.ClassReplica
	case m.race:
		class = conformance.ClassRace
	case strings.HasPrefix(m.name, "stub-"):
		class = conformance.ClassCoverage
	case strings.HasPrefix(m.breaks, "MCP "):
		class = conformance.ClassProtocol
	case strings.HasPrefix(m.breaks, decisionPrefix):
		class = conformance.ClassDecision
	}
	return conformance.PowerMutant{Name: m.name, Class: class, Breaks: m.breaks, Rule: m.rule, Tool: mutantTool(sp, m)}
}

const decisionPrefix = "server/README.md: "

// mutantTool is the tool whose rule m breaks, read from what it cites
// or its rule ("claim_task: ...", "claim_task (reference): ..."); ""
// for a rule of every tool.
func mutantTool(sp *spec.Spec, m mutant) string {
	for _, s := range []string{strings.TrimPrefix(m.breaks, decisionPrefix), m.rule} {
		for _, t := range sp.Tools {
			if s == t.Name || strings.HasPrefix(s, t.Name+"#") || strings.HasPrefix(s, t.Name+":") || strings.HasPrefix(s, t.Name+" (") {
				return t.Name
			}
		}
	}
	return ""
}

// measureMutant runs the checks named to catch m (its scripts, and
// exploration alone), in the profiles that hold its rule, and returns
// what caught it; misses say which of them did not.
func measureMutant(t *testing.T, sp *spec.Spec, scripts []*conformance.Script, m mutant) (measured, []string) {
	t.Helper()
	got := measured{PowerMutant: describe(sp, m), unknown: map[conformance.Profile]bool{}}
	var misses []string
	add := func(prof conformance.Profile, c conformance.PowerCatcher) { addCatchers(&got.PowerMutant, prof, c) }
	profiles := []conformance.Profile{conformance.Reference}
	if m.core {
		profiles = append(profiles, conformance.Core)
	}
	for _, prof := range profiles {
		if len(m.caughtBy) == 0 {
			break
		}
		var pat []string
		for _, n := range m.caughtBy {
			pat = append(pat, regexp.QuoteMeta(n))
		}
		rep := runMutant(t, sp, scripts, m, prof, "^("+strings.Join(pat, "|")+")$", 0, "", mutantSeed)
		for _, n := range m.caughtBy {
			switch r := rep.Result(n); {
			case r == nil:
				misses = append(misses, fmt.Sprintf("%s profile: mutant %q (%s) is not caught by %s: the suite has no such script", prof, m.name, m.rule, n))
			case r.Status != report.Fail:
				misses = append(misses, fmt.Sprintf("%s profile: mutant %q (%s) is not caught by %s: %s", prof, m.name, m.rule, n, r.Status))
			default:
				t.Logf("%s profile: %s fails, as it must:\n%s", prof, n, lastLines(r.Log, 3))
				add(prof, conformance.PowerCatcher{By: n, Runs: 1})
			}
		}
	}
	for _, prof := range m.explore {
		c, short, miss := exploreCatches(t, sp, scripts, m, prof)
		switch {
		case short:
			got.unknown[prof] = true
		case c == nil:
			misses = append(misses, miss)
		default:
			add(prof, *c)
		}
	}
	return got, misses
}

// powerRecord gathers what one test measures of the mutants of its
// domain, and when the test ends compares it with power.json (or, with
// -update, writes it there).
type powerRecord struct {
	mu      sync.Mutex
	domain  []string // the mutants the test measures
	owns    func(conformance.PowerMutant) bool
	started map[string]bool
	got     map[string]measured
}

// recordPower starts a record of the mutants named domain for t, of
// the entries of power.json it owns.
func recordPower(t *testing.T, domain []string, owns func(conformance.PowerMutant) bool) *powerRecord {
	rec := &powerRecord{domain: domain, owns: owns, started: map[string]bool{}, got: map[string]measured{}}
	t.Cleanup(func() { rec.finish(t) })
	return rec
}

func (rec *powerRecord) start(name string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.started[name] = true
}

func (rec *powerRecord) measured(m measured) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.got[m.Name] = m
}

// finish compares what was measured with power.json, or writes it.
// Every mutant of the domain measured (no -run selection, none that
// stopped) also compares the lists: a mutant added or removed.
func (rec *powerRecord) finish(t *testing.T) {
	full := len(rec.started) == len(rec.domain)
	for _, n := range rec.domain {
		if rec.started[n] && rec.got[n].Name == "" {
			full = false // it stopped: its failure says why
		}
	}
	if len(rec.got) == 0 {
		return
	}
	f := readPowerFile(t)
	got := slices.Collect(maps.Values(rec.got))
	if *conformance.Update {
		for _, m := range got {
			i := slices.IndexFunc(f.Mutants, func(w conformance.PowerMutant) bool { return w.Name == m.Name })
			for prof := range m.unknown {
				if i < 0 || len(conformance.Catchers(&f.Mutants[i], prof)) == 0 {
					t.Errorf("%s: race mutant %s was not measured in the %s profile (its race evidence was short) and is not listed: rerun -update on a quieter machine", powerFile, m.Name, prof)
				}
			}
		}
		writePower(t, mergePower(f, got, rec.domain, rec.owns, full))
		t.Logf("wrote %s and %s: %d mutants measured", powerFile, powerMD, len(got))
		return
	}
	for _, p := range comparePower(f, got, rec.domain, rec.owns, full) {
		t.Errorf("%s: %s (the self-test measured otherwise: fix the suite, or rerun with -update if the change is meant)", powerFile, p)
	}
}

func readPowerFile(t *testing.T) *conformance.PowerFile {
	t.Helper()
	b, err := os.ReadFile(powerFile)
	if err != nil {
		t.Fatal(err)
	}
	f, err := conformance.ReadPower(b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// comparePower says how what was measured (got) differs from f: a
// mutant or a catcher f does not list, one f lists that no longer
// catches, a catcher that needed more runs or sequences than f's bound;
// with full, a mutant f lists among those the test owns that the
// self-test no longer has.
func comparePower(f *conformance.PowerFile, got []measured, domain []string, owns func(conformance.PowerMutant) bool, full bool) []string {
	var out []string
	slices.SortFunc(got, func(a, b measured) int { return strings.Compare(a.Name, b.Name) })
	for _, m := range got {
		i := slices.IndexFunc(f.Mutants, func(x conformance.PowerMutant) bool { return x.Name == m.Name })
		if i < 0 {
			out = append(out, fmt.Sprintf("mutant %s is not listed (a mutant added)", m.Name))
			continue
		}
		w := f.Mutants[i]
		if w.Class != m.Class || w.Breaks != m.Breaks || w.Tool != m.Tool || w.Rule != m.Rule {
			out = append(out, fmt.Sprintf("mutant %s: listed as %s, breaking %q (%s), measured as %s, breaking %q (%s)", m.Name, w.Class, w.Breaks, w.Tool, m.Class, m.Breaks, m.Tool))
		}
		for _, prof := range []conformance.Profile{conformance.Core, conformance.Reference} {
			if m.unknown[prof] {
				continue // a race not measured: its evidence was short
			}
			want, have := conformance.Catchers(&w, prof), conformance.Catchers(&m.PowerMutant, prof)
			for _, c := range want {
				j := slices.IndexFunc(have, func(x conformance.PowerCatcher) bool { return x.By == c.By })
				switch {
				case j < 0:
					out = append(out, fmt.Sprintf("mutant %s is no longer caught by %s in the %s profile (listed: caught by %s)", m.Name, c.By, prof, catcherNames(want)))
				case have[j].Runs > c.Runs || have[j].Sequences > c.Sequences && c.Sequences > 0:
					out = append(out, fmt.Sprintf("mutant %s, %s profile: %s needed %s, listed as within %s", m.Name, prof, c.By, tries(have[j]), tries(c)))
				case have[j].Replicas != c.Replicas:
					out = append(out, fmt.Sprintf("mutant %s, %s profile: %s caught it against %d replicas, listed as %d", m.Name, prof, c.By, have[j].Replicas, c.Replicas))
				}
			}
			for _, c := range have {
				if !slices.ContainsFunc(want, func(x conformance.PowerCatcher) bool { return x.By == c.By }) {
					out = append(out, fmt.Sprintf("mutant %s is caught by %s in the %s profile, which is not listed (listed: %s)", m.Name, c.By, prof, catcherNames(want)))
				}
			}
		}
	}
	if full {
		for _, w := range f.Mutants {
			if owns(w) && !slices.Contains(domain, w.Name) {
				out = append(out, fmt.Sprintf("mutant %s is listed, but the self-test has no such mutant (a mutant removed)", w.Name))
			}
		}
	}
	return out
}

// addCatchers adds cs to m's catchers in profile prof.
func addCatchers(m *conformance.PowerMutant, prof conformance.Profile, cs ...conformance.PowerCatcher) {
	if prof == conformance.Core {
		m.Core = append(m.Core, cs...)
	} else {
		m.Reference = append(m.Reference, cs...)
	}
}

// stubsOnly and noStubs tell the entries of power.json that
// TestMutantsFullRun measures (the stubs) from TestMutants'.
func stubsOnly(m conformance.PowerMutant) bool { return m.Class == conformance.ClassCoverage }
func noStubs(m conformance.PowerMutant) bool   { return !stubsOnly(m) }

func catcherNames(cs []conformance.PowerCatcher) string {
	if len(cs) == 0 {
		return "nothing"
	}
	var out []string
	for _, c := range cs {
		out = append(out, c.By)
	}
	return strings.Join(out, ", ")
}

// tries says a catcher's runs and sequences: "1 run", "3 runs", "1 run,
// 10 sequences".
func tries(c conformance.PowerCatcher) string {
	s := "1 run"
	if c.Runs != 1 {
		s = fmt.Sprintf("%d runs", c.Runs)
	}
	if c.Sequences > 0 {
		s += fmt.Sprintf(", %d sequences", c.Sequences)
	}
	return s
}

// bound is what power.json says of a measured catcher of a mutant of
// class: its runs, 1 but for a race (raceRuns: it may need a quieter
// moment), and its sequences, twice the count rounded up to 10 or
// DefaultExplore (past that, the race phase's: 1000). Bounds, not
// counts: exploration runs its sequences in batches side by side and
// stops once one batch has failed, so the sequence it reports first can
// be a later batch's when that one finished first.
func bound(class string, c conformance.PowerCatcher) conformance.PowerCatcher {
	c.Runs = 1
	if class == conformance.ClassRace {
		c.Runs, c.Sequences = raceRuns, 0
	}
	switch {
	case c.Sequences == 0:
	case 2*c.Sequences <= 10:
		c.Sequences = 10
	case c.Sequences <= conformance.DefaultExplore:
		c.Sequences = conformance.DefaultExplore
	default:
		c.Sequences = 1000
	}
	return c
}

// mergePower is f with what was measured (got): each mutant measured
// replaces its entry, its catchers as bounds; a race not measured in a
// profile keeps the catchers listed. With full, the mutants the test
// owns that it did not measure are dropped.
func mergePower(f *conformance.PowerFile, got []measured, domain []string, owns func(conformance.PowerMutant) bool, full bool) *conformance.PowerFile {
	out := *f
	out.Seed = mutantSeed
	byName := map[string]conformance.PowerMutant{}
	for _, m := range f.Mutants {
		byName[m.Name] = m
	}
	for _, m := range got {
		old := byName[m.Name]
		w := m.PowerMutant
		w.Core, w.Reference = nil, nil
		for _, prof := range []conformance.Profile{conformance.Core, conformance.Reference} {
			cs := conformance.Catchers(&old, prof)
			if !m.unknown[prof] {
				cs = nil
				for _, c := range conformance.Catchers(&m.PowerMutant, prof) {
					cs = append(cs, bound(m.Class, c))
				}
			}
			addCatchers(&w, prof, cs...)
		}
		byName[m.Name] = w
	}
	if full {
		for n, m := range byName {
			if !slices.Contains(domain, n) && owns(m) {
				delete(byName, n)
			}
		}
	}
	out.Mutants = slices.SortedFunc(maps.Values(byName), func(a, b conformance.PowerMutant) int { return strings.Compare(a.Name, b.Name) })
	return &out
}

// writePower writes f as power.json and POWER.md.
func writePower(t *testing.T, f *conformance.PowerFile) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(powerFile, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(powerMD, renderPower(f), 0o644); err != nil {
		t.Fatal(err)
	}
}

// renderPower is POWER.md: f for people.
func renderPower(f *conformance.PowerFile) []byte {
	var b strings.Builder
	b.WriteString(`# The suite's power

What the conformance suite's self-test measured of itself: every mutant
it runs (a copy of the reference server with one rule broken; see
[README.md](README.md#how-the-suite-itself-is-tested)), what it breaks, and
in each profile which check caught it and in how many tries. The mutant
self-test writes this file and [power.json](power.json), which every
report reads its score from, and fails in CI when what it measures
differs from them: a mutant added or removed, one no longer caught, a
catcher changed, or more tries than listed:

    PRICKLE_MUTANTS=1 go test -timeout 60m -run '^TestMutants(FullRun)?$' ./conformance -update

Generated: edit the mutants, not this file.

`)
	for _, prof := range []conformance.Profile{conformance.Core, conformance.Reference} {
		fmt.Fprintf(&b, "- **%s**: %s\n", prof, conformance.PowerOf(f, prof).Score())
	}
	fmt.Fprintf(&b, `
Tries are bounds, not counts, so that a run can be compared with the
file: a script catches its mutant on every run (1 run); exploration
alone, from seed %d at the default budget of %d sequences, within 10
or %d sequences (the sequence it reports first varies with how the
parallel batches run); a race mutant within %d runs, a seed each (its
race may need a quieter moment), and a run whose race evidence is
short is not counted either way. A replica mutant is caught against
two replicas. A profile with no catcher leaves the mutant's rule open
(core holds the pages only; server/README.md's decisions are the
reference profile's).

| Mutant | Class | Breaks | Core | Reference |
| --- | --- | --- | --- | --- |
`, f.Seed, conformance.DefaultExplore, conformance.DefaultExplore, raceRuns)
	for _, m := range f.Mutants {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", m.Name, m.Class, cell(m.Breaks), catcherCell(m.Core), catcherCell(m.Reference))
	}
	b.WriteString("\nWhat each breaks, in its own words:\n\n")
	for _, m := range f.Mutants {
		fmt.Fprintf(&b, "- `%s`: %s\n", m.Name, m.Rule)
	}
	if len(f.RaceVerdicts) > 0 {
		b.WriteString(`
## Race verdicts

Whole runs (exploration at the default budget, a seed each) against
the race and replica mutants and the reference server, counted by
` + "`PRICKLE_RACE_VERDICTS=N go test -run TestRaceVerdicts ./conformance`" + `
(which writes its last result here): FAILED / INCOMPLETE / CERTIFIED.
A mutant is never CERTIFIED; INCOMPLETE is a run whose race evidence
was short.
`)
		for _, v := range f.RaceVerdicts {
			fmt.Fprintf(&b, "\n%s, %s profile, %d runs each, %s, load average %s:\n\n| Server | FAILED | INCOMPLETE | CERTIFIED |\n| --- | --- | --- | --- |\n", v.Label, v.Profile, v.Runs, v.Date, v.Load)
			for _, r := range v.Rows {
				fmt.Fprintf(&b, "| `%s` | %d | %d | %d |\n", r.Server, r.Failed, r.Incomplete, r.Certified)
			}
		}
	}
	return []byte(b.String())
}

// cell is s in a table cell: a sentence ID or a schema as code.
func cell(s string) string {
	if strings.Contains(s, "#") || strings.HasSuffix(s, " schema") {
		return "`" + s + "`"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// catcherCell is the catchers of a profile: "`claim_task_replay` (1
// run), exploration (1 run, 10 sequences)"; "—" for none.
func catcherCell(cs []conformance.PowerCatcher) string {
	if len(cs) == 0 {
		return "—"
	}
	var out []string
	for _, c := range cs {
		name := "`" + c.By + "`"
		switch c.By {
		case conformance.CatchExplore:
			name = "exploration"
		case conformance.CatchCoverage:
			name = "coverage (no call succeeded)"
		}
		if c.Replicas > 0 {
			name += fmt.Sprintf(", %d replicas", c.Replicas)
		}
		within := tries(c)
		if c.Runs > 1 || c.Sequences > 0 {
			within = "within " + within
		}
		out = append(out, fmt.Sprintf("%s (%s)", name, within))
	}
	return strings.Join(out, "<br>")
}

// TestPowerHeldToItsWord: the comparison with power.json that the
// self-test makes catches a catcher removed. With the script
// claim_task_replay gone from the suite, mutant replay-same-token is no
// longer caught, and the comparison says so, naming it, in both
// profiles; with the script, it finds nothing.
func TestPowerHeldToItsWord(t *testing.T) {
	sp, scripts := loadSuite(t)
	i := slices.IndexFunc(mutants, func(m mutant) bool { return m.name == "replay-same-token" })
	if i < 0 || !slices.Equal(mutants[i].caughtBy, []string{"claim_task_replay"}) {
		t.Fatal("want mutant replay-same-token, caught by claim_task_replay alone")
	}
	m, f := mutants[i], readPowerFile(t)
	got, misses := measureMutant(t, sp, scripts, m)
	if diffs := comparePower(f, []measured{got}, nil, noStubs, false); len(misses) > 0 || len(diffs) > 0 {
		t.Fatalf("with every script: misses %q, differences from %s %q", misses, powerFile, diffs)
	}
	without := slices.DeleteFunc(slices.Clone(scripts), func(s *conformance.Script) bool { return s.Name == "claim_task_replay" })
	got, _ = measureMutant(t, sp, without, m)
	diffs := comparePower(f, []measured{got}, nil, noStubs, false)
	for _, prof := range []string{"core", "reference"} {
		want := "mutant replay-same-token is no longer caught by claim_task_replay in the " + prof + " profile"
		if !slices.ContainsFunc(diffs, func(d string) bool { return strings.HasPrefix(d, want) }) {
			t.Errorf("without claim_task_replay: want %q among the differences, got %q", want, diffs)
		}
	}
	t.Logf("without claim_task_replay, the self-test says: %s", strings.Join(diffs, "; "))
}

// TestPowerFile: POWER.md is what power.json says (-update writes it), every mutant cites
// what it breaks (a sentence of the pages, a page's schema, a decision of
// server/README.md or an MCP rule), and its class agrees with the
// profiles that catch it: a page's rule is caught in core, a decision
// of the reference server's only in reference.
func TestPowerFile(t *testing.T) {
	f := readPowerFile(t)
	md, err := os.ReadFile(powerMD)
	if err != nil {
		t.Fatal(err)
	}
	if *conformance.Update {
		writePower(t, f)
	} else if !bytes.Equal(md, renderPower(f)) {
		t.Errorf("%s is not what %s says: go test -run TestPowerFile ./conformance -update", powerMD, powerFile)
	}
	sp, _ := loadSuite(t)
	sentences := map[string]bool{}
	for _, tool := range sp.Tools {
		for _, s := range tool.Sentences {
			sentences[s.ID] = true
		}
	}
	decisions := conformance.ReadmeDecisions(t)
	for _, m := range slices.Concat(mutants, replicaMutants, stubMutants(sp)) {
		d := describe(sp, m)
		tool, what, _ := strings.Cut(m.breaks, ": ")
		switch {
		case sentences[m.breaks]:
		case strings.HasPrefix(m.breaks, decisionPrefix):
			if decisions[strings.TrimPrefix(m.breaks, decisionPrefix)] == "" {
				t.Errorf("mutant %s breaks %q, which server/README.md does not have", m.name, m.breaks)
			}
		case strings.HasPrefix(m.breaks, "MCP "):
		case sp.Tool(tool) != nil && (what == "input schema" || what == "output schema" || d.Class == conformance.ClassCoverage):
		default:
			t.Errorf("mutant %s breaks %q: want a sentence ID of the pages, \"TOOL: input schema\", \"TOOL: output schema\", %q+TITLE or \"MCP ...\"", m.name, m.breaks, decisionPrefix)
		}
		inCore := m.core || slices.Contains(m.explore, conformance.Core)
		switch {
		case sentences[m.breaks] && !inCore:
			t.Errorf("mutant %s breaks a sentence of the pages, %s, but core does not catch it", m.name, m.breaks)
		case strings.HasPrefix(m.breaks, decisionPrefix) && inCore:
			t.Errorf("mutant %s breaks a decision of server/README.md, which core leaves open, but core catches it: does it break a page's rule?", m.name)
		}
	}
}
