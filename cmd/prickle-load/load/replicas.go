package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/internal/fsx"
	"github.com/prickle-dev/prickle/internal/pgtest"
)

// The deployments of prickled that Replicas measures side by side.
const (
	// DeploySQLite is one prickled on a SQLite file.
	DeploySQLite = "sqlite"
	// DeployPG1 is one prickled on PostgreSQL, in stateless HTTP (the
	// default there).
	DeployPG1 = "pg-1"
	// DeployPG2 is two prickled replicas on one PostgreSQL database, the
	// clients spread over both round robin.
	DeployPG2 = "pg-2"
	// DeployPG1Sessions is one prickled on PostgreSQL with
	// --stateless=false: what stateless HTTP costs is the difference
	// with DeployPG1.
	DeployPG1Sessions = "pg-1-sessions"
)

// Deployments lists the deployments Replicas knows, in report order.
var Deployments = []string{DeploySQLite, DeployPG1, DeployPG2, DeployPG1Sessions}

// replicaFlags are given to every prickled Replicas starts: all clients
// share one runner token, so the per-caller bounds (64 requests and 32
// sessions by default) are raised for them to stand for many runners.
var replicaFlags = []string{"--max-requests-per-caller", "256", "--max-sessions-per-caller", "128"}

// ReplicasConfig configures Replicas.
type ReplicasConfig struct {
	// Prickled is the prickled executable.
	Prickled string
	// ServerFlags are more flags for every prickled (e.g. --db-conns 32).
	ServerFlags []string
	// Deployments, Ops and Clients are what is measured: every operation
	// at every number of clients on every deployment (defaults: all
	// Deployments; claim_task_fresh and claim_task; 1, 16 and 64).
	Deployments []string
	Ops         []string
	Clients     []int
	// Rounds is how many times each is measured (default 3), the
	// deployments taking turns in a rotating order.
	Rounds int
	// Duration is a measurement's length (default 5s), after Warmup (1s).
	Duration, Warmup time.Duration
	// Tasks is the fresh tasks of each world (default 300000).
	Tasks int
	// PGBench also measures PostgreSQL alone, each round: pgbench
	// committing one-row INSERTs at every number of clients.
	PGBench bool
	// Protocol is the MCP protocol version the clients ask for.
	Protocol string
	// Keep keeps the work folder (the servers' logs).
	Keep bool
	// Progress receives a line per measurement (nil: none).
	Progress io.Writer
}

