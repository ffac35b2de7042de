package server_test

// In-process benchmarks: MCP round-trips over streamable HTTP (go-sdk
// client, httptest server, loopback) against prickled's handler and, in the
// same run, against the bare go-sdk server of prickle-load (load.Bare: the
// documented tools and schemas, fixed valid outputs, no state), which
// answers the bytes prickled answered. The difference is prickled's own
// cost: bearer-token lookup, argument and output validation, the SQLite
// transaction, the log line.
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
// What these measure, and what they do not: the client and both servers
// share one process, one scheduler and one garbage collector, and no call
// crosses a process boundary. Latencies are therefore lower than a user's
// client sees, the bare server gains more from that than prickled does on
// claims, and the ratios drift with the machine's load. They are
// regression benchmarks of prickled's code path. The ratios the project's
// targets are stated in are measured out of process, as a user's client
// calls, with `prickle-load compare` (README.md, "Load and compare").
//
// prickled runs as deployed: a database file (WAL, synchronous=NORMAL)
// in a temporary folder, the text log handler (written to io.Discard).
// claim_task replays one idempotency key (the same attempt, a fresh
// credential each time); claim_task_fresh claims a new task with a new
// key on every call, from a world holding one task per iteration.

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
	"github.com/prickle-dev/prickle/cmd/prickle-load/load"
	"github.com/prickle-dev/prickle/internal/testkit"
	"github.com/prickle-dev/prickle/server"
)

const benchClients = 16

// benchTarget is a server under benchmark and the tokens of its world.
type benchTarget struct {
	url                string
	runnerTok, agentTk string
}

// benchPrickled serves prickled's handler on a database file with the
// load world (the seed world) plus nTasks tasks to claim.
func benchPrickled(b *testing.B, nTasks int) benchTarget {
	b.Helper()
	srv, runner, agent := benchNewPrickled(b, nTasks)
	ts := httptest.NewServer(srv.Handler())
	b.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return benchTarget{ts.URL + server.PathMCP, runner, agent}
}

