package conformance

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/seed"
	"github.com/prickle-dev/prickle/spec/world"
)

// foreignServer is another process's server: healthy, but it knows none of
// this run's tokens.
func foreignServer(t *testing.T, l net.Listener) {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.Write([]byte("ok"))
			return
		}
		http.Error(w, "invalid token: unknown token", http.StatusUnauthorized)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

func writeSeedFixture(t *testing.T) (string, []world.Token) {
	t.Helper()
	fx, toks, err := materializeFixture(seed.JSON(), fixtureNow())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), FixtureFile)
	if err := os.WriteFile(file, fx, 0o600); err != nil {
		t.Fatal(err)
	}
	return file, toks
}

// TestPortHeldByAnotherProcess: a port another process holds is a clear
// error, never a server to test, whether it is held before the server
// starts or taken while it starts.
func TestPortHeldByAnotherProcess(t *testing.T) {
	file, _ := writeSeedFixture(t)
	t.Run("before", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		foreignServer(t, l)
		port := l.Addr().(*net.TCPAddr).Port
		c := &CmdTarget{Command: "exec sleep 30", StartTimeout: 5 * time.Second,
			pickPort: func() (int, func(), error) { return port, func() {}, nil }}
		_, err = c.Start(context.Background(), &Script{Name: "x"}, file, t.TempDir())
		if !errors.Is(err, ErrForeignServer) || !strings.Contains(err.Error(), "held by another process") {
			t.Fatalf("got %v, want a foreign-server error", err)
		}
	})
	t.Run("while starting", func(t *testing.T) {
		// The server under test never listens; another process takes the
		// port just after the suite checked it was free.
		c := &CmdTarget{Command: "exec sleep 30", StartTimeout: 5 * time.Second, StopTimeout: time.Second,
			pickPort: func() (int, func(), error) {
				port, release, err := freePort()
				if err != nil {
					return 0, nil, err
				}
				go func() {
					time.Sleep(300 * time.Millisecond)
					l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
					if err == nil {
						foreignServer(t, l)
					}
				}()
				return port, release, nil
			}}
		_, err := c.Start(context.Background(), &Script{Name: "x"}, file, t.TempDir())
		if !errors.Is(err, ErrForeignServer) || !strings.Contains(err.Error(), "refuses this run's tokens") {
			t.Fatalf("got %v, want a foreign-server error", err)
		}
	})
}

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
	a, ta, err := materializeFixture(src, now)
	if err != nil {
		t.Fatal(err)
	}
	_, tb, err := materializeFixture(src, now)
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
	if _, _, err := materializeFixture([]byte(`{"version":1,"attempts":[{"claimed_at":"now-3x"}]}`), now); err == nil || !strings.Contains(err.Error(), "$.attempts[0].claimed_at") {
		t.Errorf("a bad relative time: %v", err)
	}
}

// TestFailuresCiteTheScript: a failure names the script where it lives
// and the line, never the temporary copy the run made.
func TestFailuresCiteTheScript(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseScript("cite", []byte("# a check that fails\ncall -as none discover_team_agents '{\"project\":\"website-v2\"}'\neq a b\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	s.Path = "scripts/cite.txtar"
	target := &HandlerTarget{New: func(ctx context.Context, fixture []byte) (http.Handler, func(), error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", 401) }), nil, nil
	}}
	rep, err := Run(context.Background(), []*Script{s}, Options{Target: target, Spec: sp})
	if err != nil {
		t.Fatal(err)
	}
	log := rep.Results[0].Log
	if !regexp.MustCompile(`FAIL: scripts/cite\.txtar:2: `).MatchString(log) || strings.Contains(log, os.TempDir()) {
		t.Errorf("the failure does not cite scripts/cite.txtar:2:\n%s", log)
	}
}
