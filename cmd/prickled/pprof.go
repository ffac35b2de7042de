//go:build pprof

package main

// Profiling build: go build -tags pprof ./cmd/prickled. With
// PRICKLED_PPROF=127.0.0.1:6060 in its environment, prickled serves
// net/http/pprof on that address, a listener of its own: the default
// build has no pprof, and the MCP listener never has it.

import (
	"fmt"
	"os"

	"github.com/prickle-dev/prickle/internal/pprofx"
)

func init() {
	addr := os.Getenv("PRICKLED_PPROF")
	if addr == "" {
		return
	}
	at, err := pprofx.Serve(addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "prickled: PRICKLED_PPROF: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "prickled: pprof on http://%s/debug/pprof/\n", at)
}
