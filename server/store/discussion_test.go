package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/spec/seed"
)

func TestClaimDiscussionHarness(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		runner := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		for _, h := range []*int{nil, ptrTo(1)} {
			_, err := s.ClaimDiscussion(ctx, runner, seed.MessageID, "runner-discussion-example-1", h)
			wantCode(t, err, CodeHarnessOutdated)
			if !strings.Contains(err.Error(), "update prickle-runner") {
				t.Fatalf("message %q does not tell the runner to update prickle-runner", err)
			}
		}
		_, err := s.ClaimDiscussion(ctx, runner, seed.MessageID, "runner-discussion-example-1", ptrTo(3))
		wantCode(t, err, CodeHarnessUnsupported)
		agent := auth(t, s, tokenOf(t, issued, KindAgent, seed.BuilderAgent))
		_, err = s.ClaimDiscussion(ctx, agent, seed.MessageID, "k", ptrTo(2))
		wantCode(t, err, CodeNotRunner)
		if n := count(t, s, `SELECT count(*) FROM discussion_claims`); n != 0 {
			t.Fatalf("refused claims wrote %d rows", n)
		}
	})
}

func TestClaimDiscussionExampleReplayAndReply(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, c, issued := db.seeded(t)
		runner := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		res, err := s.ClaimDiscussion(ctx, runner, seed.MessageID, "runner-discussion-example-1", ptrTo(2))
		if err != nil {
			t.Fatal(err)
		}
		if res.Project != seed.Project || !res.OwnRoom || !res.Lead || res.Role != RoleDraft || res.Reviewing != nil ||
			res.RepliesLeft != 8 || res.Replayed {
			t.Fatalf("claim = %+v", res)
		}
		cred := res.DiscussionCredential
		if !cred.ExpiresAt.Equal(t0.Add(10*time.Minute)) || !slices.Equal(cred.AllowedTools, testDiscussionTools) {
			t.Fatalf("credential = %+v", cred)
		}
		js, _ := json.Marshal(res)
		for _, want := range []string{`"reviewing":null`, `"own_room":true`, `"replies_left":8`, `"lead":true`, `"role":"draft"`, `"project":"website-v2"`} {
			if !bytes.Contains(js, []byte(want)) {
				t.Fatalf("JSON %s lacks %s", js, want)
			}
		}
		dp := auth(t, s, cred.Token)
		if dp.Kind != KindDiscussion || dp.Scope.RoomID != seed.PrivateRoomID || dp.Scope.MessageID != seed.MessageID ||
			dp.Scope.Project != seed.Project || dp.RunnerID != seed.RunnerID {
			t.Fatalf("discussion principal = %+v", dp)
		}

		// Replay: same role, fresh credential, old one gone.
		c.Advance(time.Minute)
		again, err := s.ClaimDiscussion(ctx, runner, seed.MessageID, "runner-discussion-example-1", ptrTo(2))
		if err != nil {
			t.Fatal(err)
		}
		if !again.Replayed || again.Role != RoleDraft || !again.Lead || again.DiscussionCredential.Token == cred.Token {
			t.Fatalf("replay = %+v", again)
		}
		if _, err := s.Authenticate(ctx, cred.Token); !errors.Is(err, ErrUnknownToken) {
			t.Fatalf("old discussion credential: %v, want unknown (replaced)", err)
		}
		// Expiry after 10 minutes on the injected clock.
		c.Advance(10 * time.Minute)
		if _, err := s.Authenticate(ctx, again.DiscussionCredential.Token); !errors.Is(err, ErrExpiredToken) {
			t.Fatalf("after 10 minutes: %v, want expired", err)
		}
		// A stale principal of the first credential is refused by time too.
		_, err = s.PostDiscussionReply(ctx, dp, "late", "")
		wantCode(t, err, CodeCredentialExpired)

		// Replay after expiry still works until the reply is posted.
		third, err := s.ClaimDiscussion(ctx, runner, seed.MessageID, "runner-discussion-example-1", ptrTo(2))
		if err != nil || !third.Replayed {
			t.Fatalf("replay after expiry: %+v, %v", third, err)
		}
		tp := auth(t, s, third.DiscussionCredential.Token)
		for _, bad := range [][2]string{{"", ""}, {strings.Repeat("é", 8001), ""}, {"hi", "made_up"}} {
			_, err = s.PostDiscussionReply(ctx, tp, bad[0], bad[1])
			wantCode(t, err, CodeInvalidArgument)
		}
		_, err = s.PostDiscussionReply(ctx, runner, "hi", "")
		wantCode(t, err, CodeNotDiscussionCredential)
		msg, err := s.PostDiscussionReply(ctx, tp, "Free tier: 3 projects.", "")
		if err != nil {
			t.Fatal(err)
		}
		if msg.Author != seed.BuilderAgent || msg.Room != seed.PrivateRoomID || *msg.ReplyRole != RoleDraft || *msg.ReplyTurn != seed.MessageID ||
			msg.Provenance != "agent_generated" || msg.ProvenanceStatus != "claimed" {
			t.Fatalf("reply = %+v", msg)
		}
		_, err = s.PostDiscussionReply(ctx, tp, "second reply", "")
		wantCode(t, err, CodeReplyPosted)
		_, err = s.ClaimDiscussion(ctx, runner, seed.MessageID, "runner-discussion-example-1", ptrTo(2))
		wantCode(t, err, CodeReplyPosted)
		// A lone agent's draft was its last reply: the turn ended.
		_, err = s.ClaimDiscussion(ctx, runner, seed.MessageID, "another-key", ptrTo(2))
		wantCode(t, err, CodeTurnEnded)
	})
}

