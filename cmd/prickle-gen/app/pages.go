package app

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prickle-dev/prickle/internal/fsx"
	"github.com/prickle-dev/prickle/spec"
	"github.com/rogpeppe/go-internal/diff"
)

var specCommand = &command{
	name:    "spec",
	usage:   "[-o FILE] [PATH...]",
	summary: "Print the canonical spec (JSON) of the pages.\nPages that cannot be represented (structure, JSON syntax, a tool documented\ntwice) are refused; the schema checks are lint's: run lint in CI.",
	run:     runSpec,
}

var lintCommand = &command{
	name:    "lint",
	usage:   "[-format text|json|github|markdown] [PATH...]",
	summary: "Check the pages: structure, JSON, schemas, patterns, examples, drift.\nFindings print as file:line:col: severity: message [rule]; exit 1 on any error.",
	run:     runLint,
}

var fmtCommand = &command{
	name:    "fmt",
	usage:   "[-l] [-d] [-w] [PATH...]",
	summary: "Render pages in canonical form, like gofmt.\nWithout flags, print the formatted pages; exit 1 when -l or -d find a page to change.",
	run:     runFmt,
}

// sources reads the PATH arguments; with none, the pages of the module
// when run inside it (an installed prickle-gen must not generate from the
// pages it was built with once new ones arrive), else the bundled pages.
func sources(paths []string) ([]spec.Source, error) {
	if len(paths) > 0 {
		return spec.ReadPaths(paths)
	}
	root, err := moduleRoot()
	if err != nil {
		return spec.Bundled(), nil
	}
	dir := filepath.Join(root, "spec", spec.BundledDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("the module's pages: %w", err)
	}
	var out []spec.Source
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("the module's pages: %w", err)
		}
		// Named as the bundled pages are, so that findings read the same.
		out = append(out, spec.Source{File: "spec/" + spec.BundledDir + "/" + e.Name(), Src: b})
	}
	return out, nil
}

func runSpec(c *invocation, cmd *command, args []string) int {
	fs := c.flags(cmd)
	out := fs.String("o", "", "write the spec to `FILE` instead of standard output")
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	srcs, err := sources(fs.Args())
	if err != nil {
		return c.fail("%v", err)
	}
	s, _, err := spec.LoadUnlinted(srcs)
	if err != nil {
		var pe *spec.PagesError
		if asPagesError(err, &pe) {
			for _, d := range pe.Diagnostics {
				fmt.Fprintln(c.stderr, d)
			}
			return ExitFindings
		}
		return c.fail("%v", err)
	}
	b, err := s.Marshal()
	if err != nil {
		return c.fail("%v", err)
	}
	if *out == "" {
		c.stdout.Write(b)
		return ExitOK
	}
	if err := fsx.WriteFileAtomic(*out, b, 0o644); err != nil {
		return c.fail("%v", err)
	}
	return ExitOK
}

func runLint(c *invocation, cmd *command, args []string) int {
	fs := c.flags(cmd)
	outFormat := formatFlags(fs, "print the findings as a JSON array")
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	f, err := outFormat()
	if err != nil {
		return c.fail("lint: %v", err)
	}
	srcs, err := sources(fs.Args())
	if err != nil {
		return c.fail("%v", err)
	}
	pages, pd := spec.ParseAll(srcs)
	_, ds := spec.Lint(pages, pd)
	if err := writeLint(c.stdout, f, ds); err != nil {
		return c.fail("%v", err)
	}
	if ds.HasErrors() {
		return ExitFindings
	}
	return ExitOK
}

func runFmt(c *invocation, cmd *command, args []string) int {
	fs := c.flags(cmd)
	list := fs.Bool("l", false, "list pages whose formatting differs")
	showDiff := fs.Bool("d", false, "print a unified diff for pages whose formatting differs")
	write := fs.Bool("w", false, "write the formatted page back to its file")
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	if *write && len(fs.Args()) == 0 {
		return c.fail("fmt -w needs PATH: the bundled pages are read-only")
	}
	srcs, err := sources(fs.Args())
	if err != nil {
		return c.fail("%v", err)
	}
	code := ExitOK
	for _, s := range srcs {
		out, err := spec.Format(s.File, s.Src)
		if err != nil {
			var pe *spec.PagesError
			if asPagesError(err, &pe) {
				for _, d := range pe.Diagnostics {
					fmt.Fprintln(c.stderr, d)
				}
				code = ExitFindings
				continue
			}
			return c.fail("%v", err)
		}
		changed := !bytes.Equal(out, s.Src)
		if *list && changed {
			fmt.Fprintln(c.stdout, s.File)
		}
		if *showDiff && changed {
			c.stdout.Write(diff.Diff(s.File, s.Src, s.File+" (formatted)", out))
		}
		if *write && changed {
			if err := fsx.WriteFileAtomic(filepath.FromSlash(s.File), out, 0); err != nil {
				return c.fail("%v", err)
			}
		}
		if !*list && !*showDiff && !*write {
			c.stdout.Write(out)
		}
		if changed && (*list || *showDiff) && !*write {
			code = max(code, ExitFindings)
		}
	}
	return code
}

func asPagesError(err error, target **spec.PagesError) bool { return errors.As(err, target) }
