// Command prickle-gen turns the Prickle tool-reference pages into a
// canonical spec, lints and formats them, and generates the typed Go API.
//
// Usage:
//
//	prickle-gen spec [-o FILE] [PATH...]
//	prickle-gen lint [-format text|json|github|markdown] [PATH...]
//	prickle-gen fmt [-l] [-d] [-w] [PATH...]
//	prickle-gen generate [-o DIR] [-pkg NAME] [-docs DIR] [PATH...]
//	prickle-gen check
//	prickle-gen diff [-format text|json|github|markdown] [-fail-go] OLD NEW
//
// PATH is a page or a folder of pages; with none, the module's pages when
// run inside it, else the pages built in. Exit status: 0 clean (warnings
// alone too), 1 an error, a diff or a breaking change, 2 usage or I/O
// error. -format github prints GitHub Actions annotations, -format
// markdown a summary for a job summary or a pull-request comment.
//
// The command's code is package app beside it (cmd/prickle-gen/app); this
// main only calls app.Main and must import nothing else of this module.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/prickle-dev/prickle/cmd/prickle-gen/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
