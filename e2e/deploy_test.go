//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/prickle-dev/prickle/internal/pgtest"
)

// A deployment is internal/deploy: two prickled replicas on one fresh
// PostgreSQL database behind a round-robin proxy (its doc says how it is
// started and what it reports).

// certifyTimeout bounds one certification of deployments.
const certifyTimeout = 10 * time.Minute

// deployBin is the deployment's command.
func deployBin(t *testing.T) string {
	return goBin(t, "github.com/prickle-dev/prickle/e2e/internal/deploy")
}

// deployArgs is the command line of a deployment whose database's name
// starts with prefix_.
func deployArgs(t *testing.T, prefix string) []string {
	return []string{deployBin(t), "--prickled", prickledBin(t), "--db-prefix", prefix}
}

// deployEnv names the cluster the deployments create their databases on,
// and the role they use: one that logs in over TCP with its password
// (pgtest.PasswordRole), which must never show.
func deployEnv(t *testing.T, pg *pgtest.Cluster) []string {
	t.Helper()
	if err := pg.Exec("ALTER ROLE " + pgtest.PasswordRole + " CREATEDB"); err != nil {
		t.Fatal(err)
	}
	return []string{"PRICKLE_E2E_PG=" + pg.TCPDSN("postgres", pgtest.PasswordRole, pgtest.PasswordRolePassword)}
}

// deploymentReport is a deployment's deployment.json.
type deploymentReport struct {
	Database string
	Replicas []struct {
		URL             string
		Requests, Calls int64
	}
}

