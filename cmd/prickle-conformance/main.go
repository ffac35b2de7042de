// Command prickle-conformance certifies a Prickle server against the tool
// reference pages: it runs the conformance suite (package conformance)
// against a server and reports, per script, whether the server does what
// the pages say.
//
// Usage:
//
//	prickle-conformance --server-cmd 'CMD ARGS' [flags]
//	prickle-conformance --url URL --tokens FILE [flags]
//	prickle-conformance --list [--run REGEX]
//	prickle-conformance trace [--json] [--pages PATH]
//
// With --server-cmd, a fresh server is started per script with `sh -c`;
// its environment carries PRICKLE_WORLD (the world to load; also as
// PRICKLE_FIXTURE, its older name), PRICKLE_ADDR and PRICKLE_PORT (where
// to listen) and PRICKLE_STATE_DIR (a fresh folder for its files). With --url, an already running server
// loaded with the standard seed world is tested; scripts that need their
// own world are skipped. Every run explores random sequences of calls
// (--explore N, --seed N); --pages PATH certifies against given pages. See
// conformance/README.md.
//
// Exit status: 0 when the run certifies the server, 1 when a script failed
// or the run is incomplete (or trace finds untracked sentences), 2 usage
// or I/O error.
//
// The command's code is package app beside it (cmd/prickle-conformance/app);
// this main only calls app.Main and must import nothing else of this module.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/prickle-dev/prickle/cmd/prickle-conformance/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
