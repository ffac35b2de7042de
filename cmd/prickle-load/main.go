// Command prickle-load is an out-of-process load generator for any Prickle
// server, with a bare go-sdk baseline server and a side-by-side comparison
// of the two, and of prickled's deployments on SQLite and PostgreSQL
// (package cmd/prickle-load/load; README.md, "Load and compare").
//
//	prickle-load run -url URL -tokens FILE [-mix OP[:W],...] [-c N] [-d D | -n N] [-json]
//	prickle-load fixture [-tasks N] [-o FILE] [-tokens-out FILE]
//	prickle-load bare [-addr HOST:PORT] [-outputs FILE | -like URL -tokens FILE]
//	prickle-load compare -server-cmd CMD [-baseline-cmd CMD] [-runs 3] [-json FILE]
//	prickle-load replicas -prickled PATH [-rounds 3] [-clients 1,16,64] [-json FILE]
//
// Exit status: 0 success, 1 failed calls or a run that could not be made,
// 2 usage error.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/prickle-dev/prickle/cmd/prickle-load/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
