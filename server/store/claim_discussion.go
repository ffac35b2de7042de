package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/prickle-dev/prickle/api"
)

// Harness is the only claim_discussion harness version this server speaks.
const Harness = 2

// Discussion roles.
const (
	// RoleDraft: the lead writes the first answer.
	RoleDraft = "draft"
	// RoleReview: a non-lead agent reviews the lead's draft.
	RoleReview = "review"
	// RoleRevise: the lead revises its draft after the one review.
	RoleRevise = "revise"
	// RoleCombine: the lead combines two or more reviews into the final
	// answer.
	RoleCombine = "combine"
)

// Turn states.
const (
	// TurnWaiting: the turn still waits on (some of) its agents.
	TurnWaiting = "waiting"
	// TurnEnded: every woken agent replied, or the turn was closed.
	TurnEnded = "ended"
	// TurnStopped: the owner stopped the turn.
	TurnStopped = "stopped"
	// TurnTimedOut: the turn ran out of time.
	TurnTimedOut = "timed_out"
	// TurnReplaced: the owner's next message replaced the turn.
	TurnReplaced = "replaced"
)

// MaxReplies is the most replies a turn allows (the schema's replies_left
// maximum) and the default reply limit of a turn.
const MaxReplies = 8

// ClaimDiscussionResult is the claim_discussion answer; its JSON form
// matches the tool's output schema (reviewing marshals as null when nil).
type ClaimDiscussionResult struct {
	// Project is the slug of the room's project.
	Project string `json:"project"`
	// OwnRoom is always true: claims are only granted in the owner's
	// private rooms.
	OwnRoom bool `json:"own_room"`
	// RepliesLeft is how many replies the turn still allows (0-8),
	// including the one this session may post.
	RepliesLeft int `json:"replies_left"`
	// Lead is true for the first agent the message woke.
	Lead bool `json:"lead"`
	// Role is draft, review, revise or combine.
	Role string `json:"role"`
	// Reviewing quotes the draft for review and revise; nil otherwise.
	Reviewing *api.ClaimDiscussionOutputReviewing `json:"reviewing"`
	// DiscussionCredential is the fresh 10-minute credential.
	DiscussionCredential Credential `json:"discussion_credential"`
	// Replayed is true when the idempotency key had been used before. Not
	// part of the tool output.
	Replayed bool `json:"-"`
}

type turnInfo struct {
	project, room string
	state         string
	replyLimit    int
	expiresAt     *time.Time
	agents        []turnAgent // by wake order; agents[0] is the lead
}

type turnAgent struct {
	agent   string
	replied bool
}

// turnRefusal returns the refusal for a turn that no longer waits, or nil.
func turnRefusal(t turnInfo, now time.Time) error {
	state := t.state
	if state == TurnWaiting && t.expiresAt != nil && !now.Before(*t.expiresAt) {
		state = TurnTimedOut
	}
	switch state {
	case TurnWaiting:
		return nil
	case TurnEnded:
		return refuse(CodeTurnEnded, "the message's turn has ended")
	case TurnStopped:
		return refuse(CodeTurnStopped, "the owner stopped the message's turn")
	case TurnTimedOut:
		return refuse(CodeTurnTimedOut, "the message's turn ran out of time")
	case TurnReplaced:
		return refuse(CodeTurnReplaced, "the message's turn was replaced by the owner's next message")
	default:
		return fmt.Errorf("unknown turn state %q", state)
	}
}

