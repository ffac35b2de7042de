package conformance

import (
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

	"github.com/prickle-dev/prickle/conformance/internal/suite"
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
	fx, toks, err := suite.Materialize(seed.JSON(), suite.Now())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), suite.FixtureFile)
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

// TestFailuresCiteTheScript: a failure names the script where it lives
// and the line, never the temporary copy the run made.
func TestFailuresCiteTheScript(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.ParseScript("cite", []byte("# a check that fails\ncall -as none discover_team_agents '{\"project\":\"website-v2\"}'\neq a b\n"), false)
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
	log := rep.Result("cite").Log
	if !regexp.MustCompile(`FAIL: scripts/cite\.txtar:2: `).MatchString(log) || strings.Contains(log, os.TempDir()) {
		t.Errorf("the failure does not cite scripts/cite.txtar:2:\n%s", log)
	}
}
