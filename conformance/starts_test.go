package conformance_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/report"
)

// countingTarget counts the starts of the target it wraps.
type countingTarget struct {
	conformance.Target
	n atomic.Int64
}

func (c *countingTarget) Start(ctx context.Context, s *conformance.Script, fixtureFile, dir string) (*conformance.Instance, error) {
	c.n.Add(1)
	return c.Target.Start(ctx, s, fixtureFile, dir)
}

// TestStarts: a full run at --parallel 2 starts a server for each script
// that needs one of its own, one for the scripts that only make calls
// they assert refused on the seed world, and one per batch of explored
// sequences; the report counts them. With fresh starts every script and
// sequence gets its own, and every script ends as it does sharing.
func TestStarts(t *testing.T) {
	sp, scripts := loadSuite(t)
	own := 0
	for _, s := range scripts {
		if !script.RefusalsOnly(s) {
			own++
		}
	}
	run := func(fresh bool, explore int) (*conformance.Report, int64) {
		target := &countingTarget{Target: referenceTarget("reference (in-process)", nil, nil)}
		rep, err := conformance.Run(context.Background(), scripts, conformance.Options{Target: target, Profile: conformance.Reference,
			Spec: sp, Parallel: 2, Explore: explore, Seed: 1, FreshStarts: fresh})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Starts != target.n.Load() {
			t.Errorf("fresh %v: the report counts %d starts, the target %d", fresh, rep.Starts, target.n.Load())
		}
		return rep, target.n.Load()
	}
	shared, n := run(false, conformance.DefaultExplore)
	checkVerdict(t, shared)
	// 100 sequences at --parallel 2: batches of at most 25; each round of
	// the race phase, at most 2 batches.
	rounds := shared.Explore.RaceRounds
	if want := int64(own + 1 + 4 + 2*rounds); n > want || n*4 > int64(len(scripts)+conformance.DefaultExplore+shared.Explore.RaceSequences) {
		t.Errorf("a full run started %d servers, want at most %d (%d scripts of their own, the shared seed world, 4 batches, 2 for each of %d race rounds)", n, want, own, rounds)
	}
	fresh, n := run(true, 10)
	// Servers the race budget's end cut short are started but their
	// sequences not counted.
	if want := int64(len(scripts) + 10 + fresh.Explore.RaceSequences); n < want || n != want && shortRaces(fresh) == "" {
		t.Errorf("with fresh starts a run started %d servers, want %d (%d sequences of races alone)", n, want, fresh.Explore.RaceSequences)
	}
	for _, r := range fresh.Results {
		if s := shared.Result(r.Name); r.Name != report.ExploreScript && (s == nil || s.Status != r.Status || s.Checks != r.Checks) {
			t.Errorf("%s: %s with %d checks alone, %+v sharing", r.Name, r.Status, r.Checks, s)
		}
	}
	t.Logf("%d servers for %d scripts and %d sequences (%d scripts need their own)", shared.Starts, len(scripts), conformance.DefaultExplore, own)
}
