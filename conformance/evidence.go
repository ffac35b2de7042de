package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prickle-dev/prickle/conformance/internal/explore"
	"github.com/prickle-dev/prickle/conformance/report"
)

// Evidence: what a run must have gathered, beyond scripts that passed,
// before it certifies. Races: a race shows only in concurrent calls the
// server had all at once, so each race class needs K groups whose calls
// overlapped on the wire (explore.RaceK, for a bug assumed to show in a
// fraction explore.RaceP of them: conformance/README.md, "Race
// evidence"); a class short of them leaves the run incomplete, never
// certified by luck.

// missBound formats a probability as report.RaceEvidence.String does:
// three significant digits.
func missBound(p float64) string { return fmt.Sprintf("%.3g", p) }

// raceEvidence is the evidence exploration's report x holds, a class a
// row, counted across replicas when the run had two or more; nil if
// exploration did not race (it did not run, or was skipped).
func raceEvidence(x *report.Exploration, replicas int) []report.RaceEvidence {
	if x == nil || x.Races == nil {
		return nil
	}
	across := replicas >= 2
	out := make([]report.RaceEvidence, 0, len(x.Races))
	for _, c := range x.Races {
		out = append(out, report.RaceEvidence{Class: string(c.Class), Tool: explore.RaceClass(c.Class).Tool(), Groups: c.Groups, Overlapped: c.Overlapped,
			CrossReplica: c.CrossReplica, K: x.RaceK, P: x.RaceP, MissBound: explore.MissBound(x.RaceP, c.Counted(across)), AcrossReplicas: across})
	}
	return out
}

// raceGaps is what the race evidence of a run lacks for a certification:
// that races were not checked at all (the run's gap), or each class short
// of K, with what to do (a gap of the class's tool; a tool the scope
// leaves out was not raced, and says so).
func raceGaps(ev []report.RaceEvidence, budget string, scope []string) []gap {
	if ev == nil {
		return []gap{{"", "races were not checked: exploration did not race (--explore 0, a --run selection without explore, or exploration skipped), so no concurrent call was sent"}}
	}
	var out []gap
	for _, e := range ev {
		switch {
		case !e.Short():
		case len(scope) > 0 && !slices.Contains(scope, e.Tool):
			out = append(out, gap{e.Tool, fmt.Sprintf("race class %s was not raced: --tools leaves %s out", e.Class, e.Tool)})
		case e.AcrossReplicas:
			out = append(out, gap{e.Tool, fmt.Sprintf("race class %s is short of evidence across replicas: %d of %d concurrent groups overlapped on the wire with their calls on two replicas or more (%d overlapped in all), %d needed (a bug showing in %g of them is missed with probability up to %s); run on a quieter machine, give the race phase more time (--race-budget, %s this run), or try more or less --parallel",
				e.Class, e.CrossReplica, e.Groups, e.Overlapped, e.K, e.P, missBound(e.MissBound), budget)})
		default:
			out = append(out, gap{e.Tool, fmt.Sprintf("race class %s is short of evidence: %d of %d concurrent groups overlapped on the wire, %d needed (a bug showing in %g of them is missed with probability up to %s); run on a quieter machine, give the race phase more time (--race-budget, %s this run), or try more or less --parallel",
				e.Class, e.Overlapped, e.Groups, e.K, e.P, missBound(e.MissBound), budget)})
		}
	}
	return out
}

// shortClasses is "CLASS O/K, ..." of the classes short of K whose tool
// is in scope (all without one), for the badge; "" if none is.
func shortClasses(ev []report.RaceEvidence, scope []string) string {
	var s []string
	for _, e := range ev {
		if e.Short() && (len(scope) == 0 || slices.Contains(scope, e.Tool)) {
			s = append(s, fmt.Sprintf("%s %d/%d", e.Class, e.Counted(), e.K))
		}
	}
	return strings.Join(s, ", ")
}

// raceTable is the race evidence as a table: class, groups run, groups
// overlapped (and across replicas, when the run had them), K, miss bound
// (and "short" where it is).
func raceTable(ev []report.RaceEvidence) (header []string, rows [][]string) {
	across := len(ev) > 0 && ev[0].AcrossReplicas
	header = []string{"Race class", "Groups run", "Overlapped", "K", "Miss bound"}
	if across {
		header = slices.Insert(header, 3, "Across replicas")
	}
	for _, e := range ev {
		k := fmt.Sprint(e.K)
		if e.Short() {
			k += " (short)"
		}
		row := []string{e.Class, fmt.Sprint(e.Groups), fmt.Sprint(e.Overlapped), k, missBound(e.MissBound)}
		if across {
			row = slices.Insert(row, 3, fmt.Sprint(e.CrossReplica))
		}
		rows = append(rows, row)
	}
	return header, rows
}

// ReplicaSummary says, against replicas, how many and the tool calls
// each answered: "2 replicas; tool calls answered: replica 0 1234, replica 1
// 1200"; "" against one server.
func (r *Report) ReplicaSummary() string {
	if r.Replicas < 2 {
		return ""
	}
	var calls []string
	for i := range r.Replicas {
		n := 0
		if i < len(r.ReplicaCalls) {
			n = r.ReplicaCalls[i]
		}
		calls = append(calls, fmt.Sprintf("replica %d %d", i, n))
	}
	return fmt.Sprintf("%d replicas; tool calls answered: %s", r.Replicas, strings.Join(calls, ", "))
}
