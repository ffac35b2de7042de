package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/prickle-dev/prickle/spec/world"
)

// LoadWorld loads the world in r (spec/world/FIXTURE.md, checked by
// [world.Schema.Parse]) into the store, all or nothing, in one
// transaction. The store may already hold a world: the new one adds to
// it, its ids must not collide with what is there, and its references may
// name what is there. It returns one IssuedToken per agent and per runner:
// the world's plaintext token, or a freshly minted one where the world
// gives none. A bad world is a [*world.Error] naming the JSON path of the
// bad entry and its place in the text (several schema violations are
// joined with errors.Join; errors.As finds the first).
//
// A world whose very bytes were loaded before (by this store, or by
// another replica of the database) is not loaded again: LoadWorld
// returns a *LoadedError, which matches ErrLoaded.
//
// Its errors begin "fixture: ", the world format's older name, as
// prickled has always printed them.
func (s *Store) LoadWorld(ctx context.Context, r io.Reader) ([]IssuedToken, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("fixture: read: %w", err)
	}
	return s.loadWorld(ctx, data, false)
}

// ErrLoaded is the world that the database already holds (LoadWorld):
// match it with errors.Is.
var ErrLoaded = errors.New("the world is loaded already")

// LoadedError says when the world was loaded before.
type LoadedError struct {
	// At is when it was loaded.
	At time.Time
}

func (e *LoadedError) Error() string {
	return fmt.Sprintf("%v (at %s)", ErrLoaded, e.At.Format(time.RFC3339))
}

// Is matches ErrLoaded.
func (e *LoadedError) Is(target error) bool { return target == ErrLoaded }

// loadWorld parses and loads a world. With onlyIntoEmpty it loads
// nothing, and returns no tokens, when the store already holds a world.
func (s *Store) loadWorld(ctx context.Context, data []byte, onlyIntoEmpty bool) ([]IssuedToken, error) {
	ws, err := worldSchema()
	if err != nil {
		return nil, fmt.Errorf("fixture: schema: %w", err)
	}
	w, err := ws.Parse(data)
	if err != nil {
		return nil, err
	}
	digest := sha256.Sum256(data)
	defer s.worldChanged()
	var issued []IssuedToken
	err = s.inTx(ctx, func(tx *txn) error {
		// Replicas that start at once load their world once: on
		// PostgreSQL they take turns here.
		if err := tx.advisoryLock(ctx, lockWorld); err != nil {
			return err
		}
		if onlyIntoEmpty {
			if has, err := exists(ctx, tx, `SELECT 1 FROM projects LIMIT 1`); err != nil || has {
				return err
			}
		}
		if !s.noWorlds {
			var at int64
			err := tx.QueryRowContext(ctx, `SELECT loaded_at FROM worlds WHERE digest = ?`, digest[:]).Scan(&at)
			if err == nil {
				return &LoadedError{At: fromDB(at)}
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO worlds(digest, loaded_at) VALUES (?, ?)`, digest[:], toDB(s.Now())); err != nil {
				return err
			}
		}
		var err error
		if issued, err = s.insertWorld(ctx, tx, w); err != nil {
			return err
		}
		return tx.notifyCaches(ctx)
	})
	if err != nil {
		var fe *world.Error
		if errors.As(err, &fe) || errors.Is(err, ErrLoaded) {
			return nil, err
		}
		return nil, fmt.Errorf("fixture: %w", err)
	}
	return issued, nil
}
