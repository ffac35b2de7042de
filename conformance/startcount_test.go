package conformance

import (
	"context"
	"errors"
	"testing"
)

// failingTarget refuses every start.
type failingTarget struct{ Target }

func (failingTarget) Start(context.Context, *Script, string, string) (*Instance, error) {
	return nil, errors.New("no server")
}

// TestStartCounterCountsDeployments: a deployment's start that fails (or
// that the run's end cut short) asked for every replica, so a run's
// server_starts stays a multiple of the replicas.
func TestStartCounterCountsDeployments(t *testing.T) {
	for _, replicas := range []int64{0, 1, 3} {
		c := &startCounter{Target: failingTarget{}, replicas: replicas}
		if _, err := c.Start(context.Background(), nil, "", ""); err == nil {
			t.Fatal("the failing target started")
		}
		if want := max(replicas, 1); c.n.Load() != want {
			t.Errorf("%d replicas: a failed start counted %d, want %d", replicas, c.n.Load(), want)
		}
	}
}
