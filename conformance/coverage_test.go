package conformance_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/spec"
)

// newToolSpec is the bundled spec plus a page for newTool: a copy of
// discover_team_agents' page under a name no bundled page documents, as a
// doc writer adds a page.
func newToolSpec(t *testing.T) (sp *spec.Spec, newTool string) {
	t.Helper()
	bundled, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	newTool = testkit.FreeToolName("stub_probe_tool", func(n string) bool { return bundled.Tool(n) != nil })
	var srcs []spec.Source
	for _, s := range spec.Bundled() {
		srcs = append(srcs, s)
		if strings.HasSuffix(s.File, "/discover_team_agents.md") {
			page := bytes.ReplaceAll(s.Src, []byte("discover_team_agents"), []byte(newTool))
			srcs = append(srcs, spec.Source{File: "spec/reference/" + newTool + ".md", Src: page})
		}
	}
	if sp, _, err = spec.LoadLinted(srcs); err != nil {
		t.Fatal(err)
	}
	return sp, newTool
}

// TestNewToolStubIsNotCertified is issue 11's first finding: a server that
// serves a newly documented tool and refuses every valid call to it
// (not_implemented) passes every derived case of that tool, in both
// profiles; the run must still not certify it, and must say why.
func TestNewToolStubIsNotCertified(t *testing.T) {
	sp, newTool := newToolSpec(t)
	scripts, _, err := conformance.Suite(sp)
	if err != nil {
		t.Fatal(err)
	}
	m := newToolStub(newTool)
	// Certified for the tools the server implements (neither the stub nor
	// a page prickled leaves unimplemented), and for those alone: a report
	// scoped to them (what --tools asks of it) is clean.
	var implemented []string
	for _, tool := range sp.Tools {
		if tool.Name != newTool && !slices.Contains(unimplemented(), api.ToolName(tool.Name)) {
			implemented = append(implemented, tool.Name)
		}
	}
	for _, prof := range []conformance.Profile{conformance.Reference, conformance.Core} {
		rep, err := conformance.Run(context.Background(), scripts, conformance.Options{Target: mutantTarget(m), Profile: prof, Spec: sp,
			Explore: conformance.DefaultExplore, Seed: 1, Parallel: 2})
		if err != nil {
			t.Fatal(err)
		}
		checkStubRun(t, prof, rep, sp, newTool, implemented)
	}
}

// newToolStub is the reference server, serving newTool as a stub: listed
// with its documented schemas; a call is validated (as
// discover_team_agents, whose schemas it shares) and then refused with
// not_implemented.
func newToolStub(newTool string) mutant {
	stub := rewriteMessage(func(w *scene, r *http.Request, method string, params map[string]any, msg map[string]any) {
		res, _ := msg["result"].(map[string]any)
		switch {
		case method == "tools/list":
			tools, _ := res["tools"].([]any)
			for _, x := range tools {
				if tool, _ := x.(map[string]any); tool["name"] == "discover_team_agents" {
					c := map[string]any{}
					for k, v := range tool {
						c[k] = v
					}
					c["name"] = newTool
					res["tools"] = append(tools, c)
					break
				}
			}
		case method == "tools/call" && params["name"] == newTool:
			// Answered by the server as discover_team_agents: keep its
			// refusal of invalid arguments, refuse the rest.
			if refusalCode(res) == "invalid_arguments" {
				return
			}
			for k := range res {
				delete(res, k)
			}
			res["isError"] = true
			res["_meta"] = map[string]any{"code": "not_implemented"}
			res["content"] = []any{map[string]any{"type": "text", "text": "not_implemented: " + newTool + " is not implemented"}}
		}
	})
	rename := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				var b bytes.Buffer
				b.ReadFrom(r.Body)
				body := b.Bytes()
				if bytes.Contains(body, []byte(`"name":"`+newTool+`"`)) {
					body = bytes.Replace(body, []byte(`"name":"`+newTool+`"`), []byte(`"name":"discover_team_agents"`), 1)
				}
				r.Body = readCloser{bytes.NewReader(body)}
				r.ContentLength = int64(len(body))
			}
			next.ServeHTTP(w, r)
		})
	}
	return mutant{name: "stub-new-page", http: func(w *scene) func(http.Handler) http.Handler {
		// The stub sees the call under the new name; the server answers it
		// as discover_team_agents.
		return func(next http.Handler) http.Handler { return stub(w)(rename(next)) }
	}}
}

// checkStubRun checks the stub's run in profile prof: it passes the new
// tool's derived cases, and is incomplete, the new tool with it, but
// certified for the tools implemented, and says what it misses.
func checkStubRun(t *testing.T, prof conformance.Profile, rep *conformance.Report, sp *spec.Spec, newTool string, implemented []string) {
	t.Helper()
	for _, r := range rep.Results {
		if strings.HasPrefix(r.Name, "spec."+newTool+".") && r.Status != report.Pass {
			t.Errorf("%s: the stub fails the derived case %s (the finding is that it passes them): %s\n%s", prof, r.Name, r.Status, r.Log)
		}
	}
	joined := strings.Join(rep.Missing, "\n")
	if rep.Verdict != conformance.Incomplete {
		t.Errorf("%s: the stub's run is %s, want incomplete; missing:\n%s\nfailed: %s", prof, rep.Verdict, joined, failedNames(rep))
	}
	for _, tv := range rep.Tools {
		want := conformance.Incomplete
		if slices.Contains(implemented, tv.Name) {
			want = conformance.Certified
		}
		if tv.Verdict != want || (want == conformance.Certified) != (len(tv.Missing) == 0) {
			t.Errorf("%s: %s is %s (missing %q), want %s", prof, tv.Name, tv.Verdict, tv.Missing, want)
		}
	}
	if len(rep.Tools) != len(sp.Tools) || rep.Clean() {
		t.Errorf("%s: %d tool verdicts, clean %v", prof, len(rep.Tools), rep.Clean())
	}
	rep.Scope = implemented
	if !rep.Clean() || !strings.HasPrefix(rep.Summary(), "CERTIFIED for "+strings.Join(implemented, ", ")+" (the whole run: INCOMPLETE): ") {
		t.Errorf("%s: scoped to %v: clean %v, %s", prof, implemented, rep.Clean(), rep.Summary())
	}
	for _, scope := range [][]string{nil, {newTool}, {newTool, implemented[0]}} {
		rep.Scope = scope
		if rep.Clean() || rep.ScopeVerdict() != conformance.Incomplete {
			t.Errorf("%s: scoped to %v, the stub's run is %s", prof, scope, rep.ScopeVerdict())
		}
	}
	for _, want := range []string{"no call of " + newTool + " succeeded", newTool + "'s documented example input did not succeed", newTool + "#"} {
		if !strings.Contains(joined, want) {
			t.Errorf("%s: the run does not say %q; missing:\n%s", prof, want, joined)
		}
	}
	t.Logf("%s: %s\n%s", prof, rep.Summary(), joined)
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
