package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/spec/seed"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/server/store"
)

// heldClaim holds each claim_task until release is closed, once it has
// said so on started, and records on cancelled whether the call's context
// was cancelled meanwhile.
type heldClaim struct {
	api.Handler
	started   chan struct{}
	release   chan struct{}
	cancelled chan error
}

func (h heldClaim) ClaimTask(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
	h.started <- struct{}{}
	<-h.release
	h.cancelled <- ctx.Err()
	return h.Handler.ClaimTask(ctx, in)
}

func holdClaims() (heldClaim, envOpts) {
	h := heldClaim{started: make(chan struct{}, 1), release: make(chan struct{}), cancelled: make(chan error, 1)}
	return h, envOpts{world: "world.json", wrap: func(next api.Handler) api.Handler { h.Handler = next; return h }}
}

const (
	heldClaimCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}`
	cancelClaim   = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"timeout"}}`
)

// TestCancelledCallIsAnswered: a call cancelled while it runs is still
// run to its end, its context never cancelled, and answered with its
// result, over stdio and HTTP: its claim may commit, so an error answer
// would lose it (the go-sdk cancelled its context, and answered a call
// cancelled while still queued with code 0).
func TestCancelledCallIsAnswered(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		h, o := holdClaims()
		e := newEnv(t, o)
		inR, inW := io.Pipe()
		var out testkit.Buffer
		done := make(chan error, 1)
		go func() { done <- e.srv.ServeStdio(context.Background(), fxBuilderRunner, inR, &out) }()
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+heldClaimCall+"\n")
		<-h.started
		io.WriteString(inW, cancelClaim+"\n")
		time.Sleep(50 * time.Millisecond) // let the cancellation reach the go-sdk, if it is passed on
		close(h.release)
		if err := <-h.cancelled; err != nil {
			t.Errorf("the claim's context: %v; want it to run to its end", err)
		}
		inW.Close()
		if err := <-done; err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
		for _, a := range stdioAnswers(t, out.String()) {
			if a.id == "2" && a.code != 0 {
				t.Fatalf("the cancelled claim was answered with error %d:\n%s", a.code, out.String())
			}
		}
		if !strings.Contains(out.String(), `"id":2,"result":{`) || !strings.Contains(out.String(), `"attempt_id"`) {
			t.Fatalf("the cancelled claim was not answered with its attempt:\n%s", out.String())
		}
	})
	t.Run("http", func(t *testing.T) {
		h, o := holdClaims()
		e := newEnv(t, o)
		runner := e.token(store.KindRunner, seed.BuilderAgent)
		sid := e.session(runner)
		answer := make(chan rpcAnswer, 1)
		go func() { answer <- e.post(runner, sid, []byte(heldClaimCall)) }()
		<-h.started
		if a := e.post(runner, sid, []byte(cancelClaim)); a.status != http.StatusAccepted {
			t.Fatalf("the cancellation: HTTP %d, want 202", a.status)
		}
		close(h.release)
		if err := <-h.cancelled; err != nil {
			t.Errorf("the claim's context: %v; want it to run to its end", err)
		}
		a := <-answer
		if a.Error != nil || !strings.Contains(string(a.Result), `"attempt_id"`) {
			t.Fatalf("the cancelled claim: HTTP %d, error %+v, result %s; want its attempt", a.status, a.Error, a.Result)
		}
	})
}
