package server_test

// Benchmarks: MCP round-trips over streamable HTTP (go-sdk client,
// httptest server, loopback) against prickled's handler and, in the same
// run, against a bare go-sdk server that serves the same three tools with
// the same schemas through the low-level AddTool and answers every call
// with a fixed, valid structuredContent (the bytes prickled answered). The
// difference is prickled's own cost: bearer-token lookup, argument and
// output validation, the SQLite transaction, the log line.
//
//	go test ./server/ -run '^$' -bench . -count 5
//
// BenchmarkRoundTrip/{prickled,bare}/TOOL: one client, one call at a
// time; ns/op is the mean latency, p50-ns the median.
// BenchmarkThroughput16/{prickled,bare}/TOOL: 16 clients, each with its
// own MCP session, calling back to back; calls/s is the throughput.
// BenchmarkRoundTripPaired/TOOL: one call to each in turn, so that both
// see the same machine load; ratio-p50 is prickled's median over bare's.
// BenchmarkThroughput16Paired/TOOL: bursts of 16-client calls to each in
// turn; ratio-calls/s is prickled's throughput over bare's.
//
// prickled runs as deployed: a database file (WAL, synchronous=NORMAL)
// in a temporary folder, the text log handler (written to io.Discard).
// claim_task replays one idempotency key (the same attempt, a fresh
// credential each time); claim_task_fresh claims a new task with a new
// key on every call, from a fixture holding one task per iteration.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/server"
)

const (
	benchRunnerToken = "prk_bench-runner-maya-laptop-0001"
	benchAgentToken  = "prk_bench-agent-maya-builder-0001"
	benchClients     = 16
)

