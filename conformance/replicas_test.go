package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
)

// TestScriptReplicas: against two replicas a script's calls alternate
// between them, a call with -replica goes to the replica it names (and
// takes no turn), and a group's race lines go each to the replica of its
// place, or to the one it names; the report counts the calls each
// replica answered, and every replica's start.
func TestScriptReplicas(t *testing.T) {
	sp, _ := loadSuite(t)
	dir := t.TempDir()
	claim := func(cmd, key string) string {
		return cmd + ` claim_task '{"task_id":"example-task-id","idempotency_key":"` + key + `"}'` + "\n"
	}
	src := "# calls spread over replicas\n" +
		claim("call -as runner:maya/builder", "k0") + // replica 0
		claim("call -as runner:maya/builder", "k1") + // 1
		claim("call -replica 1 -as runner:maya/builder", "k2") + // 1, named
		claim("call -as runner:maya/builder", "k3") + // 0
		claim("race -as runner:maya/builder", "r0") + // 0, its place
		claim("race -as runner:maya/builder", "r1") + // 1
		claim("race -as runner:maya/builder -replica 0", "r2") + // 0, named
		"concurrently\n"
	if err := os.WriteFile(filepath.Join(dir, "spread.txtar"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	scripts, err := conformance.LoadScripts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string]int{} // key -> replica
	target := mutantTarget(mutant{name: "reference", replicas: 2})
	newReplica := target.NewReplica
	target.NewReplica = func(ctx context.Context, r int, stateDir string, fixture []byte) (http.Handler, func(), error) {
		h, cleanup, err := newReplica(ctx, r, stateDir, fixture)
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Params struct {
					Arguments struct {
						Key string `json:"idempotency_key"`
					} `json:"arguments"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Params.Arguments.Key != "" {
				mu.Lock()
				got[msg.Params.Arguments.Key] = r
				mu.Unlock()
			}
			h.ServeHTTP(w, req)
		}), cleanup, err
	}
	rep, err := conformance.Run(context.Background(), scripts, conformance.Options{Target: target, Spec: sp, Profile: conformance.Reference})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Result("spread"); r == nil || r.Status == report.Fail {
		t.Fatalf("the script: %+v", r)
	}
	want := map[string]int{"k0": 0, "k1": 1, "k2": 1, "k3": 0, "r0": 0, "r1": 1, "r2": 0}
	for k, r := range want {
		if g, ok := got[k]; !ok || g != r {
			t.Errorf("the call with key %s went to replica %d (%v), want %d", k, g, ok, r)
		}
	}
	if rep.Replicas != 2 || !slices.Equal(rep.ReplicaCalls, []int{4, 3}) || rep.Starts != 2 {
		t.Errorf("report: %d replicas, calls answered %v, %d starts; want 2, [4 3], 2 (one deployment of two)", rep.Replicas, rep.ReplicaCalls, rep.Starts)
	}
}
