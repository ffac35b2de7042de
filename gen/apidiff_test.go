package gen

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/specdiff"
)

// edit returns the bundled pages with old replaced by new in the page of
// tool.
func edit(t *testing.T, tool string, pairs ...string) []spec.Source {
	t.Helper()
	var out []spec.Source
	found := false
	for _, s := range spec.Bundled() {
		if strings.HasSuffix(s.File, "/"+tool+".md") {
			found = true
			src := s.Src
			for i := 0; i < len(pairs); i += 2 {
				if !bytes.Contains(src, []byte(pairs[i])) {
					t.Fatalf("%s has no %q", tool, pairs[i])
				}
				src = bytes.Replace(src, []byte(pairs[i]), []byte(pairs[i+1]), 1)
			}
			s.Src = src
		}
		out = append(out, s)
	}
	if !found {
		t.Fatalf("no page for %s", tool)
	}
	return out
}

// page returns the bundled page of tool.
func page(t *testing.T, tool string) []byte {
	t.Helper()
	for _, s := range spec.Bundled() {
		if strings.HasSuffix(s.File, "/"+tool+".md") {
			return s.Src
		}
	}
	t.Fatalf("no page for %s", tool)
	return nil
}

// newPage is a page a doc writer adds to s's pages: discover_team_agents'
// under a name, from name, that s's catalog does not list.
func newPage(t *testing.T, s *spec.Spec, name string) (tool string, src spec.Source) {
	t.Helper()
	tool = testkit.FreeToolName(name, func(n string) bool {
		return slices.ContainsFunc(s.Catalog, func(e spec.CatalogEntry) bool { return e.Name == n })
	})
	return tool, spec.Source{File: "spec/reference/" + tool + ".md",
		Src: bytes.ReplaceAll(page(t, "discover_team_agents"), []byte("discover_team_agents"), []byte(tool))}
}

func loaded(t *testing.T, srcs []spec.Source) *spec.Spec {
	t.Helper()
	s, _, err := spec.LoadLinted(srcs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAPIChanges(t *testing.T) {
	base := loaded(t, spec.Bundled())
	same, err := APIChanges(base, base, Options{})
	if err != nil || len(same) != 0 {
		t.Fatalf("a spec against itself: %v, %v", same, err)
	}
	newTool, newSrc := newPage(t, base, "new_tool")
	newGo := camel(newTool)
	for _, c := range []struct {
		name string
		srcs []spec.Source
		want []string // substrings of the changes' lines, in order
	}{{
		name: "required field becomes optional: value to pointer",
		srcs: edit(t, "claim_task", `"required": [
    "task_id",
    "idempotency_key"
  ]`, `"required": [
    "idempotency_key"
  ]`),
		want: []string{"GO-API claim_task go ClaimTaskInput.TaskID: field ClaimTaskInput.TaskID changed type from string to *string [go-field-retyped]"},
	}, {
		name: "property renamed",
		srcs: edit(t, "claim_discussion", `"harness": {`, `"harness_version": {`),
		want: []string{"ClaimDiscussionInput.Harness: field ClaimDiscussionInput.Harness (harness) is gone [go-field-removed]"},
	}, {
		name: "enum value removed",
		srcs: edit(t, "claim_discussion", `"combine"
      ]`, `"revise"
      ]`),
		want: []string{"constant ClaimDiscussionOutputRoleCombine of type ClaimDiscussionOutputRole is gone [go-const-removed]"},
	}, {
		name: "new page: Handler gains a method",
		srcs: append(spec.Bundled(), newSrc),
		want: []string{newTool + ".md:7:1: GO-API " + newTool + " go Handler." + newGo + ": Handler gains method " + newGo},
	}} {
		t.Run(c.name, func(t *testing.T) {
			changes, err := APIChanges(base, loaded(t, c.srcs), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, ch := range changes {
				if ch.Side != specdiff.SideGo || ch.Breaking {
					t.Errorf("%v: not a Go API change", ch)
				}
				lines = append(lines, ch.String())
			}
			all := strings.Join(lines, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("no change %q in:\n%s", w, all)
				}
			}
		})
	}
}
