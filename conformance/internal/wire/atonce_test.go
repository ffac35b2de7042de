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

// TestOverlapped: a group counts as overlapped from what was on the wire.
// A server that answers one call at a time (a global lock) had every
// request before it answered the first; calls the client queued behind
// one connection (MaxConnsPerHost 1) were not all sent before an answer
// began, although their goroutines all started at once.
func TestOverlapped(t *testing.T) {
	var lock sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     int64 `json:"id"`
			Method string
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &msg)
		switch msg.Method {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":%q}}`, msg.ID, ProtocolVersion)
		case "tools/call":
			lock.Lock() // one call at a time
			defer lock.Unlock()
			time.Sleep(20 * time.Millisecond)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{}}`, msg.ID)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()
	group := func(hc func() *http.Client) []*AtOnce {
		var calls []*AtOnce
		for range 4 {
			c := NewClient(srv.URL, hc())
			t.Cleanup(c.Close)
			calls = append(calls, &AtOnce{Client: c, Tool: "t", Args: json.RawMessage(`{}`)})
		}
		SendAtOnce(context.Background(), calls)
		for i, a := range calls {
			if a.Err != nil {
				t.Fatalf("call %d: %v", i, a.Err)
			}
		}
		return calls
	}
	own := func() *http.Client { return &http.Client{Transport: &http.Transport{}} }
	if calls := group(own); !Overlapped(calls) {
		t.Errorf("a group on connections of its own, against a global lock, is not counted overlapped: %+v", calls)
	}
	one := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	shared := func() *http.Client { return one }
	if calls := group(shared); Overlapped(calls) {
		t.Errorf("calls queued behind one connection are counted overlapped: %+v", calls)
	}
	if Overlapped(nil) || Overlapped([]*AtOnce{{Wrote: time.Now(), FirstByte: time.Now().Add(time.Second)}}) {
		t.Error("fewer than two calls counted overlapped")
	}
}
