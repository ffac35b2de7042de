package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/prickle-dev/prickle/spec/seed"
)

// latestMigration is the version of the newest embedded migration.
func latestMigration(t *testing.T) int {
	t.Helper()
	ms, err := loadMigrations(sqliteMigrations)
	if err != nil || len(ms) == 0 {
		t.Fatalf("migrations: %v (%d)", err, len(ms))
	}
	return ms[len(ms)-1].version
}

// queryPlan returns SQLite's plan for query, one detail per line.
func queryPlan(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// seededAt opens a new database file at schema version v, as a build
// that knew only migrations up to v left it (statements that do not
// compile against it are left out), and seeds the standard world in it.
// The migration after v must exist: it is what the caller tests.
func seededAt(t *testing.T, v int) (old *Store, path string, c *clock, issued []IssuedToken) {
	t.Helper()
	all, err := loadMigrations(sqliteMigrations)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) <= v || all[v-1].version != v || all[v].version != v+1 {
		t.Fatalf("want migrations %d and %d, have %d", v, v+1, len(all))
	}
	path = filepath.Join(t.TempDir(), fmt.Sprintf("v%d.db", v))
	c = newClock()
	if old, err = open(ctx, path, Options{Now: c.Now}, all[:v], false); err != nil {
		t.Fatal(err)
	}
	if got, err := old.SchemaVersion(ctx); err != nil || got != v {
		t.Fatalf("old schema version = %d, %v; want %d", got, err, v)
	}
	if issued, err = old.SeedDefault(ctx); err != nil {
		t.Fatal(err)
	}
	return old, path, c, issued
}

