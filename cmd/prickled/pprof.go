//go:build pprof

package main

// Profiling build: go build -tags pprof ./cmd/prickled. With
// PRICKLED_PPROF=127.0.0.1:6060 in its environment, prickled serves
// net/http/pprof on that address, a listener of its own: the default
// build has no pprof, and the MCP listener never has it.

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

func init() {
	addr := os.Getenv("PRICKLED_PPROF")
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "prickled: PRICKLED_PPROF: %v\n", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	fmt.Fprintf(os.Stderr, "prickled: pprof on http://%s/debug/pprof/\n", ln.Addr())
	go http.Serve(ln, mux)
}
