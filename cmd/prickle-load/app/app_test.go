package app

// The command as a user runs it: compare starts the real prickled and this
// program's bare server as processes and loads both.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/cmd/prickle-load/load"
	"github.com/prickle-dev/prickle/internal/pgtest"
	"github.com/prickle-dev/prickle/internal/testkit"
)

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{nil, 2, "usage: prickle-load COMMAND"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"help"}, 0, "compare"},
		{[]string{"--version"}, 0, "prickle-load "},
		{[]string{"fixture", "-tasks", "-1"}, 2, "tasks must be between 0"},
		{[]string{"compare"}, 2, "-server-cmd is required"},
		{[]string{"replicas", "-clients", "1,x"}, 2, `-clients: "x" is not a number of clients`},
		{[]string{"replicas", "-deployments", "sqlite,pg-9"}, 2, `-deployments: unknown "pg-9"`},
		{[]string{"replicas", "-ops", "claim"}, 2, `-ops: unknown "claim"`},
		{[]string{"replicas", "-rounds", "0"}, 2, "must be positive"},
		{[]string{"replicas", "-prickled", "/nonexistent/prickled"}, 1, "go build ./cmd/prickled"},
		{[]string{"bare", "-outputs", "a", "-like", "http://x"}, 2, "exclude each other"},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), c.args, nil, &stdout, &stderr); code != c.code || !strings.Contains(stdout.String()+stderr.String(), c.out) {
			t.Errorf("prickle-load %q: exit %d, output %q; want exit %d and %q", c.args, code, stdout.String()+stderr.String(), c.code, c.out)
		}
	}
}

// buildCommands builds prickle-load and prickled for the test.
func buildCommands(t *testing.T) (self, prickled string) {
	t.Helper()
	dir := t.TempDir()
	self, err := testkit.GoBuild(dir, "github.com/prickle-dev/prickle/cmd/prickle-load", false)
	if err != nil {
		t.Fatal(err)
	}
	if prickled, err = testkit.GoBuild(dir, "github.com/prickle-dev/prickle/cmd/prickled", false); err != nil {
		t.Fatal(err)
	}
	return self, prickled
}

