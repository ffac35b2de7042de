package conformance_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"regexp"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/spec"
)

// A server embedded in a Go program is certified in-process: a
// HandlerTarget builds its HTTP handler for each script's world (a
// CmdTarget starts a process instead). Here the reference server, and a
// partial run (one script, without exploration), which cannot certify
// it and says what it is missing.
func ExampleRun() {
	pages, err := spec.LoadBundled()
	if err != nil {
		log.Fatal(err)
	}
	scripts, _, err := conformance.Suite(pages)
	if err != nil {
		log.Fatal(err)
	}
	target := &conformance.HandlerTarget{
		Name: "my server",
		New: func(ctx context.Context, fixture []byte) (http.Handler, func(), error) {
			srv, _, err := server.New(ctx, server.Config{World: bytes.NewReader(fixture),
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				return nil, nil, err
			}
			return srv.Handler(), func() { srv.Close() }, nil
		},
	}
	rep, err := conformance.Run(context.Background(), scripts, conformance.Options{
		Target:  target,
		Profile: conformance.Core,
		Spec:    pages,
		Run:     regexp.MustCompile(`^spec\.tools$`), // nil for a certification: every script and exploration
		Explore: conformance.DefaultExplore,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Result("spec.tools").Status)
	fmt.Println(rep.Verdict, rep.Clean())
	fmt.Println(rep.Missing[0])
	// Output:
	// pass
	// incomplete false
	// stateful exploration (the script explore) did not run
}
