package store

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/prickle-dev/prickle/spec/world"
)

// LoadFixture loads the world in r (spec/world/FIXTURE.md, checked by
// [world.Schema.Parse]) into the store, all or nothing, in one
// transaction. The store may already hold a world: the fixture adds to
// it, its ids must not collide with what is there, and its references may
// name what is there. It returns one IssuedToken per agent and per runner:
// the fixture's plaintext token, or a freshly minted one where the fixture
// gives none. A bad fixture is a [*world.Error] naming the JSON path of the
// bad entry and its place in the text (several schema violations are
// joined with errors.Join; errors.As finds the first).
func (s *Store) LoadFixture(ctx context.Context, r io.Reader) ([]IssuedToken, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("fixture: read: %w", err)
	}
	return s.loadFixture(ctx, data, false)
}

// loadFixture parses and loads a fixture. With onlyIntoEmpty it loads
// nothing, and returns no tokens, when the store already holds a world.
func (s *Store) loadFixture(ctx context.Context, data []byte, onlyIntoEmpty bool) ([]IssuedToken, error) {
	fs, err := fixtureSchema()
	if err != nil {
		return nil, fmt.Errorf("fixture: schema: %w", err)
	}
	w, err := fs.Parse(data)
	if err != nil {
		return nil, err
	}
	defer s.worldChanged()
	var issued []IssuedToken
	err = s.inTx(ctx, func(tx *txn) error {
		if onlyIntoEmpty {
			if has, err := exists(ctx, tx, `SELECT 1 FROM projects LIMIT 1`); err != nil || has {
				return err
			}
		}
		var err error
		issued, err = s.loadWorld(ctx, tx, w)
		return err
	})
	if err != nil {
		var fe *world.Error
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, fmt.Errorf("fixture: %w", err)
	}
	return issued, nil
}
