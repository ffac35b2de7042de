package explore

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prickle-dev/prickle/conformance/report"
)

// Race evidence. A race shows only in a group whose calls the server had
// all at once, so a group counts as evidence only if its calls overlapped
// on the wire (wire.Overlapped). Exploration counts, per race class, the
// groups run and those that overlapped, and keeps racing a class short of
// RaceK overlapping groups until it has them or the race budget ends: a
// run short of RaceK in any class is no certification (a loaded machine
// cannot pass a racy server by luck). Against a deployment of replicas,
// a group counts only if its calls overlapped and reached two replicas
// or more: a race between replicas is what one process cannot show.

// RaceClass names a kind of race exploration sends. The names are stable:
// reports and scripts read them.
type RaceClass string

// The race classes, in the order reports list them.
const (
	// TaskSameKey: claims of one task, all under one idempotency key (a
	// retry racing the first claim).
	TaskSameKey RaceClass = "task-same-key"
	// TaskDifferentKeys: claims of one task, each under a key of its own.
	TaskDifferentKeys RaceClass = "task-different-keys"
	// TaskMixedKeys: claims of one task under two keys, racing both a
	// key's replays and the other key.
	TaskMixedKeys RaceClass = "task-mixed-keys"
	// Discussion: claims of one message's discussion turn.
	Discussion RaceClass = "discussion"
	// CredentialReplay: an execution credential's use racing the replay
	// of its claim, which replaces it.
	CredentialReplay RaceClass = "credential-replay"
)

// Tool is the tool whose claims the class races (a credential's use
// races the claim_task replay that replaces it): a certification whose
// scope leaves the tool out does not race the class.
func (c RaceClass) Tool() string {
	if c == Discussion {
		return "claim_discussion"
	}
	return "claim_task"
}

// RaceClasses are the classes, in report order.
var RaceClasses = []RaceClass{TaskSameKey, TaskDifferentKeys, TaskMixedKeys, Discussion, CredentialReplay}

// RaceP is the fraction of overlapping groups of its class in which a race
// bug is assumed to show at least: the miss bound (1-RaceP)^o of o
// overlapping groups rests on it (conformance/README.md, "Race evidence",
// has the measurements).
const RaceP = 0.1

// RaceK is how many overlapping groups each class needs: with RaceP, a
// bug is missed with probability (1-0.1)^66 < 1/1000.
const RaceK = 66

// MissBound is the probability that a bug showing in a fraction p of
// overlapping groups shows in none of o: (1-p)^o.
func MissBound(p float64, o int) float64 { return math.Pow(1-p, float64(o)) }

// raceTally counts groups by class.
type raceTally map[RaceClass]*report.RaceCount

func (t raceTally) add(c RaceClass, groups, overlapped, cross int) {
	if c == "" {
		return
	}
	n := t[c]
	if n == nil {
		n = &report.RaceCount{Class: string(c)}
		t[c] = n
	}
	n.Groups += groups
	n.Overlapped += overlapped
	n.CrossReplica += cross
}

// merge adds u's counts to t.
func (t raceTally) merge(u raceTally) {
	for c, n := range u {
		t.add(c, n.Groups, n.Overlapped, n.CrossReplica)
	}
}

// short lists the classes with fewer than k groups counted (across
// replicas, or not).
func (t raceTally) short(k int, across bool) []RaceClass {
	var out []RaceClass
	for _, c := range RaceClasses {
		if n := t[c]; n == nil || n.Counted(across) < k {
			out = append(out, c)
		}
	}
	return out
}

// counts is every class's count, in report order (a class never run has
// zeros).
func (t raceTally) counts() []report.RaceCount {
	out := make([]report.RaceCount, 0, len(RaceClasses))
	for _, c := range RaceClasses {
		n := report.RaceCount{Class: string(c)}
		if t[c] != nil {
			n = *t[c]
		}
		out = append(out, n)
	}
	return out
}

// needed is how many counted groups class c still lacks.
func (t raceTally) needed(c RaceClass, k int, across bool) int {
	if n := t[c]; n != nil {
		return max(0, k-n.Counted(across))
	}
	return k
}

// across reports whether the run's evidence is counted across replicas:
// against two replicas or more.
func (e *explorer) across() bool { return e.c.Replicas >= 2 }

// raceTries is how many groups a sequence of the race phase sends: each
// on a fresh copy of its part of the world, as a sequence's Tries are.
const raceTries = 8

// maxRoundGroups bounds the groups one round of the race phase sends for
// a class: the next round sizes itself from what this one overlapped.
const maxRoundGroups = 160

