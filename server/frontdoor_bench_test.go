package server

import "testing"

// BenchmarkReadMessages: the front door's check of a typical tools/call
// body (readMessages), which every POST pays before the go-sdk reads it.
func BenchmarkReadMessages(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"runner-claim-example-1"},"_meta":{"progressToken":7}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := readMessages(body); err != nil {
			b.Fatal(err)
		}
	}
}
