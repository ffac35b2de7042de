package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/spec"
)

// stub is a Handler whose answers the tests set. It embeds
// UnimplementedHandler so that a page added later does not break it.
type stub struct {
	api.UnimplementedHandler
	claimDiscussion func(context.Context, *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error)
	claimTask       func(context.Context, *api.ClaimTaskInput) (*api.ClaimTaskOutput, error)
	discover        func(context.Context, *api.DiscoverTeamAgentsInput) (*api.DiscoverTeamAgentsOutput, error)
}

func (s *stub) ClaimDiscussion(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
	return s.claimDiscussion(ctx, in)
}
func (s *stub) ClaimTask(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
	return s.claimTask(ctx, in)
}
func (s *stub) DiscoverTeamAgents(ctx context.Context, in *api.DiscoverTeamAgentsInput) (*api.DiscoverTeamAgentsOutput, error) {
	return s.discover(ctx, in)
}

var expires = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func goodClaimTask(in *api.ClaimTaskInput) *api.ClaimTaskOutput {
	return &api.ClaimTaskOutput{
		Attempt: api.ClaimTaskOutputAttempt{AttemptID: "att-1", TaskID: in.TaskID, ClaimedAt: expires.Add(-15 * time.Minute)},
		ExecutionCredential: api.ClaimTaskOutputExecutionCredential{
			Token: "secret-token-value", ExpiresAt: expires,
			AllowedTools: []api.ToolName{api.ToolCheckpoint, api.ToolReturnResult},
		},
	}
}

func goodDiscussion() *api.ClaimDiscussionOutput {
	return &api.ClaimDiscussionOutput{
		Project: "website-v2", RepliesLeft: 3, Lead: true, Role: api.ClaimDiscussionOutputRoleReview,
		Reviewing: &api.ClaimDiscussionOutputReviewing{
			MessageID: "msg-1", Author: "alice/drafter", Body: "draft body",
			Provenance:       api.ClaimDiscussionOutputReviewingProvenanceAgentGenerated,
			ProvenanceStatus: api.ClaimDiscussionOutputReviewingProvenanceStatusClaimed,
		},
		DiscussionCredential: api.ClaimDiscussionOutputDiscussionCredential{
			Token: "tok", ExpiresAt: expires, AllowedTools: []api.ToolName{api.ToolReadRoom, api.ToolPostMessage},
		},
	}
}

func newStub() *stub {
	return &stub{
		claimDiscussion: func(context.Context, *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
			return goodDiscussion(), nil
		},
		claimTask: func(_ context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
			return goodClaimTask(in), nil
		},
		discover: func(context.Context, *api.DiscoverTeamAgentsInput) (*api.DiscoverTeamAgentsOutput, error) {
			return &api.DiscoverTeamAgentsOutput{}, nil
		},
	}
}

// wire records what the server writes, line by line.
type wire struct {
	mu    sync.Mutex
	lines [][]byte
	buf   bytes.Buffer
}

func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		w.lines = append(w.lines, append([]byte(nil), w.buf.Next(i+1)...))
	}
	return len(p), nil
}

func (w *wire) all() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][]byte(nil), w.lines...)
}

type teeWriteCloser struct {
	io.WriteCloser
	tee io.Writer
}

func (t teeWriteCloser) Write(p []byte) (int, error) {
	t.tee.Write(p)
	return t.WriteCloser.Write(p)
}

type env struct {
	cs     *mcp.ClientSession
	client *api.Client
	wire   *wire
	logs   *bytes.Buffer
}

