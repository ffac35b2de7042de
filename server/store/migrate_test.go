package store

import (
	"path/filepath"
	"strings"
	"testing"
)

// latestMigration is the version of the newest embedded migration.
func latestMigration(t *testing.T) int {
	t.Helper()
	ms, err := loadMigrations()
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

// A database created by a build that knew only migration 1, holding
// claims and revoked credentials, upgrades on Open: the live-token
// indexes of migration 2 replace the old ones, its data stays usable, and
// revoking the earlier credentials of a replay uses the new index.
func TestMigrateFromVersion1(t *testing.T) {
	all, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 2 || all[0].version != 1 || all[1].version != 2 {
		t.Fatalf("want migrations 1 and 2, have %d", len(all))
	}
	path := filepath.Join(t.TempDir(), "v1.db")
	c := newClock()

	// Version 1, as an older build leaves it: a world, a claim replayed
	// three times (three revoked credentials, one live).
	old, err := open(ctx, path, Options{Now: c.Now}, all[:1])
	if err != nil {
		t.Fatal(err)
	}
	if v, err := old.SchemaVersion(ctx); err != nil || v != 1 {
		t.Fatalf("old schema version = %d, %v; want 1", v, err)
	}
	issued, err := old.SeedDefault(ctx)
	if err != nil {
		t.Fatal(err)
	}
	runnerTok := tokenOf(t, issued, KindRunner, SeedBuilderAgent)
	runner := auth(t, old, runnerTok)
	var first, last ClaimTaskResult
	for i := range 4 {
		res, err := old.ClaimTask(ctx, runner, SeedTaskID, "k1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = res
		}
		last = res
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	s := openT(t, path, c)
	if v, err := s.SchemaVersion(ctx); err != nil || v != latestMigration(t) {
		t.Fatalf("schema version after upgrade = %d, %v; want %d", v, err, latestMigration(t))
	}
	var idx []string
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tokens' AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		idx = append(idx, n)
	}
	rows.Close()
	if got, want := strings.Join(idx, ","), "tokens_attempt_live,tokens_discussion_live,tokens_runner_live"; got != want {
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
	replay, err := s.ClaimTask(ctx, auth(t, s, runnerTok), SeedTaskID, "k1", nil)
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

	// Revoking a replay's earlier credentials reaches only live tokens
	// through the partial indexes.
	for _, c := range []struct{ query, index string }{
		{stmtSQL[stRevokeAttemptTokens], "tokens_attempt_live"},
		{stmtSQL[stRevokeDiscussionTokens], "tokens_discussion_live"},
		{stmtSQL[stRevokeOtherAttemptTokens], "tokens_attempt_live"},
		{stmtSQL[stRevokeSupersededDiscussionTokens], "tokens_discussion_live"},
		{`UPDATE tokens SET revoked_at = ? WHERE runner = ? AND revoked_at IS NULL`, "tokens_runner_live"},
	} {
		plan := queryPlan(t, s, c.query, 0, "x", "y")
		if !strings.Contains(plan, "USING INDEX "+c.index) && !strings.Contains(plan, "USING COVERING INDEX "+c.index) {
			t.Errorf("plan of %q:\n%s\nwant it to use %s", c.query, plan, c.index)
		}
	}
}
