package server_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
	"github.com/prickle-dev/prickle/spec/world"
)

// postReply posts the one reply a discussion credential allows, as
// post_message will (it has no page yet, so the store does it).
func (e *env) postReply(credential, body string) world.Message {
	e.t.Helper()
	ctx := context.Background()
	p, err := e.srv.Store().Authenticate(ctx, credential)
	if err != nil {
		e.t.Fatalf("authenticate discussion credential: %v", err)
	}
	m, err := e.srv.Store().PostDiscussionReply(ctx, p, body, "")
	if err != nil {
		e.t.Fatalf("post reply: %v", err)
	}
	return m
}

// wantSession checks role, lead, replies_left and the credential of a
// claim_discussion answer made now.
func (e *env) wantSession(out *api.ClaimDiscussionOutput, raw []byte, role string, lead bool, repliesLeft int64) {
	e.t.Helper()
	if string(out.Role) != role || out.Lead != lead || out.RepliesLeft != repliesLeft {
		e.t.Fatalf("session role=%s lead=%v replies_left=%d, want %s %v %d", out.Role, out.Lead, out.RepliesLeft, role, lead, repliesLeft)
	}
	if out.Project != "website-v2" || out.OwnRoom == nil || !*out.OwnRoom {
		e.t.Errorf("project %q own_room %v", out.Project, out.OwnRoom)
	}
	// Ten minutes, exactly, on the injected clock.
	if got := out.DiscussionCredential.ExpiresAt.Sub(e.clock.Now()); got != 10*time.Minute {
		e.t.Errorf("discussion credential lives %v, want 10m", got)
	}
	if role == "draft" || role == "combine" {
		if out.Reviewing != nil || !bytes.Contains(raw, []byte(`"reviewing":null`)) {
			e.t.Errorf("%s: reviewing must be null on the wire: %s", role, raw)
		}
	}
}

// wantQuote checks that reviewing quotes the draft m.
func wantQuote(t *testing.T, out *api.ClaimDiscussionOutput, m world.Message) {
	t.Helper()
	q := out.Reviewing
	if q == nil {
		t.Fatalf("%s: reviewing is null, want the draft %s", out.Role, m.ID)
	}
	if q.MessageID != m.ID || q.Author != m.Author || q.Body != m.Body ||
		string(q.Provenance) != "agent_generated" || string(q.ProvenanceStatus) != "claimed" {
		t.Fatalf("%s: reviewing = %+v, want the draft %+v", out.Role, q, m)
	}
}

// TestClaimDiscussionHarness: harness missing or 1 is refused telling the
// runner to update prickle-runner; above 2 is unsupported; out of the
// schema's range is invalid. Nothing is left behind.
func TestClaimDiscussionHarness(t *testing.T) {
	e := newEnv(t, envOpts{fileDB: true})
	runner := e.connect(e.token(store.KindRunner, seed.BuilderAgent))
	for _, h := range []any{nil, 1} {
		r := runner.refused(api.ToolClaimDiscussion, discussionArgs(seed.MessageID, "h", h), store.CodeHarnessOutdated)
		if !strings.Contains(r.Message, "prickle-runner") {
			t.Errorf("harness %v: message does not mention prickle-runner: %q", h, r.Message)
		}
	}
	for _, h := range []any{3, 1000} {
		runner.refused(api.ToolClaimDiscussion, discussionArgs(seed.MessageID, "h", h), store.CodeHarnessUnsupported)
	}
	for _, h := range []any{0, 1001, "2", 2.5, -1} {
		r := runner.refused(api.ToolClaimDiscussion, discussionArgs(seed.MessageID, "h", h), "invalid_arguments")
		if !strings.Contains(r.Message, "/harness") {
			t.Errorf("harness %v: message does not name /harness: %q", h, r.Message)
		}
	}
	if n := e.count("discussion_claims"); n != 0 {
		t.Fatalf("refused claims left %d discussion claims", n)
	}
	out, raw := runner.claimDiscussion(seed.MessageID, "h")
	e.wantSession(out, raw, "draft", true, 8)
}

