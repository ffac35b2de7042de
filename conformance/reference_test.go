package conformance_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/spec"
)

// referenceTarget starts the reference server in-process for every script,
// optionally wrapped (the mutants).
func referenceTarget(name string, wrapH func(api.Handler) api.Handler, wrapHTTP func(http.Handler) http.Handler) *conformance.HandlerTarget {
	return &conformance.HandlerTarget{
		Name: name,
		New: func(ctx context.Context, fixture []byte) (http.Handler, func(), error) {
			srv, _, err := server.New(ctx, server.Config{
				Fixture:     bytes.NewReader(fixture),
				Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
				WrapHandler: wrapH,
				WrapHTTP:    wrapHTTP,
			})
			if err != nil {
				return nil, nil, err
			}
			return srv.Handler(), func() { srv.Close() }, nil
		},
	}
}

func loadSuite(t testing.TB) (*spec.Spec, []*conformance.Script) {
	t.Helper()
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	scripts, warns, err := conformance.Suite(sp)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warns {
		t.Errorf("derive: %s", w)
	}
	return sp, scripts
}

// TestMain: the in-process servers of these tests (a SQLite database and
// an MCP server per script and per explored sequence) churn memory in one
// heap; collecting it less often keeps the tests' wall time down.
func TestMain(m *testing.M) {
	debug.SetGCPercent(400)
	os.Exit(m.Run())
}

// TestReferenceServer runs the whole suite against the reference server
// (fresh and in-process for every script, its fixture loaded), stateful
// exploration at its default budget included: in the reference profile,
// and in the core profile, which any conforming server passes. Both
// certify it.
func TestReferenceServer(t *testing.T) {
	sp, scripts := loadSuite(t)
	for _, prof := range []conformance.Profile{conformance.Reference, conformance.Core} {
		t.Run(string(prof), func(t *testing.T) {
			var progress io.Writer
			if testing.Verbose() {
				progress = os.Stderr
			}
			start := time.Now()
			rep, err := conformance.Run(context.Background(), scripts, conformance.Options{
				Target:   referenceTarget("reference (in-process)", nil, nil),
				Profile:  prof,
				Spec:     sp,
				Progress: progress,
				Explore:  conformance.DefaultExplore,
				Seed:     1,
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				t.Run(r.Name, func(t *testing.T) {
					switch r.Status {
					case conformance.Pass:
					case conformance.Skip:
						t.Skip(r.Reason)
					default:
						t.Errorf("%s: %s\n%s", r.Status, r.Reason, r.Log)
					}
				})
			}
			t.Logf("%s profile: %d scripts, %d checks, exploration %d sequences and %d calls from seed %d, in %s: %s", prof, len(rep.Results), rep.Checks,
				rep.Explore.Sequences, rep.Explore.Calls, rep.Seed, time.Since(start).Round(time.Millisecond), rep.Summary())
			if rep.Skipped != 0 {
				t.Errorf("%d scripts skipped", rep.Skipped)
			}
			if len(rep.Results) != len(scripts) {
				t.Errorf("ran %d of %d scripts", len(rep.Results), len(scripts))
			}
			if rep.Verdict != conformance.Certified {
				t.Errorf("the reference server is not certified (%s): %s", rep.Verdict, strings.Join(rep.Missing, "; "))
			}
		})
	}
}
