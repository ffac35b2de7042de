package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prickle-dev/prickle/gen"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/specdiff"
)

var diffCommand = &command{
	name:  "diff",
	usage: "[-format text|json|github|markdown] [-fail-go] OLD NEW",
	summary: "Report the changes between two versions of the API, graded by who breaks.\n" +
		"OLD and NEW are each a page, a folder of pages or a spec file (.json, from 'prickle-gen spec').\n" +
		"One line per change (file:line:col: BREAKING|non-breaking tool side /pointer: message [kind]),\n" +
		"then 'N changes, M breaking'. Exit 1 when a change breaks clients, 0 otherwise.",
	run: runDiff,
}

func runDiff(c *invocation, cmd *command, args []string) int {
	fs := c.flags(cmd)
	outFormat := formatFlags(fs, "print the report as a JSON object {changes, breaking, go_api}")
	failGo := fs.Bool("fail-go", false, "exit 1 also when the generated Go API changes")
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	f, err := outFormat()
	if err != nil {
		return c.fail("diff: %v", err)
	}
	if fs.NArg() != 2 {
		return c.fail("diff needs two arguments, OLD and NEW; got %d (usage: prickle-gen diff %s)", fs.NArg(), cmd.usage)
	}
	old, err := loadVersion(fs.Arg(0))
	if err != nil {
		return c.fail("%v", err)
	}
	new, err := loadVersion(fs.Arg(1))
	if err != nil {
		return c.fail("%v", err)
	}
	r := specdiff.Compare(old, new)
	goChanges, err := gen.APIChanges(old, new, gen.Options{})
	if err != nil {
		return c.fail("%v", err)
	}
	r.Add(goChanges...)
	if err := writeDiff(c.stdout, f, r, *failGo); err != nil {
		return c.fail("%v", err)
	}
	if r.Breaking > 0 || *failGo && r.GoAPI > 0 {
		return ExitFindings
	}
	return ExitOK
}

// loadVersion reads one side of a diff: a spec file (a .json file), or
// pages. Pages with errors are refused with their first diagnostic.
func loadVersion(path string) (*spec.Spec, error) {
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() && strings.EqualFold(filepath.Ext(path), ".json") {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read spec: %w", err)
		}
		s, err := spec.Unmarshal(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return s, nil
	}
	srcs, err := spec.ReadPaths([]string{path})
	if err != nil {
		return nil, err
	}
	s, _, err := spec.LoadLinted(srcs)
	if err != nil {
		return nil, err // a *spec.PagesError: the first diagnostic and how many more
	}
	return s, nil
}