// connect serves h over a pipe, recording the server's raw output.
func connect(t *testing.T, h api.Handler, opts *rt.RegisterOptions) *env {
	t.Helper()
	logs := &bytes.Buffer{}
	var logMu sync.Mutex
	if opts == nil {
		opts = &rt.RegisterOptions{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(lockedWriter{&logMu, logs}, nil))
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "prickle-test", Version: "0"}, nil)
	api.Register(s, h, opts)
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	w := &wire{}
	ctx := context.Background()
	ss, err := s.Connect(ctx, &mcp.IOTransport{Reader: c2sR, Writer: teeWriteCloser{s2cW, w}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return &env{cs: cs, client: api.NewClient(cs), wire: w, logs: logs}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestToolsListServesDocumentedSchemas(t *testing.T) {
	e := connect(t, newStub(), nil)
	res, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(s.Tools) {
		t.Fatalf("tools/list: %d tools, want %d", len(res.Tools), len(s.Tools))
	}
	// Semantically: what the client decoded equals the documented schema.
	for i, tool := range res.Tools {
		st := s.Tools[i]
		if tool.Name != st.Name {
			t.Fatalf("tool %d is %s, want %s", i, tool.Name, st.Name)
		}
		for _, c := range []struct {
			got  any
			want json.RawMessage
		}{{tool.InputSchema, st.InputSchema.JSON}, {tool.OutputSchema, st.OutputSchema.JSON}} {
			var want any
			if err := json.Unmarshal(c.want, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.got, want) {
				t.Errorf("%s: served schema differs from the documented one", st.Name)
			}
		}
	}
	// Byte-wise: the raw tools/list response carries each documented schema
	// with insignificant white space removed (encoding/json compacts a
	// RawMessage), key order and literals as written.
	var found bool
	for _, line := range e.wire.all() {
		var msg struct {
			Result struct {
				Tools []struct {
					Name         string          `json:"name"`
					InputSchema  json.RawMessage `json:"inputSchema"`
					OutputSchema json.RawMessage `json:"outputSchema"`
				} `json:"tools"`
			} `json:"result"`
		}
		if json.Unmarshal(line, &msg) != nil || len(msg.Result.Tools) == 0 {
			continue
		}
		found = true
		for i, tool := range msg.Result.Tools {
			st := s.Tools[i]
			if !bytes.Equal(tool.InputSchema, compact(t, st.InputSchema.Body())) {
				t.Errorf("%s: input schema on the wire:\n%s\nwant the documented bytes compacted:\n%s", st.Name, tool.InputSchema, st.InputSchema.JSON)
			}
			if !bytes.Equal(tool.OutputSchema, compact(t, st.OutputSchema.Body())) {
				t.Errorf("%s: output schema on the wire differs from the documented bytes", st.Name)
			}
			if !bytes.Equal(tool.InputSchema, st.InputSchema.JSON) {
				t.Errorf("%s: wire bytes differ from spec's compact JSON", st.Name)
			}
		}
	}
	if !found {
		t.Fatal("no tools/list response on the wire")
	}
	// The generated constants are the documented fences, byte for byte.
	if api.ClaimTaskInputSchema != string(s.Tool("claim_task").InputSchema.Body()) {
		t.Error("ClaimTaskInputSchema is not the documented fence")
	}
}

func compact(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func call(t *testing.T, e *env, name api.ToolName, args string) *mcp.CallToolResult {
	t.Helper()
	res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: string(name), Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// A handler that embeds UnimplementedHandler and implements nothing serves
// every documented tool, refuses each call as not_implemented naming the
// tool, and Unimplemented lists them all; a method of its own takes the
// tool off the list.
func TestUnimplementedHandler(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ api.UnimplementedHandler }
	var documented []api.ToolName
	for _, c := range api.Catalog {
		if c.Documented {
			documented = append(documented, c.Name)
		}
	}
	if got := api.Unimplemented(h); !slices.Equal(got, documented) {
		t.Errorf("Unimplemented = %v, want every documented tool %v", got, documented)
	}
	e := connect(t, h, nil)
	tools, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != len(sp.Tools) {
		t.Errorf("tools/list serves %d tools, want %d", len(tools.Tools), len(sp.Tools))
	}
	for _, tool := range sp.Tools {
		t.Run(tool.Name, func(t *testing.T) {
			res := call(t, e, api.ToolName(tool.Name), string(tool.ExampleInput.JSON))
			te := rt.ToolErrorFromResult(res)
			if te == nil || te.Code != rt.CodeNotImplemented || !strings.Contains(te.Message, tool.Name) {
				t.Errorf("answer %q, want a not_implemented refusal naming %s", text(res), tool.Name)
			}
		})
	}
	// stub declares these three; whatever else is documented it leaves to
	// UnimplementedHandler.
	for _, declared := range []api.ToolName{api.ToolClaimTask, api.ToolClaimDiscussion, api.ToolDiscoverTeamAgents} {
		if got := api.Unimplemented(newStub()); slices.Contains(got, declared) {
			t.Errorf("Unimplemented(stub) = %v: lists %s, which stub declares", got, declared)
		}
	}
}

func TestBadArgumentsNamePointers(t *testing.T) {
	called := false
	h := newStub()
	h.claimTask = func(context.Context, *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
		called = true
		return nil, errors.New("unreachable")
	}
	e := connect(t, h, nil)
	res := call(t, e, api.ToolClaimTask, `{"task_id":"bad id!","idempotency_key":"","wake":{}}`)
	if !res.IsError {
		t.Fatalf("want isError, got %+v", res)
	}
	if called {
		t.Error("the handler ran on invalid arguments")
	}
	if res.StructuredContent != nil {
		t.Error("an error result carries structuredContent")
	}
	if got := res.Meta["code"]; got != "invalid_arguments" {
		t.Errorf("_meta.code = %v", got)
	}
	txt := text(res)
	if !strings.HasPrefix(txt, "invalid_arguments: ") {
		t.Errorf("text %q lacks the code prefix", txt)
	}
	// Every pointer is named, in sorted order.
	want := []string{"/idempotency_key", "/task_id", "/wake"}
	last := -1
	for _, p := range want {
		i := strings.Index(txt, p+": ")
		if i < 0 {
			t.Errorf("text %q does not name %s", txt, p)
		}
		if i < last {
			t.Errorf("pointers out of order in %q", txt)
		}
		last = i
	}
	vs, _ := res.Meta["violations"].([]any)
	if len(vs) < 3 {
		t.Errorf("_meta.violations = %v", res.Meta["violations"])
	}

	// The typed client turns it into a *rt.ToolError.
	_, err := e.client.ClaimTask(context.Background(), &api.ClaimTaskInput{TaskID: "", IdempotencyKey: "k"})
	te, ok := rt.AsToolError(err)
	if !ok || te.Code != rt.CodeInvalidArguments || !strings.Contains(te.Message, "/task_id") {
		t.Errorf("client error = %#v", err)
	}

	// Missing arguments altogether: the root is named.
	res = call(t, e, api.ToolDiscoverTeamAgents, `{}`)
	if !res.IsError || !strings.Contains(text(res), "/: ") {
		t.Errorf("missing project: %s", text(res))
	}
	// The documented lookahead pattern is enforced (ECMA-262).
	res = call(t, e, api.ToolDiscoverTeamAgents, `{"project":"web--site"}`)
	if !res.IsError || !strings.Contains(text(res), "/project: ") {
		t.Errorf("bad project: %s", text(res))
	}
}

func TestInvalidOutputIsInternalError(t *testing.T) {
	h := newStub()
	h.claimTask = func(_ context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
		out := goodClaimTask(in)
		out.ExecutionCredential.Token = "" // minLength 1
		out.Attempt.AttemptID = "not valid!"
		return out, nil
	}
	var infos []rt.CallInfo
	e := connect(t, h, &rt.RegisterOptions{OnCall: func(_ context.Context, ci rt.CallInfo) { infos = append(infos, ci) }})
	_, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: string(api.ToolClaimTask),
		Arguments: json.RawMessage(`{"task_id":"t1","idempotency_key":"k"}`)})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError {
		t.Fatalf("err = %v, want a JSON-RPC internal error", err)
	}
	for _, line := range e.wire.all() {
		if bytes.Contains(line, []byte("att-1")) || bytes.Contains(line, []byte("not valid!")) {
			t.Errorf("the invalid output left the server: %s", line)
		}
	}
	logs := e.logs.String()
	if !strings.Contains(logs, "/attempt/attempt_id") || !strings.Contains(logs, "/execution_credential/token") {
		t.Errorf("log does not name the violations: %s", logs)
	}
	if strings.Contains(logs, "not valid!") {
		t.Errorf("log quotes output values: %s", logs)
	}
	if len(infos) != 1 || infos[0].Outcome != rt.OutcomeInternalError {
		t.Errorf("OnCall = %+v", infos)
	}
}

func TestHandlerErrorsAndPanics(t *testing.T) {
	h := newStub()
	h.claimTask = func(context.Context, *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
		return nil, errors.New("database is down")
	}
	h.discover = func(context.Context, *api.DiscoverTeamAgentsInput) (*api.DiscoverTeamAgentsOutput, error) {
		panic("boom")
	}
	e := connect(t, h, nil)
	for _, c := range []struct {
		tool api.ToolName
		args string
	}{
		{api.ToolClaimTask, `{"task_id":"t1","idempotency_key":"k"}`},
		{api.ToolDiscoverTeamAgents, `{"project":"website-v2"}`},
	} {
		_, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: string(c.tool), Arguments: json.RawMessage(c.args)})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError {
			t.Errorf("%s: err = %v, want an internal error", c.tool, err)
		}
		if je != nil && strings.Contains(je.Message, "database") {
			t.Errorf("%s: the error leaks details: %s", c.tool, je.Message)
		}
	}
	if !strings.Contains(e.logs.String(), "database is down") || !strings.Contains(e.logs.String(), "boom") {
		t.Errorf("logs: %s", e.logs.String())
	}
}

