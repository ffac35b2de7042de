//go:build !pprof

package app

import "io"

// startPprof does nothing: only a build with -tags pprof serves pprof.
func startPprof(io.Writer) error { return nil }