// benchFixture is a small world (server/store/FIXTURE.md) with the example
// task and message, plus nTasks more tasks routed to maya/builder.
func benchFixture(nTasks int) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{
  "version": 1,
  "projects": [{"slug": "website-v2", "name": "Website v2"}, {"slug": "billing-api"}],
  "people": [
    {"handle": "maya", "display_name": "Maya Okafor", "avatar_url": "https://avatars.example.com/maya.png", "color": 2},
    {"handle": "theo", "display_name": "Theo Lindqvist", "avatar_url": null, "color": 5, "away": true},
    {"handle": "rin", "display_name": "Rin Sato", "color": 6}
  ],
  "memberships": [{"project": "website-v2", "person": "maya"}, {"project": "website-v2", "person": "theo"},
                  {"project": "billing-api", "person": "rin"}],
  "agents": [
    {"id": "maya/builder", "model": "claude-sonnet-4-5", "client": "claude-code", "role": "Builds website features",
     "avatar_url": "https://avatars.example.com/maya-builder.png",
     "capabilities": [{"kind": "repo", "name": "prickle-dev/website-v2"}, {"kind": "deploy", "name": "preview-deploys"}],
     "availability": "online", "trust_level": "owner_verified", "last_seen_at": "2026-05-01T11:58:00Z",
     "token": "` + benchAgentToken + `"},
    {"id": "theo/reviewer", "model": "gpt-5", "client": "codex-cli", "role": "Reviews pull requests",
     "capabilities": [{"kind": "repo", "name": "prickle-dev/website-v2"}], "availability": "away", "trust_level": "unverified"},
    {"id": "rin/analyst", "model": "gemini-2.5-pro", "client": "gemini-cli", "availability": "offline", "trust_level": "unverified"}
  ],
  "runners": [{"id": "maya-laptop", "agent": "maya/builder", "token": "` + benchRunnerToken + `"}],
  "rooms": [
    {"id": "website-v2-general", "project": "website-v2", "kind": "general"},
    {"id": "maya-private", "project": "website-v2", "kind": "private", "owner": "maya"}
  ],
  "messages": [
    {"id": "example-task-request-id", "room": "maya-private", "kind": "task_request", "author": "maya", "body": "Add a pricing page."},
    {"id": "example-message-id", "room": "maya-private", "kind": "room_message", "author": "maya", "body": "What about the free tier?"}
  ],
  "turns": [{"message": "example-message-id", "agents": [{"agent": "maya/builder"}]}],
  "tasks": [
    {"id": "example-task-id", "project": "website-v2", "agent": "maya/builder", "request_message": "example-task-request-id"}`)
	for i := range nTasks {
		fmt.Fprintf(&buf, ",\n    {\"id\": \"bench-task-%d\", \"project\": \"website-v2\", \"agent\": \"maya/builder\"}", i)
	}
	buf.WriteString("\n  ]\n}\n")
	return buf.Bytes()
}

// benchPrickled serves prickled's handler on a database file with the
// bench world plus nTasks tasks.
func benchPrickled(b *testing.B, nTasks int) string {
	b.Helper()
	srv, _, err := server.New(context.Background(), server.Config{
		DB:      filepath.Join(b.TempDir(), "bench.db"),
		Fixture: bytes.NewReader(benchFixture(nTasks)),
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	b.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		srv.Close()
	})
	return ts.URL + server.PathMCP
}

// benchBare serves a bare go-sdk server: the documented tools (same names,
// same schemas, low-level AddTool, no validation, no authentication) whose
// handlers return outputs[name] as structuredContent and as text.
func benchBare(b *testing.B, outputs map[string]json.RawMessage) string {
	b.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "0.0.0"}, nil)
	for _, tool := range api.Tools() {
		out, ok := outputs[tool.Name]
		if !ok {
			b.Fatalf("no output recorded for %s", tool.Name)
		}
		s.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: string(out)}},
				StructuredContent: out,
			}, nil
		})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: server.DefaultMaxBodyBytes})
	mux := http.NewServeMux()
	mux.Handle(server.PathMCP, h)
	ts := httptest.NewServer(mux)
	b.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL + server.PathMCP
}

// benchTransport is shared by a benchmark's sessions: enough idle
// connections that 16 clients never redial.
func benchTransport(b *testing.B) *http.Transport {
	tr := &http.Transport{MaxIdleConns: 4 * benchClients, MaxIdleConnsPerHost: 4 * benchClients, IdleConnTimeout: time.Minute}
	b.Cleanup(tr.CloseIdleConnections)
	return tr
}

// benchConnect opens one MCP session (initialize and all) with the bearer
// token on every request.
func benchConnect(b *testing.B, endpoint, token string, tr http.RoundTripper) *mcp.ClientSession {
	b.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0.0.0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: testkit.Bearer{Token: token, Base: tr}},
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// benchCall is one tools/call; any error or isError stops the benchmark.
func benchCall(b *testing.B, cs *mcp.ClientSession, tool api.ToolName, args json.RawMessage) *mcp.CallToolResult {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: string(tool), Arguments: args})
	if err != nil {
		b.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		b.Fatalf("%s %s: isError: %s", tool, args, benchText(res))
	}
	return res
}

func benchText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// benchOp is one benchmarked call: its tool, its caller, and its arguments
// for iteration i.
type benchOp struct {
	name  string // sub-benchmark name
	tool  api.ToolName
	token string
	fresh bool // needs one task per iteration
	args  func(i int) json.RawMessage
}

func benchFixed(s string) func(int) json.RawMessage {
	raw := json.RawMessage(s)
	return func(int) json.RawMessage { return raw }
}

var benchOps = []benchOp{
	{name: "claim_task", tool: "claim_task", token: benchRunnerToken,
		args: benchFixed(`{"task_id":"example-task-id","idempotency_key":"runner-claim-example-1"}`)},
	{name: "claim_task_fresh", tool: "claim_task", token: benchRunnerToken, fresh: true,
		args: func(i int) json.RawMessage {
			return json.RawMessage(fmt.Sprintf(`{"task_id":"bench-task-%d","idempotency_key":"bench-key-%d"}`, i, i))
		}},
	{name: "claim_discussion", tool: "claim_discussion", token: benchRunnerToken,
		args: benchFixed(`{"message_id":"example-message-id","idempotency_key":"bench-discussion-1","harness":2}`)},
	{name: "discover_team_agents", tool: "discover_team_agents", token: benchAgentToken,
		args: benchFixed(`{"project":"website-v2"}`)},
}

var (
	benchOutputsOnce sync.Once
	benchOutputs     map[string]json.RawMessage
)

// benchRecordedOutputs calls each tool once on prickled and keeps the
// exact JSON it answered: the bare server answers the same bytes.
func benchRecordedOutputs(b *testing.B) map[string]json.RawMessage {
	benchOutputsOnce.Do(func() {
		url := benchPrickled(b, 0)
		tr := benchTransport(b)
		out := map[string]json.RawMessage{}
		for _, op := range benchOps {
			if op.fresh {
				continue
			}
			cs := benchConnect(b, url, op.token, tr)
			res := benchCall(b, cs, op.tool, op.args(0))
			out[string(op.tool)] = json.RawMessage(benchText(res))
			cs.Close()
		}
		benchOutputs = out
	})
	if benchOutputs == nil {
		b.Fatal("could not record prickled's outputs")
	}
	return benchOutputs
}

// benchServer returns the endpoint for impl ("prickled" or "bare") with
// room for n fresh claims.
func benchServer(b *testing.B, impl string, op benchOp, n int) string {
	if impl == "bare" {
		return benchBare(b, benchRecordedOutputs(b))
	}
	if !op.fresh {
		n = 0
	}
	return benchPrickled(b, n)
}

// benchPercentile returns the p-th percentile (0-100) of d, sorted in place.
func benchPercentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := int(float64(len(d)-1) * p / 100)
	return d[i]
}

// BenchmarkRoundTrip measures the latency of one call at a time.
func BenchmarkRoundTrip(b *testing.B) {
	for _, impl := range []string{"prickled", "bare"} {
		b.Run(impl, func(b *testing.B) {
			for _, op := range benchOps {
				b.Run(op.name, func(b *testing.B) {
					endpoint := benchServer(b, impl, op, b.N)
					cs := benchConnect(b, endpoint, op.token, benchTransport(b))
					args := make([]json.RawMessage, b.N)
					for i := range args {
						args[i] = op.args(i)
					}
					if !op.fresh {
						benchCall(b, cs, op.tool, args[0]) // warm: the first claim creates the attempt
					}
					lat := make([]time.Duration, b.N)
					b.ResetTimer()
					for i := range b.N {
						start := time.Now()
						benchCall(b, cs, op.tool, args[i])
						lat[i] = time.Since(start)
					}
					b.StopTimer()
					b.ReportMetric(float64(benchPercentile(lat, 50).Nanoseconds()), "p50-ns")
					b.ReportMetric(float64(benchPercentile(lat, 99).Nanoseconds()), "p99-ns")
				})
			}
		})
	}
}

// BenchmarkThroughput16 measures calls per second with 16 concurrent
// clients, each on its own MCP session.
func BenchmarkThroughput16(b *testing.B) {
	for _, impl := range []string{"prickled", "bare"} {
		b.Run(impl, func(b *testing.B) {
			for _, op := range benchOps {
				b.Run(op.name, func(b *testing.B) {
					endpoint := benchServer(b, impl, op, b.N)
					tr := benchTransport(b)
					sessions := make([]*mcp.ClientSession, benchClients)
					for i := range sessions {
						sessions[i] = benchConnect(b, endpoint, op.token, tr)
					}
					if !op.fresh {
						benchCall(b, sessions[0], op.tool, op.args(0))
					}
					args := make([]json.RawMessage, b.N)
					for i := range args {
						args[i] = op.args(i)
					}
					lat := make([]time.Duration, b.N)
					var next atomic.Int64
					var wg sync.WaitGroup
					b.ResetTimer()
					for _, cs := range sessions {
						wg.Go(func() {
							for {
								i := int(next.Add(1) - 1)
								if i >= b.N {
									return
								}
								start := time.Now()
								res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: string(op.tool), Arguments: args[i]})
								lat[i] = time.Since(start)
								if err != nil {
									b.Errorf("%s: %v", op.tool, err)
									return
								}
								if res.IsError {
									b.Errorf("%s: isError: %s", op.tool, benchText(res))
									return
								}
							}
						})
					}
					wg.Wait()
					b.StopTimer()
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
					b.ReportMetric(float64(benchPercentile(lat, 50).Nanoseconds()), "p50-ns")
					b.ReportMetric(float64(benchPercentile(lat, 99).Nanoseconds()), "p99-ns")
				})
			}
		})
	}
}

// BenchmarkRoundTripPaired alternates one call to prickled and one to the
// bare server (in turn first), so both see the same machine load: the
// fairest ratio on a shared machine. ratio-p50 is prickled's median
// latency over the bare server's.
func BenchmarkRoundTripPaired(b *testing.B) {
	for _, op := range benchOps {
		b.Run(op.name, func(b *testing.B) {
			tr := benchTransport(b)
			pr := benchConnect(b, benchServer(b, "prickled", op, b.N), op.token, tr)
			bare := benchConnect(b, benchServer(b, "bare", op, b.N), op.token, tr)
			args := make([]json.RawMessage, b.N)
			for i := range args {
				args[i] = op.args(i)
			}
			if !op.fresh {
				benchCall(b, pr, op.tool, args[0])
			}
			benchCall(b, bare, op.tool, args[0])
			latP := make([]time.Duration, b.N)
			latB := make([]time.Duration, b.N)
			timed := func(cs *mcp.ClientSession, a json.RawMessage) time.Duration {
				start := time.Now()
				benchCall(b, cs, op.tool, a)
				return time.Since(start)
			}
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					latP[i] = timed(pr, args[i])
					latB[i] = timed(bare, args[i])
				} else {
					latB[i] = timed(bare, args[i])
					latP[i] = timed(pr, args[i])
				}
			}
			b.StopTimer()
			p50P, p50B := benchPercentile(latP, 50), benchPercentile(latB, 50)
			b.ReportMetric(float64(p50P.Nanoseconds()), "prickled-p50-ns")
			b.ReportMetric(float64(p50B.Nanoseconds()), "bare-p50-ns")
			b.ReportMetric(float64(p50P)/float64(p50B), "ratio-p50")
		})
	}
}

// BenchmarkThroughput16Paired alternates bursts of calls by 16 concurrent
// clients to prickled and to the bare server, so that both see the same
// machine load; it reports each one's calls/s and their ratio
// (ratio-calls/s is prickled's throughput over the bare server's).
func BenchmarkThroughput16Paired(b *testing.B) {
	const burst = 20 * benchClients
	for _, op := range benchOps {
		b.Run(op.name, func(b *testing.B) {
			tr := benchTransport(b)
			connect := func(endpoint string) []*mcp.ClientSession {
				s := make([]*mcp.ClientSession, benchClients)
				for i := range s {
					s[i] = benchConnect(b, endpoint, op.token, tr)
				}
				return s
			}
			pr := connect(benchServer(b, "prickled", op, b.N))
			bare := connect(benchServer(b, "bare", op, b.N))
			args := make([]json.RawMessage, b.N)
			for i := range args {
				args[i] = op.args(i)
			}
			if !op.fresh {
				benchCall(b, pr[0], op.tool, args[0])
			}
			// run makes calls [from, to) with the 16 sessions and returns
			// the wall time.
			run := func(sessions []*mcp.ClientSession, from, to int) time.Duration {
				var next atomic.Int64
				next.Store(int64(from))
				var wg sync.WaitGroup
				start := time.Now()
				for _, cs := range sessions {
					wg.Go(func() {
						for {
							i := int(next.Add(1) - 1)
							if i >= to {
								return
							}
							res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: string(op.tool), Arguments: args[i]})
							if err != nil || res.IsError {
								b.Errorf("%s: %v %s", op.tool, err, benchText(res))
								return
							}
						}
					})
				}
				wg.Wait()
				return time.Since(start)
			}
			var tP, tB time.Duration
			b.ResetTimer()
			for from := 0; from < b.N; from += burst {
				to := min(from+burst, b.N)
				if (from/burst)%2 == 0 {
					tP += run(pr, from, to)
					tB += run(bare, from, to)
				} else {
					tB += run(bare, from, to)
					tP += run(pr, from, to)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/tP.Seconds(), "prickled-calls/s")
			b.ReportMetric(float64(b.N)/tB.Seconds(), "bare-calls/s")
			b.ReportMetric(tB.Seconds()/tP.Seconds(), "ratio-calls/s")
		})
	}
}
