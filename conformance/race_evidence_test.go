package conformance_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
)

// globalLock wraps a server's HTTP handler so that it answers one request
// at a time: a correct server, whose concurrent calls never run together
// inside it, although they are all on the wire at once.
func globalLock(delay time.Duration) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		var mu sync.Mutex // one per server
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			time.Sleep(delay)
			h.ServeHTTP(w, r)
		})
	}
}

// TestGlobalLockCertified: a server that answers every call one at a time
// (the reference server behind one lock) is correct, and its groups
// overlap on the wire (every request written before the first answer
// began), so a whole run certifies it, each race class with its K
// overlapping groups.
func TestGlobalLockCertified(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole certification run")
	}
	sp, scripts := loadSuite(t)
	rep, err := conformance.Run(context.Background(), scripts, conformance.Options{
		Target:  referenceTarget("reference behind a global lock", nil, globalLock(0)),
		Profile: conformance.Reference, Spec: sp, Explore: conformance.DefaultExplore, Seed: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Races {
		t.Logf("%s", e)
	}
	if rep.Failed > 0 {
		t.Fatalf("a global-lock server fails: %s", failedNames(rep))
	}
	checkVerdict(t, rep)
	if len(rep.Races) == 0 {
		t.Fatal("no race evidence")
	}
	for _, e := range rep.Races {
		if e.Short() {
			t.Errorf("a global lock's groups do not count as overlapped: %s", e)
		}
	}
}

// TestSlowServerIncomplete: a server so slow that no race class reaches K
// within the race budget ends INCOMPLETE, naming each short class with
// its numbers, and the race phase ends with its budget instead of
// waiting for the server.
func TestSlowServerIncomplete(t *testing.T) {
	sp, scripts := loadSuite(t)
	const budget = 2 * time.Second
	start := time.Now()
	rep, err := conformance.Run(context.Background(), scripts, conformance.Options{
		Target:  referenceTarget("reference, 40ms a request, one at a time", nil, globalLock(40*time.Millisecond)),
		Profile: conformance.Reference, Spec: sp, Explore: 2, Seed: 3, RaceBudget: budget, Run: regexp.MustCompile("^explore$"),
	})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if r := rep.Result(report.ExploreScript); r == nil || r.Status != report.Pass || rep.Verdict != conformance.Incomplete {
		t.Fatalf("verdict %s, exploration %v: want incomplete, exploration passed", rep.Verdict, r)
	}
	if !strings.Contains(rep.Result(report.ExploreScript).Log, "the race budget (2s) ran out") {
		t.Errorf("exploration's log does not say the budget ran out:\n%s", rep.Result(report.ExploreScript).Log)
	}
	missing := strings.Join(rep.Missing, "\n")
	for _, e := range rep.Races {
		if !e.Short() {
			t.Errorf("a class reached K against a server 40ms a request within %s: %s", budget, e)
		}
		if want := "race class " + e.Class + " is short of evidence"; !strings.Contains(missing, want) {
			t.Errorf("missing lacks %q:\n%s", want, missing)
		}
	}
	// Not a speed target: a race phase that waited for the server (K
	// groups of up to 8 calls at 40ms, 5 classes: over 100s) would not end
	// within a minute of its budget.
	if took > time.Minute {
		t.Errorf("the run took %s with a race budget of %s", took, budget)
	}
	t.Logf("in %s: %s", took.Round(time.Millisecond), missing)
}
