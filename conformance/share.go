package conformance

import (
	"context"
	"path/filepath"
	"sync/atomic"

	"github.com/prickle-dev/prickle/conformance/internal/script"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec/seed"
)

// Fewer starts. A server that takes seconds to start would spend most of
// a run starting, once per script and per explored sequence. Two kinds of
// work share a server instead, each provably as if alone:
//
//   - the scripts that run against the standard seed world and only make
//     calls they assert must be refused, or tools/list (script.RefusalsOnly):
//     on a conforming server none changes the world, so each sees the
//     seed world as it would alone. They run one after the other on one
//     server. A script that fails there runs again alone on a fresh
//     server, and that is its result: a failure reads as it always did,
//     and what another script did can never be the cause of one;
//   - explored sequences, in batches, each in its own part of one world
//     whose parts share no name (package explore, shared.go).
//
// Every other script (its own fixture, or a claim that changes the seed
// world) gets a server of its own, as before. Scripts with their own
// fixtures are not merged: their names overlap (most describe maya and
// website-v2), and renaming a hand-written script's names consistently,
// in its calls, checks and expected texts, is not something to prove.

// startCounter counts the servers a run asks its target for: every
// replica of a deployment, whether it started or not (a start the run's
// end cut short asked for them all).
type startCounter struct {
	Target
	replicas int64
	n        atomic.Int64
}

func (c *startCounter) Start(ctx context.Context, s *Script, fixtureFile, dir string) (*Instance, error) {
	inst, err := c.Target.Start(ctx, s, fixtureFile, dir)
	switch {
	case err != nil:
		c.n.Add(max(c.replicas, 1))
	case inst.Stop != nil: // an already running server is not started
		c.n.Add(int64(len(inst.Endpoints())))
	}
	return inst, err
}

// shares reports whether scripts may share servers on t: not on one
// server that is already up, where every script runs anyway.
func shares(t Target, o *Options) bool {
	_, url := t.(*URLTarget)
	return !url && !o.FreshStarts
}

// sharedScripts returns the indexes of the scripts that share one seed
// world server: none unless at least two may.
func sharedScripts(scripts []*Script, o *Options) []int {
	var out []int
	for i, s := range scripts {
		if script.RefusalsOnly(s) && o.Target.Skip(s) == "" {
			out = append(out, i)
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// runShared runs the scripts at idx one after the other on one server
// holding the standard seed world, each in its folder under root; a
// script that fails there runs again alone. done gets each result.
func runShared(ctx context.Context, runner *script.Runner, scripts []*Script, idx []int, o *Options, root string, done func(int, *report.Result)) {
	dir := func(i int) string { return filepath.Join(root, script.SafeName(scripts[i].Name)) }
	alone := func() {
		for _, i := range idx {
			done(i, runner.Run(ctx, scripts[i], dir(i)))
		}
	}
	sh, stop, err := startSeedWorld(ctx, o.Target, filepath.Join(root, "seed-world.shared"))
	if err != nil {
		alone() // each start says why, as it would have
		return
	}
	defer stop()
	for _, i := range idx {
		res := runner.RunShared(ctx, scripts[i], dir(i), sh)
		if res.Status == report.Fail {
			res = runner.Run(ctx, scripts[i], dir(i))
		}
		done(i, res)
	}
}

// startSeedWorld starts a server holding the standard seed world,
// materialized once, in dir.
func startSeedWorld(ctx context.Context, t Target, dir string) (*script.Shared, func(), error) {
	inst, fx, now, toks, err := suite.StartWorld(ctx, t, &Script{Name: "seed world, shared"}, seed.JSON(), dir)
	if err != nil {
		return nil, nil, err
	}
	stop := func() {}
	if inst.Stop != nil {
		stop = inst.Stop
	}
	return &script.Shared{Inst: inst, Fixture: fx, Now: now, Tokens: toks}, stop, nil
}