func (c *ReplicasConfig) defaults() {
	if len(c.Deployments) == 0 {
		c.Deployments = Deployments
	}
	if len(c.Ops) == 0 {
		c.Ops = []string{OpClaimFresh, OpClaimReplay}
	}
	if len(c.Clients) == 0 {
		c.Clients = []int{1, 16, 64}
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.Duration <= 0 {
		c.Duration = 5 * time.Second
	}
	if c.Warmup < 0 {
		c.Warmup = 0
	}
	if c.Tasks <= 0 {
		c.Tasks = 300000
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Cell is one measurement: an operation at a number of clients on one
// deployment, in one round.
type Cell struct {
	Round      int     `json:"round"`
	Deployment string  `json:"deployment"`
	Op         string  `json:"op"`
	Clients    int     `json:"clients"`
	Report     *Report `json:"report"`
	// PG is what PostgreSQL counted over the measured phase.
	PG *PGStats `json:"postgres,omitempty"`
}

// PGStats are PostgreSQL's counters over a measurement.
type PGStats struct {
	// Txns is the transaction ids assigned: the transactions that wrote
	// (or locked a row), exact.
	Txns int64 `json:"write_txns"`
	// WALSyncs and WALBytes are pg_stat_wal's wal_sync and wal_bytes: the
	// fsyncs of the WAL, and its bytes. Backends report them at most
	// once a second, so they are those of a window shifted by up to a
	// second.
	WALSyncs int64   `json:"wal_syncs"`
	WALBytes float64 `json:"wal_bytes"`
}

func (a PGStats) sub(b PGStats) PGStats {
	return PGStats{Txns: a.Txns - b.Txns, WALSyncs: a.WALSyncs - b.WALSyncs, WALBytes: a.WALBytes - b.WALBytes}
}

// PGBenchRun is one pgbench measurement of PostgreSQL alone.
type PGBenchRun struct {
	Round   int     `json:"round"`
	Clients int     `json:"clients"`
	TPS     float64 `json:"tps"` // as pgbench reports it, without connecting
	PG      PGStats `json:"postgres"`
	// CPUPerCommitUS is the cluster's CPU per transaction.
	CPUPerCommitUS float64 `json:"cpu_per_commit_us"`
}

// ReplicasResult is what Replicas measured.
type ReplicasResult struct {
	Deployments []string      `json:"deployments"`
	Ops         []string      `json:"ops"`
	Clients     []int         `json:"clients"`
	Rounds      int           `json:"rounds"`
	Duration    time.Duration `json:"duration_ns"`
	ServerFlags []string      `json:"server_flags"`
	CPUs        int           `json:"cpus"`
	PostgreSQL  string        `json:"postgresql,omitempty"`
	LoadStart   [3]float64    `json:"loadavg_start"`
	LoadEnd     [3]float64    `json:"loadavg_end"`
	Cells       []Cell        `json:"cells"`
	PGBench     []PGBenchRun  `json:"pgbench,omitempty"`
	WorkDir     string        `json:"work_dir,omitempty"`
}

// Replicas starts the deployments (a durable PostgreSQL cluster of the
// machine's binaries for those on PostgreSQL, pgtest.New), measures
// every operation at every number of clients on each, round after round
// with the deployments in rotating order so that the machine's noise
// hits them alike, and returns the measurements. Every process it
// started is stopped when it returns.
func Replicas(ctx context.Context, cfg ReplicasConfig) (*ReplicasResult, error) {
	cfg.defaults()
	pgbench, err := cfg.check()
	if err != nil {
		return nil, err
	}

	res := &ReplicasResult{Deployments: cfg.Deployments, Ops: cfg.Ops, Clients: cfg.Clients, Rounds: cfg.Rounds, Duration: cfg.Duration,
		ServerFlags: append(slices.Clone(replicaFlags), cfg.ServerFlags...), CPUs: runtime.NumCPU()}
	res.LoadStart, _ = loadAverage()
	r := &replicating{cfg: cfg, res: res, pgbench: pgbench, deployed: map[string][]*conformance.Instance{}, fresh: map[bool]int{}}
	if r.dir, err = os.MkdirTemp("", "prickle-replicas-"); err != nil {
		return nil, err
	}
	if cfg.Keep {
		res.WorkDir = r.dir
	} else {
		defer os.RemoveAll(r.dir)
	}
	if err := r.writeWorld(); err != nil {
		return nil, err
	}
	defer r.close()
	if cfg.needPG() || cfg.PGBench {
		if err := r.startPostgres(ctx); err != nil {
			return nil, err
		}
	}
	if err := r.deploy(ctx); err != nil {
		return nil, err
	}
	for round := range cfg.Rounds {
		if err := r.round(ctx, round); err != nil {
			return nil, err
		}
	}
	res.LoadEnd, _ = loadAverage()
	return res, nil
}

// replicating is the state of one Replicas.
type replicating struct {
	cfg ReplicasConfig
	res *ReplicasResult
	dir string // the work folder
	// fixtureFile is the world every prickled loads; runnerTok and
	// agentTok, the tokens the calls are made with.
	fixtureFile         string
	runnerTok, agentTok string
	// pgbench is pgbench's path, cluster the PostgreSQL cluster, pgConn a
	// connection to its database for its counters, dsn the replicas' way
	// to that database: when a deployment or PGBench needs PostgreSQL.
	pgbench string
	cluster *pgtest.Cluster
	pgConn  *pgx.Conn
	dsn     string
	// deployed is the processes of each deployment; all, every process
	// started and not yet stopped.
	deployed map[string][]*conformance.Instance
	all      []*conformance.Instance
	// fresh is the next fresh task of each world (by on PostgreSQL):
	// SQLite's file, and the one PostgreSQL database every replica there
	// shares.
	fresh map[bool]int
}

// needPG says whether a deployment measured runs on PostgreSQL.
func (c *ReplicasConfig) needPG() bool {
	return slices.ContainsFunc(c.Deployments, func(d string) bool { return d != DeploySQLite })
}

// check refuses deployments and operations it does not know, and a
// prickled or a PostgreSQL that cannot be found; it returns pgbench's
// path when PostgreSQL is needed.
func (c *ReplicasConfig) check() (pgbench string, err error) {
	for _, d := range c.Deployments {
		if !slices.Contains(Deployments, d) {
			return "", fmt.Errorf("unknown deployment %q (known: %s)", d, strings.Join(Deployments, ", "))
		}
	}
	for _, op := range c.Ops {
		if _, ok := opTool[op]; !ok {
			return "", fmt.Errorf("unknown operation %q", op)
		}
	}
	if _, err := exec.LookPath(c.Prickled); err != nil {
		return "", fmt.Errorf("prickled: %w (build it: go build ./cmd/prickled)", err)
	}
	if c.needPG() || c.PGBench {
		bin, err := pgtest.BinDir()
		if err != nil {
			return "", fmt.Errorf("PostgreSQL: %w (%s)", err, pgtest.InstallHint)
		}
		if pgbench = filepath.Join(bin, "pgbench"); c.PGBench {
			if _, err := os.Stat(pgbench); err != nil {
				return "", fmt.Errorf("pgbench: %w", err)
			}
		}
	}
	return pgbench, nil
}

// writeWorld writes the world every prickled loads, with cfg.Tasks fresh
// tasks, into the work folder, and picks the tokens from it.
func (r *replicating) writeWorld() error {
	world, tokens, err := Fixture(r.cfg.Tasks)
	if err != nil {
		return err
	}
	r.fixtureFile = filepath.Join(r.dir, "world.json")
	if err := fsx.WriteFileAtomic(r.fixtureFile, world, 0o600); err != nil {
		return err
	}
	r.runnerTok, r.agentTok, err = SelectTokens(tokens, "", "")
	return err
}

// startPostgres starts the durable PostgreSQL cluster, creates the
// database the replicas share and connects to it for its counters.
func (r *replicating) startPostgres(ctx context.Context) error {
	fmt.Fprintln(r.cfg.Progress, "starting PostgreSQL (durable: fsync and synchronous_commit on)")
	cluster, err := pgtest.New(pgtest.Options{Durable: true})
	if err != nil {
		return fmt.Errorf("PostgreSQL: %w (%s)", err, pgtest.InstallHint)
	}
	r.cluster = cluster
	db, err := cluster.CreateDatabase()
	if err != nil {
		return err
	}
	// The replicas reach the database over TCP, as across a network.
	r.dsn = cluster.TCPDSN(db, cluster.User, "")
	pgConn, err := pgx.Connect(ctx, cluster.DSN(db))
	if err != nil {
		return fmt.Errorf("PostgreSQL: %w", err)
	}
	r.pgConn = pgConn
	if err := pgConn.QueryRow(ctx, "SELECT current_setting('server_version')").Scan(&r.res.PostgreSQL); err != nil {
		return fmt.Errorf("PostgreSQL: %w", err)
	}
	return nil
}

// close stops every process started, then closes the connection to
// PostgreSQL and the cluster, if started.
func (r *replicating) close() {
	for _, inst := range r.all {
		inst.Stop()
	}
	if r.pgConn != nil {
		r.pgConn.Close(context.Background())
	}
	if r.cluster != nil {
		r.cluster.Close()
	}
}

// start starts a prickled called name on db, with extra flags, in a
// folder of its own.
func (r *replicating) start(ctx context.Context, name, db string, extra ...string) (*conformance.Instance, error) {
	args := append([]string{"--db", `"$PRICKLE_DB"`, "--fixture", `"$PRICKLE_FIXTURE"`,
		"--tokens-out", `"$PRICKLE_STATE_DIR/tokens.json"`, "--addr", `"$PRICKLE_ADDR"`}, r.res.ServerFlags...)
	args = append(args, extra...)
	command := "exec " + shellQuote(r.cfg.Prickled) + " " + strings.Join(args, " ") + ` 2>"$PRICKLE_STATE_DIR/log"`
	fmt.Fprintf(r.cfg.Progress, "starting %s: %s\n", name, command)
	sdir := filepath.Join(r.dir, name)
	if err := os.Mkdir(sdir, 0o700); err != nil {
		return nil, err
	}
	t := &conformance.CmdTarget{Command: command, StartTimeout: 30 * time.Minute, Env: []string{"PRICKLE_DB=" + db}}
	inst, err := t.Start(ctx, nil, r.fixtureFile, sdir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return inst, nil
}

// deploy starts the processes the deployments need: one on SQLite; on
// PostgreSQL two stateless replicas (pg-1 is the first, pg-2 both) and
// one with sessions.
func (r *replicating) deploy(ctx context.Context) error {
	need := func(ds ...string) bool {
		return slices.ContainsFunc(ds, func(d string) bool { return slices.Contains(r.cfg.Deployments, d) })
	}
	if need(DeployPG1, DeployPG2, DeployPG1Sessions) {
		// A prickled of its own loads the world, under a bound of its own
		// (--db-timeout bounds the fixture's one transaction too, and
		// hundreds of thousands of tasks take minutes); the replicas
		// measured then find it loaded and keep the default.
		inst, err := r.start(ctx, "pg-load", r.dsn, "--db-timeout", "30m")
		if err != nil {
			return err
		}
		inst.Stop()
	}
	type proc struct {
		name, db string
		extra    []string
		in       []string
	}
	for _, p := range []proc{
		{"sqlite", filepath.Join(r.dir, "prickled.db"), nil, []string{DeploySQLite}},
		{"pg-a", r.dsn, nil, []string{DeployPG1, DeployPG2}},
		{"pg-b", r.dsn, nil, []string{DeployPG2}},
		{"pg-sessions", r.dsn, []string{"--stateless=false"}, []string{DeployPG1Sessions}},
	} {
		if !need(p.in...) {
			continue
		}
		inst, err := r.start(ctx, p.name, p.db, p.extra...)
		if err != nil {
			return err
		}
		r.all = append(r.all, inst)
		for _, d := range p.in {
			r.deployed[d] = append(r.deployed[d], inst)
		}
	}
	return nil
}

// readPG reads PostgreSQL's counters.
func (r *replicating) readPG(ctx context.Context) (PGStats, error) {
	var s PGStats
	err := r.pgConn.QueryRow(ctx, `SELECT txid_snapshot_xmax(txid_current_snapshot()), wal_sync, wal_bytes::float8 FROM pg_stat_wal`).
		Scan(&s.Txns, &s.WALSyncs, &s.WALBytes)
	return s, err
}

// round measures every operation at every number of clients on every
// deployment once, the deployments' order rotating from one measurement
// to the next, then PostgreSQL alone when asked (ReplicasConfig.PGBench).
func (r *replicating) round(ctx context.Context, round int) error {
	k := 0
	for _, op := range r.cfg.Ops {
		for _, clients := range r.cfg.Clients {
			for _, d := range rotate(r.cfg.Deployments, round+k) {
				cell, err := r.measure(ctx, round, d, op, clients)
				if err != nil {
					return err
				}
				r.res.Cells = append(r.res.Cells, cell)
				rep := cell.Report
				fmt.Fprintf(r.cfg.Progress, "round %d  %-16s %3d clients  %-14s %6.0f calls/s  p50 %5.2f ms  p99 %6.2f ms  errors %d  (load %.2f)\n",
					round+1, op, clients, d, rep.Total.CallsPerSec, rep.Total.P50/1000, rep.Total.P99/1000, rep.Total.Failed, rep.LoadEnd[0])
			}
			k++
		}
	}
	if r.cfg.PGBench {
		for _, clients := range r.cfg.Clients {
			run, err := runPGBench(ctx, r.pgbench, r.cluster, r.dir, clients, r.cfg.Duration, func() (PGStats, error) { return r.readPG(ctx) })
			if err != nil {
				return err
			}
			run.Round = round + 1
			r.res.PGBench = append(r.res.PGBench, *run)
			fmt.Fprintf(r.cfg.Progress, "round %d  pgbench          %3d clients  %6.0f commits/s\n", round+1, clients, run.TPS)
		}
	}
	return nil
}

// measure measures op at clients clients on deployment d, and on
// PostgreSQL what PostgreSQL counted meanwhile.
func (r *replicating) measure(ctx context.Context, round int, d, op string, clients int) (Cell, error) {
	onPG := d != DeploySQLite
	rc := Config{Mix: []Weighted{{op, 1}}, Clients: clients, Duration: r.cfg.Duration, WarmupDuration: r.cfg.Warmup,
		RunnerToken: r.runnerTok, AgentToken: r.agentTok, Protocol: r.cfg.Protocol, World: DefaultWorld()}
	rc.World.FreshFirst, rc.World.FreshCount = r.fresh[onPG], r.cfg.Tasks-r.fresh[onPG]
	for _, inst := range r.deployed[d] {
		rc.Endpoints = append(rc.Endpoints, inst.Endpoint)
		rc.PIDs = append(rc.PIDs, inst.PID)
	}
	cell := Cell{Round: round + 1, Deployment: d, Op: op, Clients: clients}
	var perr error
	if onPG {
		rc.DBPIDs = []int{r.cluster.PID()}
		rc.Measure = func() func(int64) {
			s0, err := r.readPG(ctx)
			return func(int64) {
				s1, err1 := r.readPG(ctx)
				if perr = errors.Join(err, err1); perr == nil {
					st := s1.sub(s0)
					cell.PG = &st
				}
			}
		}
	}
	rep, err := Run(ctx, rc)
	if rep != nil {
		r.fresh[onPG] += int(rep.freshUsed)
	}
	if errors.Is(err, ErrFreshExhausted) {
		return cell, fmt.Errorf("%s, %s, %d clients: %w: give more tasks (-tasks, now %d)", d, op, clients, err, r.cfg.Tasks)
	}
	if err = errors.Join(err, perr); err != nil {
		return cell, fmt.Errorf("%s, %s, %d clients: %w", d, op, clients, err)
	}
	cell.Report = rep
	return cell, nil
}

// rotate returns ds starting at its (i mod len)-th element.
func rotate(ds []string, i int) []string {
	i %= len(ds)
	return append(slices.Clone(ds[i:]), ds[:i]...)
}

// pgbenchTPS reads pgbench's result line.
var pgbenchTPS = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// runPGBench measures PostgreSQL alone: clients connections committing
// one-row INSERTs (prepared) for d, in a database of their own.
func runPGBench(ctx context.Context, pgbench string, c *pgtest.Cluster, dir string, clients int, d time.Duration, readPG func() (PGStats, error)) (*PGBenchRun, error) {
	script := filepath.Join(dir, "commit.sql")
	if _, err := os.Stat(script); err != nil {
		if err := c.Exec(`CREATE DATABASE pgbench_commits`); err != nil {
			return nil, fmt.Errorf("pgbench: %w", err)
		}
		conn, err := pgx.Connect(ctx, c.DSN("pgbench_commits"))
		if err != nil {
			return nil, fmt.Errorf("pgbench: %w", err)
		}
		_, err = conn.Exec(ctx, `CREATE TABLE commits (id bigserial PRIMARY KEY, v int)`)
		conn.Close(ctx)
		if err != nil {
			return nil, fmt.Errorf("pgbench: %w", err)
		}
		if err := os.WriteFile(script, []byte("INSERT INTO commits (v) VALUES (1);\n"), 0o644); err != nil {
			return nil, err
		}
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	cmd := exec.CommandContext(ctx, pgbench, "-n", "-M", "prepared", "-c", strconv.Itoa(clients), "-j", strconv.Itoa(min(clients, 2)),
		"-T", strconv.Itoa(secs), "-f", script, "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", c.User, "pgbench_commits")
	s0, err := readPG()
	if err != nil {
		return nil, fmt.Errorf("pgbench: %w", err)
	}
	_, cpu0, _, err := readProcs([]int{c.PID()})
	if err != nil {
		return nil, fmt.Errorf("pgbench: %w", err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("pgbench: %w: %s", err, out)
	}
	_, cpu1, _, err := readProcs([]int{c.PID()})
	if err != nil {
		return nil, fmt.Errorf("pgbench: %w", err)
	}
	s1, err := readPG()
	if err != nil {
		return nil, fmt.Errorf("pgbench: %w", err)
	}
	m := pgbenchTPS.FindSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("pgbench: no tps in its output: %s", out)
	}
	run := &PGBenchRun{Clients: clients, PG: s1.sub(s0)}
	run.TPS, _ = strconv.ParseFloat(string(m[1]), 64)
	if run.PG.Txns > 0 {
		run.CPUPerCommitUS = us(cpu1-cpu0) / float64(run.PG.Txns)
	}
	return run, nil
}

// cells returns the cells of op at clients on deployment d, by round.
func (r *ReplicasResult) cells(op string, clients int, d string) []Cell {
	var out []Cell
	for _, c := range r.Cells {
		if c.Op == op && c.Clients == clients && c.Deployment == d {
			out = append(out, c)
		}
	}
	return out
}

// replicaRatios are the ratios of claims per second the table ends with:
// each deployment over the one it is measured against.
var replicaRatios = [][2]string{{DeployPG1, DeploySQLite}, {DeployPG2, DeployPG1}, {DeployPG1, DeployPG1Sessions}}

// Ratio is the median [min-max] over the rounds of num's calls per
// second over den's, for op at clients (ok false when either was not
// measured).
func (r *ReplicasResult) Ratio(op string, clients int, num, den string) (s Spread, ok bool) {
	dens := map[int]float64{}
	for _, c := range r.cells(op, clients, den) {
		dens[c.Round] = c.Report.Total.CallsPerSec
	}
	var v []float64
	for _, c := range r.cells(op, clients, num) {
		if n, d := c.Report.Total.CallsPerSec, dens[c.Round]; n > 0 && d > 0 {
			v = append(v, n/d)
		}
	}
	return spreadOf(v), len(v) > 0
}

// WriteText writes the table for people.
func (r *ReplicasResult) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%d rounds, deployments in rotating order; each measurement %s after a warm-up; %d CPUs\n", r.Rounds, r.Duration, r.CPUs)
	fmt.Fprintf(w, "load average %.2f %.2f %.2f before, %.2f %.2f %.2f after\n",
		r.LoadStart[0], r.LoadStart[1], r.LoadStart[2], r.LoadEnd[0], r.LoadEnd[1], r.LoadEnd[2])
	if r.PostgreSQL != "" {
		fmt.Fprintf(w, "PostgreSQL %s (fsync, full_page_writes and synchronous_commit on); prickled %s\n", r.PostgreSQL, strings.Join(r.ServerFlags, " "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "op\tclients\tdeployment\tcalls/s median [min-max]\tp50 ms\tp99 ms\tprickled µs/call\tPostgreSQL µs/call\tgenerator µs/call\tPG write txns/call\tWAL fsyncs/call\tWAL bytes/call\terrors")
	r.eachRow(func(op string, clients int, d string) {
		cells := r.cells(op, clients, d)
		if len(cells) == 0 {
			return
		}
		var tput, p50, p99, srv, db, gen, txns, syncs, wal []float64
		var failed uint64
		for _, c := range cells {
			t := c.Report.Total
			tput, p50, p99 = append(tput, t.CallsPerSec), append(p50, t.P50/1000), append(p99, t.P99/1000)
			gen = append(gen, c.Report.ClientCPUPerCallUS)
			failed += t.Failed
			if s := c.Report.Server; s != nil {
				srv = append(srv, s.CPUPerCallUS)
			}
			if s := c.Report.Database; s != nil {
				db = append(db, s.CPUPerCallUS)
			}
			if c.PG != nil && t.Calls > 0 {
				n := float64(t.Calls)
				txns, syncs, wal = append(txns, float64(c.PG.Txns)/n), append(syncs, float64(c.PG.WALSyncs)/n), append(wal, c.PG.WALBytes/n)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", op, clients, d,
			fmtSpread(spreadOf(tput), "%.0f", ""), spreadOf(p50).Median, spreadOf(p99).Median,
			medianOr(srv, "%.0f"), medianOr(db, "%.0f"), medianOr(gen, "%.0f"), medianOr(txns, "%.2f"), medianOr(syncs, "%.2f"), medianOr(wal, "%.0f"), failed)
	})
	tw.Flush()

	fmt.Fprintln(w, "\nratios of calls/s, median [min-max] of the rounds' ratios:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var head []string
	for _, p := range replicaRatios {
		head = append(head, p[0]+" / "+p[1])
	}
	fmt.Fprintln(tw, "op\tclients\t"+strings.Join(head, "\t"))
	r.eachRow(func(op string, clients int, d string) {
		if d != r.Deployments[0] {
			return
		}
		var cols []string
		for _, p := range replicaRatios {
			col := "-"
			if s, ok := r.Ratio(op, clients, p[0], p[1]); ok {
				col = fmtSpread(s, "%.2f", "×")
			}
			cols = append(cols, col)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", op, clients, strings.Join(cols, "\t"))
	})
	tw.Flush()

	if len(r.PGBench) > 0 {
		fmt.Fprintln(w, "\nPostgreSQL alone: pgbench, one-row INSERT per transaction, prepared, over TCP:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "clients\tcommits/s median [min-max]\tPostgreSQL µs/commit\tWAL fsyncs/commit")
		for _, n := range r.Clients {
			var tps, cpu, syncs []float64
			for _, b := range r.PGBench {
				if b.Clients == n && b.PG.Txns > 0 {
					tps, cpu, syncs = append(tps, b.TPS), append(cpu, b.CPUPerCommitUS), append(syncs, float64(b.PG.WALSyncs)/float64(b.PG.Txns))
				}
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", n, fmtSpread(spreadOf(tps), "%.0f", ""), medianOr(cpu, "%.0f"), medianOr(syncs, "%.2f"))
		}
		tw.Flush()
	}
	if r.WorkDir != "" {
		fmt.Fprintf(w, "work folder kept: %s\n", r.WorkDir)
	}
}

// eachRow calls f for every operation, number of clients and
// deployment, in the table's order.
func (r *ReplicasResult) eachRow(f func(op string, clients int, d string)) {
	for _, op := range r.Ops {
		for _, n := range r.Clients {
			for _, d := range r.Deployments {
				f(op, n, d)
			}
		}
	}
}

// medianOr formats the median of v, or "-" when there is none.
func medianOr(v []float64, format string) string {
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf(format, spreadOf(v).Median)
}

// Failed is how many calls of the whole run failed.
func (r *ReplicasResult) Failed() uint64 {
	var n uint64
	for _, c := range r.Cells {
		n += c.Report.Total.Failed
	}
	return n
}