// runReport runs prickle-load with args and -json FILE, and returns what
// it wrote there and to standard output.
func runReport[T any](t *testing.T, self string, args ...string) (*T, string) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(self, append(args, "-json", report)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("prickle-load %s: %v\nstdout:\n%s\nstderr:\n%s", args[0], err, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return &v, stdout.String()
}

func TestCompareProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs two servers")
	}
	self, prickled := buildCommands(t)
	serverCmd := "exec " + prickled + ` --addr "$PRICKLE_ADDR" --db "$PRICKLE_STATE_DIR/p.db" --fixture "$PRICKLE_FIXTURE" 2>/dev/null`
	compare := func(t *testing.T, args ...string) (*load.Comparison, string) {
		t.Helper()
		return runReport[load.Comparison](t, self, append([]string{"compare", "-q", "-server-cmd", serverCmd}, args...)...)
	}

	// Fresh claims without a sustained load (whose tasks used to pad the
	// budget): in the last of an odd number of rounds the baseline goes
	// second, and still has its fresh tasks.
	t.Run("fresh", func(t *testing.T) {
		cmp, out := compare(t, "-run", "fresh", "-runs", "3", "-calls", "10", "-tput-calls", "20",
			"-warmup-calls", "2", "-clients", "4", "-sustain", "0")
		if len(cmp.Scenarios) != 2 {
			t.Fatalf("%d scenarios, want 2:\n%s", len(cmp.Scenarios), out)
		}
		for _, s := range cmp.Scenarios {
			if len(s.Ratio) != 3 {
				t.Errorf("%s: ratios %v, want 3", s.Name(), s.Ratio)
			}
		}
	})

	cmp, stdout := compare(t, "-runs", "2", "-calls", "20", "-tput-calls", "40", "-warmup-calls", "4", "-clients", "4",
		"-sustain", "2s", "-sustain-tasks", "3000", "-keep")
	if cmp.WorkDir == "" {
		t.Fatal("-keep: no work folder named")
	}
	defer os.RemoveAll(cmp.WorkDir)
	if _, err := os.Stat(filepath.Join(cmp.WorkDir, "server", "state", "p.db")); err != nil {
		t.Errorf("-keep: the server's state folder is not kept: %v", err)
	}
	if len(cmp.Scenarios) != 7 || len(cmp.Sustained) != 2 {
		t.Fatalf("%d scenarios and %d sustained runs, want 7 and 2:\n%s", len(cmp.Scenarios), len(cmp.Sustained), stdout)
	}
	for _, s := range cmp.Scenarios {
		if len(s.Ratio) != 2 || s.Ratio[0] <= 0 || s.Ratio[1] <= 0 {
			t.Errorf("%s: ratios %v", s.Name(), s.Ratio)
		}
		for i := range s.Server {
			for _, r := range []*load.Report{s.Server[i], s.Baseline[i]} {
				if r.Total.Failed != 0 || r.Total.OK != uint64(s.Calls) || r.Server == nil || r.Server.RSSEnd <= 0 {
					t.Errorf("%s run %d: %+v", s.Name(), i+1, r.Total)
				}
			}
		}
		// Both servers answered as many bytes, within 2%: a fresh claim's
		// task id is shorter than the recorded replay's, and times drop
		// trailing zeros of their fractions.
		if sb, bb := s.Server[0].Ops[0].Bytes, s.Baseline[0].Ops[0].Bytes; sb < bb*0.98 || sb > bb*1.02 {
			t.Errorf("%s: server answers %.0f bytes, baseline %.0f", s.Name(), sb, bb)
		}
	}
	for _, want := range []string{"claim_task, 1 client, p50", "claim_task_fresh, 4 clients, calls/s", "ratio server/baseline", "RSS end/start"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestParseRun(t *testing.T) {
	base := []string{"-url", "http://127.0.0.1:8080", "-tokens", "t.json"}
	f, code, ok := parseRun(base, &bytes.Buffer{})
	if !ok || code != ExitOK {
		t.Fatalf("defaults: exit %d", code)
	}
	if !slices.Equal(f.cfg.Endpoints, []string{"http://127.0.0.1:8080/mcp"}) || f.cfg.Duration != 10*time.Second || f.cfg.Calls != 0 ||
		f.cfg.Clients != 1 || f.cfg.WarmupDuration != 2*time.Second || load.FormatMix(f.cfg.Mix) != "claim_task:1,claim_discussion:1,discover_team_agents:1" {
		t.Errorf("defaults: %+v", f.cfg)
	}
	f, _, ok = parseRun(append(slices.Clone(base), "-n", "500", "-c", "16", "-mix", "claim_task_fresh:2,discover_team_agents",
		"-fresh-first", "100", "-fresh-count", "900", "-warmup", "0", "-warmup-calls", "50", "-protocol", "2025-06-18"), &bytes.Buffer{})
	if !ok || f.cfg.Calls != 500 || f.cfg.Duration != 0 || f.cfg.Clients != 16 || f.cfg.WarmupCalls != 50 || f.cfg.WarmupDuration != 0 ||
		f.cfg.World.FreshFirst != 100 || f.cfg.World.FreshCount != 900 || f.cfg.Protocol != "2025-06-18" || len(f.cfg.Mix) != 2 {
		t.Errorf("flags not applied: %+v", f.cfg)
	}
	f, _, ok = parseRun(append(slices.Clone(base), "-pid", "10", "-pid", "11", "-db-pid", "12"), &bytes.Buffer{})
	if !ok || !slices.Equal(f.cfg.PIDs, []int{10, 11}) || !slices.Equal(f.cfg.DBPIDs, []int{12}) {
		t.Errorf("-pid twice, -db-pid: %v and %v, want [10 11] and [12]", f.cfg.PIDs, f.cfg.DBPIDs)
	}
	f, _, ok = parseRun(append(slices.Clone(base), "-url", "http://127.0.0.1:8081/"), &bytes.Buffer{})
	if want := []string{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp"}; !ok || !slices.Equal(f.cfg.Endpoints, want) {
		t.Errorf("-url twice: %v, want %v", f.cfg.Endpoints, want)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-tokens", "t.json"}, ExitUsage, "-url is required"},
		{[]string{"-url", "http://x"}, ExitUsage, "-tokens is required"},
		{append(slices.Clone(base), "-n", "5", "-d", "1s"), ExitUsage, "-n and -d exclude each other"},
		{append(slices.Clone(base), "-c", "0"), ExitUsage, "-c must be at least 1"},
		{append(slices.Clone(base), "-mix", "claim_task,bogus"), ExitUsage, `-mix: mix item 2 "bogus"`},
		{append(slices.Clone(base), "-mix", "claim_task_fresh"), ExitUsage, "needs -fresh-count"},
		{[]string{"-url", "ftp://x", "-tokens", "t"}, ExitUsage, "not an http(s) URL"},
		{append(slices.Clone(base), "-url", "ftp://y"), ExitUsage, `"ftp://y" is not an http(s) URL`},
		{append(slices.Clone(base), "stray"), ExitUsage, `unexpected argument "stray"`},
		{append(slices.Clone(base), "-pid", "x"), ExitUsage, `"x" is not a process id`},
		{append(slices.Clone(base), "-db-pid", "0"), ExitUsage, `"0" is not a process id`},
		{[]string{"-h"}, ExitOK, "usage: prickle-load run"},
	} {
		var stderr bytes.Buffer
		_, code, ok := parseRun(c.args, &stderr)
		if ok || code != c.code || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("parseRun(%q): ok %v exit %d, stderr %q; want exit %d and %q", c.args, ok, code, stderr.String(), c.code, c.msg)
		}
	}
}