func TestToolErrorIsErrorResultWithCode(t *testing.T) {
	h := newStub()
	h.claimDiscussion = func(context.Context, *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
		return nil, rt.Refuse("harness_required", "send harness: 2; update prickle-runner")
	}
	e := connect(t, h, nil)
	res := call(t, e, api.ToolClaimDiscussion, `{"message_id":"m1","idempotency_key":"k"}`)
	if !res.IsError || res.StructuredContent != nil {
		t.Fatalf("want an isError result without structuredContent: %+v", res)
	}
	if res.Meta["code"] != "harness_required" || text(res) != "harness_required: send harness: 2; update prickle-runner" {
		t.Errorf("meta %v text %q", res.Meta, text(res))
	}
	_, err := e.client.ClaimDiscussion(context.Background(), &api.ClaimDiscussionInput{MessageID: "m1", IdempotencyKey: "k"})
	te, ok := rt.AsToolError(err)
	if !ok || te.Code != "harness_required" || te.Message != "send harness: 2; update prickle-runner" {
		t.Errorf("client error = %#v", err)
	}
}

func TestBeforeAndIdentity(t *testing.T) {
	type principal struct{ runner string }
	type key struct{}
	h := newStub()
	var seen string
	h.claimTask = func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
		p, _ := ctx.Value(key{}).(*principal)
		if p == nil {
			return nil, rt.Refuse("unauthenticated", "no principal")
		}
		seen = p.runner
		if ti := rt.TokenInfoFrom(ctx); ti == nil || ti.UserID != "runner-1" {
			return nil, rt.Refuse("unauthenticated", "no token info")
		}
		return goodClaimTask(in), nil
	}
	var infos []rt.CallInfo
	opts := &rt.RegisterOptions{
		Before: func(ctx context.Context, tool string, req *mcp.CallToolRequest) (context.Context, error) {
			if api.ToolName(tool) == api.ToolDiscoverTeamAgents {
				return nil, rt.Refuse("forbidden", "runners may not discover")
			}
			ctx = rt.WithTokenInfo(ctx, &auth.TokenInfo{UserID: "runner-1"})
			return context.WithValue(ctx, key{}, &principal{runner: "runner-1"}), nil
		},
		OnCall: func(_ context.Context, ci rt.CallInfo) { infos = append(infos, ci) },
	}
	e := connect(t, h, opts)
	out, err := e.client.ClaimTask(context.Background(), &api.ClaimTaskInput{TaskID: "t1", IdempotencyKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if seen != "runner-1" || out.Attempt.TaskID != "t1" {
		t.Errorf("principal %q, output %+v", seen, out)
	}
	// Before refuses before the arguments are even looked at.
	res := call(t, e, api.ToolDiscoverTeamAgents, `{"project":"NOT VALID"}`)
	if !res.IsError || res.Meta["code"] != "forbidden" {
		t.Errorf("before-refusal: %+v %s", res.Meta, text(res))
	}
	res = call(t, e, api.ToolClaimTask, `{}`)
	if !res.IsError || res.Meta["code"] != "invalid_arguments" {
		t.Errorf("bad args: %s", text(res))
	}
	var outcomes []string
	for _, ci := range infos {
		outcomes = append(outcomes, ci.Tool+":"+string(ci.Outcome)+":"+ci.Code)
	}
	want := []string{"claim_task:ok:", "discover_team_agents:refused:forbidden", "claim_task:invalid_arguments:invalid_arguments"}
	if !reflect.DeepEqual(outcomes, want) {
		t.Errorf("OnCall outcomes = %v, want %v", outcomes, want)
	}
}

func TestClientRoundTrip(t *testing.T) {
	h := newStub()
	var gotIn *api.ClaimDiscussionInput
	h.claimDiscussion = func(_ context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
		gotIn = in
		return goodDiscussion(), nil
	}
	lastSeen := time.Date(2026, 2, 28, 23, 59, 59, 500_000_000, time.FixedZone("", 2*3600))
	h.discover = func(context.Context, *api.DiscoverTeamAgentsInput) (*api.DiscoverTeamAgentsOutput, error) {
		return &api.DiscoverTeamAgentsOutput{
			// People left nil: must go out as [].
			Agents: []api.DiscoverTeamAgentsOutputAgent{{
				AgentID: "alice/helper", Owner: "alice", Name: "helper", Model: "m", Client: "c", Role: "",
				Availability: api.DiscoverTeamAgentsOutputAgentAvailabilityOnline,
				TrustLevel:   api.DiscoverTeamAgentsOutputAgentTrustLevelOwnerVerified,
				LastSeenAt:   &lastSeen,
				// Capabilities nil: [] on the wire; AvatarURL nil: null.
			}},
		}, nil
	}
	e := connect(t, h, nil)
	ctx := context.Background()
	harness := int64(2)
	out, err := e.client.ClaimDiscussion(ctx, &api.ClaimDiscussionInput{MessageID: "m1", IdempotencyKey: "k", Harness: &harness})
	if err != nil {
		t.Fatal(err)
	}
	if gotIn == nil || gotIn.Harness == nil || *gotIn.Harness != 2 || gotIn.MessageID != "m1" {
		t.Errorf("handler got %+v", gotIn)
	}
	want := goodDiscussion()
	if !reflect.DeepEqual(out, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", out, want)
	}
	d, err := e.client.DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "website-v2"})
	if err != nil {
		t.Fatal(err)
	}
	if d.People == nil || len(d.People) != 0 || d.Agents[0].Capabilities == nil || d.Agents[0].AvatarURL != nil {
		t.Errorf("discover: %+v", d)
	}
	if !d.Agents[0].LastSeenAt.Equal(lastSeen) {
		t.Errorf("last_seen_at %v, want %v", d.Agents[0].LastSeenAt, lastSeen)
	}
	var raw string
	for _, line := range e.wire.all() {
		if bytes.Contains(line, []byte(`"alice/helper"`)) {
			raw = string(line)
		}
	}
	for _, frag := range []string{`\"people\":[]`, `\"capabilities\":[]`, `\"avatar_url\":null`, `\"last_seen_at\":\"2026-02-28T23:59:59.5+02:00\"`, `"people":[]`} {
		if !strings.Contains(raw, frag) {
			t.Errorf("wire lacks %s: %s", frag, raw)
		}
	}
}

