package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSendAtOnce: every session is open before any call of the group is
// sent (opening one is a round trip that would spread the calls out), and
// each answer reaches its own call, from a JSON body or an event stream.
func TestSendAtOnce(t *testing.T) {
	var mu sync.Mutex
	var methods []string // in the order they arrived
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     int64 `json:"id"`
			Method string
			Params struct {
				Name string `json:"name"`
			}
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &msg)
		mu.Lock()
		methods = append(methods, msg.Method)
		mu.Unlock()
		if msg.Method == "initialize" {
			if r.Header.Get("Authorization") == "Bearer 4" {
				time.Sleep(50 * time.Millisecond) // one slow session
			}
			w.Header().Set("Mcp-Session-Id", "s-"+r.Header.Get("Authorization"))
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":%q}}`, msg.ID, ProtocolVersion)
			return
		}
		if msg.Method != "tools/call" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"tool":%q,"session":%q}}`, msg.ID, msg.Params.Name, r.Header.Get("Mcp-Session-Id"))
		if strings.HasSuffix(msg.Params.Name, "sse") {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", answer)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, answer)
	}))
	defer srv.Close()

	var calls []*AtOnce
	for i := range 5 {
		c := NewClient(srv.URL, nil)
		defer c.Close()
		tool := fmt.Sprintf("tool%d", i)
		if i%2 == 1 {
			tool += "-sse"
		}
		calls = append(calls, &AtOnce{Client: c, Token: fmt.Sprint(i), Tool: tool, Args: json.RawMessage(`{}`)})
	}
	SendAtOnce(context.Background(), calls)

	for i, a := range calls {
		want := fmt.Sprintf(`{"tool":%q,"session":"s-Bearer %d"}`, a.Tool, i)
		switch {
		case a.Err != nil:
			t.Errorf("call %d: %v", i, a.Err)
		case string(a.Resp.Result) != want:
			t.Errorf("call %d: %s, want %s", i, a.Resp.Result, want)
		}
		if a.Start.IsZero() || a.End.Before(a.Start) {
			t.Errorf("call %d: start %v, end %v", i, a.Start, a.End)
		}
	}
	first := slices.Index(methods, "tools/call")
	if first != 2*len(calls) || slices.Contains(methods[first:], "initialize") {
		t.Errorf("the methods as they arrived: %q; want every session opened (initialize, notifications/initialized) before the first tools/call", methods)
	}
}