// TestClaimDiscussionPair: a lead and one reviewer: draft, review (quoting
// the draft), revise (quoting it too); replies_left counts down; the turn
// ends after the revise.
func TestClaimDiscussionPair(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	builder := e.connect(fxBuilderRunner)
	critic := e.connect(fxCriticRunner)

	critic.refused(api.ToolClaimDiscussion, discussionArgs("wake-pair", "c1", 2), store.CodeDraftPending)
	out, raw := builder.claimDiscussion("wake-pair", "b1")
	e.wantSession(out, raw, "draft", true, 8)
	e.clock.Advance(time.Minute)
	draft := e.postReply(out.DiscussionCredential.Token, "Draft: launch note v1.")

	builder.refused(api.ToolClaimDiscussion, discussionArgs("wake-pair", "b2", 2), store.CodeReviewsPending)
	e.clock.Advance(time.Minute)
	rev, raw := critic.claimDiscussion("wake-pair", "c1")
	e.wantSession(rev, raw, "review", false, 7)
	wantQuote(t, rev, draft)
	e.postReply(rev.DiscussionCredential.Token, "Review: shorter, please.")

	e.clock.Advance(time.Minute)
	fix, raw := builder.claimDiscussion("wake-pair", "b2")
	e.wantSession(fix, raw, "revise", true, 6)
	wantQuote(t, fix, draft)
	e.postReply(fix.DiscussionCredential.Token, "Revised launch note.")

	// Everyone has posted its last reply: the turn has ended.
	builder.refused(api.ToolClaimDiscussion, discussionArgs("wake-pair", "b2", 2), store.CodeReplyPosted)
	critic.refused(api.ToolClaimDiscussion, discussionArgs("wake-pair", "c1", 2), store.CodeReplyPosted)
	builder.refused(api.ToolClaimDiscussion, discussionArgs("wake-pair", "b3", 2), store.CodeTurnEnded)
}

// TestClaimDiscussionTrio: a lead and two reviewers: draft, two reviews,
// then combine (reviewing null).
func TestClaimDiscussionTrio(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	builder := e.connect(fxBuilderRunner)
	critic := e.connect(fxCriticRunner)
	scout := e.connect(fxScoutRunner)

	out, raw := builder.claimDiscussion("wake-trio", "b1")
	e.wantSession(out, raw, "draft", true, 8)
	draft := e.postReply(out.DiscussionCredential.Token, "Migration plan, draft.")

	r1, raw := critic.claimDiscussion("wake-trio", "c1")
	e.wantSession(r1, raw, "review", false, 7)
	wantQuote(t, r1, draft)
	e.postReply(r1.DiscussionCredential.Token, "Critic's review.")
	builder.refused(api.ToolClaimDiscussion, discussionArgs("wake-trio", "b2", 2), store.CodeReviewsPending)

	r2, raw := scout.claimDiscussion("wake-trio", "s1")
	e.wantSession(r2, raw, "review", false, 6)
	wantQuote(t, r2, draft)
	e.postReply(r2.DiscussionCredential.Token, "Scout's review.")

	comb, raw := builder.claimDiscussion("wake-trio", "b2")
	e.wantSession(comb, raw, "combine", true, 5)
}

