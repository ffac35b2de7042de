// Package app is the prickle-gen command (spec, lint, fmt, generate,
// check, diff, export) as a function: cmd/prickle-gen calls [Main], and its
// testscript goldens run it in-process.
//
// It may import the generator, the spec and the ground floor of internal/;
// only cmd/prickle-gen's main and tests import it, and it must not import
// the reference server, the conformance suite or another command.
package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/prickle-dev/prickle/internal/cmdline"
)

// Exit statuses.
const (
	ExitOK       = cmdline.ExitOK    // clean
	ExitFindings = 1                 // findings, a diff, something breaking
	ExitUsage    = cmdline.ExitUsage // usage or I/O error
)

// command is one subcommand.
type command struct {
	name    string
	usage   string // argument synopsis
	summary string
	run     func(c *invocation, cmd *command, args []string) int
}

// commands lists prickle-gen's commands in the order usage shows them.
func commands() []*command {
	return []*command{specCommand, lintCommand, fmtCommand, generateCommand, checkCommand, diffCommand, exportCommand}
}

// lookup returns the command name, or nil.
func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// invocation carries the streams of one invocation.
type invocation struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// fail prints a one-line reason and returns ExitUsage.
func (c *invocation) fail(format string, args ...any) int {
	fmt.Fprintf(c.stderr, "prickle-gen: "+format+"\n", args...)
	return ExitUsage
}

// flags returns a flag set for a subcommand that prints its usage on -h.
func (c *invocation) flags(cmd *command) *flag.FlagSet {
	fs := flag.NewFlagSet("prickle-gen "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() {
		fmt.Fprintf(c.stderr, "usage: prickle-gen %s %s\n\n%s\n", cmd.name, cmd.usage, cmd.summary)
		if hasFlags(fs) {
			fmt.Fprintln(c.stderr, "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parse parses flags (subcommands take positional arguments); ok is false
// when the command should exit with code.
func (c *invocation) parse(fs *flag.FlagSet, args []string) (code int, ok bool) {
	return cmdline.Parse(fs, args, true)
}

// Main runs prickle-gen with args (without the program name) and returns
// the exit status. Its commands are short-lived and read files only, so
// ctx is not watched.
func Main(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &invocation{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		usage(stderr)
		return ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return ExitOK
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, "prickle-gen", cmdline.Version())
		return ExitOK
	}
	cmd := lookup(args[0])
	if cmd == nil {
		return c.fail("unknown command %q (run 'prickle-gen help')", args[0])
	}
	return cmd.run(c, cmd, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: prickle-gen COMMAND [flags] [PATH...]")
	fmt.Fprintln(w, "\nPATH is a page or a folder of pages; with none, the module's pages (spec/reference)\nwhen run inside it, else the pages built in.")
	fmt.Fprintln(w, "Exit status: 0 clean (warnings alone too), 1 an error, a diff or a breaking change, 2 usage or I/O error.")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, firstLine(c.summary))
	}
	fmt.Fprintln(w, "\nRun 'prickle-gen COMMAND -h' for a command's flags, 'prickle-gen --version' for the build.")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
