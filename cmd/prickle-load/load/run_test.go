package load

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/server"
)

// prickled serves an in-process prickled on a world from Fixture(tasks) and
// returns its endpoint with the runner's and the agent's tokens.
func prickled(t *testing.T, tasks int) (endpoint, runner, agent string) {
	t.Helper()
	world, tokens, err := Fixture(tasks)
	if err != nil {
		t.Fatal(err)
	}
	srv, issued, err := server.New(context.Background(), server.Config{
		World:  bytes.NewReader(world),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatalf("the fixture does not load: %v", err)
	}
	if len(issued) != len(tokens) {
		t.Fatalf("prickled issued %d tokens, the fixture gives %d", len(issued), len(tokens))
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		srv.Close()
	})
	if runner, agent, err = SelectTokens(tokens, "", ""); err != nil {
		t.Fatal(err)
	}
	return ts.URL + server.PathMCP, runner, agent
}

func allOps() []Weighted {
	var mix []Weighted
	for _, op := range Ops {
		mix = append(mix, Weighted{op, 1})
	}
	return mix
}

func TestRunAgainstPrickled(t *testing.T) {
	endpoint, runner, agent := prickled(t, 200)
	w := DefaultWorld()
	w.FreshCount = 200
	cfg := Config{
		Endpoints: []string{endpoint}, RunnerToken: runner, AgentToken: agent, World: w,
		Mix: allOps(), Clients: 3, Calls: 80, WarmupCalls: 12,
	}
	if runtime.GOOS == "linux" {
		cfg.PIDs, cfg.SampleEvery = []int{os.Getpid()}, 10*time.Millisecond // the server runs in this process
		cfg.DBPIDs = cfg.PIDs                                               // and its SQLite
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Total.Failed != 0 || rep.Total.Calls != 80 || rep.Total.OK != 80 {
		t.Fatalf("total %+v: want 80 calls, no errors", rep.Total)
	}
	if rep.Protocol == "" {
		t.Error("no negotiated protocol version reported")
	}
	if len(rep.Ops) != len(Ops) {
		t.Fatalf("%d operations reported, want %d", len(rep.Ops), len(Ops))
	}
	for _, op := range rep.Ops {
		// The mix is even; which worker takes which call is not fixed.
		if op.OK < 10 || op.Failed != 0 {
			t.Errorf("%s: %d ok, %d failed; want about 20 ok, none failed", op.Op, op.OK, op.Failed)
		}
		if op.P50 <= 0 || op.P50 > op.P99 || op.P99 > op.Max || op.CallsPerSec <= 0 || op.Bytes < 100 {
			t.Errorf("%s: implausible figures %+v", op.Op, op)
		}
	}
	if fresh := int64(rep.Ops[1].OK); rep.Ops[1].Op != OpClaimFresh || rep.freshUsed < fresh || rep.freshUsed > fresh+12 {
		t.Errorf("fresh tasks used: %d, for %d measured fresh claims and at most 12 warm-up calls", rep.freshUsed, fresh)
	}
	if runtime.GOOS == "linux" {
		s := rep.Server
		if s == nil || s.RSSStart <= 0 || s.RSSEnd <= 0 || s.RSSMax < s.RSSStart || s.Error != "" || len(s.Samples) < 2 || s.CPUPerCallUS <= 0 {
			t.Errorf("server sampling: %+v", s)
		}
		if d := rep.Database; d == nil || d.CPUPerCallUS <= 0 || d.Processes < 1 {
			t.Errorf("database sampling: %+v", d)
		}
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	for _, want := range []string{"claim_task_fresh", "p99 µs", "total", "server pid", "database pid"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Errorf("JSON report: %v", err)
	}

	// A second run with the same fresh tasks is refused, not replayed.
	cfg.Mix, cfg.Calls, cfg.WarmupCalls, cfg.PIDs, cfg.DBPIDs = []Weighted{{OpClaimFresh, 1}}, 5, 0, nil, nil
	rep, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total.Failed != 5 || len(rep.Ops[0].Errors) != 1 || rep.Ops[0].Errors[0].Code != "attempt_in_progress" {
		t.Errorf("re-claiming claimed tasks: %+v, want 5 attempt_in_progress refusals", rep.Ops[0])
	}
}

func TestRunFreshTasksRunOut(t *testing.T) {
	endpoint, runner, agent := prickled(t, 6)
	w := DefaultWorld()
	w.FreshCount = 6
	rep, err := Run(context.Background(), Config{
		Endpoints: []string{endpoint}, RunnerToken: runner, AgentToken: agent, World: w,
		Mix: []Weighted{{OpClaimFresh, 1}, {OpDiscover, 1}}, Clients: 2, Calls: 30,
	})
	if !errors.Is(err, ErrFreshExhausted) || rep == nil || !rep.FreshExhausted {
		t.Fatalf("Run: %v (report %v): want ErrFreshExhausted with a report", err, rep != nil)
	}
	if rep.Total.Failed != 0 || rep.Ops[0].OK != 6 || rep.Ops[1].OK < 20 {
		t.Errorf("ops %+v: want 6 fresh claims, the rest discover_team_agents, no errors", rep.Ops)
	}
}

// TestRunNamesTheRefusedToken: a token the server refuses (revoked by a
// rotation, from another database) is named by its role, so that the user
// knows which entry of the tokens file is stale.
func TestRunNamesTheRefusedToken(t *testing.T) {
	endpoint, runner, agent := prickled(t, 0)
	for _, c := range []struct{ runner, agent, want string }{
		{runner, "prk_not-a-token", "the agent token"},
		{"prk_not-a-token", agent, "the runner token"},
	} {
		_, err := Run(context.Background(), Config{
			Endpoints: []string{endpoint}, RunnerToken: c.runner, AgentToken: c.agent, World: DefaultWorld(),
			Mix: []Weighted{{OpClaimReplay, 1}, {OpDiscover, 1}}, Clients: 1, Calls: 2,
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Run: %v, want an error naming %s", err, c.want)
		}
	}
}

func TestRunCountsRefusals(t *testing.T) {
	endpoint, runner, agent := prickled(t, 0)
	w := DefaultWorld()
	w.Project = "billing-api" // maya does not see it
	rep, err := Run(context.Background(), Config{
		Endpoints: []string{endpoint}, RunnerToken: runner, AgentToken: agent, World: w,
		Mix: []Weighted{{OpDiscover, 1}}, Clients: 1, Calls: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	op := rep.Ops[0]
	if op.OK != 0 || op.Failed != 4 || len(op.Errors) != 1 || op.Errors[0].Kind != ErrorRefused || op.Errors[0].Code != "project_not_visible" || op.Errors[0].Count != 4 {
		t.Errorf("refusals: %+v", op)
	}
}

func TestBareAnswersWhatTheServerAnswered(t *testing.T) {
	endpoint, runner, agent := prickled(t, 0)
	ctx := context.Background()
	recorded, err := Record(ctx, endpoint, runner, agent, "", DefaultWorld())
	if err != nil {
		t.Fatal(err)
	}
	h, err := Bare(recorded, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	bareURL := ts.URL + server.PathMCP
	// Any token works; the answers are the recorded ones but for the
	// credentials, replaced by random tokens of the same length.
	answered, err := Record(ctx, bareURL, "any-token-at-all", "another", "", DefaultWorld())
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range api.Tools() {
		rec, got := recorded[tool.Name], answered[tool.Name]
		if len(rec) != len(got) {
			t.Errorf("%s: bare answers %d bytes, the server %d", tool.Name, len(got), len(rec))
		}
		var rv, gv any
		json.Unmarshal(rec, &rv)
		json.Unmarshal(got, &gv)
		rt, gt := tokenValues(rv, nil), tokenValues(gv, nil)
		if len(rt) != len(gt) {
			t.Errorf("%s: %d tokens recorded, %d answered", tool.Name, len(rt), len(gt))
		}
		for i := range rt {
			if rt[i] == gt[i] {
				t.Errorf("%s: bare hands out the server's own credential", tool.Name)
			}
		}
		if len(rt) == 0 && !bytes.Equal(rec, got) {
			t.Errorf("%s: bare answers %s, the server %s", tool.Name, got, rec)
		}
	}
	w := DefaultWorld()
	w.FreshCount = 10
	rep, err := Run(ctx, Config{Endpoints: []string{bareURL}, RunnerToken: "r-token", AgentToken: "a-token", World: w, Mix: allOps(), Clients: 2, Calls: 20})
	if err != nil || rep.Total.Failed != 0 || rep.Total.OK != 20 {
		t.Fatalf("Run against bare: %v %+v", err, rep)
	}
	// Without a bearer token: 401, as from prickled.
	res, err := http.Post(bareURL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: HTTP %d, want 401", res.StatusCode)
	}
	// Outputs that break a schema are refused.
	bad := Outputs{}
	for k, v := range recorded {
		bad[k] = v
	}
	bad[string(api.ToolDiscoverTeamAgents)] = json.RawMessage(`{"project":"x"}`)
	if _, err := Bare(bad, nil); err == nil || !strings.Contains(err.Error(), "outputs: discover_team_agents") {
		t.Errorf("invalid outputs: %v", err)
	}
}

func TestRecordReference(t *testing.T) {
	o, err := RecordReference(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
}

func TestOutputsFileKeepsBytes(t *testing.T) {
	o, err := RecordReference(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	o[string(api.ToolDiscoverTeamAgents)] = append(json.RawMessage("  "), o[string(api.ToolDiscoverTeamAgents)]...) // white space too
	file := t.TempDir() + "/outputs.json"
	if err := WriteOutputs(file, o); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("outputs file: %v, mode %v; want 0600 (it holds credentials)", err, fi.Mode().Perm())
	}
	back, err := ReadOutputs(file)
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range o {
		if !bytes.Equal(back[name], raw) {
			t.Errorf("%s: read back %q, wrote %q", name, back[name], raw)
		}
	}
	os.WriteFile(file, []byte(`{"claim_task": "{}"}`), 0o600)
	if _, err := ReadOutputs(file); err == nil || !strings.Contains(err.Error(), "outputs.json: outputs:") {
		t.Errorf("incomplete outputs file: %v", err)
	}
}

// TestRunSpreadsClientsOverEndpoints: with several endpoints (replicas),
// client i connects to endpoint i mod n, and calls only there.
func TestRunSpreadsClientsOverEndpoints(t *testing.T) {
	outputs, err := RecordReference(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h, err := Bare(outputs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	var inits, calls []*atomic.Int64
	for range 2 {
		in, c := new(atomic.Int64), new(atomic.Int64)
		inits, calls = append(inits, in), append(calls, c)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			switch {
			case bytes.Contains(body, []byte(`"method":"initialize"`)):
				in.Add(1)
			case bytes.Contains(body, []byte(`"method":"tools/call"`)):
				c.Add(1)
			}
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		urls = append(urls, ts.URL+server.PathMCP)
	}
	rep, err := Run(context.Background(), Config{Endpoints: urls, RunnerToken: "r", AgentToken: "a", World: DefaultWorld(),
		Mix: []Weighted{{OpClaimReplay, 1}}, Clients: 3, Calls: 30})
	if err != nil || rep.Total.OK != 30 {
		t.Fatalf("Run: %v, %+v", err, rep)
	}
	// Clients 0 and 2 on the first, client 1 on the second.
	if inits[0].Load() != 2 || inits[1].Load() != 1 {
		t.Errorf("sessions opened: %d and %d, want 2 and 1", inits[0].Load(), inits[1].Load())
	}
	if calls[0].Load() == 0 || calls[1].Load() == 0 || calls[0].Load()+calls[1].Load() != 30 {
		t.Errorf("calls: %d and %d, want 30 over both", calls[0].Load(), calls[1].Load())
	}
	if !slices.Equal(rep.Endpoints, urls) {
		t.Errorf("report names %v, want %v", rep.Endpoints, urls)
	}
}
