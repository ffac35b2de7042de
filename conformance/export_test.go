package conformance

import (
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/conformance/report"
)

// KeepCallsApart makes every try of a script's concurrently count as not
// overlapped on the wire, as on a machine that kept the calls apart,
// until t ends. Not for parallel tests.
func KeepCallsApart(t *testing.T) {
	old := script.Overlapped
	script.Overlapped = func([]*wire.AtOnce) bool { return false }
	t.Cleanup(func() { script.Overlapped = old })
}

// ShortEvidence reports whether r was skipped because its concurrently
// tries did not overlap on the wire.
func ShortEvidence(r *report.Result) bool {
	return r.Status == report.Skip && strings.HasPrefix(r.Reason, script.ShortEvidence+":")
}

// The power file's types (power.go), for the self-test that writes it.
type (
	PowerFile       = powerFile
	PowerMutant     = powerMutant
	PowerCatcher    = powerCatcher
	RaceVerdicts    = raceVerdicts
	RaceVerdictsRow = raceVerdictsRow
)

// Mutant classes and catchers (power.go).
const (
	ClassPage     = classPage
	ClassDecision = classDecision
	ClassRace     = classRace
	ClassReplica  = classReplica
	ClassProtocol = classProtocol
	ClassCoverage = classCoverage
	CatchExplore  = catchExplore
	CatchCoverage = catchCoverage
)

// ReadPower parses a power file.
var ReadPower = readPower

// Update is -update: the self-test rewrites what it measured.
var Update = update

// ReadmeDecisions are server/README.md's decisions, by title.
func ReadmeDecisions(t *testing.T) map[string]string { return readmeDecisions(t) }

// PowerOf is f's score in profile p, for a whole run.
func PowerOf(f *PowerFile, p Profile) *report.Power { return f.power(p, "", nil) }

// Catchers are m's catchers in profile p.
func Catchers(m *PowerMutant, p Profile) []PowerCatcher { return m.caught(p) }
