package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/spec"
)

// workflow is the part of a GitHub Actions workflow the recipe uses.
type workflow struct {
	Jobs map[string]workflowJob
}

type workflowJob struct {
	Steps []workflowStep
}

type workflowStep struct {
	Name, Uses, Run, If string
	With                map[string]string
}

// TestCIRecipe runs conformance/ci/certify.yml, the documented GitHub
// Actions job, step by step as the runner would (bash -eo pipefail,
// $GITHUB_ACTIONS, $GITHUB_WORKSPACE and $GITHUB_STEP_SUMMARY set, a step after a failure
// only when its if says always()), in a checkout holding the server's
// my-server script: the job passes for a conforming server, and fails for
// one that ignores the world it is given, with its failures annotated, its
// summary written and its reports kept either way. The one step it
// cannot run as written, go install of this module from the Go proxy,
// installs the runner built from this tree.
//
// When the pages document tools prickled does not implement yet (pages
// added, `prickle-gen generate` run: e2e's TestPagesGrow runs this test
// in such a tree), prickled is conforming for the tools it implements:
// the recipe's run is scoped to them with --tools, as a third party's
// server that implements some tools would scope it; and the recipe as
// written, certifying every documented tool, must fail, missing only the
// tools prickled leaves unimplemented.
func TestCIRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("certifies a server twice")
	}
	raw, err := os.ReadFile(filepath.Join("..", "conformance", "ci", "certify.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		t.Fatalf("certify.yml: %v", err)
	}
	job, ok := wf.Jobs["certify"]
	if !ok || len(job.Steps) == 0 {
		t.Fatalf("certify.yml has no certify job: %+v", wf)
	}
	runner := conformanceBin(t)
	prickled := prickledBin(t)
	scope, unimplemented := implemented(t)

	conforming := `exec ` + prickled + ` --addr "$2" --db :memory: --fixture "$4"`
	cases := []recipeCase{
		{"conforming", conforming, scope, true},
		// It serves the seed world whatever it is given: the scripts'
		// tokens are unknown to it.
		{"ignores its world", `exec ` + prickled + ` --addr "$2" --db :memory:`, scope, false},
	}
	if len(unimplemented) > 0 {
		cases = append(cases, recipeCase{"conforming, every documented tool", conforming, nil, false})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runRecipe(t, job, c, runner)
			if r.failed == c.pass {
				t.Fatalf("the job failed: %v, want %v; the runner said:\n%s", r.failed, !c.pass, r.certifyOut)
			}
			r.check(t, c, unimplemented)
		})
	}
}

// recipeCase is a server TestCIRecipe certifies with the recipe.
type recipeCase struct {
	name, server string   // server: the my-server script's command
	scope        []string // --tools added to the runner's command line
	pass         bool
}

// recipeRun is what a run of the recipe's job left.
type recipeRun struct {
	failed     bool   // a step failed
	certifyOut string // what the certifying step printed
	repo       string // the checkout, $GITHUB_WORKSPACE
	summary    string // $GITHUB_STEP_SUMMARY
}

