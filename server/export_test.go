package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	pricklegen "github.com/prickle-dev/prickle/cmd/prickle-gen/app"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

// TestExportIsServed: the tools.json that `prickle-gen export` writes from
// the module's pages is, byte for byte, the tools array of the server's
// tools/list answer over HTTP.
func TestExportIsServed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "export")
	var stderr bytes.Buffer
	if code := pricklegen.Main(context.Background(), []string{"export", "-o", dir, filepath.Join("..", "spec", "reference")},
		nil, io.Discard, &stderr); code != pricklegen.ExitOK {
		t.Fatalf("prickle-gen export: exit %d\n%s", code, stderr.String())
	}
	exported, err := os.ReadFile(filepath.Join(dir, "tools.json"))
	if err != nil {
		t.Fatal(err)
	}

	e := newEnv(t, envOpts{})
	agent := e.token(store.KindAgent, seed.BuilderAgent)
	a := e.post(agent, e.session(agent), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	var result struct {
		Tools      json.RawMessage `json:"tools"`
		NextCursor string          `json:"nextCursor"`
	}
	if a.Result == nil || json.Unmarshal(a.Result, &result) != nil || result.NextCursor != "" {
		t.Fatalf("tools/list: status %d, result %s, error %+v", a.status, a.Result, a.Error)
	}
	if !bytes.Equal(exported, result.Tools) {
		t.Errorf("tools.json is not the tools/list answer:\nexported: %.400s\nserved:   %.400s", exported, result.Tools)
	}
}
