package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/prickle-dev/prickle/api"
)

// Attempt is one claimed run of a task, as claim_task returns it: the
// generated api's type under the store's name for it. ClaimedAt is when
// the attempt was first claimed (replays keep it).
type Attempt = api.ClaimTaskOutputAttempt

// ClaimTaskResult is the claim_task answer; its JSON form matches the
// tool's output schema.
type ClaimTaskResult struct {
	// Attempt is the claimed attempt.
	Attempt Attempt `json:"attempt"`
	// ExecutionCredential is the fresh credential for the attempt.
	ExecutionCredential Credential `json:"execution_credential"`
	// Replayed is true when the idempotency key had been used before and the
	// existing attempt was returned. Not part of the tool output.
	Replayed bool `json:"-"`
}

// ClaimTask claims task taskID for the runner p, atomically (one write of
// the writer, writer.go: all of it committed, or none).
//
// Rules, in order: p must be a runner (not_runner); the task must exist in a
// project the runner's owner belongs to (task_not_found) and be routed to
// the runner's agent (not_routed); if wakeMessageID is given it must not
// name a mention, in whatever project (mention_not_cause), and must equal
// the task's own request message (cause_mismatch; a task with no request
// takes no wake).
//
// The same (runner, task, idemKey) returns the same attempt with a fresh
// execution credential; every earlier credential of that attempt is revoked.
// A new key while another attempt on the task is live (its latest credential
// has not expired) is refused with attempt_in_progress; once it has expired
// a new attempt is created and the old one is superseded (replaying its key
// is then refused with attempt_superseded). Uniqueness of
// (runner, task, idemKey) is enforced by the database.
//
// The arguments' own shape (lengths, patterns) is the input schema's, which
// the MCP layer checks before it calls the store; the store does not repeat
// it.
func (s *Store) ClaimTask(ctx context.Context, p *Principal, taskID, idemKey string, wakeMessageID *string) (ClaimTaskResult, error) {
	if err := requireRunner(p, "claim a task"); err != nil {
		return ClaimTaskResult{}, err
	}
	var c taskClaimRead
	read := &rowRead{id: stTaskForClaim, args: []any{p.Owner, p.RunnerID, idemKey, taskID},
		dest: []any{&c.agent, &c.project, &c.request, &c.attemptID, &c.claimed, &c.superseded, &c.othersLive}}
	return inLockedTxValue(ctx, s, "claim task", &rowLock{id: stLockTask, key: taskID, then: read}, func(tx *txn) (ClaimTaskResult, error) {
		return s.claimTaskTx(ctx, tx, p, taskID, idemKey, wakeMessageID, read, &c)
	})
}

// taskClaimRead is what a claim reads of its task (stTaskForClaim): the
// task, the attempt claimed before with the claim's key if any, and the
// latest end of life of the task's other attempts not superseded.
type taskClaimRead struct {
	agent, project      string
	request, attemptID  sql.NullString
	claimed, superseded sql.NullInt64
	othersLive          sql.NullInt64
}

// others tells the task's other attempts not superseded at now: NULL
// none, 1 one is live, 0 all expired.
func (c *taskClaimRead) others(now time.Time) sql.NullInt64 {
	if !c.othersLive.Valid {
		return sql.NullInt64{}
	}
	if c.othersLive.Int64 > toDB(now) {
		return sql.NullInt64{Int64: 1, Valid: true}
	}
	return sql.NullInt64{Valid: true}
}

