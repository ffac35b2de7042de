package store

import (
	"errors"
	"testing"

	"github.com/prickle-dev/prickle/spec/seed"
)

// TestRotate: a rotation revokes the earlier tokens at once, though
// their principals were cached, and touches no one else's; a retired
// runner is not rotated back to life.
func TestRotate(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		agentTok := tokenOf(t, issued, KindAgent, seed.BuilderAgent)
		runnerTok := tokenOf(t, issued, KindRunner, seed.BuilderAgent)
		extra, err := s.IssueAgentToken(ctx, seed.BuilderAgent)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range []string{agentTok, extra.Token, runnerTok} {
			auth(t, s, tok) // cached now
		}
		r, err := s.RotateAgentToken(ctx, seed.BuilderAgent)
		if err != nil || r.Revoked != 2 || r.Issued.Kind != KindAgent {
			t.Fatalf("rotate agent: %+v, %v", r, err)
		}
		for _, tok := range []string{agentTok, extra.Token} {
			if _, err := s.Authenticate(ctx, tok); !errors.Is(err, ErrRevokedToken) {
				t.Errorf("earlier agent token after rotation: %v", err)
			}
		}
		auth(t, s, r.Issued.Token)
		auth(t, s, runnerTok)
		auth(t, s, tokenOf(t, issued, KindAgent, seed.ReviewerAgent))

		rr, err := s.RotateRunnerToken(ctx, seed.BuilderAgent, seed.RunnerID)
		if err != nil || rr.Revoked != 1 || rr.Issued.Runner != seed.RunnerID {
			t.Fatalf("rotate runner: %+v, %v", rr, err)
		}
		if _, err := s.Authenticate(ctx, runnerTok); !errors.Is(err, ErrRevokedToken) {
			t.Errorf("earlier runner token after rotation: %v", err)
		}
		if p := auth(t, s, rr.Issued.Token); p.Kind != KindRunner || p.RunnerID != seed.RunnerID {
			t.Errorf("new runner token: %+v", p)
		}
		if _, err := s.RotateRunnerToken(ctx, seed.ReviewerAgent, seed.RunnerID); !errors.Is(err, ErrNotPaired) {
			t.Errorf("rotate with the wrong agent: %v", err)
		}
		if err := s.RevokeRunner(ctx, seed.RunnerID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RotateRunnerToken(ctx, seed.BuilderAgent, seed.RunnerID); !errors.Is(err, ErrNoRunner) {
			t.Errorf("rotate a retired runner: %v", err)
		}
		if _, err := s.PairRunner(ctx, seed.BuilderAgent, seed.RunnerID); !errors.Is(err, ErrRunnerExists) {
			t.Errorf("pair an existing runner id: %v", err)
		}
		if _, err := s.RotateAgentToken(ctx, "maya/nobody"); !errors.Is(err, ErrNoAgent) {
			t.Errorf("rotate an unknown agent: %v", err)
		}
	})
}
