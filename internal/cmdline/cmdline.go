// Package cmdline holds what the project's commands (prickle-gen,
// prickled, prickle-conformance, prickle-load) share in reading their
// command lines.
//
// It imports nothing of this module, so that every command and tool can use
// it.
package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
)

// Exit statuses every command uses the same way.
const (
	ExitOK    = 0 // success, and -h
	ExitUsage = 2 // a bad command line
)

// Parse parses args into fs, a flag.ContinueOnError set that prints its
// own errors. ok is false when the command must exit with code: ExitOK
// after -h (which prints fs.Usage), ExitUsage after a bad flag or, unless
// positional arguments are allowed, an argument after the flags. A bad
// command line gets its one-line reason and where the flags are listed,
// not the whole usage, which would scroll the reason away.
func Parse(fs *flag.FlagSet, args []string, positional bool) (code int, ok bool) {
	usage := fs.Usage
	if usage == nil {
		usage = func() {
			fmt.Fprintf(fs.Output(), "Usage of %s:\n", fs.Name())
			fs.PrintDefaults()
		}
	}
	fs.Usage = func() {}
	defer func() { fs.Usage = usage }()
	hint := func() { fmt.Fprintf(fs.Output(), "run '%s -h' for its flags\n", fs.Name()) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
			return ExitOK, false
		}
		hint()
		return ExitUsage, false
	}
	if !positional && fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		hint()
		return ExitUsage, false
	}
	return ExitOK, true
}

// MCPEndpoint turns a server's URL into its MCP endpoint: an http(s) URL
// with no path gets /mcp.
func MCPEndpoint(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%q is not an http(s) URL: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q is not an http(s) URL", raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/mcp"
	}
	return u.String(), nil
}