func (s *Store) claimTaskTx(ctx context.Context, tx *txn, p *Principal, taskID, idemKey string, wake *string, read *rowRead, c *taskClaimRead) (ClaimTaskResult, error) {
	// First the task's lock: the claims of one task, on whatever
	// replica, take turns from here to their commit (lockRow). Then the
	// task, and the attempt claimed before with this key if any: a
	// replay is the common case of a known key. On PostgreSQL both went
	// with the BEGIN.
	if err := tx.lockRow(ctx, stLockTask, taskID); err != nil {
		return ClaimTaskResult{}, err
	}
	err := tx.read(ctx, read)
	now := s.Now()
	if errors.Is(err, sql.ErrNoRows) {
		return ClaimTaskResult{}, refuse(CodeTaskNotFound, "task %q not found", taskID)
	}
	if err != nil {
		return ClaimTaskResult{}, err
	}
	if c.agent != p.Agent {
		return ClaimTaskResult{}, refuse(CodeNotRouted, "task %q is not routed to your agent %s", taskID, p.Agent)
	}
	if wake != nil {
		var kind string
		err := tx.stmt(ctx, stWakeKind).QueryRowContext(ctx, *wake).Scan(&kind)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return ClaimTaskResult{}, err
		}
		if kind == "mention" {
			return ClaimTaskResult{}, refuse(CodeMentionNotCause, "message %q is a mention, and a mention is never a run's cause", *wake)
		}
		if !c.request.Valid {
			return ClaimTaskResult{}, refuse(CodeCauseMismatch, "task %q was not asked for by a task request, so wake.message_id must be omitted", taskID)
		}
		if *wake != c.request.String {
			return ClaimTaskResult{}, refuse(CodeCauseMismatch, "task %q is bound to its task request %q; wake.message_id may only repeat it", taskID, c.request.String)
		}
	}

	// The attempt holds its one credential (migration 0006): a new key
	// inserts the attempt with it, a replay replaces the attempt's
	// credential (the earlier one stops working) and keeps the attempt
	// live as long as the new one. The UNIQUE (task, runner,
	// idempotency_key) constraint still decides if two claims race (with
	// SQLite's BEGIN IMMEDIATE or PostgreSQL's task lock they cannot, but
	// the database is what enforces it). A refusal after a successful
	// insert rolls the whole transaction back.
	cred := s.newCredential(s.opts.ExecutionTools, s.executionTools, now.Add(s.opts.LaunchTimeout))
	row := attemptRow{Attempt: Attempt{AttemptID: c.attemptID.String, TaskID: taskID, ClaimedAt: fromDB(c.claimed.Int64)}, superseded: c.superseded.Valid}
	found := c.attemptID.Valid
	if !found {
		if row, found, err = s.insertAttempt(ctx, tx, p, taskID, idemKey, c.request, now, cred, c.others(now)); err != nil {
			return ClaimTaskResult{}, err
		}
	}
	if row.superseded {
		return ClaimTaskResult{}, refuse(CodeAttemptSuperseded, "the attempt claimed with this idempotency key was superseded by a newer attempt")
	}
	if found {
		if _, err := tx.stmt(ctx, stSetAttemptCredential).ExecContext(ctx, cred.hash, cred.toolsJSON, toDB(cred.ExpiresAt), row.AttemptID); err != nil {
			return ClaimTaskResult{}, fmt.Errorf("replace the attempt's credential: %w", err)
		}
	}
	return ClaimTaskResult{Attempt: row.Attempt, Replayed: found, ExecutionCredential: cred.Credential}, nil
}

// attemptRow is an attempt as findAttempt reads it.
type attemptRow struct {
	Attempt
	superseded bool
}

// insertAttempt creates a new attempt for a key not seen before, holding
// cred. others is what stTaskForClaim read of the task's other attempts
// not superseded: it refuses while one is live, and supersedes the
// expired ones (their credentials are dropped). found is true if the key
// turned out to exist after all (the insert met its UNIQUE constraint
// and inserted nothing): row is then that attempt, to replay.
func (s *Store) insertAttempt(ctx context.Context, tx *txn, p *Principal, taskID, idemKey string, request sql.NullString, now time.Time, cred credential, others sql.NullInt64) (row attemptRow, found bool, err error) {
	if others.Valid && others.Int64 == 1 {
		return attemptRow{}, false, refuse(CodeAttemptInProgress,
			"task %q already has a live attempt under another idempotency key; replay that key, or retry after its credential expires", taskID)
	}
	id, err := newID("att_")
	if err != nil {
		return attemptRow{}, false, err
	}
	res, err := tx.stmt(ctx, stInsertAttempt).ExecContext(ctx, id, taskID, p.RunnerID, idemKey, request,
		toDB(now), toDB(cred.ExpiresAt), cred.hash, cred.toolsJSON)
	if err != nil {
		return attemptRow{}, false, fmt.Errorf("insert attempt: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		row, found, err := findAttempt(ctx, tx, p.RunnerID, taskID, idemKey)
		if err == nil && !found {
			err = errors.New("attempt vanished after its key's conflict")
		}
		return row, found, err
	}
	// Expired attempts under other keys are superseded by this one.
	if others.Valid {
		if _, err := tx.stmt(ctx, stSupersedeOtherAttempts).ExecContext(ctx, toDB(now), taskID, id); err != nil {
			return attemptRow{}, false, err
		}
	}
	return attemptRow{Attempt: Attempt{AttemptID: id, TaskID: taskID, ClaimedAt: now}}, false, nil
}

func findAttempt(ctx context.Context, tx *txn, runner, task, key string) (attemptRow, bool, error) {
	var r attemptRow
	var claimed int64
	var superseded sql.NullInt64
	err := tx.stmt(ctx, stFindAttempt).QueryRowContext(ctx, runner, task, key).
		Scan(&r.AttemptID, &r.TaskID, &claimed, &superseded)
	if errors.Is(err, sql.ErrNoRows) {
		return attemptRow{}, false, nil
	}
	if err != nil {
		return attemptRow{}, false, err
	}
	r.ClaimedAt = fromDB(claimed)
	r.superseded = superseded.Valid
	return r, true, nil
}