func TestClientRejectsInvalidOutput(t *testing.T) {
	// A server that skips validation (registered by hand) sends a bad output;
	// the typed client refuses it with a *rt.ValidationError.
	s := mcp.NewServer(&mcp.Implementation{Name: "rogue", Version: "0"}, nil)
	for _, tool := range api.Tools() {
		s.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"people":null,"agents":[]}`),
				Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
		})
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_, err = api.NewClient(cs).DiscoverTeamAgents(ctx, &api.DiscoverTeamAgentsInput{Project: "p"})
	var ve *rt.ValidationError
	if !errors.As(err, &ve) || ve.Violations[0].Pointer != "/people" {
		t.Errorf("err = %v, want a validation error at /people", err)
	}
}

func TestMarshalling(t *testing.T) {
	b, err := json.Marshal(&api.DiscoverTeamAgentsOutput{})
	if err != nil || string(b) != `{"people":[],"agents":[]}` {
		t.Errorf("empty output marshals %s, %v", b, err)
	}
	if err := api.ValidateDiscoverTeamAgentsOutput(b); err != nil {
		t.Error(err)
	}
	// Required and nullable: null, never omitted.
	out := goodDiscussion()
	out.Reviewing = nil
	b, _ = json.Marshal(out)
	if !bytes.Contains(b, []byte(`"reviewing":null`)) || bytes.Contains(b, []byte(`own_room`)) {
		t.Errorf("marshal: %s", b)
	}
	if err := out.Validate(); err != nil {
		t.Error(err)
	}
	// Every valid documented output round-trips.
	in := []byte(`{"project":"p","own_room":false,"replies_left":0,"lead":false,"role":"draft","reviewing":null,"discussion_credential":{"token":"t","expires_at":"2024-02-29T12:00:00.250-05:30","allowed_tools":[]}}`)
	if err := api.ValidateClaimDiscussionOutput(in); err != nil {
		t.Fatal(err)
	}
	var v api.ClaimDiscussionOutput
	if err := json.Unmarshal(in, &v); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(&v)
	if err := api.ValidateClaimDiscussionOutput(b); err != nil {
		t.Errorf("%s: %v", b, err)
	}
	var a, c any
	json.Unmarshal(in, &a)
	json.Unmarshal(b, &c)
	a.(map[string]any)["discussion_credential"].(map[string]any)["expires_at"] = "x"
	c.(map[string]any)["discussion_credential"].(map[string]any)["expires_at"] = "x"
	if !reflect.DeepEqual(a, c) {
		t.Errorf("round trip changed the value:\n%s\n%s", in, b)
	}
	if !v.DiscussionCredential.ExpiresAt.Equal(time.Date(2024, 2, 29, 17, 30, 0, 250_000_000, time.UTC)) {
		t.Errorf("expires_at = %v", v.DiscussionCredential.ExpiresAt)
	}
	if !api.ClaimDiscussionOutputRoleCombine.Valid() || api.ClaimDiscussionOutputRole("lead").Valid() {
		t.Error("enum Valid")
	}
	if !api.ToolName(api.ToolRequestStep).Valid() || api.ToolName("frobnicate").Valid() {
		t.Error("ToolName Valid")
	}
	// The catalog is the spec's, in its order.
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	if len(api.Catalog) != len(sp.Catalog) {
		t.Fatalf("catalog: %d names, the spec has %d", len(api.Catalog), len(sp.Catalog))
	}
	for i, c := range api.Catalog {
		if want := sp.Catalog[i]; string(c.Name) != want.Name || c.Documented != want.Documented {
			t.Errorf("catalog[%d] = %+v, the spec has %+v", i, c, want)
		}
		if !api.ToolName(c.Name).Valid() {
			t.Errorf("%s is not a valid ToolName", c.Name)
		}
	}
}

// The validator's errors name every pointer, sorted, the same on every run.
func TestValidationDeterministic(t *testing.T) {
	bad := []byte(`{"project":"X","replies_left":9,"lead":"no","role":"boss","reviewing":{},"discussion_credential":{"token":"","expires_at":"2023-02-29T00:00:00Z","allowed_tools":["nope"]},"extra":1}`)
	first := api.ValidateClaimDiscussionOutput(bad)
	if first == nil {
		t.Fatal("valid?")
	}
	for i := 0; i < 20; i++ {
		if err := api.ValidateClaimDiscussionOutput(bad); err.Error() != first.Error() {
			t.Fatalf("run %d: %v\nfirst: %v", i, err, first)
		}
	}
	var ve *rt.ValidationError
	errors.As(first, &ve)
	var ptrs []string
	for _, v := range ve.Violations {
		ptrs = append(ptrs, v.Pointer)
	}
	for _, p := range []string{"/discussion_credential/allowed_tools/0", "/discussion_credential/expires_at", "/discussion_credential/token", "/lead", "/project", "/replies_left", "/reviewing", "/role"} {
		if !contains(ptrs, p) {
			t.Errorf("violations %v lack %s", ptrs, p)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

var benchOutput = func() []byte {
	b, err := json.Marshal(goodDiscussion())
	if err != nil {
		panic(err)
	}
	return b
}()

func BenchmarkValidateClaimDiscussionOutput(b *testing.B) {
	if err := api.ValidateClaimDiscussionOutput(benchOutput); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := api.ValidateClaimDiscussionOutput(benchOutput); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCompileSchemas(t *testing.T) {
	if err := api.CompileSchemas(); err != nil {
		t.Fatal(err)
	}
}
