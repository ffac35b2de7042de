package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Issuing agent and runner tokens for a world that already exists (the
// seed and loaded worlds issue the first ones). Each returns the
// plaintext once.

// Errors of the token-issuing operations. Match them with errors.Is.
var (
	// ErrNoAgent: no agent has that id.
	ErrNoAgent = errors.New("no such agent")
	// ErrNoRunner: no runner has that id, or it was retired.
	ErrNoRunner = errors.New("no such runner")
	// ErrRunnerExists: a runner with that id exists already.
	ErrRunnerExists = errors.New("runner exists already")
	// ErrNotPaired: the runner is paired to another agent.
	ErrNotPaired = errors.New("runner is paired to another agent")
)

// IssueAgentToken issues a new token for an existing agent ("owner/name")
// and returns its plaintext once. Earlier tokens stay valid until revoked.
func (s *Store) IssueAgentToken(ctx context.Context, agent string) (IssuedToken, error) {
	return inTxValue(ctx, s, "issue agent token", func(tx *txn) (IssuedToken, error) {
		if err := requireAgent(ctx, tx, agent); err != nil {
			return IssuedToken{}, err
		}
		tok, err := mintToken(ctx, tx, tokenRow{kind: KindAgent, agent: agent}, s.Now())
		return IssuedToken{Kind: KindAgent, Agent: agent, Token: tok}, err
	})
}

// PairRunner creates runner runnerID paired to agent ("owner/name") and
// returns the runner's token once. A runner is paired to exactly one agent
// for its whole life; to move it, revoke it and pair a new one. An id in
// use is ErrRunnerExists.
func (s *Store) PairRunner(ctx context.Context, agent, runnerID string) (IssuedToken, error) {
	if err := checkID("runner id", runnerID); err != nil {
		return IssuedToken{}, fmt.Errorf("store: pair runner: %w", err)
	}
	return inTxValue(ctx, s, "pair runner", func(tx *txn) (IssuedToken, error) {
		if err := requireAgent(ctx, tx, agent); err != nil {
			return IssuedToken{}, err
		}
		now := s.Now()
		if _, err := tx.ExecContext(ctx, `INSERT INTO runners(id, agent, created_at) VALUES (?,?,?)`, runnerID, agent, toDB(now)); err != nil {
			if isUniqueViolation(err) {
				return IssuedToken{}, fmt.Errorf("%w: %q", ErrRunnerExists, runnerID)
			}
			return IssuedToken{}, err
		}
		tok, err := mintToken(ctx, tx, tokenRow{kind: KindRunner, agent: agent, runner: &runnerID}, now)
		return IssuedToken{Kind: KindRunner, Agent: agent, Runner: runnerID, Token: tok}, err
	})
}

// Rotated is a token issued in place of the earlier ones.
type Rotated struct {
	// Issued is the new token, its plaintext shown once.
	Issued IssuedToken
	// Revoked is how many earlier tokens were revoked.
	Revoked int64
}

// RotateAgentToken issues a new token for agent and revokes every earlier
// token of the agent, in one transaction. Execution and discussion
// credentials are not the agent's tokens: they live out their time.
func (s *Store) RotateAgentToken(ctx context.Context, agent string) (Rotated, error) {
	defer s.auth.invalidate()
	return inTxValue(ctx, s, "rotate agent token", func(tx *txn) (Rotated, error) {
		if err := requireAgent(ctx, tx, agent); err != nil {
			return Rotated{}, err
		}
		// The rotations of one agent's token take turns (lockQuery).
		if err := tx.lockQuery(ctx, `SELECT 1 FROM agents WHERE id = ? FOR UPDATE`, agent); err != nil {
			return Rotated{}, err
		}
		now := s.Now()
		res, err := tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE kind = 'agent' AND agent = ? AND revoked_at IS NULL`,
			toDB(now), agent)
		if err != nil {
			return Rotated{}, err
		}
		n, _ := res.RowsAffected()
		tok, err := mintToken(ctx, tx, tokenRow{kind: KindAgent, agent: agent}, now)
		if err == nil {
			err = tx.notifyCaches(ctx)
		}
		return Rotated{Issued: IssuedToken{Kind: KindAgent, Agent: agent, Token: tok}, Revoked: n}, err
	})
}

// RotateRunnerToken issues a new token for runner runnerID, paired to
// agent, and revokes the runner's earlier tokens, in one transaction. The
// credentials its claims minted live out their time (RevokeRunner ends
// them, and the runner).
func (s *Store) RotateRunnerToken(ctx context.Context, agent, runnerID string) (Rotated, error) {
	defer s.auth.invalidate()
	return inTxValue(ctx, s, "rotate runner token", func(tx *txn) (Rotated, error) {
		if err := requireAgent(ctx, tx, agent); err != nil {
			return Rotated{}, err
		}
		// The rotations of one runner's token take turns (lockQuery).
		if err := tx.lockQuery(ctx, `SELECT 1 FROM runners WHERE id = ? FOR UPDATE`, runnerID); err != nil {
			return Rotated{}, err
		}
		var pairedTo string
		var retired bool
		err := tx.QueryRowContext(ctx, `SELECT agent, revoked_at IS NOT NULL FROM runners WHERE id = ?`, runnerID).Scan(&pairedTo, &retired)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return Rotated{}, fmt.Errorf("%w: %q", ErrNoRunner, runnerID)
		case err != nil:
			return Rotated{}, err
		case retired:
			return Rotated{}, fmt.Errorf("%w: %q was retired", ErrNoRunner, runnerID)
		}
		if pairedTo != agent {
			return Rotated{}, fmt.Errorf("%w: %q is paired to %s", ErrNotPaired, runnerID, pairedTo)
		}
		now := s.Now()
		res, err := tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE runner = ? AND kind = 'runner' AND revoked_at IS NULL`,
			toDB(now), runnerID)
		if err != nil {
			return Rotated{}, err
		}
		n, _ := res.RowsAffected()
		tok, err := mintToken(ctx, tx, tokenRow{kind: KindRunner, agent: agent, runner: &runnerID}, now)
		if err == nil {
			err = tx.notifyCaches(ctx)
		}
		return Rotated{Issued: IssuedToken{Kind: KindRunner, Agent: agent, Runner: runnerID, Token: tok}, Revoked: n}, err
	})
}

// requireAgent fails with ErrNoAgent unless agent ("owner/name") exists.
func requireAgent(ctx context.Context, tx *txn, agent string) error {
	ok, err := exists(ctx, tx, `SELECT 1 FROM agents WHERE id = ?`, agent)
	if err == nil && !ok {
		err = fmt.Errorf("%w: %q", ErrNoAgent, agent)
	}
	return err
}
