package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/internal/pgtest"
	"github.com/prickle-dev/prickle/spec/seed"
	"github.com/prickle-dev/prickle/spec/world"
)

// replicaCmd is how the suite starts prickled as a replica of a
// deployment on one SQLite file in the state folder: every replica is
// given the world; replica 0 loads it, and the others find it loaded.
func replicaCmd(bin string) string {
	return `exec ` + bin + ` --addr "$PRICKLE_ADDR" --db "$PRICKLE_STATE_DIR/prickled.db" --fixture "$PRICKLE_FIXTURE"`
}

// pgReplicaCmd is how the suite starts prickled as a replica of a
// deployment on PostgreSQL: a database of the deployment's name on the
// cluster, which replica 0 creates (the others start once it is up).
func pgReplicaCmd(t *testing.T, bin string) string {
	c := pgtest.Start(t)
	admin := c.DSN("postgres")
	db := strings.Replace(c.DSN("DEPLOYMENT"), "/DEPLOYMENT?", `/$PRICKLE_DEPLOYMENT?`, 1)
	return fmt.Sprintf(`if [ "$PRICKLE_REPLICA" = 0 ]; then %s -q '%s' -c "CREATE DATABASE $PRICKLE_DEPLOYMENT" || exit 1; fi; `+
		`exec %s --addr "$PRICKLE_ADDR" --db "%s" --fixture "$PRICKLE_FIXTURE"`, c.Bin("psql"), admin, bin, db)
}

// TestServerCmdReplicas certifies prickled run as replicas of one
// deployment, in both profiles, exploration at its default budget: two on
// one SQLite file; the reports count every replica's start and show the
// calls each answered and the race evidence across replicas.
func TestServerCmdReplicas(t *testing.T) {
	bin := prickled(t)
	for _, d := range []struct {
		name     string
		profiles []string
		replicas int
		cmd      func() string
	}{
		{"sqlite-file", []string{"reference", "core"}, 2, func() string { return replicaCmd(bin) }},
		// PostgreSQL: three replicas on a database of PRICKLE_DEPLOYMENT.
		{"postgres", []string{"reference"}, 3, func() string { return pgReplicaCmd(t, bin) }},
	} {
		for _, profile := range d.profiles {
			t.Run(d.name+"/"+profile, func(t *testing.T) { certifyReplicas(t, d.cmd(), d.replicas, profile) })
		}
	}
}

