package server_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
)

// FuzzToolsCall: a POST body through the whole HTTP handler, on a session
// of a runner (who may call all three tools) of a fresh seeded store:
// never a 5xx, never a panic, never a JSON-RPC internal error or one with
// code 0, never a 400 that is not a JSON-RPC error, and a body
// that is not a successful tool call never writes to the database (its
// data_version, seen from another connection, does not move).
func FuzzToolsCall(f *testing.F) {
	for _, s := range toolsCallSeeds {
		f.Add([]byte(s))
	}
	path := filepath.Join(f.TempDir(), "fuzz.db")
	post := runnerSession(f, path)
	dataVersion := dataVersionOf(f, path)
	f.Fuzz(func(t *testing.T, body []byte) {
		before := dataVersion()
		w := post(body)
		if w.Code >= 500 {
			t.Fatalf("%q: HTTP %d %s", body, w.Code, w.Body)
		}
		if w.Code == http.StatusBadRequest && w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%q: HTTP 400 %s %s, not a JSON-RPC error", body, w.Header().Get("Content-Type"), w.Body)
		}
		success := toolCallSucceeded(t, body, w)
		if !success && dataVersion() != before {
			t.Fatalf("%q: no successful tool call (HTTP %d %.300s), yet the database changed", body, w.Code, w.Body)
		}
		if success && !validCall(body) {
			t.Fatalf("%q: not one valid tools/call with valid arguments, yet it succeeded: %.300s", body, w.Body)
		}
	})
}

// toolsCallSeeds are FuzzToolsCall's seeds: a call of each tool, names
// that differ only in case, invalid text, trailing bytes, a batch, other
// methods and empty bodies.
var toolsCallSeeds = []string{
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
}

// runnerSession starts a server on a fresh seeded store at path and opens
// an MCP session as its runner (who may call all three tools); post sends
// a body on that session through the whole HTTP handler.
func runnerSession(f *testing.F, path string) (post func(body []byte) *httptest.ResponseRecorder) {
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
	postOn := func(session string, body []byte) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, mcpPost(server.PathMCP, runner, session, body))
		return w
	}
	session := postOn("", initializeBody).Header().Get("Mcp-Session-Id")
	if session == "" {
		f.Fatal("no session")
	}
	postOn(session, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return func(body []byte) *httptest.ResponseRecorder { return postOn(session, body) }
}

// dataVersionOf opens an observer connection to the SQLite database at
// path: the data_version it returns moves when another connection commits
// a write.
func dataVersionOf(f *testing.F, path string) func() int64 {
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
	return func() int64 {
		var v int64
		if err := obs.QueryRowContext(context.Background(), `PRAGMA data_version`).Scan(&v); err != nil {
			f.Fatal(err)
		}
		return v
	}
}

// toolCallSucceeded reports whether the answer w to body holds a
// successful tool call; a JSON-RPC internal error, or one with code 0,
// fails t.
func toolCallSucceeded(t *testing.T, body []byte, w *httptest.ResponseRecorder) bool {
	t.Helper()
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
		if a.Error != nil && (a.Error.Code == -32603 || a.Error.Code == 0) {
			t.Fatalf("%q: JSON-RPC error with code %d: %s", body, a.Error.Code, m)
		}
		if a.Result != nil && !a.Result.IsError && a.Result.SC != nil {
			success = true
		}
	}
	return success
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

