// Command bench-compare runs the generator's benchmarks on a base commit
// and on the work tree, side by side in one run, and prints benchstat's
// comparison with the ratios (package benchcompare, beside it). make
// bench-compare BASE=<commit> runs it. It is a tool of this repository's
// development, not one of the commands cmd/ installs.
//
// It only calls benchcompare.Main.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/prickle-dev/prickle/tools/bench-compare/benchcompare"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := benchcompare.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