// TestClaimDiscussionReplayUntilReplyPosted: the same key replays the same
// session with a fresh credential (the earlier one gets 401) until the
// reply is posted; then it is refused.
func TestClaimDiscussionReplayUntilReplyPosted(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json", fileDB: true})
	builder := e.connect(fxBuilderRunner)

	first, _ := builder.claimDiscussion("wake-solo", "k")
	e.clock.Advance(2 * time.Minute)
	second, raw := builder.claimDiscussion("wake-solo", "k")
	e.wantSession(second, raw, "draft", true, 8)
	if second.DiscussionCredential.Token == first.DiscussionCredential.Token {
		t.Fatal("replay returned the same credential")
	}
	e.want401(first.DiscussionCredential.Token)
	builder.refused(api.ToolClaimDiscussion, discussionArgs("wake-solo", "other-key", 2), store.CodeDiscussionInProgress)
	if n := e.count("discussion_claims"); n != 2+1 { // two from the world
		t.Fatalf("%d discussion claims, want 3", n)
	}

	e.postReply(second.DiscussionCredential.Token, "The free tier stays free.")
	builder.refused(api.ToolClaimDiscussion, discussionArgs("wake-solo", "k", 2), store.CodeReplyPosted)
	builder.refused(api.ToolClaimDiscussion, discussionArgs("wake-solo", "other-key", 2), store.CodeTurnEnded)
	// A credential that posted its reply may not post another.
	p, err := e.srv.Store().Authenticate(context.Background(), second.DiscussionCredential.Token)
	if err == nil {
		_, err = e.srv.Store().PostDiscussionReply(context.Background(), p, "again", "")
	}
	if store.RefusalCode(err) != store.CodeReplyPosted && store.RefusalCode(err) != store.CodeTurnEnded {
		t.Errorf("second reply: %v", err)
	}

	// Claims described by the world whose replies are posted.
	builder.refused(api.ToolClaimDiscussion, discussionArgs("wake-replied", "draft-key", 2), store.CodeReplyPosted)
	e.connect(fxCriticRunner).refused(api.ToolClaimDiscussion, discussionArgs("wake-replied", "review-key", 2), store.CodeReplyPosted)
	// The lead's next session there is the revise of the world's draft.
	fix, raw := builder.claimDiscussion("wake-replied", "revise-key")
	e.wantSession(fix, raw, "revise", true, 6)
	if fix.Reviewing == nil || fix.Reviewing.MessageID != "draft-1" || fix.Reviewing.Author != "maya/builder" ||
		fix.Reviewing.Body != "Draft: the launch note." {
		t.Errorf("revise quotes %+v, want draft-1", fix.Reviewing)
	}
}

// TestClaimDiscussionTurnNoLongerWaits: refused once the turn ended, was
// stopped, ran out of time (state, or its deadline on the injected clock)
// or was replaced; also for a claim made while the turn still waited.
func TestClaimDiscussionTurnNoLongerWaits(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	builder := e.connect(fxBuilderRunner)
	for msg, code := range map[string]string{
		"wake-ended":     store.CodeTurnEnded,
		"wake-stopped":   store.CodeTurnStopped,
		"wake-timed-out": store.CodeTurnTimedOut,
		"wake-replaced":  store.CodeTurnReplaced,
	} {
		builder.refused(api.ToolClaimDiscussion, discussionArgs(msg, "k", 2), code)
	}

	// The deadline: claimable before 13:00, timed out at 13:00.
	builder.claimDiscussion("wake-deadline", "k")
	e.clock.Advance(time.Hour - time.Millisecond)
	builder.claimDiscussion("wake-deadline", "k") // a replay, just in time
	e.clock.Advance(time.Millisecond)
	builder.refused(api.ToolClaimDiscussion, discussionArgs("wake-deadline", "k", 2), store.CodeTurnTimedOut)

	// A live claim whose turn the owner then stops, replaces or ends.
	live, _ := builder.claimDiscussion("wake-solo", "k")
	for _, st := range []struct{ state, code string }{
		{store.TurnStopped, store.CodeTurnStopped},
		{store.TurnReplaced, store.CodeTurnReplaced},
		{store.TurnTimedOut, store.CodeTurnTimedOut},
		{store.TurnEnded, store.CodeTurnEnded},
	} {
		if err := e.srv.Store().SetTurnState(context.Background(), "wake-solo", st.state); err != nil {
			t.Fatal(err)
		}
		builder.refused(api.ToolClaimDiscussion, discussionArgs("wake-solo", "k", 2), st.code)
		builder.refused(api.ToolClaimDiscussion, discussionArgs("wake-solo", "k2", 2), st.code)
	}
	// Its credential cannot post into the ended turn either.
	p, err := e.srv.Store().Authenticate(context.Background(), live.DiscussionCredential.Token)
	if err == nil {
		_, err = e.srv.Store().PostDiscussionReply(context.Background(), p, "late", "")
	}
	if store.RefusalCode(err) != store.CodeTurnEnded {
		t.Errorf("reply into an ended turn: %v", err)
	}
}

