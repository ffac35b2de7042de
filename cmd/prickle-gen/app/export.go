package app

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prickle-dev/prickle/gen"
	"github.com/prickle-dev/prickle/spec"
)

var exportCommand = &command{
	name:  "export",
	usage: "(-o DIR | --check DIR) [PATH...]",
	summary: "Export the pages for third parties: the tools/list answer and the schemas.\n" +
		"-o DIR writes tools.json (the tools array a conforming server serves, byte for byte),\n" +
		"schemas/TOOL.input.json and schemas/TOOL.output.json (draft 2020-12, $id and title set)\n" +
		"and SPEC_HASH. DIR is the export's own: it is replaced as a whole, only once every file\n" +
		"is written, and never when it holds a file an export does not. --check DIR exits 1 when\n" +
		"DIR differs from what -o would write, naming the first file that differs and both spec hashes.",
	run: runExport,
}

func runExport(c *invocation, cmd *command, args []string) int {
	fs := c.flags(cmd)
	out := fs.String("o", "", "write the export into `DIR`")
	check := fs.String("check", "", "compare `DIR` with the export of the pages; exit 1 if it is stale")
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	if (*out == "") == (*check == "") {
		return c.fail("export: give one of -o DIR and --check DIR")
	}
	srcs, err := sources(fs.Args())
	if err != nil {
		return c.fail("%v", err)
	}
	s, code := c.loadLinted(srcs)
	if s == nil {
		if code == ExitFindings {
			fmt.Fprintln(c.stderr, "prickle-gen: export: the pages do not lint; nothing written")
		}
		return code
	}
	files, err := gen.Export(s)
	if err != nil {
		return c.fail("%v", err)
	}
	if *check != "" {
		return checkExport(c, *check, s.Hash(), files)
	}
	if err := writeExport(*out, files); err != nil {
		return c.fail("export: %v", err)
	}
	return ExitOK
}

// exportOwns reports whether rel (slash-separated, relative to an export
// folder) is a file an export writes: tools.json, SPEC_HASH, and JSON
// files in schemas/.
func exportOwns(rel string) bool {
	dir, name := pathSplit(rel)
	return dir == "" && (name == gen.ExportTools || name == gen.ExportHash) ||
		dir == gen.ExportSchemas && strings.HasSuffix(name, ".json")
}

func pathSplit(rel string) (dir, name string) {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i], rel[i+1:]
	}
	return "", rel
}

// listExport lists the files in dir, slash-separated and relative to it,
// sorted; none when dir does not exist.
func listExport(dir string) ([]string, error) {
	var rels []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rels = append(rels, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(rels)
	return rels, err
}

// writeExport writes files into a new folder beside dir, then puts it in
// dir's place: a failure leaves dir as it was. An existing dir must hold
// export files only: nothing of anyone else's is removed.
func writeExport(dir string, files []gen.File) error {
	old, err := listExport(dir)
	if err != nil {
		return err
	}
	for _, rel := range old {
		if !exportOwns(rel) {
			return fmt.Errorf("%s holds %s, which an export does not write: export into a folder of its own", dir, rel)
		}
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".export-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // after a rename, the old export; on failure, the new one
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(tmp, dir)
	}
	// Swap: dir goes aside (into tmp's name), the new export takes its place.
	aside := tmp + ".old"
	if err := os.Rename(dir, aside); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if rerr := os.Rename(aside, dir); rerr != nil {
			return fmt.Errorf("%w (and %s could not be put back from %s: %v)", err, dir, aside, rerr)
		}
		return err
	}
	return os.RemoveAll(aside)
}

// checkExport compares dir with files; it names the first file (in path
// order) that differs, is missing or is stale, and both spec hashes.
func checkExport(c *invocation, dir, hash string, files []gen.File) int {
	have, err := listExport(dir)
	if err != nil {
		return c.fail("export --check: %v", err)
	}
	want := map[string][]byte{}
	var paths []string
	for _, f := range files {
		want[f.Path] = f.Data
		paths = append(paths, f.Path)
	}
	for _, rel := range have {
		if exportOwns(rel) && want[rel] == nil {
			paths = append(paths, rel) // stale: the pages no longer have it
		}
	}
	slices.Sort(paths)
	for _, rel := range paths {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		var why string
		switch {
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return c.fail("export --check: %v", err)
		case err != nil:
			why = "is missing"
		case want[rel] == nil:
			why = "is not in the export of the pages"
		case !bytes.Equal(b, want[rel]):
			why = "differs"
		default:
			continue
		}
		got := "none"
		if h, err := os.ReadFile(filepath.Join(dir, gen.ExportHash)); err == nil {
			got = spec.ShortHash(strings.TrimSpace(string(h)))
		}
		fmt.Fprintf(c.stderr, "prickle-gen: export --check: %s is stale: %s %s (its spec %s, the pages' spec %s); run prickle-gen export -o %s\n",
			dir, rel, why, got, spec.ShortHash(hash), dir)
		return ExitFindings
	}
	return ExitOK
}
