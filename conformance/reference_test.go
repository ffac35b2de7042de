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
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/internal/testkit"
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
				World:       bytes.NewReader(fixture),
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
		t.Logf("derive: %s", w) // TestDerive holds the first published pages to none
	}
	return sp, scripts
}

// unimplemented are the documented tools prickled leaves to
// api.UnimplementedHandler: a page added before its implementation.
func unimplemented() []api.ToolName { return server.Unimplemented() }

// namesUnimplemented reports whether text names a tool prickled does not
// implement.
func namesUnimplemented(text string) bool {
	for _, tool := range unimplemented() {
		if testkit.NamesTool(text, string(tool)) {
			return true
		}
	}
	return false
}

// checkVerdict requires the verdict the reference server reaches on the
// bundled pages: certified when it implements every documented tool;
// otherwise incomplete, nothing failed, and every gap naming one of the
// tools it does not implement.
func checkVerdict(t *testing.T, rep *conformance.Report) {
	t.Helper()
	if len(unimplemented()) == 0 {
		if rep.Verdict != conformance.Certified {
			t.Errorf("the reference server is not certified (%s): %s", rep.Verdict, strings.Join(rep.Missing, "; "))
		}
		return
	}
	if rep.Verdict != conformance.Incomplete || rep.Failed != 0 {
		t.Errorf("with %v unimplemented: verdict %s, %d failed; want incomplete, 0 failed", unimplemented(), rep.Verdict, rep.Failed)
	}
	for _, m := range rep.Missing {
		if !namesUnimplemented(m) {
			t.Errorf("a gap of a tool prickled implements: %s", m)
		}
	}
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
					case report.Pass:
					case report.Skip:
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
			if len(rep.Results) != len(scripts)+1 { // and exploration
				t.Errorf("ran %d of %d scripts and exploration", len(rep.Results), len(scripts)+1)
			}
			checkVerdict(t, rep)
		})
	}
}
