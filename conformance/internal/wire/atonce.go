package wire

import (
	"context"
	"encoding/json"
	"net/http/httptrace"
	"sync"
	"time"
)

// AtOnce is one tool call of a group that SendAtOnce sends together.
type AtOnce struct {
	// Client holds the session the call is made in.
	Client *Client
	// Token is the bearer token ("" for none).
	Token string
	Tool  string
	Args  json.RawMessage

	// Resp and Err are what came back, as Client.CallTool returns them.
	Resp *Response
	Err  error
	// Start and End bracket the request.
	Start, End time.Time
	// Wrote is when the whole request was written to its connection, and
	// FirstByte when the first byte of the answer arrived (zero if it
	// never was, or never did): what was on the wire, not when a
	// goroutine began.
	Wrote, FirstByte time.Time
}

// SendAtOnce sends the tool calls of calls together, each from its own
// client, and waits for every answer. Every session is opened first (its
// connection is then open and warm), so that the requests leave together:
// each from a goroutine of its own, all released at once. (Holding each
// request's last byte until all are written synchronizes them on the wire
// instead; measured here, it caught the race mutants no more often, since
// each then needs a connection of its own, which the server spends more
// on.)
func SendAtOnce(ctx context.Context, calls []*AtOnce) {
	for _, a := range calls {
		_ = a.Client.Open(ctx, a.Token) // a session that cannot be opened fails its call, when sent
	}
	SendCold(ctx, calls)
}

// SendCold is SendAtOnce without opening the sessions first: each call
// opens its session (and connection) after the release, as a naive
// sender would (the overlap measurements compare it).
func SendCold(ctx context.Context, calls []*AtOnce) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, a := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mu sync.Mutex // the trace's hooks may run on the transport's goroutines
			tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
				WroteRequest: func(httptrace.WroteRequestInfo) {
					mu.Lock()
					a.Wrote = time.Now()
					mu.Unlock()
				},
				GotFirstResponseByte: func() {
					mu.Lock()
					a.FirstByte = time.Now()
					mu.Unlock()
				},
			})
			<-start
			a.Start = time.Now()
			a.Resp, a.Err = a.Client.CallTool(tctx, a.Token, a.Tool, a.Args)
			mu.Lock()
			a.End = time.Now()
			mu.Unlock()
		}()
	}
	time.Sleep(time.Millisecond) // let every sender reach the start
	close(start)
	wg.Wait()
}

// Overlapped reports whether the calls of a group were all in flight at
// one instant, on the wire: every request was written whole before the
// first byte of any answer arrived. A server that answers one call at a
// time (a global lock) still had them all; a call the client queued but
// did not send, or sent after an answer began, breaks it. Fewer than two
// calls never overlap.
func Overlapped(calls []*AtOnce) bool {
	if len(calls) < 2 {
		return false
	}
	var lastWrote, firstAnswer time.Time
	for _, a := range calls {
		if a.Wrote.IsZero() || a.FirstByte.IsZero() {
			return false
		}
		if a.Wrote.After(lastWrote) {
			lastWrote = a.Wrote
		}
		if firstAnswer.IsZero() || a.FirstByte.Before(firstAnswer) {
			firstAnswer = a.FirstByte
		}
	}
	return lastWrote.Before(firstAnswer)
}