// runRecipe runs job's steps as the runner would, in a checkout holding
// c's my-server script, with the runner built from this tree on PATH as
// what go install installs.
func runRecipe(t *testing.T, job workflowJob, c recipeCase, runner string) recipeRun {
	t.Helper()
	repo, bin := t.TempDir(), t.TempDir()
	write := func(dir, name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(repo, "my-server", "#!/bin/sh\n# my-server --listen ADDR --world FILE\n"+c.server+"\n")
	// go install of the runner puts this tree's build on PATH.
	write(bin, "go", "#!/bin/sh\ncase \"$*\" in\n\"install github.com/prickle-dev/prickle/cmd/prickle-conformance@\"*) exec cp "+
		runner+" "+bin+"/prickle-conformance ;;\nesac\necho \"go shim: unexpected go $*\" >&2\nexit 1\n")
	r := recipeRun{repo: repo, summary: filepath.Join(t.TempDir(), "step-summary.md")}
	env := append(os.Environ(), "GITHUB_ACTIONS=true", "GITHUB_WORKSPACE="+repo, "GITHUB_STEP_SUMMARY="+r.summary,
		"PATH="+bin+":"+os.Getenv("PATH"))

	for _, st := range job.Steps {
		if r.failed && !strings.Contains(st.If, "always()") {
			continue
		}
		switch {
		case st.Run != "":
			run := st.Run
			if len(c.scope) > 0 {
				run = strings.Replace(run, "prickle-conformance ", "prickle-conformance --tools "+strings.Join(c.scope, ",")+" ", 1)
			}
			cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", run)
			cmd.Dir, cmd.Env = repo, env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if strings.Contains(st.Run, "prickle-conformance ") {
				r.certifyOut = out.String()
			}
			if err != nil {
				r.failed = true
				t.Logf("step %q failed: %v", st.Name, err)
			}
		case strings.HasPrefix(st.Uses, "actions/upload-artifact@"):
			for _, p := range strings.Fields(st.With["path"]) {
				if _, err := os.Stat(filepath.Join(repo, p)); err != nil && !strings.HasSuffix(p, "/") {
					t.Errorf("%s: %s was not written", st.Name, p)
				}
			}
		}
	}
	return r
}

// check checks what the run left for c: its summary, its badge and its
// annotations say it certified, failed, or (every documented tool
// certified while some are unimplemented) is incomplete.
func (r recipeRun) check(t *testing.T, c recipeCase, unimplemented []string) {
	t.Helper()
	got, err := os.ReadFile(r.summary)
	if err != nil {
		t.Fatalf("no job summary: %v", err)
	}
	badge, _ := os.ReadFile(filepath.Join(r.repo, "conformance-badge.json"))
	annotated := strings.Contains(r.certifyOut, "\n::error file=")
	if c.pass {
		if !strings.Contains(string(got), "✅ CERTIFIED") || !strings.Contains(string(badge), `"certified `) || annotated {
			t.Errorf("a conforming server: summary %.200q, badge %s, annotations %v", got, badge, annotated)
		}
		return
	}
	if c.scope == nil && len(unimplemented) > 0 {
		// Nothing failed; what is missing is the unimplemented tools'.
		if !strings.Contains(string(got), "⚠️ INCOMPLETE") || !strings.Contains(string(badge), `"incomplete `) {
			t.Errorf("every documented tool, %v unimplemented: summary %.300q, badge %s", unimplemented, got, badge)
		}
		checkOnlyUnimplemented(t, r.certifyOut, unimplemented)
		return
	}
	if !strings.Contains(string(got), "❌ FAILED") || !strings.Contains(string(got), "| Script | What failed | Rerun |") ||
		!strings.Contains(string(badge), `"failed `) || !annotated {
		t.Errorf("a failing server: summary %.300q, badge %s, annotations %v:\n%s", got, badge, annotated, r.certifyOut)
	}
}

// implemented returns the documented tools prickled implements, as a
// --tools scope, and those it does not; the scope is nil when it
// implements them all.
func implemented(t *testing.T) (scope, unimplemented []string) {
	t.Helper()
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range server.Unimplemented() {
		unimplemented = append(unimplemented, string(name))
	}
	if len(unimplemented) == 0 {
		return nil, nil
	}
	for _, tool := range sp.Tools {
		if !slices.Contains(unimplemented, tool.Name) {
			scope = append(scope, tool.Name)
		}
	}
	return scope, unimplemented
}

// checkOnlyUnimplemented checks a run's output: nothing failed, every line
// it says is missing for a certification names an unimplemented tool, and
// each of those tools is named.
func checkOnlyUnimplemented(t *testing.T, out string, unimplemented []string) {
	t.Helper()
	named := map[string]bool{}
	in := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "missing for a certification:"):
			in = true
			continue
		case !in || !strings.HasPrefix(line, "  - "):
			in = false
			continue
		}
		found := false
		for _, tool := range unimplemented {
			if testkit.NamesTool(line, tool) {
				named[tool], found = true, true
			}
		}
		if !found {
			t.Errorf("missing, yet of no unimplemented tool (%v): %s", unimplemented, line)
		}
	}
	for _, tool := range unimplemented {
		if !named[tool] {
			t.Errorf("the run does not say that %s is missing:\n%s", tool, out)
		}
	}
	if strings.Contains(out, "\nfailed: ") {
		t.Errorf("a script failed:\n%s", out)
	}
}
