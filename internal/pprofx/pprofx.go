// Package pprofx serves net/http/pprof on a listener of its own, for the
// profiling builds of the project's servers: never on a server's own
// listener, and only where a command opts in.
//
// It imports nothing of this module.
package pprofx

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
)

// Serve listens on addr and serves the pprof handlers under /debug/pprof/
// until the process exits. It returns the address listened on.
func Serve(addr string) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go http.Serve(ln, mux)
	return ln.Addr(), nil
}