// ClaimDiscussion claims a discussion credential for messageID for the
// runner p, atomically (one write of the writer, writer.go: all of it
// committed, or none).
//
// Rules, in order: p must be a runner (not_runner); harness must be 2
// (missing or below: harness_outdated, telling the runner to update
// prickle-runner; above: harness_unsupported); the message must exist in a
// project the owner belongs to (message_not_found), be in one of the
// owner's private rooms (not_your_room) and have woken the runner's agent
// (not_woken). A replayed key whose reply is posted is refused
// (reply_posted), then a superseded key (claim_superseded); then a turn
// that no longer waits (turn_ended, turn_stopped, turn_timed_out,
// turn_replaced). The same (runner, message, idemKey) replays the same
// role with a fresh credential and revokes the earlier one. A new key is
// refused when the agent has posted its last reply in the turn
// (reply_posted), when the harness has nothing for it yet (draft_pending,
// reviews_pending), when the turn allows no more replies (no_replies_left)
// or while another key's claim of the same agent and turn is live
// (discussion_in_progress). See the package doc for the role scheme.
//
// The arguments' own shape (lengths, patterns) is the input schema's, which
// the MCP layer checks before it calls the store; the store does not repeat
// it.
func (s *Store) ClaimDiscussion(ctx context.Context, p *Principal, messageID, idemKey string, harness *int) (ClaimDiscussionResult, error) {
	if err := requireRunner(p, "claim a discussion"); err != nil {
		return ClaimDiscussionResult{}, err
	}
	if harness == nil || *harness < Harness {
		got := "a claim without harness"
		if harness != nil {
			got = fmt.Sprintf("harness %d", *harness)
		}
		return ClaimDiscussionResult{}, refuse(CodeHarnessOutdated,
			"%s is refused: update prickle-runner to a version that sends harness: 2", got)
	}
	if *harness > Harness {
		return ClaimDiscussionResult{}, refuse(CodeHarnessUnsupported,
			"harness %d is not supported by this server; send harness: 2", *harness)
	}
	return inLockedTxValue(ctx, s, "claim discussion", &rowLock{id: stLockTurn, key: messageID}, func(tx *txn) (ClaimDiscussionResult, error) {
		return s.claimDiscussionTx(ctx, tx, p, messageID, idemKey)
	})
}

// loadTurn loads the turn of messageID as seen by p, applying the room
// rules (message_not_found, not_your_room, not_woken).
func loadTurn(ctx context.Context, tx *txn, p *Principal, messageID string) (turnInfo, error) {
	var t turnInfo
	var kind string
	var owner sql.NullString
	err := tx.stmt(ctx, stMessageRoom).QueryRowContext(ctx, p.Owner, messageID).Scan(&t.room, &t.project, &kind, &owner)
	if errors.Is(err, sql.ErrNoRows) {
		return t, refuse(CodeMessageNotFound, "message %q not found", messageID)
	}
	if err != nil {
		return t, err
	}
	if kind != "private" || owner.String != p.Owner {
		return t, refuse(CodeNotYourRoom, "message %q is not in one of your owner's private rooms", messageID)
	}
	var expires sql.NullInt64
	err = tx.stmt(ctx, stTurn).QueryRowContext(ctx, messageID).
		Scan(&t.state, &t.replyLimit, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return t, refuse(CodeNotWoken, "message %q did not wake your agent", messageID)
	}
	if err != nil {
		return t, err
	}
	t.expiresAt = nullTime(expires)
	rows, err := tx.stmt(ctx, stTurnAgents).QueryContext(ctx, messageID)
	if err != nil {
		return t, err
	}
	defer rows.Close()
	for rows.Next() {
		var a turnAgent
		if err := rows.Scan(&a.agent, &a.replied); err != nil {
			return t, err
		}
		t.agents = append(t.agents, a)
	}
	if err := rows.Err(); err != nil {
		return t, err
	}
	if t.index(p.Agent) < 0 {
		return t, refuse(CodeNotWoken, "message %q did not wake your agent", messageID)
	}
	return t, nil
}

func (t turnInfo) index(agent string) int {
	return slices.IndexFunc(t.agents, func(a turnAgent) bool { return a.agent == agent })
}

func repliesLeft(ctx context.Context, tx *txn, messageID string, limit int) (int, error) {
	var n int
	if err := tx.stmt(ctx, stRepliesPosted).QueryRowContext(ctx, messageID).Scan(&n); err != nil {
		return 0, err
	}
	return min(max(limit-n, 0), MaxReplies), nil
}

type discussionClaim struct {
	id, role            string
	lead                bool
	reviewing           sql.NullString
	superseded, replied bool
}

func findDiscussionClaim(ctx context.Context, tx *txn, runner, message, key string) (discussionClaim, bool, error) {
	var c discussionClaim
	err := tx.stmt(ctx, stFindDiscussionClaim).QueryRowContext(ctx, runner, message, key).
		Scan(&c.id, &c.role, &c.lead, &c.reviewing, &c.superseded, &c.replied)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	return c, err == nil, err
}

