package conformance

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/prickle-dev/prickle/conformance/internal/derive"
	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/spec"
)

//go:embed scripts/*.txtar
var scriptFS embed.FS

//go:embed untestable.md
var untestableMD []byte

//go:embed examples.md
var examplesMD []byte

// Script is one conformance script.
type Script = suite.Script

// handWritten returns the scripts embedded in the package, sorted by name.
func handWritten() ([]*Script, error) {
	entries, err := fs.ReadDir(scriptFS, "scripts")
	if err != nil {
		return nil, err
	}
	var out []*Script
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".txtar") {
			continue
		}
		src, err := fs.ReadFile(scriptFS, path.Join("scripts", e.Name()))
		if err != nil {
			return nil, err
		}
		s, err := suite.ParseScript(strings.TrimSuffix(e.Name(), ".txtar"), src, false)
		if err != nil {
			return nil, err
		}
		s.Path = path.Join("scripts", e.Name())
		out = append(out, s)
	}
	return out, nil
}

// LoadScripts reads the scripts of a folder (every *.txtar directly in
// it): a third party's own, or sequences exploration saved with --save.
func LoadScripts(dir string) ([]*Script, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("scripts: %w", err)
	}
	var out []*Script
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".txtar") {
			continue
		}
		file := filepath.Join(dir, e.Name())
		src, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("scripts: %w", err)
		}
		s, err := suite.ParseScript(strings.TrimSuffix(e.Name(), ".txtar"), src, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		s.Path = file
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("scripts: %s: no .txtar scripts in the folder", dir)
	}
	return out, nil
}

// Suite returns every script: the hand-written ones, those derived from
// sp and the extra ones (read with LoadScripts), sorted by name. Run
// explores besides; exploration is "explore" (report.ExploreScript) among
// the scripts' names. Warnings name spec constraints the generator could
// not turn into a case.
func Suite(sp *spec.Spec, extra ...*Script) (scripts []*Script, warnings []string, err error) {
	hw, err := handWritten()
	if err != nil {
		return nil, nil, err
	}
	derived, warnings := derive.Scripts(sp)
	scripts = append(hw, derived...)
	scripts = append(scripts, extra...)
	sort.Slice(scripts, func(i, j int) bool { return scripts[i].Name < scripts[j].Name })
	for i, s := range scripts {
		if i > 0 && s.Name == scripts[i-1].Name || s.Name == report.ExploreScript {
			return nil, nil, fmt.Errorf("two scripts are named %s", s.Name)
		}
	}
	return scripts, warnings, nil
}
