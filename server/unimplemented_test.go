package server_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/seed"
)

// Every documented tool is served. Those the server does not implement
// (a page added before its implementation) answer their example with a
// not_implemented refusal naming the tool, and start-up logs each; the
// others answer anything but not_implemented.
func TestEveryDocumentedToolIsServed(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOpts{})
	c := e.connect(e.token(store.KindAgent, seed.BuilderAgent))
	missing := server.Unimplemented()
	for _, tool := range sp.Tools {
		name := api.ToolName(tool.Name)
		res, _, err := c.call(name, string(tool.ExampleInput.JSON))
		if err != nil {
			t.Errorf("%s: not served: %v", name, err)
			continue
		}
		te := rt.ToolErrorFromResult(res)
		refusedAsMissing := te != nil && te.Code == rt.CodeNotImplemented
		if refusedAsMissing != slices.Contains(missing, name) {
			t.Errorf("%s: answer %v; unimplemented: %v", name, te, missing)
		}
		if refusedAsMissing && !strings.Contains(te.Message, tool.Name) {
			t.Errorf("%s: the refusal does not name the tool: %q", name, te.Message)
		}
	}
	// Serving logs each tool it does not implement (the context is already
	// done: Serve starts, logs, and shuts down).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.srv.Serve(ctx, ln); err != nil {
		t.Fatal(err)
	}
	for _, name := range missing {
		if !strings.Contains(e.logs.String(), `"tool":"`+string(name)+`"`) {
			t.Errorf("%s: serving did not log it as not implemented:\n%s", name, e.logs.String())
		}
	}
}
