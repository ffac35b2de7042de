// Package pgtest starts a throwaway PostgreSQL cluster for the tests of a
// package: initdb into a temporary folder, the server on a Unix socket in
// that folder (and on a loopback TCP port), a fresh database for each
// test, and the whole cluster removed when the tests end. It uses the
// PostgreSQL server binaries of the machine (Debian's postgresql package
// keeps them in /usr/lib/postgresql/VERSION/bin); nothing is installed
// and no server of the machine is touched.
//
// Where the binaries are missing the tests that need PostgreSQL skip,
// saying how to install them; PRICKLE_POSTGRES=1 (CI) makes them fail
// instead. initdb refuses to run as root, so as root the cluster runs as
// the postgres system user (or PRICKLE_POSTGRES_USER).
//
// New starts a cluster without a test, durable if asked, for a program
// that measures PostgreSQL (prickle-load replicas).
//
// It imports nothing of this module: it is a test helper of the ground
// floor.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env names the variable that makes PostgreSQL mandatory: with
// PRICKLE_POSTGRES=1 a test that cannot start a cluster fails instead of
// skipping.
const Env = "PRICKLE_POSTGRES"

// PasswordRole is a role that must log in with its password over TCP
// (every other connection is trusted): tests of what a wrong password
// does, and that a password never reaches a log, use it.
const PasswordRole = "prickle_password"

// PasswordRolePassword is PasswordRole's password.
const PasswordRolePassword = "s3cret-Pa55word-never-shown"

// Cluster is a running throwaway PostgreSQL cluster.
type Cluster struct {
	// Dir holds the data folder and the Unix socket.
	Dir string
	// Port is the TCP port on 127.0.0.1 (and the socket's number).
	Port int
	// User is the superuser role the test databases belong to.
	User string

	bin     string
	durable bool
	uid     *syscall.Credential
	mu      sync.Mutex
	proc    *exec.Cmd
	done    chan struct{} // closed when proc has exited
	log     *os.File
	n       int // databases made
}

var (
	once    sync.Once
	shared  *Cluster
	initErr error
)

// Start returns the package's cluster, starting it on first use. Without
// PostgreSQL's binaries it skips tb (fails it under PRICKLE_POSTGRES=1).
// A package that uses it stops it from its TestMain with Stop.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	once.Do(func() { shared, initErr = start(Options{}) })
	if initErr != nil {
		if os.Getenv(Env) == "1" {
			tb.Fatalf("PostgreSQL (mandatory with %s=1): %v", Env, initErr)
		}
		tb.Skipf("PostgreSQL: %v (%s; %s=1 makes this a failure)", initErr, InstallHint, Env)
	}
	return shared
}

// InstallHint says how to get PostgreSQL's server binaries.
const InstallHint = "install Debian's postgresql package, e.g. apt-get install postgresql, or set PRICKLE_PG_BINDIR"

// Options configure a cluster started by New.
type Options struct {
	// Durable keeps PostgreSQL's defaults of fsync and full_page_writes
	// (on), so that a commit waits for the disk as in production: for
	// measurements. The tests' clusters run without them (Restart).
	Durable bool
}

// New starts a cluster of its own, not the package's shared one, for a
// program rather than a test (prickle-load replicas measures PostgreSQL
// with it). Close stops it.
func New(opts Options) (*Cluster, error) {
	c, err := start(opts)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return c, nil
}

// Close stops a cluster of New and removes its folder.
func (c *Cluster) Close() {
	c.stop(syscall.SIGQUIT)
	os.RemoveAll(c.Dir)
}

// PID is the postmaster's process id, 0 while it is stopped; the
// cluster's backends and helpers are its descendants.
func (c *Cluster) PID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return 0
	}
	return c.proc.Process.Pid
}

// Stop stops the package's cluster, if one was started, and removes its
// folder. TestMain calls it after m.Run.
func Stop() {
	if shared != nil {
		shared.stop(syscall.SIGQUIT)
		os.RemoveAll(shared.Dir)
	}
}

// Main runs m and stops the cluster: a package's TestMain is
// os.Exit(pgtest.Main(m)) when it needs nothing else.
func Main(m *testing.M) int {
	defer Stop()
	return m.Run()
}

