package conformance_test

import (
	"context"
	"crypto/rand"
	"sync"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/world"
)

// Race mutants: the store's races, as a store that makes a check outside
// its writer's transaction answers. Each decides on what it read as the
// call arrived, before it queued for the writer: what the calls that had
// returned by then were granted, and the world it loaded. Calls one at a
// time read the truth, so only calls that overlap can see a difference,
// and only concurrent exploration can catch them. (Mutants are never
// switches in the server: each wraps its tool handler.)
//
// Two race classes of issue 20 cannot be reached over MCP, so no mutant
// here plants them: a reply count read before the writer (replies are
// posted through the store only, issue 24), and a cache filled after it
// was invalidated (prickled caches only agent and runner principals and
// team directories, which only RevokeToken, RevokeRunner and loading a
// world change, none of them a tool; credentials are never cached).
func init() {
	mutants = append(mutants,
		mutant{
			name:    "race-live-attempt-check",
			breaks:  `server/README.md: claim_task`,
			rule:    "claim_task (reference): one live attempt per task; this store checks for a live attempt outside the writer's transaction, so concurrent claims under different keys each make an attempt",
			explore: []conformance.Profile{conformance.Reference},
			race:    true,
			handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
				rs := newRaceState(w)
				return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
					live := rs.seen("task " + in.TaskID)
					out, err := inner.ClaimTask(ctx, in)
					if refusedWith(err, store.CodeAttemptInProgress) && !live {
						out, err = freshTaskClaim(in.TaskID), nil
					}
					if err == nil {
						rs.mark("task " + in.TaskID)
					}
					return out, err
				}}
			}),
		},
		mutant{
			name:    "race-same-key-upsert",
			breaks:  `claim_task#1d2c6a82`,
			rule:    "claim_task: the same key replays the same attempt; this store looks the key up outside the writer's transaction and writes the claim as an upsert, so concurrent retries each replace the attempt",
			explore: []conformance.Profile{conformance.Core, conformance.Reference},
			race:    true,
			handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
				rs := newRaceState(w)
				var mu sync.Mutex
				first := map[string]bool{} // attempt ids answered
				return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
					key := "key " + in.TaskID + " " + in.IdempotencyKey
					known := rs.seen(key)
					out, err := inner.ClaimTask(ctx, in)
					if err != nil {
						return out, err
					}
					mu.Lock()
					replay := first[out.Attempt.AttemptID]
					first[out.Attempt.AttemptID] = true
					mu.Unlock()
					if replay && !known { // the upsert replaced the attempt
						out.Attempt.AttemptID = "att_" + rand.Text()
						out.Attempt.ClaimedAt = time.Now().UTC()
					}
					rs.mark(key)
					return out, err
				}}
			}),
		},
		mutant{
			name:    "race-discussion-live-check",
			breaks:  `server/README.md: claim_discussion`,
			rule:    "claim_discussion (reference): one live discussion claim per agent and turn; this store checks for one outside the writer's transaction, so concurrent claims under different keys each succeed",
			explore: []conformance.Profile{conformance.Reference},
			race:    true,
			handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
				rs := newRaceState(w)
				return &wrapped{claimDiscussion: func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
					live := rs.seen("message " + in.MessageID)
					out, err := inner.ClaimDiscussion(ctx, in)
					if refusedWith(err, store.CodeDiscussionInProgress) && !live {
						out, err = w.grantDiscussion(in.MessageID, "draft"), nil
					}
					if err == nil {
						rs.mark("message " + in.MessageID)
					}
					return out, err
				}}
			}),
		},
	)
}

// raceState is what a racy store reads outside its transaction: the
// tasks, messages and keys claimed in the world it loaded or by calls that
// have returned.
type raceState struct {
	mu      sync.Mutex
	claimed map[string]bool
}

func newRaceState(w *scene) *raceState {
	rs := &raceState{claimed: map[string]bool{}}
	if fx, err := world.Decode(w.fixture); err == nil {
		for _, a := range fx.Attempts {
			rs.claimed["task "+a.Task] = true
			rs.claimed["key "+a.Task+" "+a.IdempotencyKey] = true
		}
		for _, c := range fx.DiscussionClaims {
			rs.claimed["message "+c.Message] = true
		}
	}
	return rs
}

func (rs *raceState) seen(k string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.claimed[k]
}

func (rs *raceState) mark(k string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.claimed[k] = true
}

// freshTaskClaim is a new attempt the store never granted, with a fresh id
// and token.
func freshTaskClaim(taskID string) *api.ClaimTaskOutput {
	out := fakeTaskClaim(taskID)
	out.Attempt.AttemptID = "att_" + rand.Text()
	out.ExecutionCredential.Token = "prk_mutant_" + rand.Text()
	return out
}
