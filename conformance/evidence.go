package conformance

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/explore"
)

// Evidence: what a run must have gathered, beyond scripts that passed,
// before it certifies. Races: a race shows only in concurrent calls the
// server had all at once, so each race class needs RaceK groups whose
// calls overlapped on the wire; a class short of them leaves the run
// incomplete, never certified by luck.

// RaceK is the overlapping groups each race class needs; RaceP the
// fraction of them a race bug is assumed to show in (conformance/README.md,
// "Race evidence").
const (
	RaceK = explore.RaceK
	RaceP = explore.RaceP
)

// DefaultRaceBudget bounds the race phase: after the explored sequences,
// the races of each class short of RaceK overlapping groups, until it has
// them (see conformance/README.md for the measurements behind it).
const DefaultRaceBudget = 60 * time.Second

// RaceEvidence is what a run gathered of one race class: the concurrent
// groups run, those whose calls overlapped on the wire, the K it needs,
// and the probability that a bug showing in a fraction P of overlapping
// groups showed in none of them, (1-P)^Overlapped. Against a deployment
// of two replicas or more, only the overlapped groups whose calls reached
// two replicas or more count (CrossReplica): K of them, and the miss
// bound is theirs.
type RaceEvidence struct {
	Class string `json:"class"`
	// Tool is the tool whose claims the class races.
	Tool         string  `json:"tool"`
	Groups       int     `json:"groups"`
	Overlapped   int     `json:"overlapped"`
	CrossReplica int     `json:"cross_replica,omitempty"`
	K            int     `json:"k"`
	P            float64 `json:"p"`
	MissBound    float64 `json:"miss_bound"`
	// AcrossReplicas is true when the run was against replicas: the
	// groups that count are then CrossReplica.
	AcrossReplicas bool `json:"across_replicas,omitempty"`
}

// counted is the groups that count: CrossReplica across replicas, else
// Overlapped.
func (e RaceEvidence) counted() int {
	if e.AcrossReplicas {
		return e.CrossReplica
	}
	return e.Overlapped
}

// Short reports whether the class has fewer than K groups that count.
func (e RaceEvidence) Short() bool { return e.counted() < e.K }

// String is "CLASS: O of G groups overlapped (K needed), miss bound B";
// across replicas "CLASS: O of G groups overlapped, C across replicas (K
// needed), miss bound B".
func (e RaceEvidence) String() string {
	across := ""
	if e.AcrossReplicas {
		across = fmt.Sprintf(", %d across replicas", e.CrossReplica)
	}
	return fmt.Sprintf("%s: %d of %d groups overlapped%s (%d needed), miss bound %s", e.Class, e.Overlapped, e.Groups, across, e.K, missBound(e.MissBound))
}

// missBound formats a probability: "< 0.001" style, three significant
// digits.
func missBound(p float64) string { return fmt.Sprintf("%.3g", p) }

// raceEvidence is the evidence exploration's report x holds, a class a
// row, counted across replicas when the run had two or more; nil if
// exploration did not race (it did not run, or was skipped).
func raceEvidence(x *ExploreReport, replicas int) []RaceEvidence {
	if x == nil || x.Races == nil {
		return nil
	}
	across := replicas >= 2
	out := make([]RaceEvidence, 0, len(x.Races))
	for _, c := range x.Races {
		out = append(out, RaceEvidence{Class: string(c.Class), Tool: c.Class.Tool(), Groups: c.Groups, Overlapped: c.Overlapped,
			CrossReplica: c.CrossReplica, K: x.RaceK, P: x.RaceP, MissBound: explore.MissBound(x.RaceP, c.Counted(across)), AcrossReplicas: across})
	}
	return out
}

// raceGaps is what the race evidence of a run lacks for a certification:
// that races were not checked at all (the run's gap), or each class short
// of K, with what to do (a gap of the class's tool; a tool the scope
// leaves out was not raced, and says so).
func raceGaps(ev []RaceEvidence, budget string, scope []string) []gap {
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
func shortClasses(ev []RaceEvidence, scope []string) string {
	var s []string
	for _, e := range ev {
		if e.Short() && (len(scope) == 0 || slices.Contains(scope, e.Tool)) {
			s = append(s, fmt.Sprintf("%s %d/%d", e.Class, e.counted(), e.K))
		}
	}
	return strings.Join(s, ", ")
}

// raceTable is the race evidence as a table: class, groups run, groups
// overlapped (and across replicas, when the run had them), K, miss bound
// (and "short" where it is).
func raceTable(ev []RaceEvidence) (header []string, rows [][]string) {
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
