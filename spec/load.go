package spec

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed reference/*.md
var bundled embed.FS

// BundledDir is the folder, relative to this package, holding the bundled
// pages: the project's source of truth.
const BundledDir = "reference"

// Source is one page's bytes and the name diagnostics give it.
type Source struct {
	File string
	Src  []byte
}

// Bundled returns the pages embedded in every binary, named
// spec/reference/NAME.md.
func Bundled() []Source {
	entries, err := fs.ReadDir(bundled, BundledDir)
	if err != nil {
		panic(err) // embedded at build time
	}
	var out []Source
	for _, e := range entries {
		b, err := fs.ReadFile(bundled, path.Join(BundledDir, e.Name()))
		if err != nil {
			panic(err)
		}
		out = append(out, Source{File: "spec/reference/" + e.Name(), Src: b})
	}
	return out
}

// ReadPaths reads pages from files and folders (every *.md directly in a
// folder). It fails on the first I/O error, naming the path.
func ReadPaths(paths []string) ([]Source, error) {
	var out []Source
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("read pages: %w", err)
		}
		if !fi.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("read pages: %w", err)
			}
			out = append(out, Source{File: filepath.ToSlash(p), Src: b})
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("read pages: %w", err)
		}
		var names []string
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") && !strings.HasPrefix(e.Name(), ".") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		if len(names) == 0 {
			return nil, fmt.Errorf("read pages: %s: no .md pages in the folder", p)
		}
		for _, n := range names {
			f := filepath.Join(p, n)
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("read pages: %w", err)
			}
			out = append(out, Source{File: filepath.ToSlash(f), Src: b})
		}
	}
	return out, nil
}

// ParseAll parses every source; findings are returned unsorted.
func ParseAll(srcs []Source) ([]*Page, Diagnostics) {
	pages := make([]*Page, 0, len(srcs))
	var ds Diagnostics
	for _, s := range srcs {
		p, d := ParsePage(s.File, s.Src)
		pages = append(pages, p)
		ds = append(ds, d...)
	}
	return pages, ds
}

// LoadUnlinted parses and builds a spec without the checks of Lint: it
// fails with a *PagesError only when the pages cannot be represented (a
// structural error, a JSON syntax error, a tool documented twice). This is
// what "prickle-gen spec" does; LoadLinted also checks the schemas,
// patterns and examples.
func LoadUnlinted(srcs []Source) (*Spec, Diagnostics, error) {
	pages, ds := ParseAll(srcs)
	s, bd := Build(pages)
	ds = append(ds, bd...)
	ds.Sort()
	if ds.HasErrors() {
		return nil, ds, &PagesError{Diagnostics: ds.Errors()}
	}
	return s, ds, nil
}

// LoadLinted parses, lints and builds a spec, failing with a *PagesError
// when any page has an error, structural or found by Lint. Warnings and
// infos are returned.
func LoadLinted(srcs []Source) (*Spec, Diagnostics, error) {
	pages, pd := ParseAll(srcs)
	s, ds := Lint(pages, pd)
	if ds.HasErrors() {
		return nil, ds, &PagesError{Diagnostics: ds.Errors()}
	}
	return s, ds, nil
}

// LoadBundled returns the spec of the bundled pages.
func LoadBundled() (*Spec, error) {
	s, _, err := LoadLinted(Bundled())
	return s, err
}
