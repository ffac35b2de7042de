package conformance_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
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

// TestReferenceServer runs the whole suite against the reference server
// (fresh and in-process for every script, its fixture loaded): in the
// reference profile, and in the core profile, which any conforming server
// passes.
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
			t.Logf("%s profile: %d scripts, %d checks in %s: %s", prof, len(rep.Results), rep.Checks,
				time.Since(start).Round(time.Millisecond), rep.Summary())
			if rep.Skipped != 0 {
				t.Errorf("%d scripts skipped", rep.Skipped)
			}
			if len(rep.Results) != len(scripts) {
				t.Errorf("ran %d of %d scripts", len(rep.Results), len(scripts))
			}
		})
	}
}
