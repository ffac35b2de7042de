package conformance_test

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/world"
)

// checkThenInsert is a server whose claim_task checks and inserts in two
// steps, as a server written from the pages without a transaction might:
// it looks the key and the task's live attempt up, and inserts a new
// attempt a moment later. One call at a time it is right; four claims of
// one task at once get four attempts, two of them under one key. Tasks
// the world already claimed, and every other rule, are the reference
// server's.
var checkThenInsert = mutant{
	name: "check-then-insert",
	rule: "claim_task: one attempt per key, one live attempt per task, under concurrent claims",
	handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
		claimed := map[string]bool{}
		if fx, err := world.Decode(w.fixture); err == nil {
			for _, a := range fx.Attempts {
				claimed[a.Task] = true
			}
		}
		var mu sync.Mutex
		byKey := map[string]*api.ClaimTaskOutputAttempt{}
		live := map[string]bool{}
		return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
			out, err := inner.ClaimTask(ctx, in) // the other rules, and a credential
			if claimed[in.TaskID] || err != nil && !refusedWith(err, store.CodeAttemptInProgress) {
				return out, err
			}
			k := in.TaskID + " " + in.IdempotencyKey
			mu.Lock()
			a, known := byKey[k]
			busy := live[in.TaskID]
			mu.Unlock()
			time.Sleep(time.Millisecond) // between the check and the insert
			switch {
			case known:
			case busy && err != nil:
				return nil, err
			default:
				a = &api.ClaimTaskOutputAttempt{AttemptID: "att_" + rand.Text(), TaskID: in.TaskID, ClaimedAt: time.Now().UTC().Truncate(time.Millisecond)}
				mu.Lock()
				byKey[k], live[in.TaskID] = a, true
				mu.Unlock()
			}
			if out == nil {
				out = freshTaskClaim(in.TaskID)
			}
			out.Attempt = *a
			return out, nil
		}}
	}),
}

// TestCheckThenInsertNotCertified: concurrent exploration catches a
// check-then-insert race that every call made one at a time misses, in
// both profiles, and the run does not certify the server; on a machine
// too loaded for calls to overlap, the run's race evidence is short
// instead (skipped: nothing to see of the race).
func TestCheckThenInsertNotCertified(t *testing.T) {
	sp, scripts := loadSuite(t)
	for _, prof := range []conformance.Profile{conformance.Core, conformance.Reference} {
		t.Run(string(prof), func(t *testing.T) {
			t.Parallel()
			rep := runMutant(t, sp, scripts, checkThenInsert, prof, "^explore$", conformance.DefaultExplore, "", mutantSeed)
			r := rep.Result(report.ExploreScript)
			if r != nil && r.Status == report.Pass {
				if short := shortRaces(rep); short != "" {
					t.Skipf("%s profile: not caught, and not certified: race evidence short (%s)", prof, short)
				}
			}
			if r == nil || r.Status != report.Fail || rep.Verdict == conformance.Certified {
				t.Fatalf("%s profile: a check-then-insert claim_task is not caught, its race evidence complete: %v %v", prof, r, rep.Races)
			}
			f := rep.Explore.Failures[0]
			if !strings.Contains(f.Message, "sent at once") {
				t.Errorf("%s profile: caught by calls one at a time, not by a race: %s", prof, f.Message)
			}
			t.Logf("%s profile: %s [%s], shrunk to %d calls", prof, f.Message, f.Source, f.Calls)
		})
	}
}
