package suite

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestFreshTokensPerRun: every run of a script gets its world with fresh
// random tokens, whatever the script's fixture says, and its relative
// times resolved; the reports never show a token.
func TestFreshTokensPerRun(t *testing.T) {
	src := []byte(`{"version":1,"agents":[{"id":"a/b","token":"prk_fixed-token-0001"},{"id":"c/d"}],
		"runners":[{"id":"r1","agent":"a/b","token":"prk_fixed-token-0002"}],
		"attempts":[{"task":"t","runner":"r1","idempotency_key":"k","claimed_at":"now-3h","live_until":"now-2h45m"}],
		"turns":[{"message":"m","expires_at":"now+10m","agents":[]}],
		"messages":[{"id":"m","body":"now"}]}`)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	a, ta, err := Materialize(src, now)
	if err != nil {
		t.Fatal(err)
	}
	_, tb, err := Materialize(src, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(ta) != 3 || len(tb) != 3 {
		t.Fatalf("tokens %v %v", ta, tb)
	}
	for i := range ta {
		if ta[i].Token == tb[i].Token || strings.Contains(ta[i].Token, "fixed") || len(ta[i].Token) < 32 {
			t.Errorf("token %d is not fresh: %q, then %q", i, ta[i].Token, tb[i].Token)
		}
	}
	for _, want := range []string{`"claimed_at": "2026-05-01T09:00:00Z"`, `"live_until": "2026-05-01T09:15:00Z"`, `"expires_at": "2026-05-01T12:10:00Z"`, `"body": "now"`} {
		if !bytes.Contains(a, []byte(want)) {
			t.Errorf("materialized fixture lacks %s:\n%s", want, a)
		}
	}
	if _, _, err := Materialize([]byte(`{"version":1,"attempts":[{"claimed_at":"now-3x"}]}`), now); err == nil || !strings.Contains(err.Error(), "$.attempts[0].claimed_at") {
		t.Errorf("a bad relative time: %v", err)
	}
}