// loadQuote quotes the draft messageID, as reviewing shows it. A
// provenance the output schema does not document is bad data, an error.
func loadQuote(ctx context.Context, tx *txn, messageID string) (*api.ClaimDiscussionOutputReviewing, error) {
	var q api.ClaimDiscussionOutputReviewing
	var author sql.NullString
	err := tx.stmt(ctx, stQuote).QueryRowContext(ctx, messageID).
		Scan(&q.MessageID, &author, &q.Body, &q.Provenance, &q.ProvenanceStatus)
	if err != nil {
		return nil, fmt.Errorf("load draft %q: %w", messageID, err)
	}
	if !author.Valid {
		return nil, fmt.Errorf("draft %q has no agent author", messageID)
	}
	if !q.Provenance.Valid() || !q.ProvenanceStatus.Valid() {
		return nil, fmt.Errorf("draft %q: provenance %q (%q) is not one of the documented values", messageID, q.Provenance, q.ProvenanceStatus)
	}
	q.Author = author.String
	return &q, nil
}

// nextRole computes the role of agent's next session in the turn, or a
// refusal when the harness has nothing for it now.
func nextRole(ctx context.Context, tx *txn, t turnInfo, messageID, agent string) (role string, lead bool, draftID sql.NullString, err error) {
	lead = t.agents[0].agent == agent
	err = tx.stmt(ctx, stLeadDraft).QueryRowContext(ctx, messageID, t.agents[0].agent).Scan(&draftID)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", false, draftID, err
	}
	err = nil
	if !draftID.Valid {
		if lead {
			return RoleDraft, true, draftID, nil
		}
		return "", false, draftID, refuse(CodeDraftPending, "the lead agent %s has not posted its draft yet; claim again after it does", t.agents[0].agent)
	}
	if !lead {
		return RoleReview, false, draftID, nil
	}
	reviewers := t.agents[1:]
	if len(reviewers) == 0 {
		return "", true, draftID, refuse(CodeReplyPosted, "your agent already posted its reply in this turn")
	}
	for _, r := range reviewers {
		if !r.replied {
			return "", true, draftID, refuse(CodeReviewsPending, "not every reviewer has posted its review yet; claim again after they do")
		}
	}
	if len(reviewers) == 1 {
		return RoleRevise, true, draftID, nil
	}
	return RoleCombine, true, sql.NullString{}, nil
}

func (s *Store) claimDiscussionTx(ctx context.Context, tx *txn, p *Principal, messageID, idemKey string) (ClaimDiscussionResult, error) {
	// First the turn's lock: the claims and replies of one turn, on
	// whatever replica, take turns from here to their commit (lockRow).
	if err := tx.lockRow(ctx, stLockTurn, messageID); err != nil {
		return ClaimDiscussionResult{}, err
	}
	now := s.Now()
	t, err := loadTurn(ctx, tx, p, messageID)
	if err != nil {
		return ClaimDiscussionResult{}, err
	}
	claim, found, err := findDiscussionClaim(ctx, tx, p.RunnerID, messageID, idemKey)
	if err != nil {
		return ClaimDiscussionResult{}, err
	}
	// A replayed key's own fate (replied, superseded) comes before the
	// turn's state: server/README.md, "Refusal order".
	if found && claim.replied {
		return ClaimDiscussionResult{}, refuse(CodeReplyPosted, "the reply for this claim was already posted")
	}
	if found && claim.superseded {
		return ClaimDiscussionResult{}, refuse(CodeClaimSuperseded, "the discussion claim made with this idempotency key was superseded by a newer claim")
	}
	if err := turnRefusal(t, now); err != nil {
		return ClaimDiscussionResult{}, err
	}
	left, err := repliesLeft(ctx, tx, messageID, t.replyLimit)
	if err != nil {
		return ClaimDiscussionResult{}, err
	}
	cred := s.newCredential(s.opts.DiscussionTools, s.discussionTools, now.Add(s.opts.DiscussionTTL))
	replayed := found
	if !found {
		if claim, err = newKeyClaim(ctx, tx, p, t, messageID, left, now); err != nil {
			return ClaimDiscussionResult{}, err
		}
		if claim, replayed, err = insertDiscussionClaim(ctx, tx, p, messageID, idemKey, claim, now, cred); err != nil {
			return ClaimDiscussionResult{}, err
		}
	}
	if claim.superseded {
		return ClaimDiscussionResult{}, refuse(CodeClaimSuperseded, "the discussion claim made with this idempotency key was superseded by a newer claim")
	}
	if replayed && left == 0 {
		return ClaimDiscussionResult{}, refuse(CodeNoRepliesLeft, "the turn allows no more replies")
	}
	var reviewing *api.ClaimDiscussionOutputReviewing
	if claim.reviewing.Valid {
		if reviewing, err = loadQuote(ctx, tx, claim.reviewing.String); err != nil {
			return ClaimDiscussionResult{}, err
		}
	}
	// The claim holds its one credential (migration 0006), inserted with
	// it; a replay replaces it (the earlier one stops working).
	if replayed {
		if _, err := tx.stmt(ctx, stSetDiscussionCredential).ExecContext(ctx, cred.hash, cred.toolsJSON, toDB(cred.ExpiresAt), claim.id); err != nil {
			return ClaimDiscussionResult{}, fmt.Errorf("replace the claim's credential: %w", err)
		}
	}
	return ClaimDiscussionResult{
		Project: t.project, OwnRoom: true, RepliesLeft: left, Lead: claim.lead, Role: claim.role, Reviewing: reviewing,
		DiscussionCredential: cred.Credential,
		Replayed:             replayed,
	}, nil
}

