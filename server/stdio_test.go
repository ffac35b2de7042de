package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
)

// stdioClient serves e over an in-memory transport as the holder of token
// (what --stdio does with PRICKLE_TOKEN) and connects a client to it.
func stdioClient(t *testing.T, e *env, token string) *api.Client {
	t.Helper()
	inR, inW := io.Pipe()   // the server's standard input
	outR, outW := io.Pipe() // its standard output
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.ServeStdio(ctx, token, inR, outW) }()
	ct := &mcp.IOTransport{Reader: outR, Writer: inW}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return api.NewClient(cs)
}

// TestServeStdio: the three tools over stdio, identity from the token the
// server was started with; the token is checked on every call, so a
// credential expires mid-session.
func TestServeStdio(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	ctx := context.Background()
	if err := e.srv.ServeStdio(ctx, "prk_unknown-token-000000", strings.NewReader(""), io.Discard); !errors.Is(err, store.ErrUnknownToken) {
		t.Fatalf("ServeStdio with an unknown token: %v", err)
	}

	runner := stdioClient(t, e, fxBuilderRunner)
	if _, err := runner.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "website-v2"}); err != nil {
		t.Fatal(err)
	}
	task, err := runner.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: "example-task-id", IdempotencyKey: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	two := int64(2)
	disc, err := runner.ClaimDiscussion(ctx, &api.ClaimDiscussionInput{MessageID: "wake-solo", IdempotencyKey: "stdio", Harness: &two})
	if err != nil {
		t.Fatal(err)
	}
	if disc.Role != "draft" || !disc.Lead {
		t.Errorf("discussion = %+v", disc)
	}
	_, err = runner.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: "task-theo", IdempotencyKey: "stdio"})
	if te, ok := rt.AsToolError(err); !ok || te.Code != store.CodeNotRouted {
		t.Errorf("claim of theo's task over stdio: %v", err)
	}

	agent := stdioClient(t, e, fxBuilderAgent)
	_, err = agent.ClaimTask(ctx, &api.ClaimTaskInput{TaskID: "example-task-id", IdempotencyKey: "stdio"})
	if te, ok := rt.AsToolError(err); !ok || te.Code != store.CodeNotRunner {
		t.Errorf("agent claim over stdio: %v", err)
	}

	cred := stdioClient(t, e, task.ExecutionCredential.Token)
	if _, err := cred.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "website-v2"}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(store.DefaultLaunchTimeout + time.Millisecond)
	_, err = cred.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "website-v2"})
	if te, ok := rt.AsToolError(err); !ok || te.Code != store.CodeUnauthenticated {
		t.Errorf("expired credential over stdio: %v", err)
	}

	for _, l := range callLines(t, e.logs.String()) {
		// (A call refused before its caller is attached, not_runner or
		// unauthenticated, is logged without a caller over stdio.)
		if (l.Outcome == "ok" || l.Code == store.CodeNotRouted) && l.Caller != "maya/builder" {
			t.Errorf("stdio call logged without its caller: %+v", l)
		}
	}
}

// TestStdioBadLines: a line that is not one JSON-RPC message is answered
// with a parse error (-32700) or invalid request (-32600) and the server
// reads on; every call sent before and after is answered, also when the
// input ends right after them, and the server returns nil at its end.
func TestStdioBadLines(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json", config: func(c *server.Config) { c.MaxBodyBytes = 4096 }})
	call := func(id int, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"claim_task","arguments":%s}}`, id, args)
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		call(2, `{"task_id":"example-task-id","idempotency_key":"k"}`),
		`garbage{`,
		call(3, `{"task_id":"example-task-id","idempotency_key":"k"}`) + ` xyz`,
		call(4, `{"task_id":"example-task-id","idempotency_key":"k"}`) + call(5, `{}`),
		`{"jsonrpc":"2.0","id":6,"method":"ping","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"foo":1}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping","pad":"` + strings.Repeat("x", 5000) + `"}`,
		"",
		call(8, `{"task_id":"example-task-id","idempotency_key":"k"}`),
		call(9, "{\"task_id\":\"example-task-id\",\"idempotency_key\":\"k\xff\"}"),
	}
	var out bytes.Buffer
	err := e.srv.ServeStdio(context.Background(), fxBuilderRunner, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out)
	if err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	answers := map[string]string{} // id -> "ok", a refusal code, or the JSON-RPC error code
	var nullIDs []int64
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a struct {
			ID     json.RawMessage `json:"id"`
			Result *struct {
				IsError bool `json:"isError"`
				Meta    struct {
					Code string `json:"code"`
				} `json:"_meta"`
			} `json:"result"`
			Error *struct {
				Code int64 `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("output line %q: %v", l, err)
		}
		switch {
		case a.Error != nil && string(a.ID) == "null":
			nullIDs = append(nullIDs, a.Error.Code)
		case a.Error != nil:
			answers[string(a.ID)] = fmt.Sprint(a.Error.Code)
		case a.Result.IsError:
			answers[string(a.ID)] = a.Result.Meta.Code
		default:
			answers[string(a.ID)] = "ok"
		}
	}
	want := map[string]string{"1": "ok", "2": "ok", "8": "ok", "9": "invalid_arguments", "1.5": "-32600"}
	for id, w := range want {
		if answers[id] != w {
			t.Errorf("id %s: answered %q, want %q (all: %v)", id, answers[id], w, answers)
		}
	}
	for _, id := range []string{"3", "4", "5", "6", "7"} {
		if _, ok := answers[id]; ok {
			t.Errorf("id %s of a malformed line was answered as a call: %v", id, answers)
		}
	}
	slices.Sort(nullIDs)
	if got, want := fmt.Sprint(nullIDs), "[-32700 -32700 -32700 -32700 -32600 -32600]"; got != want {
		t.Errorf("errors without an id: %s, want %s", got, want)
	}
}