// TestReplicasProcesses runs replicas as a user does, briefly: every
// deployment measured each round without a failed call, the replicas of
// pg-2 both loaded, PostgreSQL's CPU and counters read, pgbench run.
func TestReplicasProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds prickled and starts PostgreSQL")
	}
	if _, err := pgtest.BinDir(); err != nil {
		if os.Getenv(pgtest.Env) == "1" {
			t.Fatal(err)
		}
		t.Skipf("PostgreSQL: %v", err)
	}
	self, prickled := buildCommands(t)
	res, stdout := runReport[load.ReplicasResult](t, self, "replicas", "-q", "-prickled", prickled, "-rounds", "2",
		"-d", "400ms", "-warmup", "100ms", "-clients", "1,3", "-tasks", "20000")
	if want := 2 * len(load.Deployments) * 2 * 2; len(res.Cells) != want {
		t.Fatalf("%d measurements, want %d:\n%s", len(res.Cells), want, stdout)
	}
	for _, c := range res.Cells {
		r := c.Report
		name := fmt.Sprintf("round %d, %s, %s, %d clients", c.Round, c.Deployment, c.Op, c.Clients)
		if r.Total.Failed != 0 || r.Total.OK == 0 || r.Server == nil || r.Server.CPUPerCallUS <= 0 {
			t.Errorf("%s: %+v, server %+v", name, r.Total, r.Server)
			continue
		}
		if n := len(r.Endpoints); n != len(r.Server.PIDs) || (c.Deployment == load.DeployPG2) != (n == 2) {
			t.Errorf("%s: %d endpoints, processes %v", name, n, r.Server.PIDs)
		}
		onPG := c.Deployment != load.DeploySQLite
		if onPG != (r.Database != nil) || onPG != (c.PG != nil) {
			t.Errorf("%s: database sampled %v, counters %v", name, r.Database != nil, c.PG != nil)
			continue
		}
		// Each claim is a transaction that writes.
		if onPG && (r.Database.CPUPerCallUS <= 0 || c.PG.Txns < int64(r.Total.OK)) {
			t.Errorf("%s: PostgreSQL CPU %.0f µs/call, %d write transactions for %d claims", name, r.Database.CPUPerCallUS, c.PG.Txns, r.Total.OK)
		}
	}
	if len(res.PGBench) != 4 || res.PGBench[0].TPS <= 0 || res.PGBench[0].PG.Txns <= 0 {
		t.Errorf("pgbench: %+v", res.PGBench)
	}
	for _, want := range []string{"pg-1 / sqlite", "pg-2 / pg-1", "pg-1 / pg-1-sessions", "PostgreSQL alone: pgbench"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}
