package store

import (
	"context"
	"fmt"

	"github.com/prickle-dev/prickle/spec/seed"
)

// SeedDefault seeds the seed world (package seed: the world the pages'
// examples refer to) into an empty database and returns the new agent and
// runner tokens (plaintext, shown once). On a database that already holds
// a project it does nothing and returns nil.
func (s *Store) SeedDefault(ctx context.Context) ([]IssuedToken, error) {
	// The seed goes the way of every world: checked by the world
	// schema, then loaded; it has no tokens, so each is minted.
	issued, err := s.loadWorld(ctx, seed.JSON(), true)
	if err != nil {
		return nil, fmt.Errorf("store: seed: %w", err)
	}
	return issued, nil
}

// HasWorld reports whether the database already holds a world (seeded or
// loaded with LoadWorld).
func (s *Store) HasWorld(ctx context.Context) (bool, error) {
	var has bool
	err := s.inReadTx(ctx, func(tx *txn) error {
		var err error
		has, err = exists(ctx, tx, `SELECT 1 FROM projects LIMIT 1`)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: %w", err)
	}
	return has, nil
}