// benchNewPrickled is prickled on a database file with the load world
// plus nTasks tasks to claim, and the world's runner and agent tokens.
func benchNewPrickled(b *testing.B, nTasks int) (srv *server.Server, runner, agent string) {
	b.Helper()
	world, tokens, err := load.Fixture(nTasks)
	if err != nil {
		b.Fatal(err)
	}
	if runner, agent, err = load.SelectTokens(tokens, "", ""); err != nil {
		b.Fatal(err)
	}
	srv, _, err = server.New(context.Background(), server.Config{
		DB:     filepath.Join(b.TempDir(), "bench.db"),
		World:  bytes.NewReader(world),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	return srv, runner, agent
}

// benchBare serves the bare server answering outputs; it accepts any token.
func benchBare(b *testing.B, outputs load.Outputs) benchTarget {
	b.Helper()
	h, err := load.Bare(outputs, nil)
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(h)
	b.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return benchTarget{ts.URL + server.PathMCP, "prk_bench-any-runner-token", "prk_bench-any-agent-token"}
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
func benchCall(b *testing.B, cs *mcp.ClientSession, tool string, args json.RawMessage) *mcp.CallToolResult {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
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
	name   string // sub-benchmark name
	tool   string
	runner bool // called with the runner's token, else the agent's
	fresh  bool // needs one task per iteration
	args   func(i int) json.RawMessage
}

// token is the op's caller's token on t.
func (op benchOp) token(t benchTarget) string {
	if op.runner {
		return t.runnerTok
	}
	return t.agentTk
}

func benchFixed(s string) func(int) json.RawMessage {
	raw := json.RawMessage(s)
	return func(int) json.RawMessage { return raw }
}

var benchOps = []benchOp{
	{name: "claim_task", tool: "claim_task", runner: true,
		args: benchFixed(`{"task_id":"example-task-id","idempotency_key":"runner-claim-example-1"}`)},
	{name: "claim_task_fresh", tool: "claim_task", runner: true, fresh: true,
		args: func(i int) json.RawMessage {
			return json.RawMessage(fmt.Sprintf(`{"task_id":%q,"idempotency_key":"bench-key-%d"}`, load.FreshTaskID(load.FreshTaskPrefix, i), i))
		}},
	{name: "claim_discussion", tool: "claim_discussion", runner: true,
		args: benchFixed(`{"message_id":"example-message-id","idempotency_key":"bench-discussion-1","harness":2}`)},
	{name: "discover_team_agents", tool: "discover_team_agents",
		args: benchFixed(`{"project":"website-v2"}`)},
}

var (
	benchOutputsOnce sync.Once
	benchOutputs     load.Outputs
	benchOutputsErr  error
)

// benchRecordedOutputs are what prickled answers each tool once: the bare
// server answers the same bytes.
func benchRecordedOutputs(b *testing.B) load.Outputs {
	benchOutputsOnce.Do(func() { benchOutputs, benchOutputsErr = load.RecordReference(context.Background()) })
	if benchOutputsErr != nil {
		b.Fatalf("could not record prickled's outputs: %v", benchOutputsErr)
	}
	return benchOutputs
}

// benchServer returns impl ("prickled" or "bare") with room for n fresh
// claims.
func benchServer(b *testing.B, impl string, op benchOp, n int) benchTarget {
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
					t := benchServer(b, impl, op, b.N)
					cs := benchConnect(b, t.url, op.token(t), benchTransport(b))
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
					t := benchServer(b, impl, op, b.N)
					tr := benchTransport(b)
					sessions := make([]*mcp.ClientSession, benchClients)
					for i := range sessions {
						sessions[i] = benchConnect(b, t.url, op.token(t), tr)
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
								res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: op.tool, Arguments: args[i]})
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
			tp, tb := benchServer(b, "prickled", op, b.N), benchServer(b, "bare", op, b.N)
			pr := benchConnect(b, tp.url, op.token(tp), tr)
			bare := benchConnect(b, tb.url, op.token(tb), tr)
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
			connect := func(t benchTarget) []*mcp.ClientSession {
				s := make([]*mcp.ClientSession, benchClients)
				for i := range s {
					s[i] = benchConnect(b, t.url, op.token(t), tr)
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
							res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: op.tool, Arguments: args[i]})
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

// BenchmarkHandler/{prickled,bare}/TOOL serves tools/call POSTs straight
// to each server's http.Handler, on one MCP session, with no client and no
// network: ns/op and allocs/op are the server's own, the part of a call
// prickled can cut (the bare server's are the floor). Single-threaded and
// without sockets it is steadier than the round trips on a shared machine.
func BenchmarkHandler(b *testing.B) {
	for _, impl := range []string{"prickled", "bare"} {
		b.Run(impl, func(b *testing.B) {
			for _, op := range benchOps {
				b.Run(op.name, func(b *testing.B) {
					h, tok := benchHandler(b, impl, op, b.N)
					post := benchSession(b, h, tok)
					if !op.fresh {
						post(op.tool, op.args(0))
					}
					b.ReportAllocs()
					b.ResetTimer()
					for i := range b.N {
						post(op.tool, op.args(i))
					}
				})
			}
		})
	}
}

// benchHandler is impl's HTTP handler, with room for n fresh claims, and
// the token of op's caller.
func benchHandler(b *testing.B, impl string, op benchOp, n int) (http.Handler, string) {
	b.Helper()
	if impl == "bare" {
		h, err := load.Bare(benchRecordedOutputs(b), nil)
		if err != nil {
			b.Fatal(err)
		}
		return h, "prk_bench-any-token"
	}
	if !op.fresh {
		n = 0
	}
	srv, runner, agent := benchNewPrickled(b, n)
	if op.runner {
		return srv.Handler(), runner
	}
	return srv.Handler(), agent
}

// benchSession initializes an MCP session on h and returns a function
// that makes one tools/call on it and checks its answer.
func benchSession(b *testing.B, h http.Handler, token string) func(tool string, args json.RawMessage) {
	b.Helper()
	var session string
	send := func(body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, mcpPost(server.PathMCP, token, session, []byte(body)))
		return w
	}
	w := send(string(initializeBody))
	if session = w.Header().Get("Mcp-Session-Id"); w.Code != http.StatusOK || session == "" {
		b.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	if w := send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); w.Code != http.StatusAccepted {
		b.Fatalf("initialized: %d %s", w.Code, w.Body)
	}
	return func(tool string, args json.RawMessage) {
		w := send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + string(args) + `}}`)
		if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"structuredContent"`)) {
			b.Fatalf("%s: %d %s", tool, w.Code, w.Body)
		}
	}
}

// BenchmarkValidateCold validates one claim_task's input and output as a
// call does, warm (back to back, as api's BenchmarkValidate) and cold
// (the CPU caches filled with other data before each, untimed), since a
// server validates once per call between a great deal of other work:
// what the CPU profile of a server under load charges to validation is
// the cold figure. Run it with a count: -benchtime 2000x.
func BenchmarkValidateCold(b *testing.B) {
	in := json.RawMessage(`{"task_id":"example-task-id","idempotency_key":"runner-claim-example-1"}`)
	out := benchRecordedOutputs(b)[string(api.ToolClaimTask)]
	evict := make([]byte, 16<<20) // larger than the caches
	for _, cold := range []bool{false, true} {
		b.Run(map[bool]string{false: "warm", true: "cold"}[cold], func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if cold {
					b.StopTimer()
					for j := 0; j < len(evict); j += 64 {
						evict[j]++
					}
					b.StartTimer()
				}
				if err := api.ValidateClaimTaskInput(in); err != nil {
					b.Fatal(err)
				}
				if err := api.ValidateClaimTaskOutput(out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
