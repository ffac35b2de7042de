// Package cmdline holds what the project's commands (prickle-gen,
// prickled, prickle-conformance) share in reading their command lines.
package cmdline

import (
	"errors"
	"flag"
	"fmt"
)

// Exit statuses every command uses the same way.
const (
	ExitOK    = 0 // success, and -h
	ExitUsage = 2 // a bad command line
)

// Parse parses args into fs, a flag.ContinueOnError set that prints its
// own errors and usage. ok is false when the command must exit with code:
// ExitOK after -h, ExitUsage after a bad flag or, unless positional
// arguments are allowed, an argument after the flags (named on fs's output
// as "NAME: unexpected argument").
func Parse(fs *flag.FlagSet, args []string, positional bool) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK, false
		}
		return ExitUsage, false
	}
	if !positional && fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return ExitUsage, false
	}
	return ExitOK, true
}
