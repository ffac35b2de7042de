package report

// Exploration says what stateful exploration did: the sequences it ran,
// the answers' outcomes, the concurrent groups and the failures it shrank.
type Exploration struct {
	// Seed is the seed the sequences were generated from.
	Seed int64 `json:"seed"`
	// Sequences counts the sequences run, Calls the calls they made.
	Sequences int `json:"sequences"`
	Calls     int `json:"calls"`
	// Outcomes counts the answers by tool and outcome ("claim_task ok",
	// "claim_task refused not_routed"): what exploration exercised.
	Outcomes map[string]int `json:"outcomes"`
	// Provoked counts, by RefusalEvidence.Name, the calls made one at a
	// time that the model says provoked a refusal the pages state alone:
	// a refusal no other reason could explain.
	Provoked map[string]int `json:"provoked"`
	// Groups counts the concurrent groups sent, GroupCalls their calls;
	// Unknown the groups whose linearizability check ran out of budget
	// (then the run cannot certify: unknown is never a pass).
	Groups     int               `json:"groups"`
	GroupCalls int               `json:"group_calls"`
	Unknown    int               `json:"unknown"`
	Failures   []*ExploreFailure `json:"failures,omitempty"`
	// Races counts the concurrent groups per race class, and those whose
	// calls overlapped on the wire; RaceK is the overlapping groups each
	// class needs, RaceP the fraction of them a race bug is assumed to
	// show in; RaceSequences the sequences of races alone the race phase
	// added to reach RaceK, within RaceBudget, in RaceRounds rounds (each
	// its sequences run as the run's are, in batches
	// conformance.Options.Parallel at a time).
	Races         []RaceCount `json:"races"`
	RaceK         int         `json:"race_k"`
	RaceP         float64     `json:"race_p"`
	RaceBudget    string      `json:"race_budget"`
	RaceSequences int         `json:"race_sequences"`
	RaceRounds    int         `json:"race_rounds"`
}

// ExploreFailure is one failing sequence of exploration, shrunk.
type ExploreFailure struct {
	// Sequence is the index of the sequence that failed (with the seed, it
	// reproduces it).
	Sequence int `json:"sequence"`
	// Source is the rule broken: a sentence ID of the pages or a decision
	// of server/README.md.
	Source string `json:"source"`
	// Message says what was wrong.
	Message string `json:"message"`
	// Calls is the length of the shrunk sequence; Original the length of
	// the sequence as generated.
	Calls    int `json:"calls"`
	Original int `json:"original_calls"`
	// Script is the shrunk sequence as a testscript file with its fixture.
	Script string `json:"script"`
	// Saved is where --save wrote it.
	Saved string `json:"saved,omitempty"`
}

// RaceCount is the evidence of one race class: the groups run, those
// whose calls overlapped on the wire, and of those, against a deployment
// of replicas, the groups whose calls reached two replicas or more.
type RaceCount struct {
	Class        string `json:"class"`
	Groups       int    `json:"groups"`
	Overlapped   int    `json:"overlapped"`
	CrossReplica int    `json:"cross_replica,omitempty"`
}

// Counted is the groups that count as evidence: those that overlapped,
// or across replicas, those that overlapped across replicas.
func (n RaceCount) Counted(across bool) int {
	if across {
		return n.CrossReplica
	}
	return n.Overlapped
}
