package load

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

func TestRotate(t *testing.T) {
	ds := []string{"a", "b", "c"}
	for i, want := range [][]string{{"a", "b", "c"}, {"b", "c", "a"}, {"c", "a", "b"}, {"a", "b", "c"}} {
		if got := rotate(ds, i); !slices.Equal(got, want) {
			t.Errorf("rotate(%d) = %v, want %v", i, got, want)
		}
	}
	if !slices.Equal(ds, []string{"a", "b", "c"}) {
		t.Errorf("rotate changed its argument: %v", ds)
	}
}

// cell is a measurement of calls/s for the tests.
func cell(round int, d, op string, clients int, perSec float64) Cell {
	return Cell{Round: round, Deployment: d, Op: op, Clients: clients,
		Report: &Report{Total: OpReport{Calls: 10, OK: 10, CallsPerSec: perSec, P50: 1000, P99: 5000}}}
}

// TestReplicasRatiosPairRounds: a ratio is taken within each round, not
// between medians, and the table shows each row and ratio.
func TestReplicasRatiosPairRounds(t *testing.T) {
	r := &ReplicasResult{Deployments: []string{DeploySQLite, DeployPG1}, Ops: []string{OpClaimFresh}, Clients: []int{16}, Rounds: 3}
	for i, v := range [][2]float64{{1000, 500}, {2000, 1600}, {1500, 600}} {
		r.Cells = append(r.Cells, cell(i+1, DeployPG1, OpClaimFresh, 16, v[1]), cell(i+1, DeploySQLite, OpClaimFresh, 16, v[0]))
	}
	s, ok := r.Ratio(OpClaimFresh, 16, DeployPG1, DeploySQLite)
	if !ok || s.Median != 0.5 || s.Min != 0.4 || s.Max != 0.8 {
		t.Errorf("pg-1/sqlite: %+v %v, want 0.5 [0.4-0.8]", s, ok)
	}
	if _, ok := r.Ratio(OpClaimFresh, 16, DeployPG2, DeployPG1); ok {
		t.Error("a ratio of a deployment not measured")
	}
	var b bytes.Buffer
	r.WriteText(&b)
	for _, want := range []string{"claim_task_fresh  16       sqlite      1500 [1000-2000]", "pg-1 / sqlite", "0.50× [0.40-0.80]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestReplicasRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, c := range []struct {
		cfg  ReplicasConfig
		want string
	}{
		{ReplicasConfig{Prickled: "sh", Deployments: []string{"pg-3"}}, `unknown deployment "pg-3"`},
		{ReplicasConfig{Prickled: "sh", Ops: []string{"nope"}}, `unknown operation "nope"`},
		{ReplicasConfig{Prickled: "/nonexistent/prickled"}, "build it: go build ./cmd/prickled"},
	} {
		if _, err := Replicas(context.Background(), c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Replicas(%+v): %v, want %q", c.cfg, err, c.want)
		}
	}
	t.Setenv("PRICKLE_PG_BINDIR", t.TempDir())
	_, err := Replicas(context.Background(), ReplicasConfig{Prickled: "sh"})
	if err == nil || !strings.Contains(err.Error(), "no initdb") || !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Errorf("without PostgreSQL's binaries: %v, want where to get them", err)
	}
}