func TestClaimDiscussionRoomRules(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _ := db.loaded(t)
		builder := auth(t, s, fxBuilderRunner)
		theo := auth(t, s, fxTheoRunner)
		h := ptrTo(2)
		_, err := s.ClaimDiscussion(ctx, builder, "mention-1", "k", h) // general room
		wantCode(t, err, CodeNotYourRoom)
		_, err = s.ClaimDiscussion(ctx, builder, "theo-note", "k", h) // another owner's private room
		wantCode(t, err, CodeNotYourRoom)
		_, missing := s.ClaimDiscussion(ctx, builder, "no-such-message", "k", h)
		_, hidden := s.ClaimDiscussion(ctx, builder, "ines-note", "k", h) // project maya cannot see
		wantCode(t, missing, CodeMessageNotFound)
		wantCode(t, hidden, CodeMessageNotFound)
		_, err = s.ClaimDiscussion(ctx, builder, "req-1", "k", h) // own room, no turn
		wantCode(t, err, CodeNotWoken)
		_, err = s.ClaimDiscussion(ctx, theo, "wake-solo", "k", h) // not theo's room
		wantCode(t, err, CodeNotYourRoom)
		scout := auth(t, s, fxScoutRunner)
		_, err = s.ClaimDiscussion(ctx, scout, "wake-pair", "k", h) // maya's room, did not wake scout
		wantCode(t, err, CodeNotWoken)
		if _, err := s.ClaimDiscussion(ctx, theo, "theo-note", "k", h); err != nil {
			t.Fatalf("theo in his own room: %v", err)
		}
	})
}

func TestClaimDiscussionTurnStates(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, c := db.loaded(t)
		builder := auth(t, s, fxBuilderRunner)
		for msg, code := range map[string]string{
			"wake-ended":     CodeTurnEnded,
			"wake-stopped":   CodeTurnStopped,
			"wake-timed-out": CodeTurnTimedOut,
			"wake-replaced":  CodeTurnReplaced,
		} {
			_, err := s.ClaimDiscussion(ctx, builder, msg, "k", ptrTo(2))
			wantCode(t, err, code)
		}
		// A turn deadline on the injected clock.
		if _, err := s.ClaimDiscussion(ctx, builder, "wake-deadline", "k", ptrTo(2)); err != nil {
			t.Fatal(err)
		}
		c.Advance(time.Hour)
		_, err := s.ClaimDiscussion(ctx, builder, "wake-deadline", "k", ptrTo(2))
		wantCode(t, err, CodeTurnTimedOut)
		// Replacement by the owner's next message, after a claim was made.
		res, err := s.ClaimDiscussion(ctx, builder, "wake-solo", "k", ptrTo(2))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetTurnState(ctx, "wake-solo", TurnReplaced); err != nil {
			t.Fatal(err)
		}
		_, err = s.ClaimDiscussion(ctx, builder, "wake-solo", "k", ptrTo(2))
		wantCode(t, err, CodeTurnReplaced)
		_, err = s.PostDiscussionReply(ctx, auth(t, s, res.DiscussionCredential.Token), "too late", "")
		wantCode(t, err, CodeTurnReplaced)
		if err := s.SetTurnState(ctx, "wake-solo", "bogus"); err == nil {
			t.Fatal("bogus state accepted")
		}
	})
}

func TestClaimDiscussionDifferentKeyWhileLive(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, c := db.loaded(t)
		builder := auth(t, s, fxBuilderRunner)
		if _, err := s.ClaimDiscussion(ctx, builder, "wake-solo", "k1", ptrTo(2)); err != nil {
			t.Fatal(err)
		}
		_, err := s.ClaimDiscussion(ctx, builder, "wake-solo", "k2", ptrTo(2))
		wantCode(t, err, CodeDiscussionInProgress)
		c.Advance(10 * time.Minute)
		second, err := s.ClaimDiscussion(ctx, builder, "wake-solo", "k2", ptrTo(2))
		if err != nil || second.Replayed || second.Role != RoleDraft {
			t.Fatalf("after expiry: %+v, %v", second, err)
		}
		_, err = s.ClaimDiscussion(ctx, builder, "wake-solo", "k1", ptrTo(2))
		wantCode(t, err, CodeClaimSuperseded)
	})
}

