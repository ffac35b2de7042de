package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/spec/seed"
)

var ctx = context.Background()

func TestOpenMigratesOnceAndReopenKeepsData(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		dsn := db.sharedDSN(t)
		c := newClock()
		s, err := Open(ctx, dsn, Options{Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		ms := db.migrations(t)
		latest := ms[len(ms)-1].version
		v, err := s.SchemaVersion(ctx)
		if err != nil || v != latest {
			t.Fatalf("schema version = %d, %v; want %d", v, err, latest)
		}
		if db.pg == nil {
			var mode string
			if err := s.queryRowSQL(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
				t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
			}
			var fk int
			if err := s.queryRowSQL(`PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
				t.Fatalf("foreign_keys = %d, %v; want 1", fk, err)
			}
		}
		issued, err := s.SeedDefault(ctx)
		if err != nil || len(issued) == 0 {
			t.Fatalf("seed: %v (%d tokens)", err, len(issued))
		}
		runner := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		first, err := s.ClaimTask(ctx, runner, seed.TaskID, "k1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		s2 := openT(t, dsn, c)
		if n := count(t, s2, `SELECT count(*) FROM schema_migrations`); n != len(ms) {
			t.Fatalf("schema_migrations rows = %d; want %d", n, len(ms))
		}
		again, err := s2.SeedDefault(ctx)
		if err != nil || again != nil {
			t.Fatalf("second seed = %v, %v; want nil, nil", again, err)
		}
		runner = auth(t, s2, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		replay, err := s2.ClaimTask(ctx, runner, seed.TaskID, "k1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if replay.Attempt != first.Attempt || !replay.Replayed {
			t.Fatalf("after reopen replay = %+v, want attempt %+v replayed", replay.Attempt, first.Attempt)
		}
	})
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		dsn := db.sharedDSN(t)
		s := openT(t, dsn, newClock())
		if _, err := s.execSQL(`INSERT INTO schema_migrations VALUES (999, 'future', 0)`); err != nil {
			t.Fatal(err)
		}
		s.Close()
		_, err := Open(ctx, dsn, Options{})
		if err == nil || !strings.Contains(err.Error(), "database schema version 999 is newer than this build") {
			t.Fatalf("open newer schema: %v, want refusal", err)
		}
	})
}

// Only SQLite has a private in-memory database, one connection that every
// caller shares.
func TestMemoryDatabaseIsShared(t *testing.T) {
	s, _, issued := testDB{name: "sqlite"}.seeded(t)
	p := auth(t, s, tokenOf(t, issued, KindAgent, seed.BuilderAgent))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			res, err := s.DiscoverTeamAgents(ctx, p, seed.Project)
			if err == nil && len(res.Agents) != 2 {
				err = errors.New("wrong agents")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestSeedDefault(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		kinds := map[TokenKind]int{}
		for _, it := range issued {
			kinds[it.Kind]++
			if !strings.HasPrefix(it.Token, TokenPrefix) || len(it.Token) != len(TokenPrefix)+43 {
				t.Fatalf("token %q: want prk_ + 43 base64url chars", it.Kind)
			}
		}
		if kinds[KindAgent] != 3 || kinds[KindRunner] != 1 {
			t.Fatalf("issued kinds = %v", kinds)
		}
		if again, err := s.SeedDefault(ctx); err != nil || again != nil {
			t.Fatalf("second seed = %v, %v", again, err)
		}
		b, _ := json.Marshal(issued[0])
		if !bytes.Contains(b, []byte(`"kind":"agent"`)) || !bytes.Contains(b, []byte(`"agent":"`)) || !bytes.Contains(b, []byte(`"token":"prk_`)) {
			t.Fatalf("issued JSON = %s", b)
		}
	})
}

func TestAuthenticate(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		p := auth(t, s, tokenOf(t, issued, KindAgent, seed.BuilderAgent))
		if p.Kind != KindAgent || p.Agent != seed.BuilderAgent || p.Owner != "maya" || p.RunnerID != "" || p.ExpiresAt != nil {
			t.Fatalf("agent principal = %+v", p)
		}
		r := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		if r.Kind != KindRunner || r.Agent != seed.BuilderAgent || r.RunnerID != seed.RunnerID {
			t.Fatalf("runner principal = %+v", r)
		}
		for _, bad := range []string{"", "prk_nope", tokenOf(t, issued, KindAgent, seed.BuilderAgent) + "x"} {
			if _, err := s.Authenticate(ctx, bad); !errors.Is(err, ErrUnknownToken) {
				t.Fatalf("authenticate %q: %v, want ErrUnknownToken", bad, err)
			}
		}
		theo := tokenOf(t, issued, KindAgent, seed.ReviewerAgent)
		if err := s.RevokeToken(ctx, theo); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, theo); !errors.Is(err, ErrRevokedToken) {
			t.Fatalf("revoked: %v", err)
		}
		// Issue and pair.
		it, err := s.IssueAgentToken(ctx, seed.ReviewerAgent)
		if err != nil || auth(t, s, it.Token).Agent != seed.ReviewerAgent {
			t.Fatalf("issue agent token: %v", err)
		}
		rt, err := s.PairRunner(ctx, seed.ReviewerAgent, "theo-box")
		if err != nil {
			t.Fatal(err)
		}
		if rp := auth(t, s, rt.Token); rp.Kind != KindRunner || rp.RunnerID != "theo-box" || rp.Agent != seed.ReviewerAgent {
			t.Fatalf("paired runner principal = %+v", rp)
		}
		if err := s.RevokeRunner(ctx, "theo-box"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, rt.Token); !errors.Is(err, ErrRevokedToken) {
			t.Fatalf("revoked runner: %v", err)
		}
	})
}

func TestTokenPlaintextNeverStored(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		dir := t.TempDir()
		c := newClock()
		s := openT(t, filepath.Join(dir, "p.db"), c)
		issued, err := s.SeedDefault(ctx)
		if err != nil {
			t.Fatal(err)
		}
		runner := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		ct, cd := claimBoth(t, s, runner)
		plain := []string{ct.ExecutionCredential.Token, cd.DiscussionCredential.Token}
		for _, it := range issued {
			plain = append(plain, it.Token)
		}
		var all []byte
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		for _, p := range plain {
			if bytes.Contains(all, []byte(p)) {
				t.Fatalf("plaintext token found in database files")
			}
			// The random part alone must not be there either.
			if bytes.Contains(all, []byte(strings.TrimPrefix(p, TokenPrefix))) {
				t.Fatalf("token body found in database files")
			}
		}
		// The scan can see stored bytes: the hash is there.
		if !bytes.Contains(all, hashToken(plain[0])) {
			t.Fatalf("hash of the credential not found: the scan does not see the data")
		}
	})
}

func TestRefusalShape(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		r := refuse(CodeNotRouted, "task %q is not routed to you", "x")
		if r.Error() != `not_routed: task "x" is not routed to you` {
			t.Fatalf("Error() = %q", r.Error())
		}
		wrapped := errors.Join(errors.New("ctx"), r)
		if !errors.Is(wrapped, &Refusal{Code: CodeNotRouted}) || errors.Is(wrapped, &Refusal{Code: CodeTaskNotFound}) {
			t.Fatal("errors.Is by code broken")
		}
		if RefusalCode(wrapped) != CodeNotRouted || RefusalCode(errors.New("x")) != "" {
			t.Fatal("RefusalCode broken")
		}
	})
}

func TestCredentialLogValueRedacts(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		c := Credential{Token: "prk_secret", ExpiresAt: t0, AllowedTools: testDiscussionTools}
		if strings.Contains(c.LogValue().String(), "prk_secret") {
			t.Fatal("credential log value leaks token")
		}
		it := IssuedToken{Kind: KindAgent, Agent: "a/b", Token: "prk_secret"}
		if strings.Contains(it.LogValue().String(), "prk_secret") {
			t.Fatal("issued token log value leaks token")
		}
	})
}

func TestDiscoverTeamAgents(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		p := auth(t, s, tokenOf(t, issued, KindAgent, seed.BuilderAgent))
		res, err := s.DiscoverTeamAgents(ctx, p, seed.Project)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.People) != 2 || res.People[0].Handle != "maya" || res.People[1].Handle != "theo" {
			t.Fatalf("people = %+v", res.People)
		}
		if res.People[1].AvatarURL != nil || !res.People[1].Away || res.People[1].Color != 5 {
			t.Fatalf("theo = %+v", res.People[1])
		}
		if len(res.Agents) != 2 || res.Agents[0].AgentID != seed.BuilderAgent || res.Agents[1].AgentID != seed.ReviewerAgent {
			t.Fatalf("agents = %+v", res.Agents)
		}
		b := res.Agents[0]
		seen := time.Date(2026, 1, 15, 9, 30, 0, 0, time.UTC) // the seed world's
		if b.Owner != "maya" || b.Name != "builder" || b.AvatarURL == nil || b.LastSeenAt == nil || !b.LastSeenAt.Equal(seen) ||
			len(b.Capabilities) != 3 || b.TrustLevel != "owner_verified" || b.Availability != "online" {
			t.Fatalf("builder = %+v", b)
		}
		js, _ := json.Marshal(res.Agents[1])
		for _, want := range []string{`"avatar_url":null`, `"last_seen_at":null`, `"agent_id":"theo/reviewer"`} {
			if !bytes.Contains(js, []byte(want)) {
				t.Fatalf("reviewer JSON %s lacks %s", js, want)
			}
		}

		// A project the caller cannot see and one that does not exist: same refusal.
		_, errHidden := s.DiscoverTeamAgents(ctx, p, "billing-api")
		_, errMissing := s.DiscoverTeamAgents(ctx, p, "no-such-project")
		wantCode(t, errHidden, CodeProjectNotVisible)
		wantCode(t, errMissing, CodeProjectNotVisible)
		if errHidden.Error() != errMissing.Error() {
			t.Fatalf("hidden %q vs missing %q differ", errHidden, errMissing)
		}

		// Empty capabilities marshal as [].
		rin := auth(t, s, tokenOf(t, issued, KindAgent, "rin/analyst"))
		rres, err := s.DiscoverTeamAgents(ctx, rin, "billing-api")
		if err != nil {
			t.Fatal(err)
		}
		rjs, _ := json.Marshal(rres)
		if !bytes.Contains(rjs, []byte(`"capabilities":[]`)) {
			t.Fatalf("rin JSON %s: want capabilities []", rjs)
		}
		if _, err := s.DiscoverTeamAgents(ctx, rin, seed.Project); RefusalCode(err) != CodeProjectNotVisible {
			t.Fatalf("rin sees website-v2: %v", err)
		}

		// Runners act for their agent.
		runner := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		if _, err := s.DiscoverTeamAgents(ctx, runner, seed.Project); err != nil {
			t.Fatalf("runner discover: %v", err)
		}
		// Execution credentials: allowed, scoped to the task's project.
		ct, err := s.ClaimTask(ctx, runner, seed.TaskID, "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		exec := auth(t, s, ct.ExecutionCredential.Token)
		if _, err := s.DiscoverTeamAgents(ctx, exec, seed.Project); err != nil {
			t.Fatalf("exec discover: %v", err)
		}
		// Which credentials may call the tool at all is the server's policy
		// (server.allowed), not the store's.
	})
}

func TestDiscoverEmptyListsAreNotNull(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		res := api.DiscoverTeamAgentsOutput{}
		b, _ := json.Marshal(res)
		if string(b) != `{"people":[],"agents":[]}` {
			t.Fatalf("got %s", b)
		}
		// And an agent the world gave no capabilities, no avatar and no
		// last_seen_at (ines/helper of the loaded world) has none, and its
		// capabilities marshal as [].
		s, _ := db.loaded(t)
		ines, err := s.IssueAgentToken(ctx, "ines/helper")
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.DiscoverTeamAgents(ctx, auth(t, s, ines.Token), "mobile-app")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Agents[0].Capabilities) != 0 || r.Agents[0].AvatarURL != nil || r.Agents[0].LastSeenAt != nil {
			t.Fatalf("ines/helper = %+v", r.Agents[0])
		}
		if b, _ := json.Marshal(r.Agents[0]); !bytes.Contains(b, []byte(`"capabilities":[]`)) {
			t.Fatalf("ines/helper JSON %s: want capabilities []", b)
		}
	})
}

func TestClaimTaskExampleAndReplay(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, c, issued := db.seeded(t)
		runner := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		first, err := s.ClaimTask(ctx, runner, seed.TaskID, "runner-claim-example-1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if first.Replayed || first.Attempt.TaskID != seed.TaskID || !first.Attempt.ClaimedAt.Equal(t0) || checkID("attempt id", first.Attempt.AttemptID) != nil {
			t.Fatalf("first = %+v", first)
		}
		cred := first.ExecutionCredential
		if !cred.ExpiresAt.Equal(t0.Add(DefaultLaunchTimeout)) {
			t.Fatalf("expires %v, want now+15m", cred.ExpiresAt)
		}
		if !slices.Equal(cred.AllowedTools, testExecutionTools) || slices.Contains(cred.AllowedTools, "claim_task") || slices.Contains(cred.AllowedTools, "claim_discussion") {
			t.Fatalf("allowed tools = %v", cred.AllowedTools)
		}
		ep := auth(t, s, cred.Token)
		if ep.Kind != KindExecution || ep.Agent != seed.BuilderAgent || ep.Scope.AttemptID != first.Attempt.AttemptID ||
			ep.Scope.TaskID != seed.TaskID || ep.Scope.Project != seed.Project || !slices.Equal(ep.AllowedTools, testExecutionTools) {
			t.Fatalf("execution principal = %+v", ep)
		}
		js, _ := json.Marshal(first)
		if !bytes.Contains(js, []byte(`"claimed_at":"2026-05-01T12:00:00Z"`)) || bytes.Contains(js, []byte("Replayed")) {
			t.Fatalf("JSON = %s", js)
		}

		c.Advance(time.Minute)
		second, err := s.ClaimTask(ctx, runner, seed.TaskID, "runner-claim-example-1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !second.Replayed || second.Attempt != first.Attempt {
			t.Fatalf("replay attempt %+v, want %+v", second.Attempt, first.Attempt)
		}
		if second.ExecutionCredential.Token == cred.Token {
			t.Fatal("replay returned the same token")
		}
		if !second.ExecutionCredential.ExpiresAt.Equal(t0.Add(time.Minute + DefaultLaunchTimeout)) {
			t.Fatalf("replay expiry = %v", second.ExecutionCredential.ExpiresAt)
		}
		if _, err := s.Authenticate(ctx, cred.Token); !errors.Is(err, ErrUnknownToken) {
			t.Fatalf("old credential after replay: %v, want unknown (replaced)", err)
		}
		auth(t, s, second.ExecutionCredential.Token)

		// Expiry via the injected clock.
		c.Advance(DefaultLaunchTimeout)
		if _, err := s.Authenticate(ctx, second.ExecutionCredential.Token); !errors.Is(err, ErrExpiredToken) {
			t.Fatalf("after launch timeout: %v, want expired", err)
		}
		if n := count(t, s, `SELECT count(*) FROM attempts`); n != 1 {
			t.Fatalf("attempts = %d", n)
		}
	})
}

func TestClaimTaskRefusals(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _ := db.loaded(t)
		runner := auth(t, s, fxBuilderRunner)
		agent := auth(t, s, fxBuilderAgent)

		_, err := s.ClaimTask(ctx, agent, "example-task-id", "k", nil)
		wantCode(t, err, CodeNotRunner)
		ok, err := s.ClaimTask(ctx, runner, "example-task-id", "ok", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.ClaimTask(ctx, auth(t, s, ok.ExecutionCredential.Token), "example-task-id", "k", nil)
		wantCode(t, err, CodeNotRunner)

		_, err = s.ClaimTask(ctx, runner, "no-such-task", "k", nil)
		wantCode(t, err, CodeTaskNotFound)
		_, err = s.ClaimTask(ctx, runner, "task-mobile", "k", nil) // exists, invisible project
		wantCode(t, err, CodeTaskNotFound)
		_, err = s.ClaimTask(ctx, runner, "task-theo", "k", nil)
		wantCode(t, err, CodeNotRouted)

		// Cause binding.
		_, err = s.ClaimTask(ctx, runner, "example-task-id", "ok", ptrTo("mention-1"))
		wantCode(t, err, CodeMentionNotCause)
		_, err = s.ClaimTask(ctx, runner, "example-task-id", "ok", ptrTo("wake-solo"))
		wantCode(t, err, CodeCauseMismatch)
		_, err = s.ClaimTask(ctx, runner, "example-task-id", "ok", ptrTo("no-such-message"))
		wantCode(t, err, CodeCauseMismatch)
		r, err := s.ClaimTask(ctx, runner, "example-task-id", "ok", ptrTo("req-1"))
		if err != nil || r.Attempt != ok.Attempt {
			t.Fatalf("wake repeating the request: %+v, %v", r, err)
		}
		_, err = s.ClaimTask(ctx, runner, "task-unbound", "earlier-key", ptrTo("req-1"))
		wantCode(t, err, CodeCauseMismatch)
		_, err = s.ClaimTask(ctx, runner, "task-unbound", "earlier-key", ptrTo("mention-1"))
		wantCode(t, err, CodeMentionNotCause)
		// A mention is never a run's cause, wherever it is: one in a project
		// the runner cannot see was cause_mismatch, as if it were not looked
		// up.
		if _, err := s.execSQL(`INSERT INTO messages(id, room, kind, author_person, body, provenance, provenance_status, created_at)
		VALUES ('mention-mobile', 'ines-private', 'mention', 'ines', '@maya/builder hi', 'owner_instruction', 'claimed', 0)`); err != nil {
			t.Fatal(err)
		}
		_, err = s.ClaimTask(ctx, runner, "example-task-id", "ok", ptrTo("mention-mobile"))
		wantCode(t, err, CodeMentionNotCause)
		_, err = s.ClaimTask(ctx, runner, "task-unbound", "earlier-key", ptrTo("mention-mobile"))
		wantCode(t, err, CodeMentionNotCause)

		// Nothing was written by the refusals.
		if n := count(t, s, `SELECT count(*) FROM attempts`); n != 2 {
			t.Fatalf("attempts = %d, want 2 (the world's + ok)", n)
		}
	})
}

// TestClaimKeyLength: the length of an idempotency key is the input
// schema's rule (maxLength 100, in characters), checked before the store
// is called; the store does not count bytes of its own, so a key the
// schema accepts is never refused with another code.
func TestClaimKeyLength(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		runner := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		key := strings.Repeat("é", 60) // 120 bytes
		if _, err := s.ClaimTask(ctx, runner, seed.TaskID, key, nil); err != nil {
			t.Fatalf("claim_task with a 60-character key: %v", err)
		}
		if _, err := s.ClaimDiscussion(ctx, runner, seed.MessageID, key, ptrTo(2)); err != nil {
			t.Fatalf("claim_discussion with a 60-character key: %v", err)
		}
	})
}

func TestClaimTaskDifferentKeyWhileLive(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, c := db.loaded(t)
		runner := auth(t, s, fxBuilderRunner)
		// The world's earlier attempt (claimed 11:55) is live until 12:10.
		_, err := s.ClaimTask(ctx, runner, "task-unbound", "new-key", nil)
		wantCode(t, err, CodeAttemptInProgress)
		replay, err := s.ClaimTask(ctx, runner, "task-unbound", "earlier-key", nil)
		if err != nil || replay.Attempt.AttemptID != "att-earlier" || !replay.Replayed {
			t.Fatalf("the world's attempt replay: %+v, %v", replay, err)
		}
		// The replay extended liveness to 12:15.
		c.Advance(14 * time.Minute)
		_, err = s.ClaimTask(ctx, runner, "task-unbound", "new-key", nil)
		wantCode(t, err, CodeAttemptInProgress)
		c.Advance(time.Minute)
		fresh, err := s.ClaimTask(ctx, runner, "task-unbound", "new-key", nil)
		if err != nil || fresh.Replayed || fresh.Attempt.AttemptID == "att-earlier" {
			t.Fatalf("new attempt after expiry: %+v, %v", fresh, err)
		}
		_, err = s.ClaimTask(ctx, runner, "task-unbound", "earlier-key", nil)
		wantCode(t, err, CodeAttemptSuperseded)
	})
}

func TestAttemptUniquenessIsADatabaseConstraint(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _ := db.loaded(t)
		_, err := s.execSQL(`INSERT INTO attempts(id, task, runner, idempotency_key, claimed_at, live_until)
		VALUES ('dup', 'task-unbound', 'maya-laptop', 'earlier-key', 0, 0)`)
		if !isUniqueViolation(err) {
			t.Fatalf("duplicate attempt insert: %v, want unique violation", err)
		}
		_, err = s.execSQL(`INSERT INTO discussion_claims(id, message, runner, agent, idempotency_key, role, lead, claimed_at, live_until)
		VALUES ('dup', 'wake-replied', 'maya-laptop', 'maya/builder', 'draft-key', 'draft', ?, 0, 0)`, true)
		if !isUniqueViolation(err) {
			t.Fatalf("duplicate discussion claim insert: %v, want unique violation", err)
		}
	})
}

// Retiring a runner ends its token and its claims' credentials (through
// the runner's row).
func TestRevokeRunnerEndsItsCredentials(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		runnerTok := tokenOf(t, issued, KindRunner, seed.BuilderAgent)
		runner := auth(t, s, runnerTok)
		ct, cd := claimBoth(t, s, runner)
		if err := s.RevokeRunner(ctx, seed.RunnerID); err != nil {
			t.Fatal(err)
		}
		for _, tok := range []string{runnerTok, ct.ExecutionCredential.Token, cd.DiscussionCredential.Token} {
			if _, err := s.Authenticate(ctx, tok); !errors.Is(err, ErrRevokedToken) {
				t.Fatalf("after RevokeRunner: %v, want ErrRevokedToken", err)
			}
		}
		var revoked sql.NullInt64
		if err := s.queryRowSQL(`SELECT revoked_at FROM tokens WHERE hash = ?`, hashToken(runnerTok)).Scan(&revoked); err != nil || !revoked.Valid {
			t.Fatalf("runner token row revoked_at = %v, %v; want set", revoked, err)
		}
	})
}

// However a claim is replayed, it holds exactly one credential, the
// newest, on its own row (migration 0006): its hash, its allowed tools,
// and live_until its expiry. No token row is written for a credential,
// and only the newest authenticates.
func TestOneLiveCredentialPerClaim(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, c, issued := db.seeded(t)
		runner := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		var cts []ClaimTaskResult
		var cds []ClaimDiscussionResult
		const replays = 50
		for range replays {
			c.Advance(time.Second)
			ct, err := s.ClaimTask(ctx, runner, seed.TaskID, "k", nil)
			if err != nil {
				t.Fatal(err)
			}
			cd, err := s.ClaimDiscussion(ctx, runner, seed.MessageID, "d", ptrTo(2))
			if err != nil {
				t.Fatal(err)
			}
			cts, cds = append(cts, ct), append(cds, cd)
		}
		if n := count(t, s, `SELECT count(*) FROM tokens`); n != len(issued) {
			t.Fatalf("%d token rows after %d replays of each claim, want the %d agent and runner tokens", n, replays, len(issued))
		}
		for _, q := range []struct {
			table string
			creds []Credential
			tools []string
		}{
			{"attempts", []Credential{cts[0].ExecutionCredential, cts[replays-1].ExecutionCredential}, testExecutionTools},
			{"discussion_claims", []Credential{cds[0].DiscussionCredential, cds[replays-1].DiscussionCredential}, testDiscussionTools},
		} {
			var held int
			var pointer []byte
			var liveUntil int64
			var tools string
			held = count(t, s, `SELECT count(*) FROM `+q.table+` WHERE credential IS NOT NULL`)
			err := s.queryRowSQL(`SELECT credential, live_until, allowed_tools FROM `+q.table+
				` WHERE credential IS NOT NULL`).Scan(&pointer, &liveUntil, &tools)
			if err != nil {
				t.Fatal(err)
			}
			newest := q.creds[1]
			if held != 1 || !bytes.Equal(pointer, hashToken(newest.Token)) || !fromDB(liveUntil).Equal(newest.ExpiresAt) ||
				tools != toolsJSON(q.tools) {
				t.Fatalf("%s: %d credentials held, the newest %v, live until %v (credential expires %v), tools %s",
					q.table, held, bytes.Equal(pointer, hashToken(newest.Token)), fromDB(liveUntil), newest.ExpiresAt, tools)
			}
			if _, err := s.Authenticate(ctx, q.creds[0].Token); !errors.Is(err, ErrUnknownToken) {
				t.Errorf("%s: the first credential: %v, want unknown (replaced)", q.table, err)
			}
			auth(t, s, newest.Token)
		}
	})
}

// Revoking a credential drops it from its claim; a replay mints a new
// one.
func TestRevokeCredential(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		runner := auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
		ct, cd := claimBoth(t, s, runner)
		for _, tok := range []string{ct.ExecutionCredential.Token, cd.DiscussionCredential.Token} {
			if err := s.RevokeToken(ctx, tok); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Authenticate(ctx, tok); !errors.Is(err, ErrUnknownToken) {
				t.Fatalf("revoked credential: %v, want unknown", err)
			}
			if err := s.RevokeToken(ctx, tok); !errors.Is(err, ErrUnknownToken) {
				t.Fatalf("revoking it again: %v, want unknown", err)
			}
		}
		again, err := s.ClaimTask(ctx, runner, seed.TaskID, "k", nil)
		if err != nil || !again.Replayed {
			t.Fatalf("replay after revoking: %+v, %v", again, err)
		}
		auth(t, s, again.ExecutionCredential.Token)
	})
}

// TestDatabaseFilesPrivate: the database and its -wal and -shm files,
// which hold the hash of every token, are created readable by their owner
// alone (SQLite only: PostgreSQL's files are its server's).
func TestDatabaseFilesPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prickle.db")
	s := openT(t, path, newClock())
	if _, err := s.SeedDefault(ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %v, want -rw-------", filepath.Base(f), m)
		}
	}
}

// claimBoth makes runner's claims on the seed world's task (key "k") and
// message (key "d").
func claimBoth(t *testing.T, s *Store, runner *Principal) (ClaimTaskResult, ClaimDiscussionResult) {
	t.Helper()
	ct, err := s.ClaimTask(ctx, runner, seed.TaskID, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	cd, err := s.ClaimDiscussion(ctx, runner, seed.MessageID, "d", ptrTo(2))
	if err != nil {
		t.Fatal(err)
	}
	return ct, cd
}

// TestDiscoverRefusesUndocumentedValues: a value the database holds that
// the output schema does not document (written behind the store's back)
// is an error, never an answer.
func TestDiscoverRefusesUndocumentedValues(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s, _, issued := db.seeded(t)
		p := auth(t, s, tokenOf(t, issued, KindAgent, seed.BuilderAgent))
		// The schema's CHECKs keep availability and trust level to the
		// documented values; a capability is JSON, which nothing checks.
		if _, err := s.execSQL(`UPDATE agents SET capabilities = ? WHERE id = ?`, `[{"kind": "magic", "name": "x"}]`, seed.ReviewerAgent); err != nil {
			t.Fatal(err)
		}
		s.worldChanged()
		_, err := s.DiscoverTeamAgents(ctx, p, seed.Project)
		if err == nil || RefusalCode(err) != "" || !strings.Contains(err.Error(), `capability kind "magic"`) {
			t.Fatalf("discover with an undocumented capability kind: %v, want an error naming it", err)
		}
	})
}
