// Package fsx holds the file-system helpers the project's commands share:
// writing a file (or JSON) atomically, with a mode that keeps secrets to
// their owner, and checking early that an output path is writable, so
// that a run does not fail at its end.
//
// It imports nothing of this module.
package fsx

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes through a temporary file in the same folder and a
// rename, so a failure never leaves a half-written file. perm 0 keeps the
// mode of an existing file (0644 for a new one). The temporary file is
// created 0600 and given perm just before the rename, so a file meant for
// its owner alone (tokens: 0600) is never readable by others.
func WriteFileAtomic(name string, data []byte, perm os.FileMode) error {
	if perm == 0 {
		perm = 0o644
		if fi, err := os.Stat(name); err == nil {
			perm = fi.Mode().Perm()
		}
	}
	tmp, err := createTemp(name)
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

// WriteJSON writes v as indented JSON, with a final newline, through
// WriteFileAtomic.
func WriteJSON(name string, v any, perm os.FileMode) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(name, append(b, '\n'), perm)
}

// CheckWritable reports whether a file name can be written (by
// WriteFileAtomic): its folder exists and takes a new file. A command
// checks it before it creates what it will write there.
func CheckWritable(name string) error {
	tmp, err := createTemp(name)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", name, err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// createTemp creates the temporary file (mode 0600) that a write of name
// goes through, hidden beside it.
func createTemp(name string) (*os.File, error) {
	return os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
}
