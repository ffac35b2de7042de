package explore

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec/world"
)

// Sharing a server: a server that is slow to start (an interpreter, a JVM,
// a database) would spend most of a run starting, one start per sequence.
// So the sequences run in batches, one server per batch, each sequence in
// its own part of the batch's world: its world as generated, every name
// in it prefixed with the sequence's own "sN-" (projects, people and so
// agents, runners, rooms, messages, tasks, claims and their idempotency
// keys), its calls renamed alike. The parts share no name, so no rule of
// the pages relates them: no caller of one part belongs to a project of
// another, holds its tokens or names its tasks, messages or keys. The
// sequences of a batch run one after the other, as they would on servers
// of their own, each judged by a model of its part alone.
//
// A failure found in a batch runs again alone, as generated, on a fresh
// server, and shrinks from there: what is reported is what it does alone.

// maxBatch bounds the sequences of one batch: a batch's world is
// materialized when its server starts, and its last sequence must still
// find the world's live claims live.
const maxBatch = 25

// batchSize is how many sequences share a server when n sequences run
// parallel at a time: every worker gets work, and no batch is larger than
// maxBatch.
func batchSize(n, parallel int) int {
	return max(1, min(maxBatch, (n+parallel-1)/max(parallel, 1)))
}

// partPrefix is the prefix of every name of sequence i's part of a
// batch's world.
func partPrefix(i int) string { return fmt.Sprintf("s%d-", i) }

// renamed returns w and cmds with every name prefixed with pre.
func renamed(w *world.World, cmds []*command, pre string) (*world.World, []*command) {
	out := make([]*command, len(cmds))
	for i, cmd := range cmds {
		rc := new(*cmd) // its group too: a race stays a race
		rc.args = maps.Clone(cmd.args)
		if rc.p.kind == "agent" || rc.p.kind == "runner" {
			rc.p.id = pre + rc.p.id
		}
		for _, k := range []string{"task_id", "message_id", "project", "idempotency_key"} {
			if s, ok := rc.args[k].(string); ok {
				rc.args[k] = pre + s
			}
		}
		if wake, ok := rc.args["wake"].(map[string]any); ok {
			wake = maps.Clone(wake)
			if s, ok := wake["message_id"].(string); ok {
				wake["message_id"] = pre + s
			}
			rc.args["wake"] = wake
		}
		out[i] = rc
	}
	return w.Prefixed(pre), out
}

// runBatch runs the sequences seqs on one server, each in its own part of
// the server's world, one after the other; stop, checked between them,
// ends the batch early (its later runs are nil). A server that does not
// start with the batch's world runs each sequence on a server of its
// own, as the batch would have.
func (e *explorer) runBatch(ctx context.Context, name string, seqs []*exploreSequence, stop func() bool) []*exploreRun {
	runs := make([]*exploreRun, len(seqs))
	if len(seqs) == 1 {
		if !stop() {
			s := seqs[0]
			runs[0] = e.run(ctx, fmt.Sprintf("%s.%d", name, s.index), s.world, s.cmds)
		}
		return runs
	}
	parts := make([]*world.World, len(seqs))
	cmds := make([][]*command, len(seqs))
	for i, s := range seqs {
		parts[i], cmds[i] = renamed(s.world, s.cmds, partPrefix(s.index))
	}
	bctx, cancel := context.WithTimeout(ctx, time.Duration(len(seqs))*e.c.Timeout)
	defer cancel()
	label := fmt.Sprintf("%s.%d-%d", name, seqs[0].index, seqs[len(seqs)-1].index)
	inst, now, err := e.start(bctx, label, world.Merge(parts...))
	if err != nil {
		for i, s := range seqs {
			if !stop() {
				runs[i] = e.run(ctx, fmt.Sprintf("%s.%d", name, s.index), s.world, s.cmds)
			}
		}
		return runs
	}
	if inst.Stop != nil {
		defer inst.Stop()
	}
	for i := range seqs {
		if stop() {
			break
		}
		sctx, cancel := context.WithTimeout(bctx, e.c.Timeout)
		runs[i] = e.play(sctx, inst, now, parts[i], cmds[i])
		runs[i].shared = label
		cancel()
	}
	return runs
}

// interference is the failure of sequence i, found in a batch (x), that
// does not fail alone on a fresh server: it depends on what the other
// sequences of its batch did, so no script of its own reproduces it.
func interference(i int, x *exploreRun) *report.ExploreFailure {
	return &report.ExploreFailure{Sequence: i, Source: x.source(), Calls: x.failAt + 1, Original: x.failAt + 1,
		Message: fmt.Sprintf("%s (only beside the other sequences of %s, whose worlds share no name with it: alone on a fresh server the sequence passes, so it does not shrink to a script of its own)",
			x.fails[0].msg, x.shared)}
}