// FuzzStdioSession: the lines of a stdio session (the fuzzer's input,
// split at each newline) as the holder of a runner token: the server
// never returns before its input ends, returns nil when it does, never
// answers an error with code 0, and answers every call it read: each line that holds a call gets an
// answer, and a call on a line that is one JSON value, with an id no
// other call has, gets an answer with its id.
func FuzzStdioSession(f *testing.F) {
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	claim := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}`
	ping := `{"jsonrpc":"2.0","id":3,"method":"ping"}`
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}}`,
		`{"jsonrpc":"2.0","result":{}}`, `{"jsonrpc":"2.0","id":9,"error":"boom"}`, `{"jsonrpc":"2.0","id":9,"result":{}}`,
		`[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, `{"jsonrpc":"2.0","id":9,"method":null}`, `garbage{`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"discover_team_agents","arguments":{"project":"website-v2"},"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":9,"method":"Tools/Call"}`,
	} {
		f.Add([]byte(strings.Join([]string{initialize, initialized, claim, line, ping}, "\n") + "\n"))
	}
	f.Add([]byte(`[` + initialize + `,` + ping + `]` + "\n" + claim))
	f.Add([]byte(strings.ReplaceAll(initialize, "2025-11-25", "2025-03-26") + "\n[" + claim + "," + ping + "]\n"))
	world, err := os.ReadFile(filepath.Join("testdata", "world.json"))
	if err != nil {
		f.Fatal(err)
	}
	srv, _, err := server.New(context.Background(), server.Config{Logger: slog.New(slog.DiscardHandler), MaxBodyBytes: 64 << 10,
		World: bytes.NewReader(world)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	f.Fuzz(func(t *testing.T, input []byte) {
		in := &eofReader{r: bytes.NewReader(input)}
		var out testkit.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		err := srv.ServeStdio(ctx, fxBuilderRunner, in, &out)
		switch {
		case ctx.Err() != nil:
			t.Fatalf("%q: the session did not end when its input did; output:\n%.3000s", input, out.String())
		case err != nil:
			t.Fatalf("%q: ServeStdio: %v", input, err)
		case !in.eof.Load():
			t.Fatalf("%q: ServeStdio returned before its input ended", input)
		}
		answers, answered := 0, map[string]bool{} // answer lines; the ids they answer (idOf)
		for _, l := range strings.Split(out.String(), "\n") {
			if l == "" {
				continue
			}
			var msgs []map[string]json.RawMessage // a batch's answers are one line
			if json.Unmarshal([]byte(l), &msgs) != nil {
				msgs = make([]map[string]json.RawMessage, 1)
				if err := json.Unmarshal([]byte(l), &msgs[0]); err != nil {
					t.Fatalf("%q: output line %q is not JSON: %v", input, l, err)
				}
			}
			if _, notification := msgs[0]["method"]; !notification {
				answers++
			}
			for _, m := range msgs {
				answered[idOf(m["id"])] = true
				var e struct {
					Code *int64 `json:"code"`
				}
				if m["error"] != nil && (json.Unmarshal(m["error"], &e) != nil || e.Code == nil || *e.Code == 0) {
					t.Fatalf("%q: an error without a JSON-RPC code: %s", input, l)
				}
			}
		}
		lines := sessionLines(input, 64<<10)
		withCall, calls := 0, map[string]int{}
		for _, l := range lines {
			if len(l.ids) > 0 {
				withCall++
			}
			for _, id := range l.ids {
				calls[id]++
			}
		}
		if answers < withCall {
			t.Fatalf("%q: %d lines hold a call, %d answers:\n%.3000s", input, withCall, answers, out.String())
		}
		for _, l := range lines {
			if l.single && len(l.ids) == 1 && l.echoed && calls[l.ids[0]] == 1 && !answered[l.ids[0]] {
				t.Fatalf("%q: the call with id %s was not answered:\n%.3000s", input, l.ids[0], out.String())
			}
		}
	})
}

// sessionLine is what an outside reader sees in one line of a stdio
// session's input.
type sessionLine struct {
	ids    []string // of the calls (objects with a method and an id member) it holds, by idOf
	single bool     // one JSON object, strictly (no member named twice, nothing after it)
	echoed bool     // its call's id is a number or a string of Unicode characters, which an answer carries
}

// sessionLines reads input as the server's line filter splits it, lines
// longer than limit left out.
func sessionLines(input []byte, limit int) []sessionLine {
	var out []sessionLine
	for _, raw := range bytes.Split(input, []byte("\n")) {
		raw = bytes.Trim(raw, " \t\r")
		if len(raw) == 0 || len(raw) > limit {
			continue
		}
		var l sessionLine
		var msgs []map[string]json.RawMessage
		if json.Unmarshal(raw, &msgs) != nil {
			msgs = make([]map[string]json.RawMessage, 1)
			if json.Unmarshal(raw, &msgs[0]) != nil {
				continue
			}
			l.single = jsontext.Value(raw).IsValid(jsontext.AllowInvalidUTF8(true))
		}
		for _, m := range msgs {
			id, hasID := m["id"]
			if _, hasMethod := m["method"]; hasMethod && hasID {
				l.ids = append(l.ids, idOf(id))
				k := jsontext.Value(id).Kind()
				l.echoed = k == '0' || k == '"' && jsontext.Value(id).IsValid()
			}
		}
		out = append(out, l)
	}
	return out
}

// idOf is a JSON-RPC id by value: an answer may write it anew (1e2 as
// 100, "\u0041" as "A").
func idOf(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return strconv.Quote(v)
	}
	return string(raw)
}

// eofReader is a reader that records that it reached its end.
type eofReader struct {
	r   io.Reader
	eof atomic.Bool
}

func (r *eofReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err == io.EOF {
		r.eof.Store(true)
	}
	return n, err
}
