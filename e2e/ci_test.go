package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/prickle-dev/prickle/internal/testkit"
)

// workflow is the part of a GitHub Actions workflow the recipe uses.
type workflow struct {
	Jobs map[string]struct {
		Steps []struct {
			Name, Uses, Run, If string
			With                map[string]string
		}
	}
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
	runner, err := testkit.GoBuild(t.TempDir(), "github.com/prickle-dev/prickle/cmd/prickle-conformance", false)
	if err != nil {
		t.Fatal(err)
	}
	prickled := prickledBin(t)

	for _, c := range []struct {
		name, server string
		pass         bool
	}{
		{"conforming", `exec ` + prickled + ` --addr "$2" --db :memory: --fixture "$4"`, true},
		// It serves the seed world whatever it is given: the scripts'
		// tokens are unknown to it.
		{"ignores its world", `exec ` + prickled + ` --addr "$2" --db :memory:`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
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
			summary := filepath.Join(t.TempDir(), "step-summary.md")
			env := append(os.Environ(), "GITHUB_ACTIONS=true", "GITHUB_WORKSPACE="+repo, "GITHUB_STEP_SUMMARY="+summary,
				"PATH="+bin+":"+os.Getenv("PATH"))

			failed := false
			var certifyOut string
			for _, st := range job.Steps {
				if failed && !strings.Contains(st.If, "always()") {
					continue
				}
				switch {
				case st.Run != "":
					cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", st.Run)
					cmd.Dir, cmd.Env = repo, env
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &out
					err := cmd.Run()
					if strings.Contains(st.Run, "prickle-conformance ") {
						certifyOut = out.String()
					}
					if err != nil {
						failed = true
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
			if failed == c.pass {
				t.Fatalf("the job failed: %v, want %v; the runner said:\n%s", failed, !c.pass, certifyOut)
			}
			got, err := os.ReadFile(summary)
			if err != nil {
				t.Fatalf("no job summary: %v", err)
			}
			badge, _ := os.ReadFile(filepath.Join(repo, "conformance-badge.json"))
			annotated := strings.Contains(certifyOut, "\n::error file=")
			if c.pass {
				if !strings.Contains(string(got), "✅ CERTIFIED") || !strings.Contains(string(badge), `"certified `) || annotated {
					t.Errorf("a conforming server: summary %.200q, badge %s, annotations %v", got, badge, annotated)
				}
				return
			}
			if !strings.Contains(string(got), "❌ FAILED") || !strings.Contains(string(got), "| Script | What failed | Rerun |") ||
				!strings.Contains(string(badge), `"failed `) || !annotated {
				t.Errorf("a failing server: summary %.300q, badge %s, annotations %v:\n%s", got, badge, annotated, certifyOut)
			}
		})
	}
}