// BinDir finds the folder of PostgreSQL's server binaries: PRICKLE_PG_BINDIR,
// the newest /usr/lib/postgresql/*/bin, or the folder of initdb on PATH.
func BinDir() (string, error) {
	if d := os.Getenv("PRICKLE_PG_BINDIR"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			return "", fmt.Errorf("PRICKLE_PG_BINDIR=%s: no initdb there: %w", d, err)
		}
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no initdb in /usr/lib/postgresql/*/bin or on PATH")
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func start(opts Options) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, User: "postgres", durable: opts.Durable}
	if os.Geteuid() == 0 {
		name := os.Getenv("PRICKLE_POSTGRES_USER")
		if name == "" {
			name = "postgres"
		}
		u, err := user.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("running as root, the cluster runs as %q: %w", name, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.uid = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// Not t.TempDir: the cluster's user must reach it, and a Unix
	// socket's path is short.
	if c.Dir, err = os.MkdirTemp("", "prickle-pg-"); err != nil {
		return nil, err
	}
	fail := func(err error) (*Cluster, error) {
		c.stop(syscall.SIGQUIT)
		os.RemoveAll(c.Dir)
		return nil, err
	}
	if c.uid != nil {
		if err := os.Chown(c.Dir, int(c.uid.Uid), int(c.uid.Gid)); err != nil {
			return fail(err)
		}
	}
	data := filepath.Join(c.Dir, "data")
	out, err := c.command("initdb", "-D", data, "-A", "trust", "-U", c.User, "-E", "UTF8", "--no-sync").CombinedOutput()
	if err != nil {
		return fail(fmt.Errorf("initdb: %w: %s", err, out))
	}
	hba := "local all all trust\n" +
		"host all " + PasswordRole + " 127.0.0.1/32 scram-sha-256\n" +
		"host all all 127.0.0.1/32 trust\n"
	if err := c.writeFile(filepath.Join(data, "pg_hba.conf"), hba); err != nil {
		return fail(err)
	}
	if c.Port, err = freePort(); err != nil {
		return fail(err)
	}
	if err := c.Restart(); err != nil {
		return fail(err)
	}
	db, err := pgx.Connect(context.Background(), c.DSN("postgres"))
	if err != nil {
		return fail(err)
	}
	defer db.Close(context.Background())
	_, err = db.Exec(context.Background(), fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD '%s'`, PasswordRole, PasswordRolePassword))
	if err != nil {
		return fail(err)
	}
	return c, nil
}

// command runs a PostgreSQL binary as the cluster's user.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.uid}
	return cmd
}

// Bin is the path of the PostgreSQL program name (psql, say) beside
// the cluster's server.
func (c *Cluster) Bin(name string) string { return filepath.Join(c.bin, name) }

// writeFile writes a file of the cluster's, owned by its user.
func (c *Cluster) writeFile(name, body string) error {
	if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
		return err
	}
	if c.uid != nil {
		return os.Chown(name, int(c.uid.Uid), int(c.uid.Gid))
	}
	return nil
}

// Restart starts the server (again) on the cluster's data, port and
// socket, and waits until it accepts connections. Tests of an outage
// call Kill, then Restart.
func (c *Cluster) Restart() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		return errors.New("pgtest: the server is running")
	}
	logf, err := os.OpenFile(filepath.Join(c.Dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	args := []string{"-D", filepath.Join(c.Dir, "data"), "-p", strconv.Itoa(c.Port), "-k", c.Dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", "-c", "shared_buffers=64MB"}
	if !c.durable {
		// fsync=off: a test cluster outlives no machine crash, and a
		// commit still reaches the OS before it returns, so a killed
		// server loses nothing it answered.
		args = append(args, "-c", "fsync=off", "-c", "full_page_writes=off")
	}
	cmd := c.command("postgres", args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The server dies with the test binary: the signal goes when the
	// thread that started it ends, so that thread stays locked until the
	// server exits.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		logf.Close()
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	c.proc, c.done, c.log = cmd, done, logf
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(context.Background(), c.DSN("postgres"))
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-done:
			c.proc = nil
			logf.Close()
			b, _ := os.ReadFile(filepath.Join(c.Dir, "server.log"))
			return fmt.Errorf("pgtest: postgres exited at start: %s", tail(string(b)))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres not ready after 30 s: %w", err)
		}
	}
}

// Kill stops the server at once (SIGQUIT: PostgreSQL's immediate
// shutdown, as a crash; it recovers at the next start) and waits for it.
func (c *Cluster) Kill() { c.stop(syscall.SIGQUIT) }

func (c *Cluster) stop(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return
	}
	syscall.Kill(-c.proc.Process.Pid, sig)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-c.proc.Process.Pid, syscall.SIGKILL)
		<-c.done
	}
	c.log.Close()
	c.proc = nil
}

// DSN is the URL of database db over the cluster's Unix socket.
func (c *Cluster) DSN(db string) string {
	q := url.Values{"host": {c.Dir}, "port": {strconv.Itoa(c.Port)}}
	return (&url.URL{Scheme: "postgres", User: url.User(c.User), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// TCPDSN is the URL of database db over TCP on 127.0.0.1, as role user
// with password (none when empty).
func (c *Cluster) TCPDSN(db, user, password string) string {
	u := url.User(user)
	if password != "" {
		u = url.UserPassword(user, password)
	}
	return (&url.URL{Scheme: "postgres", User: u, Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port)), Path: "/" + db,
		RawQuery: "sslmode=disable"}).String()
}

// NewDatabase creates an empty database of its own for tb, dropped when
// tb ends, and returns its name.
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name, err := c.CreateDatabase()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Exec(fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name)) })
	return name
}

// CreateDatabase creates an empty database under a new name and returns
// the name.
func (c *Cluster) CreateDatabase() (string, error) {
	c.mu.Lock()
	c.n++
	var b [4]byte
	rand.Read(b[:])
	name := fmt.Sprintf("t%d_%s", c.n, hex.EncodeToString(b[:]))
	c.mu.Unlock()
	if err := c.Exec(fmt.Sprintf(`CREATE DATABASE %s TEMPLATE template0 STRATEGY FILE_COPY`, name)); err != nil {
		return "", fmt.Errorf("pgtest: create database: %w", err)
	}
	return name, nil
}

// NewDSN is NewDatabase's DSN.
func (c *Cluster) NewDSN(tb testing.TB) string {
	tb.Helper()
	return c.DSN(c.NewDatabase(tb))
}

// Exec runs one statement in the postgres database, as the superuser.
func (c *Cluster) Exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// freePort returns a TCP port of 127.0.0.1 that nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return strings.Join(lines, "\n")
}
