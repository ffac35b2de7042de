package server

import (
	"log/slog"
	"testing"

	"github.com/prickle-dev/prickle/server/store"
)

// BenchmarkReadMessages: the front door's check of a typical tools/call
// body (readMessages), which every POST pays before the go-sdk reads it.
func BenchmarkReadMessages(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"runner-claim-example-1"},"_meta":{"progressToken":7}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readMessages(body, DefaultMaxNumberDigits); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify: the bearer-token check every HTTP request pays (a
// runner token, from the store's cache).
func BenchmarkVerify(b *testing.B) {
	s, issued, err := New(b.Context(), Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	var tok string
	for _, it := range issued {
		if it.Kind == store.KindRunner {
			tok = it.Token
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.verify(b.Context(), tok, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIsJSON: the front door's Content-Type check, as clients send it
// and with parameters.
func BenchmarkIsJSON(b *testing.B) {
	for _, ct := range []string{"application/json", "application/json; charset=utf-8"} {
		b.Run(ct, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !isJSON(ct) {
					b.Fatal("not JSON")
				}
			}
		})
	}
}
