// Command prickled is the reference Prickle server: MCP over streamable
// HTTP at /mcp (or stdio with --stdio), on an embedded SQLite database.
//
//	prickled [--addr 127.0.0.1:8080] [--db prickled.db] [--world FILE]
//	         [--tokens-out FILE] [--launch-timeout 15m] [--stdio] [limits]
//	prickled token issue|rotate --agent OWNER/NAME [--runner ID] [--db FILE] [--tokens-out FILE]
//	prickled --version
//
// On an empty database it seeds the documented world; --world adds the
// world of a file instead (--fixture FILE, its older name, is the same).
// The tokens created are shown once (printed, or written to --tokens-out).
// "prickled token" issues or rotates a token of a database that already
// holds a world. SIGINT or SIGTERM finish in-flight calls, then exit 0.
// The limits (timeouts, sessions, connections) and every decision are in
// server/README.md.
//
// The command's code is package app beside it (cmd/prickled/app); this main
// only calls app.Main and must import nothing else of this module.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/prickle-dev/prickle/cmd/prickled/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
