package report

import "fmt"

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

// Counted is the groups that count: CrossReplica across replicas, else
// Overlapped.
func (e RaceEvidence) Counted() int {
	if e.AcrossReplicas {
		return e.CrossReplica
	}
	return e.Overlapped
}

// Short reports whether the class has fewer than K groups that count.
func (e RaceEvidence) Short() bool { return e.Counted() < e.K }

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

// RefusalEvidence is how often a run provoked one refusal a page states,
// in one situation, alone.
type RefusalEvidence struct {
	// Tool is the tool refused; Code the code server/README.md gives the
	// refusal (core accepts any refusal, whatever its code).
	Tool string `json:"tool"`
	Code string `json:"code"`
	// Sentence is the ID of the page sentence that states the refusal;
	// What says why it applies, Situation in which case.
	Sentence  string `json:"sentence"`
	What      string `json:"what"`
	Situation string `json:"situation,omitempty"`
	// Provoked counts the calls refused for this reason alone.
	Provoked int `json:"provoked"`
	// Untestable is untestable.md's reason that no call can provoke it
	// alone in the run's profile: then it does not keep a run from
	// certifying.
	Untestable string `json:"untestable,omitempty"`
}

// Name is "TOOL CODE (SENTENCE)", then ": SITUATION" if it has one.
func (e RefusalEvidence) Name() string {
	k := e.Tool + " " + e.Code + " (" + e.Sentence + ")"
	if e.Situation != "" {
		k += ": " + e.Situation
	}
	return k
}