// names runs query, which selects one text column, and returns its values.
func names(t *testing.T, s *Store, query string) string {
	t.Helper()
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ns []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		ns = append(ns, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(ns, ",")
}

// A database created by a build that knew only migration 1, holding
// claims and revoked credentials, upgrades on Open to the latest version
// (2: live-token indexes; 3: each claim points at its one live
// credential, and revocation goes by primary key; 4: triggers keep that
// pointer; 5: credentials indexed by expiry for the purge; 6: each claim
// holds its credential, and the tokens table none; 7: attempts keyed by
// task): its data stays usable.
func TestMigrateFromVersion1(t *testing.T) {
	// Version 1, as an older build leaves it: a world, and a claim replayed
	// three times (three revoked credentials, one live), written with the
	// rows that build wrote (the claim code of this build needs version 3).
	old, path, c, issued := seededAt(t, 1)
	runnerTok := tokenOf(t, issued, KindRunner, seed.BuilderAgent)
	now := c.Now()
	first := ClaimTaskResult{Attempt: Attempt{AttemptID: "att_v1", TaskID: seed.TaskID, ClaimedAt: now}}
	if _, err := old.db.ExecContext(ctx, `INSERT INTO attempts(id, task, runner, idempotency_key, claimed_at, live_until)
		VALUES ('att_v1', ?, ?, 'k1', ?, ?)`, seed.TaskID, seed.RunnerID, toDB(now), toDB(now.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	var creds []string
	for i := range 4 {
		tok, hash := newToken()
		var revoked any
		if i < 3 {
			revoked = toDB(now)
		}
		if _, err := old.db.ExecContext(ctx, `INSERT INTO tokens(hash, kind, agent, runner, attempt, project, task, allowed_tools,
			created_at, expires_at, revoked_at) VALUES (?, 'execution_credential', ?, ?, 'att_v1', ?, ?, '["read_room"]', ?, ?, ?)`,
			hash, seed.BuilderAgent, seed.RunnerID, seed.Project, seed.TaskID, toDB(now.Add(time.Duration(i)*time.Millisecond)),
			toDB(now.Add(time.Hour)), revoked); err != nil {
			t.Fatal(err)
		}
		creds = append(creds, tok)
	}
	first.ExecutionCredential.Token = creds[0]
	last := ClaimTaskResult{Attempt: first.Attempt, ExecutionCredential: Credential{Token: creds[3]}}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s := openT(t, path, c)
	if v, err := s.SchemaVersion(ctx); err != nil || v != latestMigration(t) {
		t.Fatalf("schema version after upgrade = %d, %v; want %d", v, err, latestMigration(t))
	}
	if got, want := names(t, s, `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tokens' AND sql IS NOT NULL ORDER BY name`),
		"tokens_runner_token"; got != want {
		t.Fatalf("tokens indexes = %s, want %s", got, want)
	}

	// The data written at version 1 still works: the last credential is
	// live, the earlier one revoked, and the key replays the same attempt.
	if _, err := s.Authenticate(ctx, last.ExecutionCredential.Token); err != nil {
		t.Fatalf("live credential after upgrade: %v", err)
	}
	if _, err := s.Authenticate(ctx, first.ExecutionCredential.Token); err == nil {
		t.Fatal("revoked credential works after upgrade")
	}
	replay, err := s.ClaimTask(ctx, auth(t, s, runnerTok), seed.TaskID, "k1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if replay.Attempt != first.Attempt || !replay.Replayed {
		t.Fatalf("replay after upgrade = %+v, want attempt %+v replayed", replay.Attempt, first.Attempt)
	}
	if _, err := s.Authenticate(ctx, last.ExecutionCredential.Token); err == nil {
		t.Fatal("replay after upgrade did not revoke the earlier credential")
	}
	if _, err := s.Authenticate(ctx, replay.ExecutionCredential.Token); err != nil {
		t.Fatalf("fresh credential: %v", err)
	}

	// Migration 3 pointed the attempt at its live credential.
	var pointer []byte
	if err := s.db.QueryRowContext(ctx, `SELECT credential FROM attempts WHERE id = ?`, first.Attempt.AttemptID).Scan(&pointer); err != nil {
		t.Fatal(err)
	}
	if string(pointer) != string(hashToken(replay.ExecutionCredential.Token)) {
		t.Fatal("the attempt does not point at its fresh credential")
	}

	// Authentication reaches a token by primary key and a credential by
	// its claim's unique index, never by a scan; the runner's own token is
	// revoked by tokens_runner_token.
	for _, c := range []struct {
		query string
		uses  []string
		args  int
	}{
		{stmtSQL[stAuthenticate], []string{"SEARCH t USING PRIMARY KEY", "USING INDEX attempts_credential",
			"USING INDEX discussion_claims_credential"}, 1},
		{`UPDATE tokens SET revoked_at = ? WHERE runner = ? AND kind = 'runner' AND revoked_at IS NULL`,
			[]string{"USING INDEX tokens_runner_token"}, 2},
	} {
		args := []any{[]byte("x"), "y"}[:c.args]
		plan := queryPlan(t, s, c.query, args...)
		for _, u := range c.uses {
			if !strings.Contains(plan, u) {
				t.Errorf("plan of %q:\n%s\nwant %q", c.query, plan, u)
			}
		}
		if strings.Contains(plan, "SCAN") {
			t.Errorf("plan of %q:\n%s\nwant no scan", c.query, plan)
		}
	}
}

// A database at version 5 (credentials as token rows, revoked when
// replaced) upgrades to 6: the credential each claim points at, when it
// is not revoked, is kept on the claim with its allowed tools and
// authenticates as before; revoked ones and every credential row of the
// tokens table are gone.
func TestMigrateCredentialsOntoClaims(t *testing.T) {
	old, path, c, issued := seededAt(t, 5)
	now := c.Now()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := old.db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO attempts(id, task, runner, idempotency_key, claimed_at, live_until) VALUES ('att_v5', ?, ?, 'k1', ?, ?)`,
		seed.TaskID, seed.RunnerID, toDB(now), toDB(now.Add(time.Hour)))
	exec(`INSERT INTO discussion_claims(id, message, runner, agent, idempotency_key, role, lead, claimed_at, live_until)
		VALUES ('dsc_v5', ?, ?, ?, 'd1', 'draft', 1, ?, ?)`, seed.MessageID, seed.RunnerID, seed.BuilderAgent, toDB(now), toDB(now.Add(time.Hour)))
	// As version 5 writes them: each insert revokes the claim's earlier
	// credential and points the claim at the new one (triggers of 0004).
	mint := func(claimCol, claimID string, tools string) string {
		tok, hash := newToken()
		kind := "execution_credential"
		if claimCol == "discussion" {
			kind = "discussion_credential"
		}
		exec(`INSERT INTO tokens(hash, kind, agent, runner, `+claimCol+`, project, allowed_tools, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, hash, kind, seed.BuilderAgent, seed.RunnerID, claimID, seed.Project, tools,
			toDB(now), toDB(now.Add(time.Hour)))
		return tok
	}
	replacedExec := mint("attempt", "att_v5", `["read_room"]`)
	liveExec := mint("attempt", "att_v5", `["read_room","checkpoint"]`)
	replacedDisc := mint("discussion", "dsc_v5", `["post_message"]`)
	liveDisc := mint("discussion", "dsc_v5", `["read_room","post_message"]`)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s := openT(t, path, c)
	if n := count(t, s, `SELECT count(*) FROM tokens WHERE kind NOT IN ('agent', 'runner')`); n != 0 {
		t.Fatalf("%d credential rows left in tokens", n)
	}
	for _, tok := range []string{replacedExec, replacedDisc} {
		if _, err := s.Authenticate(ctx, tok); !errors.Is(err, ErrUnknownToken) {
			t.Errorf("a credential revoked at version 5: %v, want unknown", err)
		}
	}
	ep := auth(t, s, liveExec)
	if ep.Kind != KindExecution || ep.Agent != seed.BuilderAgent || ep.RunnerID != seed.RunnerID || ep.Scope.AttemptID != "att_v5" ||
		ep.Scope.TaskID != seed.TaskID || ep.Scope.Project != seed.Project || !slices.Equal(ep.AllowedTools, []string{"read_room", "checkpoint"}) ||
		ep.ExpiresAt == nil || !ep.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Errorf("execution principal after the upgrade = %+v", ep)
	}
	dp := auth(t, s, liveDisc)
	if dp.Kind != KindDiscussion || dp.Scope.DiscussionID != "dsc_v5" || dp.Scope.MessageID != seed.MessageID ||
		dp.Scope.RoomID != seed.PrivateRoomID || dp.Scope.Project != seed.Project ||
		!slices.Equal(dp.AllowedTools, []string{"read_room", "post_message"}) {
		t.Errorf("discussion principal after the upgrade = %+v", dp)
	}
	replay, err := s.ClaimTask(ctx, auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent)), seed.TaskID, "k1", nil)
	if err != nil || !replay.Replayed || replay.Attempt.AttemptID != "att_v5" {
		t.Fatalf("replay after the upgrade: %+v, %v", replay, err)
	}
	if _, err := s.Authenticate(ctx, liveExec); !errors.Is(err, ErrUnknownToken) {
		t.Errorf("the credential the replay replaced: %v, want unknown", err)
	}
}