// newKeyClaim is what a key not seen before may claim in the turn t of
// messageID, whose replies_left is left: the claim to insert (its role,
// lead and the draft it reviews, nextRole's), or the refusal of a new key,
// in order: reply_posted once the agent's part is done, draft_pending or
// reviews_pending, no_replies_left, and discussion_in_progress while
// another key's claim of the agent in the turn is live.
func newKeyClaim(ctx context.Context, tx *txn, p *Principal, t turnInfo, messageID string, left int, now time.Time) (discussionClaim, error) {
	if t.agents[t.index(p.Agent)].replied {
		return discussionClaim{}, refuse(CodeReplyPosted, "your agent already posted its reply in this turn")
	}
	role, lead, draftID, err := nextRole(ctx, tx, t, messageID, p.Agent)
	if err != nil {
		return discussionClaim{}, err
	}
	if left == 0 {
		return discussionClaim{}, refuse(CodeNoRepliesLeft, "the turn allows no more replies")
	}
	live, err := hasRow(tx.stmt(ctx, stLiveDiscussionClaim).QueryRowContext(ctx, messageID, p.Agent, toDB(now)))
	if err != nil {
		return discussionClaim{}, err
	}
	if live {
		return discussionClaim{}, refuse(CodeDiscussionInProgress,
			"your agent already has a live discussion claim for this message; replay its idempotency key, or retry after its credential expires")
	}
	return discussionClaim{role: role, lead: lead, reviewing: draftID}, nil
}

// insertDiscussionClaim inserts c, a new key's claim (newKeyClaim), with a
// fresh id, holding cred, and supersedes the agent's other claims in the
// turn (their credentials are dropped). replayed is true if the key
// turned out to exist after all (the insert met its UNIQUE constraint and
// inserted nothing): the claim returned is then that key's, to replay.
func insertDiscussionClaim(ctx context.Context, tx *txn, p *Principal, messageID, idemKey string, c discussionClaim, now time.Time, cred credential) (claim discussionClaim, replayed bool, err error) {
	id, err := newID("dsc_")
	if err != nil {
		return discussionClaim{}, false, err
	}
	res, err := tx.stmt(ctx, stInsertDiscussionClaim).ExecContext(ctx,
		id, messageID, p.RunnerID, p.Agent, idemKey, c.role, c.lead, c.reviewing, toDB(now), toDB(cred.ExpiresAt), cred.hash, cred.toolsJSON)
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	switch {
	case err == nil && n == 1:
		c.id = id
		if c.role != RoleReview && c.role != RoleRevise {
			c.reviewing = sql.NullString{}
		}
		if _, err := tx.stmt(ctx, stSupersedeDiscussionClaims).ExecContext(ctx, toDB(now), messageID, p.Agent, id); err != nil {
			return discussionClaim{}, false, err
		}
		return c, false, nil
	case err == nil:
		// The key exists after all: its UNIQUE constraint kept the
		// insert out, and the claim replays.
		claim, found, err := findDiscussionClaim(ctx, tx, p.RunnerID, messageID, idemKey)
		if err != nil {
			return discussionClaim{}, false, err
		}
		if !found {
			return discussionClaim{}, false, errors.New("discussion claim vanished after its key's conflict")
		}
		if claim.replied {
			return discussionClaim{}, false, refuse(CodeReplyPosted, "the reply for this claim was already posted")
		}
		return claim, true, nil
	default:
		return discussionClaim{}, false, fmt.Errorf("insert discussion claim: %w", err)
	}
}