// TestStdioDuplicateIDs: two requests in progress with one id (or with
// ids the go-sdk would read as one, as invalid strings) are each
// answered, never lost, and the end of input still ends the session.
func TestStdioDuplicateIDs(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	call := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}`
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	for range 20 {
		lines = append(lines, call("2"))
	}
	lines = append(lines, call(`"\ud800"`), call(`"\udc00"`), `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	inR, inW := io.Pipe()
	go func() {
		inW.Write([]byte(strings.Join(lines, "\n") + "\n"))
		inW.Close()
	}()
	var out testkit.Buffer
	done := make(chan error, 1)
	go func() { done <- e.srv.ServeStdio(context.Background(), fxBuilderRunner, inR, &out) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the session did not end after its input did; output:\n%s", out.String())
	}
	count := map[string]int{}
	for _, a := range stdioAnswers(t, out.String()) {
		if a.code == -32600 {
			count["refused "+a.id]++
		} else {
			count[a.id]++
		}
	}
	if count["2"]+count["refused 2"] != 20 || count["2"] == 0 || count["3"] != 1 || count["1"] != 1 {
		t.Errorf("answers by id: %v; want each of the 20 requests with id 2 answered (some refused while another is in progress), 1 and 3 once", count)
	}
	if count["refused null"] != 2 {
		t.Errorf("ids that are not Unicode strings: %v, want both refused (id null)", count)
	}
}

// TestStdioErrorCodes: every error answer carries a JSON-RPC code a client
// can read (the go-sdk wrote some with code 0): a call before initialize,
// params that are not an object, a second initialize.
func TestStdioErrorCodes(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	initialize := `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"claim_task","arguments":{}}}`,
		fmt.Sprintf(initialize, 2),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		fmt.Sprintf(initialize, 3),
		`{"jsonrpc":"2.0","id":4,"method":"initialize","params":[]}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[]}`,
		`{"jsonrpc":"2.0","id":6,"method":"nope/nope"}`,
	}
	var out bytes.Buffer
	if err := e.srv.ServeStdio(context.Background(), fxBuilderRunner, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	codes := map[string]int64{}
	for _, a := range stdioAnswers(t, out.String()) {
		if a.code != 0 {
			codes[a.id] = a.code
		}
	}
	want := map[string]int64{"1": -32600, "3": -32600, "4": -32602, "5": -32602, "6": -32601}
	if !reflect.DeepEqual(codes, want) {
		t.Errorf("error codes by id: %v, want %v", codes, want)
	}
}

// stdioAnswer is one line of a stdio session's output: its id (as JSON)
// and its JSON-RPC error code (0 for a result).
type stdioAnswer struct {
	id   string
	code int64
}

func stdioAnswers(t *testing.T, out string) []stdioAnswer {
	t.Helper()
	var as []stdioAnswer
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		type answer struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int64 `json:"code"`
			} `json:"error"`
		}
		var batch []answer // a batch's answers are one line
		if err := json.Unmarshal([]byte(l), &batch); err != nil {
			batch = make([]answer, 1)
			if err := json.Unmarshal([]byte(l), &batch[0]); err != nil {
				t.Fatalf("output line %q: %v", l, err)
			}
		}
		for _, a := range batch {
			sa := stdioAnswer{id: string(a.ID)}
			if a.Error != nil {
				sa.code = a.Error.Code
			}
			as = append(as, sa)
		}
	}
	return as
}

