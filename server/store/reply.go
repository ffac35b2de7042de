package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/prickle-dev/prickle/spec/world"
)

// PostDiscussionReply posts the one reply a discussion credential allows:
// a room_message by the credential's agent in the claimed message's room,
// in that message's turn, under the claim's role, with provenance status
// "claimed" (provenance "" means agent_generated). It is what post_message
// does for a discussion credential. A second reply is refused
// (reply_posted); so is a reply once the turn no longer waits. When the
// reply is the agent's last in the harness (the draft of a lone agent, a
// review, a revise or a combine) the turn stops waiting on the agent; when
// it waits on nobody the turn ends. The reply is returned as the world
// format writes a message, a reply in its turn under its role, created
// now (in RFC 3339, at the store's millisecond precision).
func (s *Store) PostDiscussionReply(ctx context.Context, p *Principal, body, provenance string) (world.Message, error) {
	if p == nil {
		return world.Message{}, refuse(CodeUnauthenticated, "no caller identity")
	}
	if p.Kind != KindDiscussion {
		return world.Message{}, refuse(CodeNotDiscussionCredential, "only a discussion credential can post a discussion reply")
	}
	now := s.Now()
	if p.ExpiresAt != nil && !now.Before(*p.ExpiresAt) {
		return world.Message{}, refuse(CodeCredentialExpired, "the discussion credential has expired")
	}
	if provenance == "" {
		provenance = "agent_generated"
	}
	// A message's body and provenance are what the pages document for a
	// quoted message, through the world schema: one source.
	ws, err := worldSchema()
	if err != nil {
		return world.Message{}, fmt.Errorf("store: %w", err)
	}
	if err := ws.CheckValue(world.DefMessageBody, "body", body); err != nil {
		return world.Message{}, refuse(CodeInvalidArgument, "%v", err)
	}
	if err := ws.CheckValue(world.DefMessageProvenance, "provenance", provenance); err != nil {
		return world.Message{}, refuse(CodeInvalidArgument, "%v", err)
	}
	var msg world.Message
	err = s.inTx(ctx, func(tx *txn) error {
		var messageID, role string
		var lead, superseded, replied bool
		// The turn's lock first, as a claim takes it (lockRow); its
		// message is the claim's, which no write changes.
		err := tx.QueryRowContext(ctx, `SELECT message FROM discussion_claims WHERE id = ?`, p.Scope.DiscussionID).Scan(&messageID)
		if err == nil {
			err = tx.lockRow(ctx, stLockTurn, messageID)
		}
		if err == nil {
			err = tx.QueryRowContext(ctx, `SELECT role, lead, superseded_at IS NOT NULL, replied_at IS NOT NULL
				FROM discussion_claims WHERE id = ?`, p.Scope.DiscussionID).Scan(&role, &lead, &superseded, &replied)
		}
		if errors.Is(err, sql.ErrNoRows) {
			return refuse(CodeNotDiscussionCredential, "the credential has no discussion claim")
		}
		if err != nil {
			return err
		}
		if replied {
			return refuse(CodeReplyPosted, "this credential already posted its reply")
		}
		if superseded {
			return refuse(CodeClaimSuperseded, "the discussion claim was superseded by a newer claim")
		}
		t, err := loadTurn(ctx, tx, p, messageID)
		if err != nil {
			return err
		}
		if err := turnRefusal(t, now); err != nil {
			return err
		}
		left, err := repliesLeft(ctx, tx, messageID, t.replyLimit)
		if err != nil {
			return err
		}
		if left == 0 {
			return refuse(CodeNoRepliesLeft, "the turn allows no more replies")
		}
		id, err := newID("msg_")
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages(id, room, kind, author_agent, body, provenance, provenance_status,
			reply_turn, reply_role, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)`,
			id, t.room, "room_message", p.Agent, body, provenance, "claimed", messageID, role, toDB(now)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE discussion_claims SET replied_at = ?, reply_message = ? WHERE id = ?`,
			toDB(now), id, p.Scope.DiscussionID); err != nil {
			return err
		}
		final := role == RoleReview || role == RoleRevise || role == RoleCombine || (role == RoleDraft && len(t.agents) == 1)
		if final {
			if _, err := tx.ExecContext(ctx, `UPDATE turn_agents SET reply_posted_at = ? WHERE turn = ? AND agent = ?`,
				toDB(now), messageID, p.Agent); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE turns SET state = 'ended' WHERE message = ? AND NOT EXISTS
				(SELECT 1 FROM turn_agents WHERE turn = ? AND reply_posted_at IS NULL)`, messageID, messageID); err != nil {
				return err
			}
		}
		mt, r := messageID, role
		msg = world.Message{ID: id, Room: t.room, Kind: "room_message", Author: p.Agent, Body: body, Provenance: provenance,
			ProvenanceStatus: "claimed", ReplyTurn: &mt, ReplyRole: &r, CreatedAt: world.Time(now.Format(time.RFC3339Nano))}
		return nil
	})
	if err != nil {
		return world.Message{}, opError("post discussion reply", err)
	}
	return msg, nil
}

// SetTurnState sets the state of the turn of messageID (an owner or admin
// action: stop, end, time out, or replace a turn). state is one of the
// Turn* constants.
func (s *Store) SetTurnState(ctx context.Context, messageID, state string) error {
	if !slices.Contains([]string{TurnWaiting, TurnEnded, TurnStopped, TurnTimedOut, TurnReplaced}, state) {
		return fmt.Errorf("store: set turn state: unknown state %q", state)
	}
	err := s.inTx(ctx, func(tx *txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE turns SET state = ? WHERE message = ?`, state, messageID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("no turn for message %q", messageID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: set turn state: %w", err)
	}
	return nil
}