func TestHarnessTwoPairDraftReviewRevise(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _ := db.loaded(t)
		builder := auth(t, s, fxBuilderRunner)
		critic := auth(t, s, fxCriticRunner)
		h := ptrTo(2)

		_, err := s.ClaimDiscussion(ctx, critic, "wake-pair", "c1", h)
		wantCode(t, err, CodeDraftPending)

		d, err := s.ClaimDiscussion(ctx, builder, "wake-pair", "b1", h)
		if err != nil || d.Role != RoleDraft || !d.Lead || d.Reviewing != nil || d.RepliesLeft != 8 {
			t.Fatalf("draft claim = %+v, %v", d, err)
		}
		draft, err := s.PostDiscussionReply(ctx, auth(t, s, d.DiscussionCredential.Token), "Draft launch note.", "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.ClaimDiscussion(ctx, builder, "wake-pair", "b2", h)
		wantCode(t, err, CodeReviewsPending)

		r, err := s.ClaimDiscussion(ctx, critic, "wake-pair", "c1", h)
		if err != nil || r.Role != RoleReview || r.Lead || r.RepliesLeft != 7 {
			t.Fatalf("review claim = %+v, %v", r, err)
		}
		want := api.ClaimDiscussionOutputReviewing{MessageID: draft.ID, Author: "maya/builder", Body: "Draft launch note.", Provenance: "agent_generated", ProvenanceStatus: "claimed"}
		if r.Reviewing == nil || *r.Reviewing != want {
			t.Fatalf("reviewing = %+v, want %+v", r.Reviewing, want)
		}
		if _, err := s.PostDiscussionReply(ctx, auth(t, s, r.DiscussionCredential.Token), "Shorter please.", ""); err != nil {
			t.Fatal(err)
		}
		_, err = s.ClaimDiscussion(ctx, critic, "wake-pair", "c2", h)
		wantCode(t, err, CodeReplyPosted)

		v, err := s.ClaimDiscussion(ctx, builder, "wake-pair", "b2", h)
		if err != nil || v.Role != RoleRevise || !v.Lead || v.Reviewing == nil || *v.Reviewing != want || v.RepliesLeft != 6 {
			t.Fatalf("revise claim = %+v, %v", v, err)
		}
		if _, err := s.PostDiscussionReply(ctx, auth(t, s, v.DiscussionCredential.Token), "Final note.", "owner_approved"); err != nil {
			t.Fatal(err)
		}
		_, err = s.ClaimDiscussion(ctx, builder, "wake-pair", "b3", h)
		wantCode(t, err, CodeTurnEnded)
		_, err = s.ClaimDiscussion(ctx, builder, "wake-pair", "b2", h)
		wantCode(t, err, CodeReplyPosted)
	})
}

func TestHarnessTwoTrioCombine(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _ := db.loaded(t)
		builder := auth(t, s, fxBuilderRunner)
		critic := auth(t, s, fxCriticRunner)
		scout := auth(t, s, fxScoutRunner)
		h := ptrTo(2)
		post := func(res ClaimDiscussionResult, body string) {
			t.Helper()
			if _, err := s.PostDiscussionReply(ctx, auth(t, s, res.DiscussionCredential.Token), body, ""); err != nil {
				t.Fatal(err)
			}
		}
		d, err := s.ClaimDiscussion(ctx, builder, "wake-trio", "b1", h)
		if err != nil || d.Role != RoleDraft {
			t.Fatalf("%+v %v", d, err)
		}
		post(d, "plan")
		for _, rv := range []*Principal{critic, scout} {
			r, err := s.ClaimDiscussion(ctx, rv, "wake-trio", "r", h)
			if err != nil || r.Role != RoleReview || r.Lead || r.Reviewing == nil {
				t.Fatalf("%+v %v", r, err)
			}
			if rv == critic {
				post(r, "review 1")
				_, err := s.ClaimDiscussion(ctx, builder, "wake-trio", "b2", h)
				wantCode(t, err, CodeReviewsPending)
			} else {
				post(r, "review 2")
			}
		}
		cb, err := s.ClaimDiscussion(ctx, builder, "wake-trio", "b2", h)
		if err != nil || cb.Role != RoleCombine || !cb.Lead || cb.Reviewing != nil || cb.RepliesLeft != 5 {
			t.Fatalf("combine claim = %+v, %v", cb, err)
		}
		js, _ := json.Marshal(cb)
		if !bytes.Contains(js, []byte(`"reviewing":null`)) {
			t.Fatalf("combine JSON %s", js)
		}
	})
}