// nested is a ping line whose message nests depth levels deep (the
// message's own object is the first): what the go-sdk's decoder bounds.
func nested(id, depth int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"x":%s%s}}`,
		id, strings.Repeat("[", depth-2), strings.Repeat("]", depth-2))
}

// sdkLines are messages at the edge of what the go-sdk reads, each with
// the protocol version of the session it is sent on, and the answer it
// gets: id "" for none (a notification, a response), code 0 for a result.
var sdkLines = []struct {
	name, proto, line, id string
	code                  int64
}{
	{"ping nested 1001 deep", protoTS, nested(9, 1001), "9", -32600},
	{"ping nested 1000 deep", protoTS, nested(9, 1000), "9", 0},
	{"batch nested 1001 deep", "2025-03-26", "[" + nested(9, 1001-1) + "]", "null", -32600},
	{"batch nested 1000 deep", "2025-03-26", "[" + nested(9, 1000-1) + "]", "9", 0},
	{"response without an id", protoTS, `{"jsonrpc":"2.0","result":{}}`, "null", -32600},
	{"error that is a string", protoTS, `{"jsonrpc":"2.0","id":9,"error":"boom"}`, "9", -32600},
	{"error code that is not an integer", protoTS, `{"jsonrpc":"2.0","id":9,"error":{"code":1.5,"message":"x"}}`, "9", -32600},
	{"error message that is a number", protoTS, `{"jsonrpc":"2.0","id":9,"error":{"code":1,"message":5}}`, "9", -32600},
	{"request with an error member", protoTS, `{"jsonrpc":"2.0","id":9,"method":"ping","error":"boom"}`, "9", -32600},
	{"method null", protoTS, `{"jsonrpc":"2.0","id":9,"method":null}`, "9", -32600},
	{"batch on a 2025-11-25 session", protoTS, `[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, "null", -32600},
	{"batch of a notification and a call", "2025-03-26", `[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}},{"jsonrpc":"2.0","id":9,"method":"ping"}]`, "9", 0},
	{"batch of two notifications", "2025-03-26", `[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}},{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{}}]`, "", 0},
	{"response to no request", protoTS, `{"jsonrpc":"2.0","id":99,"result":{}}`, "", 0},
	{"error response to no request", protoTS, `{"jsonrpc":"2.0","id":99,"error":{"code":-1,"message":"x","data":[1]}}`, "", 0},
}

// TestStdioLinesTheGoSDKRefuses: a line the front door let through but
// the go-sdk could not read ended the session (exit 1) and lost the calls
// in flight. Each such line (too deep for the go-sdk, a response without
// an id, an error member that is not a JSON-RPC error object, a method
// that is not a string, a batch once the session's protocol has none) is
// now answered -32600, and the calls before and after it are answered;
// the lines the go-sdk does read (the deepest it allows, a response to no
// request) pass as before, and a batch holding notifications is answered
// (the go-sdk waited for answers to its notifications, or ended the
// session for two of them).
func TestStdioLinesTheGoSDKRefuses(t *testing.T) {
	e := newEnv(t, envOpts{world: "world.json"})
	initialize := func(proto string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + proto + `","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	}
	claim := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"claim_task","arguments":{"task_id":"example-task-id","idempotency_key":"k"}}}`
	for _, c := range sdkLines {
		t.Run(c.name, func(t *testing.T) {
			lines := []string{initialize(c.proto), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, claim, c.line,
				`{"jsonrpc":"2.0","id":3,"method":"ping"}`}
			var out testkit.Buffer
			done := make(chan error, 1)
			go func() {
				done <- e.srv.ServeStdio(context.Background(), fxBuilderRunner, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out)
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("ServeStdio: %v; output:\n%s", err, out.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("the session did not end after its input did; output:\n%s", out.String())
			}
			got := map[string]int64{} // id -> error code (0: a result)
			for _, a := range stdioAnswers(t, out.String()) {
				got[a.id] = a.code
			}
			want := map[string]int64{"1": 0, "2": 0, "3": 0}
			if c.id != "" {
				want[c.id] = c.code
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("answers (id: error code, 0 a result) = %v, want %v; output:\n%.2000s", got, want, out.String())
			}
		})
	}
}
