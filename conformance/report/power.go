package report

import (
	"fmt"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
)

// Power is the suite's power in the profile of a run, as its self-test
// measured it (conformance/POWER.md): of the self-test's mutants, how
// many the profile catches, and in a run of a selection (--run,
// --tools), how many of those the run ran a catching check of.
type Power struct {
	Profile suite.Profile `json:"profile"` // conformance.Core or conformance.Reference
	Mutants int           `json:"mutants"`
	Caught  int           `json:"caught"`
	// Races and Replicas are, of Caught, the race mutants, and the
	// replica mutants (caught only against two replicas or more).
	Races    int `json:"races"`
	Replicas int `json:"replica_mutants"`
	// Selection is true for a run of a selection; Ran is then how many
	// of Caught had a catching check among what it ran.
	Selection bool `json:"selection,omitempty"`
	Ran       int  `json:"ran,omitempty"`
	// List is where the self-test's mutants are listed.
	List string `json:"list"`
}

// String is "the suite catches N of M self-test mutants in the P
// profile (of them R races ...)", a selection's share, and where the list
// is.
func (p *Power) String() string { return p.Score() + "; the list: " + p.List }

// Score is String without where the list is: "the suite catches N of M
// self-test mutants in the P profile (...)", and a selection's share.
func (p *Power) Score() string {
	s := fmt.Sprintf("the suite catches %d of %d self-test mutants in the %s profile (of them %s", p.Caught, p.Mutants, p.Profile, plural(p.Races, "race"))
	if p.Replicas > 0 {
		s += fmt.Sprintf(", %s, caught against --replicas 2", plural(p.Replicas, "replica bug"))
	}
	s += ")"
	if p.Selection {
		s += fmt.Sprintf("; this selection ran the catching checks of %d of them (%d%%)", p.Ran, percent(p.Ran, p.Caught))
	}
	return s
}

// plural is "1 race", "3 races".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func percent(n, of int) int {
	if of == 0 {
		return 0
	}
	return n * 100 / of
}