// TestClaimDiscussionRooms: only for a wake in the owner's private room.
func TestClaimDiscussionRooms(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	builder := e.connect(fxBuilderRunner)
	theo := e.connect(fxTheoRunner)
	scout := e.connect(fxScoutRunner)

	builder.refused(api.ToolClaimDiscussion, discussionArgs("mention-1", "k", 2), store.CodeNotYourRoom) // general room
	builder.refused(api.ToolClaimDiscussion, discussionArgs("theo-note", "k", 2), store.CodeNotYourRoom) // another owner's room
	builder.refused(api.ToolClaimDiscussion, discussionArgs("req-1", "k", 2), store.CodeNotWoken)        // no turn
	scout.refused(api.ToolClaimDiscussion, discussionArgs("wake-pair", "k", 2), store.CodeNotWoken)      // woke others
	missing := builder.refused(api.ToolClaimDiscussion, discussionArgs("no-such-message", "k", 2), store.CodeMessageNotFound)
	invisible := builder.refused(api.ToolClaimDiscussion, discussionArgs("ines-note", "k", 2), store.CodeMessageNotFound)
	if strings.ReplaceAll(missing.Message, "no-such-message", "X") != strings.ReplaceAll(invisible.Message, "ines-note", "X") {
		t.Errorf("missing and invisible messages are told apart: %q vs %q", missing.Message, invisible.Message)
	}
	theo.refused(api.ToolClaimDiscussion, discussionArgs("wake-solo", "k", 2), store.CodeNotYourRoom)
	out, raw := theo.claimDiscussion("theo-note", "k")
	e.wantSession(out, raw, "draft", true, 8)
}

// TestClaimDiscussionCredentialExpiry: ten minutes, then 401.
func TestClaimDiscussionCredentialExpiry(t *testing.T) {
	for _, proto := range []string{protoDraft, protoTS} {
		t.Run("protocol="+proto, func(t *testing.T) {
			e := newEnv(t, envOpts{launch: time.Hour}) // the launch timeout does not apply
			runner, err := e.dial(e.token(store.KindRunner, seed.BuilderAgent), proto)
			if err != nil {
				t.Fatal(err)
			}
			out, raw := runner.claimDiscussion(seed.MessageID, "ttl")
			e.wantSession(out, raw, "draft", true, 8)
			if _, err := e.srv.Store().Authenticate(context.Background(), out.DiscussionCredential.Token); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(10*time.Minute - time.Millisecond)
			if _, err := e.dial(out.DiscussionCredential.Token, proto); err != nil {
				t.Fatalf("credential refused before its 10 minutes: %v", err)
			}
			e.clock.Advance(time.Millisecond)
			e.want401(out.DiscussionCredential.Token)
		})
	}
}

// TestClaimDiscussionNoRepliesLeft: a turn whose reply limit is used up.
func TestClaimDiscussionNoRepliesLeft(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	builder := e.connect(fxBuilderRunner)
	critic := e.connect(fxCriticRunner)
	out, raw := builder.claimDiscussion("wake-tight", "k")
	e.wantSession(out, raw, "draft", true, 1)
	e.postReply(out.DiscussionCredential.Token, "The only reply.")
	critic.refused(api.ToolClaimDiscussion, discussionArgs("wake-tight", "k", 2), store.CodeNoRepliesLeft)
}
