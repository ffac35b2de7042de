//go:build pprof

package app

// Profiling build: go build -tags pprof ./cmd/prickled. With
// PRICKLED_PPROF=127.0.0.1:6060 in its environment, prickled serves
// net/http/pprof on that address, a listener of its own: the default
// build has no pprof, and the MCP listener never has it.

import (
	"fmt"
	"io"
	"os"

	"github.com/prickle-dev/prickle/internal/pprofx"
)

// startPprof serves pprof on $PRICKLED_PPROF, when it is set.
func startPprof(stderr io.Writer) error {
	addr := os.Getenv("PRICKLED_PPROF")
	if addr == "" {
		return nil
	}
	at, err := pprofx.Serve(addr)
	if err != nil {
		return fmt.Errorf("PRICKLED_PPROF: %w", err)
	}
	fmt.Fprintf(stderr, "prickled: pprof on http://%s/debug/pprof/\n", at)
	return nil
}