func TestRepliesLeftExhausted(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _ := db.loaded(t)
		builder := auth(t, s, fxBuilderRunner)
		critic := auth(t, s, fxCriticRunner)
		d, err := s.ClaimDiscussion(ctx, builder, "wake-tight", "b1", ptrTo(2))
		if err != nil || d.RepliesLeft != 1 {
			t.Fatalf("%+v %v", d, err)
		}
		if _, err := s.PostDiscussionReply(ctx, auth(t, s, d.DiscussionCredential.Token), "draft", ""); err != nil {
			t.Fatal(err)
		}
		_, err = s.ClaimDiscussion(ctx, critic, "wake-tight", "c1", ptrTo(2))
		wantCode(t, err, CodeNoRepliesLeft)
	})
}

func TestWorldEarlierDiscussionClaims(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _ := db.loaded(t)
		builder := auth(t, s, fxBuilderRunner)
		critic := auth(t, s, fxCriticRunner)
		// The world's draft claim has its reply posted: replay refused.
		_, err := s.ClaimDiscussion(ctx, builder, "wake-replied", "draft-key", ptrTo(2))
		wantCode(t, err, CodeReplyPosted)
		_, err = s.ClaimDiscussion(ctx, critic, "wake-replied", "review-key", ptrTo(2))
		wantCode(t, err, CodeReplyPosted)
		_, err = s.ClaimDiscussion(ctx, critic, "wake-replied", "new-key", ptrTo(2))
		wantCode(t, err, CodeReplyPosted)
		// The review is in: the lead now revises the world's draft.
		v, err := s.ClaimDiscussion(ctx, builder, "wake-replied", "revise-key", ptrTo(2))
		if err != nil || v.Role != RoleRevise || v.Reviewing == nil || v.Reviewing.MessageID != "draft-1" || v.RepliesLeft != 6 {
			t.Fatalf("revise = %+v, %v", v, err)
		}
	})
}

// A replayed key's own fate comes before the turn's state (server/README.md,
// "Refusal order"): a superseded key in a turn that has since been
// replaced is claim_superseded, as a replied key is reply_posted.
func TestClaimDiscussionSupersededBeforeTurnState(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, c := db.loaded(t)
		builder := auth(t, s, fxBuilderRunner)
		if _, err := s.ClaimDiscussion(ctx, builder, "wake-solo", "k1", ptrTo(2)); err != nil {
			t.Fatal(err)
		}
		c.Advance(10 * time.Minute)
		if _, err := s.ClaimDiscussion(ctx, builder, "wake-solo", "k2", ptrTo(2)); err != nil {
			t.Fatal(err)
		}
		if err := s.SetTurnState(ctx, "wake-solo", TurnReplaced); err != nil {
			t.Fatal(err)
		}
		_, err := s.ClaimDiscussion(ctx, builder, "wake-solo", "k1", ptrTo(2))
		wantCode(t, err, CodeClaimSuperseded)
		_, err = s.ClaimDiscussion(ctx, builder, "wake-solo", "k2", ptrTo(2))
		wantCode(t, err, CodeTurnReplaced)
	})
}

// Keys are scoped to a runner: the same key from a second runner of the
// same agent is a new key for it, never a replay of the first runner's
// claim (server/README.md, claim_task and claim_discussion).
func TestSameKeyFromASecondRunner(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, c, issued := db.seeded(t)
		first := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		tok, err := s.PairRunner(ctx, seed.BuilderAgent, "maya-desk")
		if err != nil {
			t.Fatal(err)
		}
		second := auth(t, s, tok.Token)
		if _, err := s.ClaimTask(ctx, first, seed.TaskID, "k", nil); err != nil {
			t.Fatal(err)
		}
		_, err = s.ClaimTask(ctx, second, seed.TaskID, "k", nil)
		wantCode(t, err, CodeAttemptInProgress)
		if _, err := s.ClaimDiscussion(ctx, first, seed.MessageID, "k", ptrTo(2)); err != nil {
			t.Fatal(err)
		}
		_, err = s.ClaimDiscussion(ctx, second, seed.MessageID, "k", ptrTo(2))
		wantCode(t, err, CodeDiscussionInProgress)
		// Once the first runner's claims expire, the second runner's key
		// starts claims of its own.
		c.Advance(DefaultLaunchTimeout)
		a, err := s.ClaimTask(ctx, second, seed.TaskID, "k", nil)
		if err != nil || a.Replayed {
			t.Fatalf("the second runner's key after expiry: %+v, %v", a, err)
		}
		d, err := s.ClaimDiscussion(ctx, second, seed.MessageID, "k", ptrTo(2))
		if err != nil || d.Replayed {
			t.Fatalf("the second runner's discussion key after expiry: %+v, %v", d, err)
		}
	})
}
