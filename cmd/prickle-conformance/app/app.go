// Package app is the prickle-conformance command as a function:
// cmd/prickle-conformance calls [Main], and tests run it in-process. It
// loads the pages to certify against and the suite, runs package
// conformance against the server the command line names, and prints and
// writes the report; "call" makes one checked tool call, "trace" prints
// the traceability matrix.
//
// It may import the conformance suite, the spec, the world format and the
// ground floor of internal/; only cmd/prickle-conformance's main and tests
// import it, and it must not import the generator, the reference server
// (but in tests) or another command.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/internal/cmdline"
	"github.com/prickle-dev/prickle/spec"
)

// Exit statuses.
const (
	exitOK    = cmdline.ExitOK
	exitFail  = 1
	exitUsage = cmdline.ExitUsage
)

// Main runs one prickle-conformance command line until it is done or ctx
// is; it returns the exit status. stdin is read only by "call -".
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "trace" {
		return runTrace(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "call" {
		return runCall(ctx, args[1:], stdin, stdout, stderr)
	}
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		fmt.Fprintln(stdout, "prickle-conformance", cmdline.Version())
		return exitOK
	}
	return runSuite(ctx, args, stdout, stderr)
}

func usageErr(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "prickle-conformance: "+format+"\n", args...)
	return exitUsage
}

// loadSpec loads the spec to certify against: the bundled pages, or
// pagesPath (a folder of pages, a page, or a canonical spec file as
// prickle-gen spec writes it), and the suite for it.
func loadSpec(stderr io.Writer, pagesPath, scriptsDir string) (*spec.Spec, string, []*conformance.Script, bool) {
	var sp *spec.Spec
	var err error
	source := "bundled pages"
	switch {
	case pagesPath == "":
		sp, err = spec.LoadBundled()
	case strings.HasSuffix(pagesPath, ".json"):
		source = "spec file " + pagesPath
		var b []byte
		if b, err = os.ReadFile(pagesPath); err == nil {
			sp, err = spec.Unmarshal(b)
		}
	default:
		source = "pages " + pagesPath
		var srcs []spec.Source
		if srcs, err = spec.ReadPaths([]string{pagesPath}); err == nil {
			sp, _, err = spec.LoadLinted(srcs)
		}
	}
	if err != nil {
		var pe *spec.PagesError
		if errors.As(err, &pe) {
			for _, d := range pe.Diagnostics {
				fmt.Fprintf(stderr, "prickle-conformance: %s\n", d)
			}
		}
		fmt.Fprintf(stderr, "prickle-conformance: %s: %v\n", source, err)
		return nil, "", nil, false
	}
	var extra []*conformance.Script
	if scriptsDir != "" {
		if extra, err = conformance.LoadScripts(scriptsDir); err != nil {
			fmt.Fprintf(stderr, "prickle-conformance: --scripts: %v\n", err)
			return nil, "", nil, false
		}
	}
	scripts, warns, err := conformance.Suite(sp, extra...)
	if err != nil {
		fmt.Fprintf(stderr, "prickle-conformance: %v\n", err)
		return nil, "", nil, false
	}
	for _, w := range warns {
		fmt.Fprintf(stderr, "prickle-conformance: warning: %s\n", w)
	}
	return sp, source, scripts, true
}
