package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prickle-dev/prickle/spec"
	"github.com/rogpeppe/go-internal/diff"
)

func init() {
	register(&command{
		name:    "spec",
		usage:   "[-o FILE] [PATH...]",
		summary: "Print the canonical spec (JSON) of the pages.\nPages that cannot be represented (structure, JSON syntax, a tool documented\ntwice) are refused; the schema checks are lint's: run lint in CI.",
		run:     runSpec,
	})
	register(&command{
		name:    "lint",
		usage:   "[-json] [PATH...]",
		summary: "Check the pages: structure, JSON, schemas, patterns, examples, drift.\nFindings print as file:line:col: severity: message [rule]; exit 1 on any error.",
		run:     runLint,
	})
	register(&command{
		name:    "fmt",
		usage:   "[-l] [-d] [-w] [PATH...]",
		summary: "Render pages in canonical form, like gofmt.\nWithout flags, print the formatted pages; exit 1 when -l or -d find a page to change.",
		run:     runFmt,
	})
}

// sources reads the PATH arguments, or the bundled pages when there are none.
func sources(paths []string) ([]spec.Source, error) {
	if len(paths) == 0 {
		return spec.Bundled(), nil
	}
	return spec.ReadPaths(paths)
}

func runSpec(c *ctx, args []string) int {
	cmd := commands["spec"]
	fs := c.flags(cmd)
	out := fs.String("o", "", "write the spec to `FILE` instead of standard output")
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	srcs, err := sources(fs.Args())
	if err != nil {
		return c.fail("%v", err)
	}
	s, _, err := spec.Parse(srcs)
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
	if err := writeFileAtomic(*out, b, 0o644); err != nil {
		return c.fail("%v", err)
	}
	return ExitOK
}

func runLint(c *ctx, args []string) int {
	cmd := commands["lint"]
	fs := c.flags(cmd)
	asJSON := fs.Bool("json", false, "print the findings as a JSON array")
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	srcs, err := sources(fs.Args())
	if err != nil {
		return c.fail("%v", err)
	}
	pages, pd := spec.ParseAll(srcs)
	_, ds := spec.Lint(pages, pd)
	if *asJSON {
		if ds == nil {
			ds = spec.Diagnostics{}
		}
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(ds); err != nil {
			return c.fail("%v", err)
		}
	} else {
		for _, d := range ds {
			fmt.Fprintln(c.stdout, d)
		}
	}
	if ds.HasErrors() {
		return ExitFindings
	}
	return ExitOK
}

func runFmt(c *ctx, args []string) int {
	cmd := commands["fmt"]
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
			if err := writeFileAtomic(filepath.FromSlash(s.File), out, 0); err != nil {
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

// writeFileAtomic writes through a temporary file in the same folder and a
// rename, so a failure never leaves a half-written file. perm 0 keeps the
// mode of an existing file (0644 for a new one); go-internal's renameio
// would leave every file 0600, which is wrong for pages and generated code.
func writeFileAtomic(name string, data []byte, perm os.FileMode) error {
	if perm == 0 {
		perm = 0o644
		if fi, err := os.Stat(name); err == nil {
			perm = fi.Mode().Perm()
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

func asPagesError(err error, target **spec.PagesError) bool { return errors.As(err, target) }