// A database at version 6 upgrades to 7, which rebuilds attempts with its
// key's columns as (task, runner, idempotency_key) so that the key's index
// serves the lookups by task and attempts_task goes: a new attempt writes
// one b-tree fewer. The attempts, their credentials, the key's
// uniqueness and the foreign keys to and from attempts stay as they were.
func TestMigrateAttemptsKeyedByTask(t *testing.T) {
	old, path, c, issued := seededAt(t, 6)
	runner := auth(t, old, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
	now := c.Now()
	if _, err := old.db.ExecContext(ctx, `INSERT INTO attempts(id, task, runner, idempotency_key, claimed_at, live_until, superseded_at)
		VALUES ('att_v6_old', ?, ?, 'k0', ?, ?, ?)`, seed.TaskID, seed.RunnerID, toDB(now), toDB(now), toDB(now)); err != nil {
		t.Fatal(err)
	}
	claimed, err := old.ClaimTask(ctx, runner, seed.TaskID, "k1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s := openT(t, path, c)
	if v, err := s.SchemaVersion(ctx); err != nil || v != latestMigration(t) {
		t.Fatalf("schema version after upgrade = %d, %v; want %d", v, err, latestMigration(t))
	}
	runner = auth(t, s, tokenOf(t, issued, KindRunner, seed.BuilderAgent))
	if got, want := names(t, s, `SELECT name FROM sqlite_master WHERE name LIKE '%attempt%' ORDER BY name`),
		"attempts,attempts_credential,sqlite_autoindex_attempts_1,sqlite_autoindex_attempts_2"; got != want {
		t.Errorf("attempts' table and indexes = %s, want %s", got, want)
	}

	// The claim's lookups go through the key's index, by task.
	for _, st := range []stmtID{stTaskForClaim, stSupersedeOtherAttempts, stFindAttempt} {
		args := make([]any, strings.Count(stmtSQL[st], "?"))
		for i := range args {
			args[i] = "x"
		}
		plan := queryPlan(t, s, stmtSQL[st], args...)
		if !strings.Contains(plan, "USING INDEX sqlite_autoindex_attempts_2 (task=?") || strings.Contains(plan, "SCAN") {
			t.Errorf("plan of %q:\n%s\nwant attempts searched by the key's index, by task, and no scan", stmtSQL[st], plan)
		}
	}

	// The data stays: the live credential works, its key replays the same
	// attempt, and the superseded attempt's key is still refused.
	if p := auth(t, s, claimed.ExecutionCredential.Token); p.Kind != KindExecution || p.Scope.AttemptID != claimed.Attempt.AttemptID {
		t.Errorf("the credential claimed at version 6 = %+v", p)
	}
	replay, err := s.ClaimTask(ctx, runner, seed.TaskID, "k1", nil)
	if err != nil || !replay.Replayed || replay.Attempt != claimed.Attempt {
		t.Fatalf("replay after the upgrade: %+v, %v; want attempt %+v", replay, err, claimed.Attempt)
	}
	_, err = s.ClaimTask(ctx, runner, seed.TaskID, "k0", nil)
	wantCode(t, err, CodeAttemptSuperseded)

	// The key is unique, and the foreign keys hold both ways.
	_, err = s.db.ExecContext(ctx, `INSERT INTO attempts(id, task, runner, idempotency_key, claimed_at, live_until)
		VALUES ('att_dup', ?, ?, 'k1', 0, 0)`, seed.TaskID, seed.RunnerID)
	if !isUniqueViolation(err) {
		t.Errorf("a second attempt with a used key: %v, want a unique violation", err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO attempts(id, task, runner, idempotency_key, claimed_at, live_until)
		VALUES ('att_no_task', 'no-such-task', ?, 'k9', 0, 0)`, seed.RunnerID)
	wantForeignKey(t, "an attempt of no task", err)
	_, err = s.db.ExecContext(ctx, `INSERT INTO tokens(hash, kind, agent, runner, attempt, created_at)
		VALUES (zeroblob(32), 'execution_credential', ?, ?, 'att_none', 0)`, seed.BuilderAgent, seed.RunnerID)
	wantForeignKey(t, "a token of no attempt", err)
	if n := count(t, s, `SELECT count(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Errorf("%d foreign key violations after the upgrade", n)
	}
}

// wantForeignKey fails t unless err is SQLite's foreign key violation.
func wantForeignKey(t *testing.T, what string, err error) {
	t.Helper()
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code() != sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY {
		t.Errorf("%s: %v, want a foreign key violation", what, err)
	}
}
