package suite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"

	"github.com/prickle-dev/prickle/spec/world"
)

// Materializing a fixture
//
// The suite hands every server a world (package world, version 1). Before
// it does, it materializes it (world.World.Materialize), so that every run
// is isolated and every saved script can be run again later:
//
//   - every agent and runner gets a fresh random token, whatever the
//     script's fixture says (or whether it says anything): a run can only
//     be answered by a server that loaded this run's world;
//   - a time may be written relative to the moment the fixture is
//     materialized: "now", "now-3h", "now+10m". It is replaced by that
//     instant in RFC 3339. The same "now" is what `time PATH == now-3h`
//     compares with in the script.
//
// Servers only ever see plain version-1 fixtures.

// newToken returns a fresh random bearer token for a fixture's agent or
// runner, marked as the suite's.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "prk_conformance_" + hex.EncodeToString(b[:])
}

// Materialize returns the world in src materialized at now, and its
// tokens.
func Materialize(src []byte, now time.Time) ([]byte, []world.Token, error) {
	w, err := world.Decode(src)
	if err != nil {
		return nil, nil, err
	}
	toks, err := w.Materialize(now, newToken)
	if err != nil {
		return nil, nil, err
	}
	return w.Marshal(), toks, nil
}

// Now is the instant a fixture is materialized at: whole seconds, so that
// a server storing times to the second reads back exactly what it was
// given.
func Now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// StartWorld materializes the world src at now into dir's fixture file
// and has t start a server holding it, for s; the server keeps its files
// in dir/server. It returns the materialized world and its tokens too.
func StartWorld(ctx context.Context, t Target, s *Script, src []byte, dir string) (inst *Instance, fx []byte, now time.Time, toks []world.Token, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, now, nil, err
	}
	now = Now()
	if fx, toks, err = Materialize(src, now); err != nil {
		return nil, nil, now, nil, err
	}
	file := filepath.Join(dir, FixtureFile)
	if err := os.WriteFile(file, fx, 0o600); err != nil {
		return nil, nil, now, nil, err
	}
	inst, err = t.Start(ctx, s, file, filepath.Join(dir, "server"))
	return inst, fx, now, toks, err
}