// certifyReplicas certifies the deployment of replicas processes of cmd
// in profile, and checks what the reports say of the replicas.
func certifyReplicas(t *testing.T, cmd string, replicas int, profile string) {
	jsonFile := filepath.Join(t.TempDir(), "report.json")
	start := time.Now()
	code, out, errOut := runCLI(t, "--server-cmd", cmd, "--replicas", strconv.Itoa(replicas), "--profile", profile, "--json", jsonFile)
	want := wantVerdict(t, out)
	if (code == 0) != (want == "CERTIFIED") {
		t.Fatalf("exit %d, want the verdict %s\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
	}
	if verdict, _, f, sk := summary(t, out); verdict != want || f != 0 || sk != 0 {
		t.Errorf("summary %s, %d failed, %d skipped, want %s:\n%s", verdict, f, sk, want, out)
	}
	t.Logf("%s profile, %d replicas, full run with exploration: %s", profile, replicas, time.Since(start).Round(100*time.Millisecond))
	calls := `replica 0 [1-9]\d*`
	for r := 1; r < replicas; r++ {
		calls += fmt.Sprintf(`, replica %d [1-9]\d*`, r)
	}
	if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d replicas; tool calls answered: %s$`, replicas, calls)).MatchString(out) {
		t.Errorf("no line of the calls each replica answered:\n%s", out)
	}
	for _, class := range []string{"task-same-key", "task-different-keys", "task-mixed-keys", "discussion", "credential-replay"} {
		if !regexp.MustCompile(`(?m)^  ` + class + `: \d+ of \d+ groups overlapped, \d+ across replicas \(66 needed\)`).MatchString(out) {
			t.Errorf("no race evidence across replicas for %s:\n%s", class, out)
		}
	}
	var rep struct {
		Replicas     int   `json:"replicas"`
		ReplicaCalls []int `json:"replica_calls"`
		Starts       int   `json:"server_starts"`
		Races        []struct {
			Overlapped     int  `json:"overlapped"`
			CrossReplica   int  `json:"cross_replica"`
			K              int  `json:"k"`
			AcrossReplicas bool `json:"across_replicas"`
		} `json:"race_evidence"`
	}
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Replicas != replicas || len(rep.ReplicaCalls) != replicas || rep.Starts%replicas != 0 || rep.Starts < 10 || len(rep.Races) != 5 {
		t.Errorf("json report: replicas %d, replica_calls %v, server_starts %d (want a multiple of %d: every start is a deployment), %d race classes",
			rep.Replicas, rep.ReplicaCalls, rep.Starts, replicas, len(rep.Races))
	}
	for _, r := range rep.Races {
		if !r.AcrossReplicas || r.CrossReplica < r.K || r.CrossReplica > r.Overlapped {
			t.Errorf("json race evidence %+v: want counted across replicas, at least K, at most the overlapped", r)
		}
	}
}

// TestDeploymentContract: a deployment's replicas get the contract's
// variables (each its own address and number; one state folder, world,
// count and deployment name, a lowercase SQL identifier); replica 0 has
// loaded the world before the others start (so prickled's others find it
// and seed nothing); Stop stops every replica; and a replica that does
// not start fails the start, naming it, with the replicas that did
// stopped.
func TestDeploymentContract(t *testing.T) {
	bin := prickled(t)
	dir := t.TempDir()
	w, err := world.Decode(seed.JSON())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if _, err := w.Materialize(time.Now().UTC().Truncate(time.Second), func() string { n++; return fmt.Sprintf("prk_contract_%d_%d", time.Now().UnixNano(), n) }); err != nil {
		t.Fatal(err)
	}
	fx := w.Marshal()
	fixture := filepath.Join(dir, "fixture.json")
	if err := os.WriteFile(fixture, fx, 0o600); err != nil {
		t.Fatal(err)
	}
	record := `env | grep ^PRICKLE_ | sort > "$PRICKLE_STATE_DIR/env-$PRICKLE_REPLICA"; echo $$ > "$PRICKLE_STATE_DIR/pid-$PRICKLE_REPLICA"; `
	target := &conformance.CmdTarget{Command: record + replicaCmd(bin), Replicas: 3}
	inst, err := target.Start(context.Background(), &conformance.Script{Name: "contract"}, fixture, filepath.Join(dir, "deployment"))
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "deployment", "state")
	envs := make([]map[string]string, 3)
	for r := range envs {
		b, err := os.ReadFile(filepath.Join(state, "env-"+string(rune('0'+r))))
		if err != nil {
			t.Fatal(err)
		}
		envs[r] = map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			k, v, _ := strings.Cut(l, "=")
			envs[r][k] = v
		}
	}
	if len(inst.Replicas) != 3 || inst.Endpoint != inst.Replicas[0] {
		t.Fatalf("endpoints %q, endpoint %q: want three, replica 0's first", inst.Replicas, inst.Endpoint)
	}
	for r, env := range envs {
		same := env["PRICKLE_STATE_DIR"] == state && env["PRICKLE_FIXTURE"] == fixture && env["PRICKLE_REPLICAS"] == "3" &&
			env["PRICKLE_DEPLOYMENT"] == envs[0]["PRICKLE_DEPLOYMENT"]
		own := env["PRICKLE_REPLICA"] == string(rune('0'+r)) && "http://"+env["PRICKLE_ADDR"]+"/mcp" == inst.Replicas[r] &&
			strings.HasSuffix(env["PRICKLE_ADDR"], ":"+env["PRICKLE_PORT"])
		if !same || !own {
			t.Errorf("replica %d's variables: %v", r, env)
		}
	}
	if name := envs[0]["PRICKLE_DEPLOYMENT"]; !regexp.MustCompile(`^prk_[0-9a-f]{16}$`).MatchString(name) {
		t.Errorf("PRICKLE_DEPLOYMENT %q: want prk_ and 16 hex digits", name)
	}
	_, others, _ := strings.Cut(inst.Output(), "\nreplica 1:\n")
	if strings.Count(others, "not loaded again, no new tokens") != 2 || strings.Contains(others, "prk_contract") {
		t.Errorf("replicas 1 and 2 did not find the world replica 0 loaded:\n%s", inst.Output())
	}
	inst.Stop()
	for r := range 3 {
		if alive(t, state, r) {
			t.Errorf("replica %d still runs after Stop", r)
		}
	}

	// Replica 1 of 2 exits at once: the start fails naming it, and
	// replica 0 is stopped.
	target = &conformance.CmdTarget{Command: record + `[ "$PRICKLE_REPLICA" = 1 ] && exit 3; ` + replicaCmd(bin), Replicas: 2}
	deployment := filepath.Join(dir, "half")
	_, err = target.Start(context.Background(), &conformance.Script{Name: "half"}, fixture, deployment)
	if err == nil || !strings.Contains(err.Error(), "replica 1 of 2: server-cmd exited before it was ready") {
		t.Errorf("a replica that exits: %v", err)
	}
	if alive(t, filepath.Join(deployment, "state"), 0) {
		t.Error("replica 0 still runs after replica 1 failed to start")
	}
}

// alive reports whether the process replica r of the deployment whose
// state folder is state recorded still runs.
func alive(t *testing.T, state string, r int) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, "pid-"+string(rune('0'+r))))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestURLModeReplicas: --url given once per replica of a running
// deployment (two prickled on one database file) spreads the seed-world
// scripts' calls over both.
func TestURLModeReplicas(t *testing.T) {
	db := filepath.Join(t.TempDir(), "shared.db")
	addr0, tokens := startPrickled(t, "--db", db)
	addr1, _ := startPrickled(t, "--db", db)
	code, out, errOut := runCLI(t, "--url", "http://"+addr0, "--url", "http://"+addr1, "--tokens", tokens, "--profile", "reference")
	if code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if verdict, passed, failed, _ := summary(t, out); verdict != "INCOMPLETE" || failed != 0 || passed < 30 {
		t.Errorf("%s: %d passed, %d failed:\n%s", verdict, passed, failed, out)
	}
	if !regexp.MustCompile(`(?m)^2 replicas; tool calls answered: replica 0 [1-9]\d*, replica 1 [1-9]\d*$`).MatchString(out) {
		t.Errorf("no line of the calls each replica answered:\n%s", out)
	}
	if !strings.Contains(out, "url http://"+addr0+"/mcp http://"+addr1+"/mcp (2 replicas)") {
		t.Errorf("the header does not name both replicas:\n%s", out)
	}
}
