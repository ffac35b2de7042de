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
//	prickle-conformance trace [--json]
//
// With --server-cmd, a fresh server is started per script with `sh -c`;
// its environment carries PRICKLE_FIXTURE (the world to load),
// PRICKLE_ADDR and PRICKLE_PORT (where to listen) and PRICKLE_STATE_DIR
// (a fresh folder for its files). With --url, an already running server
// loaded with the standard seed world is tested; scripts that need their
// own world are skipped. See conformance/README.md.
//
// Exit status: 0 clean, 1 failures (or an expected failure that passes,
// or untracked sentences for trace), 2 usage or I/O error.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