// genRaceSequence is sequence index of the race phase: a race of class
// alone, tries times, in a generated world; nil if the world has no agent
// that can race (no runner, or no project). size is as for addRaces.
func genRaceSequence(seed int64, index int, class RaceClass, tries, size int) *exploreSequence {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(index)))
	seq := &exploreSequence{index: index, world: genWorld(r)}
	addRaces(seed, seq, class, tries, size)
	if len(seq.cmds) == 0 {
		return nil
	}
	spread(seq.cmds)
	return seq
}

// gatherRaces is the race phase: while a class of tally has fewer than
// RaceK overlapping groups, it runs sequences of that class's races alone
// (indexes after the run's sequences), a round at a time sized by the
// fraction that overlapped so far, until every class has them or the race
// budget ends (budgetOut), in rounds rounds. A run the budget's end cut
// short is dropped, its groups uncounted; a failing sequence ends the
// phase.
func (e *explorer) gatherRaces(ctx context.Context, name string, tally raceTally) (seqs []*exploreSequence, runs []*exploreRun, rounds int, budgetOut bool) {
	k := RaceK
	if len(e.shortInScope(tally, k)) == 0 {
		return nil, nil, 0, false
	}
	if e.c.RaceBudget <= 0 {
		return nil, nil, 0, true
	}
	bctx, cancel := context.WithTimeout(ctx, e.c.RaceBudget)
	defer cancel()
	next := e.c.Sequences
	for {
		short := e.shortInScope(tally, k)
		if len(short) == 0 {
			return seqs, runs, rounds, false
		}
		if bctx.Err() != nil {
			return seqs, runs, rounds, true
		}
		var round []*exploreSequence
		for _, cl := range short {
			frac := 1.0
			if n := tally[cl]; n != nil && n.Groups > 0 {
				frac = max(0.1, float64(n.Counted(e.across()))/float64(n.Groups))
			}
			groups := min(maxRoundGroups, int(math.Ceil(float64(tally.needed(cl, k, e.across()))/frac)))
			for tries := 0; groups > 0 && tries < 100; tries++ {
				seq := genRaceSequence(e.c.Seed, next, cl, min(raceTries, groups), 0)
				next++
				if seq != nil {
					seq.cmds = inScope(seq.cmds, e.c.Tools)
					round = append(round, seq)
					groups -= raceTries
				}
			}
		}
		if len(round) == 0 {
			return seqs, runs, rounds, true // no generated world could race: never expected
		}
		rounds++
		rr, _ := e.runAll(bctx, name, round, e.c.Parallel)
		cut := bctx.Err() != nil
		failed := false
		for i, x := range rr {
			if x == nil || cut && (x.startEr != nil || x.failAt >= 0 && x.source() == srcWire) {
				continue
			}
			tally.merge(x.races)
			seqs, runs = append(seqs, round[i]), append(runs, x)
			failed = failed || x.failAt >= 0 || x.startEr != nil
		}
		if failed {
			return seqs, runs, rounds, false
		}
	}
}

// shortInScope lists the classes short of k overlapping groups whose tool
// the run's scope (Config.Tools) holds.
func (e *explorer) shortInScope(tally raceTally, k int) []RaceClass {
	var out []RaceClass
	for _, c := range tally.short(k, e.across()) {
		if len(e.c.Tools) == 0 || slices.Contains(e.c.Tools, c.Tool()) {
			out = append(out, c)
		}
	}
	return out
}

// runAll runs seqs, parallel batches at a time (each batch on one server,
// unless the sequences run alone), and returns their runs in their order;
// failed says some sequence failed. With FailFast, the first failure
// stops what has not started (those runs are nil).
func (e *explorer) runAll(ctx context.Context, name string, seqs []*exploreSequence, parallel int) (runs []*exploreRun, failed bool) {
	runs = make([]*exploreRun, len(seqs))
	var stop, anyFailed atomic.Bool
	jobs := make(chan int)
	var wg sync.WaitGroup
	size := batchSize(len(seqs), parallel)
	if e.c.Alone {
		size = 1
	}
	for range parallel {
		wg.Go(func() {
			for lo := range jobs {
				if stop.Load() {
					continue
				}
				batch := seqs[lo:min(lo+size, len(seqs))]
				for k, x := range e.runBatch(ctx, name, batch, stop.Load) {
					runs[lo+k] = x
					if x != nil && (x.failAt >= 0 || x.startEr != nil) {
						anyFailed.Store(true)
						if e.c.FailFast {
							stop.Store(true)
						}
					}
				}
			}
		})
	}
	for lo := 0; lo < len(seqs); lo += size {
		jobs <- lo
	}
	close(jobs)
	wg.Wait()
	return runs, anyFailed.Load()
}
