package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
)

// FuzzToolsCall: a POST body through the whole HTTP handler, on a session
// of a runner (who may call all three tools) of a fresh seeded store:
// never a 5xx, never a panic, never a JSON-RPC internal error, and a body
// that is not a successful tool call never writes to the database (its
// data_version, seen from another connection, does not move).
func FuzzToolsCall(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k","wake":{"message_id":"example-task-request-id"}}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"claim_discussion","arguments":{"message_id":"example-message-id","idempotency_key":"d","harness":2}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"discover_team_agents","arguments":{"project":"website-v2"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k","TASK_ID":"x"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"claim_discussion","arguments":{"message_id":"example-message-id","idempotency_key":"d","harness":2.0,"HARNESS":9}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k\ud800"}}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"claim_task\",\"arguments\":{\"task_id\":\"example-task-id\",\"idempotency_key\":\"k\xff\"}}}",
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}xyz`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","Method":"initialize","params":{"name":"claim_task","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}`,
		`[{"jsonrpc":"2.0","id":11,"method":"ping"}]`, `{"jsonrpc":"2.0","id":12,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, `{}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	path := filepath.Join(f.TempDir(), "fuzz.db")
	srv, issued, err := server.New(context.Background(), server.Config{DB: path,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxBodyBytes: 64 << 10})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	var runner string
	for _, it := range issued {
		if it.Kind == store.KindRunner {
			runner = it.Token
		}
	}
	h := srv.Handler()
	post := func(session string, body []byte) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, mcpPost(server.PathMCP, runner, session, body))
		return w
	}
	session := post("", initializeBody).Header().Get("Mcp-Session-Id")
	if session == "" {
		f.Fatal("no session")
	}
	post(session, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))

	// An observer connection: its data_version moves when another
	// connection commits a write.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	obs, err := db.Conn(context.Background())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { obs.Close() })
	dataVersion := func() int64 {
		var v int64
		if err := obs.QueryRowContext(context.Background(), `PRAGMA data_version`).Scan(&v); err != nil {
			f.Fatal(err)
		}
		return v
	}

	f.Fuzz(func(t *testing.T, body []byte) {
		before := dataVersion()
		w := post(session, body)
		if w.Code >= 500 {
			t.Fatalf("%q: HTTP %d %s", body, w.Code, w.Body)
		}
		success := false
		for _, m := range jsonMessages(w.Header().Get("Content-Type"), w.Body.Bytes()) {
			var a struct {
				Result *struct {
					IsError bool            `json:"isError"`
					SC      json.RawMessage `json:"structuredContent"`
				} `json:"result"`
				Error *struct {
					Code int64 `json:"code"`
				} `json:"error"`
			}
			if json.Unmarshal(m, &a) != nil {
				continue
			}
			if a.Error != nil && a.Error.Code == -32603 {
				t.Fatalf("%q: JSON-RPC internal error: %s", body, m)
			}
			if a.Result != nil && !a.Result.IsError && a.Result.SC != nil {
				success = true
			}
		}
		if !success && dataVersion() != before {
			t.Fatalf("%q: no successful tool call (HTTP %d %.300s), yet the database changed", body, w.Code, w.Body)
		}
		if success && !validCall(body) {
			t.Fatalf("%q: not one valid tools/call with valid arguments, yet it succeeded: %.300s", body, w.Body)
		}
	})
}

// validCall reports whether body is one JSON value (encoding/json's
// judgment) without duplicate member names, and a tools/call whose
// arguments pass the tool's input validator: the only bodies that may
// succeed.
func validCall(body []byte) bool {
	if !json.Valid(body) || !jsontext.Value(body).IsValid(jsontext.AllowInvalidUTF8(true)) {
		return false
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return false
	}
	tool := api.Tool(api.ToolName(msg.Params.Name))
	return tool != nil && tool.Input.Validate(msg.Params.Arguments) == nil
}
