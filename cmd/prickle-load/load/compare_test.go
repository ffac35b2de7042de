package load

import (
	"bytes"
	"strings"
	"testing"
)

func TestSpread(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{2}, Spread{2, 2, 2}},
		{[]float64{3, 1, 2}, Spread{2, 1, 3}},
		{[]float64{4, 1, 3, 2}, Spread{2.5, 1, 4}},
	} {
		if got := spreadOf(c.in); got != c.want {
			t.Errorf("spreadOf(%v) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestComparisonText(t *testing.T) {
	rep := func(p50, tput float64, failed uint64) *Report {
		r := &Report{Ops: []OpReport{{Op: OpDiscover, OK: 10, Failed: failed, P50: p50, CallsPerSec: tput}}, Server: &ServerStats{RSSStart: 10 << 20, RSSEnd: 12 << 20, CPUPerCallUS: 300}}
		if failed > 0 {
			r.Ops[0].Errors = []ErrorCount{{Kind: ErrorRefused, Code: "invalid_arguments", Count: failed, Example: "invalid_arguments: /project: ..."}}
		}
		return r
	}
	cmp := &Comparison{Runs: 2, Scenarios: []ScenarioResult{
		{Scenario: Scenario{Op: OpDiscover, Clients: 1, Calls: 10, Metric: "p50"},
			Server: []*Report{rep(800, 0, 0), rep(900, 0, 1)}, Baseline: []*Report{rep(500, 0, 0), rep(450, 0, 0)}, Ratio: []float64{1.6, 2}},
		{Scenario: Scenario{Op: OpDiscover, Clients: 16, Calls: 10, Metric: "calls/s"},
			Server: []*Report{rep(0, 1000, 0), rep(0, 1200, 0)}, Baseline: []*Report{rep(0, 2000, 0), rep(0, 2000, 0)}, Ratio: []float64{0.5, 0.6}},
	}, Sustained: []*Report{rep(0, 900, 0), rep(0, 1800, 0)}}
	var out bytes.Buffer
	cmp.WriteText(&out)
	for _, want := range []string{
		"discover_team_agents, 1 client, p50",
		"850 µs [800-900]", "1.80× [1.60-2.00]",
		"discover_team_agents, 16 clients, calls/s", "1100/s [1000-1200]", "0.55× [0.50-0.60]",
		"RSS end/start: server 1.20, baseline 1.20",
		"FAILED calls", "discover_team_agents, 1 client, p50, run 2, server: discover_team_agents: 1 × refused invalid_arguments",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("comparison text lacks %q:\n%s", want, out.String())
		}
	}
	if n := len(cmp.Failures()); n != 1 {
		t.Errorf("%d failures listed, want 1", n)
	}
}

// A run in which a side had no successful call has no ratio: neither an
// infinite nor a zero one (JSON could not hold the one, and the other
// would read as a measurement).
func TestRatioOfFailedRun(t *testing.T) {
	rep := func(p50 float64) *Report { return &Report{Ops: []OpReport{{Op: OpDiscover, P50: p50}}} }
	s := Scenario{Op: OpDiscover, Clients: 1, Metric: "p50"}
	for _, c := range []struct {
		server, baseline float64
		want             float64
		ok               bool
	}{
		{800, 400, 2, true},
		{800, 0, 0, false},
		{0, 400, 0, false},
		{0, 0, 0, false},
	} {
		r, ok := s.ratio(rep(c.server), rep(c.baseline))
		if ok != c.ok || ok && r != c.want {
			t.Errorf("ratio(%v, %v) = %v, %v; want %v, %v", c.server, c.baseline, r, ok, c.want, c.ok)
		}
	}
}