func readDeployment(t *testing.T, file string) deploymentReport {
	t.Helper()
	var d deploymentReport
	if err := json.Unmarshal([]byte(readFile(t, file)), &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return d
}

// checkBoth checks that the proxy of a deployment sent requests to each of
// its two replicas.
func checkBoth(t *testing.T, d deploymentReport, where string) {
	t.Helper()
	if len(d.Replicas) != 2 || d.Database == "" {
		t.Errorf("%s: not a deployment of two replicas on a database: %+v", where, d)
		return
	}
	for i, r := range d.Replicas {
		if r.Requests == 0 {
			t.Errorf("%s: replica %d (%s) got no request: %+v", where, i+1, r.URL, d)
		}
	}
}

// databases returns the databases of pg whose names start with prefix_.
func databases(t *testing.T, pg *pgtest.Cluster, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, `SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname`, prefix+"_")
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// dbPrefix returns the prefix of the names of the databases that a test's
// deployments create, and drops them when the test ends.
func dbPrefix(t *testing.T, pg *pgtest.Cluster, name string) string {
	t.Helper()
	prefix := "e2e_" + name
	t.Cleanup(func() {
		for _, db := range databases(t, pg, prefix) {
			if err := pg.Exec("DROP DATABASE " + pgx.Identifier{db}.Sanitize() + " WITH (FORCE)"); err != nil {
				t.Errorf("drop database %s: %v", db, err)
			}
		}
	})
	return prefix
}

// deployment is a deployment on the seed world that the test started.
type deployment struct {
	*prickled
	tokensFile string
	state      string // its PRICKLE_STATE_DIR
}

// startDeployment starts a deployment on the seed world: both replicas
// start on the new database at once, one seeds it and writes the tokens
// file, the other finds the world. It stops when the test ends.
func startDeployment(t *testing.T, pg *pgtest.Cluster, prefix string) deployment {
	t.Helper()
	d := deployment{state: t.TempDir()}
	d.tokensFile = filepath.Join(d.state, "tokens.json")
	addr := freeAddr(t)
	args := deployArgs(t, prefix)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = d.state
	cmd.Env = append(os.Environ(), "PRICKLE_ADDR="+addr, "PRICKLE_STATE_DIR="+d.state)
	cmd.Env = append(cmd.Env, deployEnv(t, pg)...)
	d.prickled = startServer(t, cmd, "http://"+addr, d.tokensFile)
	d.secret(pgtest.PasswordRolePassword)
	return d
}

// report stops the deployment and checks that each replica got requests
// and answered tool calls.
func (d deployment) report(t *testing.T) deploymentReport {
	t.Helper()
	d.stop()
	rep := readDeployment(t, filepath.Join(d.state, "deployment.json"))
	checkBoth(t, rep, "the deployment")
	for i, r := range rep.Replicas {
		if r.Calls == 0 {
			t.Errorf("replica %d answered no tool call: %+v", i+1, rep)
		}
	}
	return rep
}

// TestDeploymentCertified: prickle-conformance certifies prickled deployed
// as two replicas on one PostgreSQL database behind a round-robin proxy,
// in both profiles. Every server the suite starts is a deployment of its
// own on a fresh database, and every one sent requests to both replicas.
func TestDeploymentCertified(t *testing.T) {
	pg := pgtest.Start(t)
	for _, profile := range []string{"core", "reference"} {
		t.Run(profile, func(t *testing.T) {
			prefix := dbPrefix(t, pg, "cert_"+profile)
			keep, report := t.TempDir(), filepath.Join(t.TempDir(), "report.json")
			start := time.Now()
			args := []string{"--profile", profile,
				"--server-cmd", "exec " + strings.Join(deployArgs(t, prefix), " "), "--keep", keep, "--json", report}
			// A page of a tool prickled does not implement yet leaves the
			// whole run INCOMPLETE: certify the tools it implements, as the
			// CI recipe does (the summary, and the JSON report's verdict).
			summary, verdict := `CERTIFIED: \d+ passed, 0 failed, 0 skipped`, "certified"
			if scope, _ := implemented(t); scope != nil {
				args = append(args, "--tools", strings.Join(scope, ","))
				summary = `CERTIFIED for ` + regexp.QuoteMeta(strings.Join(scope, ", ")) + ` \(the whole run: INCOMPLETE\): \d+ passed, 0 failed, \d+ skipped`
				verdict = "incomplete"
			}
			r := runFor(t, certifyTimeout, keep, deployEnv(t, pg), conformanceBin(t), args...)
			took := time.Since(start)
			if r.code != 0 || !regexp.MustCompile(`(?m)^`+summary+`$`).Match(r.stdout) {
				t.Fatalf("prickle-conformance --profile %s against the deployment: %v", profile, r)
			}
			var rep struct {
				Verdict string
				Starts  int `json:"server_starts"`
			}
			if err := json.Unmarshal([]byte(readFile(t, report)), &rep); err != nil || rep.Verdict != verdict {
				t.Fatalf("report: %+v (%v)", rep, err)
			}

			// Each deployment wrote its deployment.json as it stopped.
			var files []string
			filepath.WalkDir(keep, func(path string, e fs.DirEntry, err error) error {
				if err == nil && e.Name() == "deployment.json" {
					files = append(files, path)
				}
				return err
			})
			if len(files) != rep.Starts {
				t.Errorf("%d deployment.json files, for %d servers started", len(files), rep.Starts)
			}
			created := map[string]bool{}
			for _, db := range databases(t, pg, prefix) {
				created[db] = true
			}
			seen := map[string]bool{}
			var requests, calls [2]int64
			for _, f := range files {
				d := readDeployment(t, f)
				rel, _ := filepath.Rel(keep, f)
				checkBoth(t, d, rel)
				if seen[d.Database] || !created[d.Database] {
					t.Errorf("%s: database %q is not a fresh one of its own", rel, d.Database)
				}
				seen[d.Database] = true
				for i, r := range d.Replicas {
					requests[i] += r.Requests
					calls[i] += r.Calls
				}
			}
			if calls[0] == 0 || calls[1] == 0 {
				t.Errorf("tool calls answered by the replicas: %d and %d", calls[0], calls[1])
			}
			t.Logf("%s profile: CERTIFIED in %s: %d deployments, each on a database of its own; requests per replica %d and %d, tool calls %d and %d; the run's summary:\n%s",
				profile, took.Round(100*time.Millisecond), len(files), requests[0], requests[1], calls[0], calls[1], summaryOf(r.stdout))
		})
	}
}

// summaryOf is the end of a conformance run's output, from its
// exploration's evidence (the races: calls that overlapped on the wire,
// here across the replicas) on.
func summaryOf(out []byte) string {
	s := string(out)
	if i := strings.Index(s, "\nexploration: "); i >= 0 {
		return s[i+1:]
	}
	return s
}

// TestDeploymentClients: real clients against a deployment on the seed
// world, through its round-robin proxy: the official TypeScript SDK
// client, with a runner's and an agent's token; and prickle-conformance
// --url with the tokens file, whose run passes every script the seed
// world allows (the others need a world of their own: the run is
// incomplete, never failed). Each replica answers calls of each.
func TestDeploymentClients(t *testing.T) {
	pg := pgtest.Start(t)
	prefix := dbPrefix(t, pg, "clients")

	t.Run("typescript", func(t *testing.T) {
		e := needNode(t)
		d := startDeployment(t, pg, prefix)
		d.wantCalls = true
		r := run(t, e.dir, nil, e.node, filepath.Join(e.dir, "ts-client.mjs"), "http", "--url", d.mcpURL(),
			"--runner-token", d.token(t, "runner", "maya/builder"),
			"--agent-token", d.token(t, "agent", "maya/builder"))
		checkTSClient(t, r, "http")
		rep := d.report(t)
		t.Logf("requests per replica %d and %d, tool calls %d and %d",
			rep.Replicas[0].Requests, rep.Replicas[1].Requests, rep.Replicas[0].Calls, rep.Replicas[1].Calls)
	})

	t.Run("conformance --url", func(t *testing.T) {
		d := startDeployment(t, pg, prefix)
		start := time.Now()
		r := runFor(t, certifyTimeout, d.state, nil, conformanceBin(t), "--url", d.url, "--tokens", d.tokensFile, "--profile", "reference")
		took := time.Since(start)
		m := regexp.MustCompile(`(?m)^INCOMPLETE: (\d+) passed, 0 failed, (\d+) skipped$`).FindSubmatch(r.stdout)
		if r.code != 1 || m == nil {
			t.Fatalf("prickle-conformance --url: want exit 1 and INCOMPLETE without a failure: %v", r)
		}
		// What did not run needed a world of its own.
		for _, line := range strings.Split(string(r.stdout), "\n") {
			if strings.HasPrefix(line, "SKIP  ") && !strings.Contains(line, "needs its own world") {
				t.Errorf("skipped for another reason: %s", line)
			}
		}
		rep := d.report(t)
		t.Logf("prickle-conformance --url in %s: %s passed, %s skipped (their own worlds); requests per replica %d and %d, tool calls %d and %d",
			took.Round(100*time.Millisecond), m[1], m[2],
			rep.Replicas[0].Requests, rep.Replicas[1].Requests, rep.Replicas[0].Calls, rep.Replicas[1].Calls)
	})
}
