package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/spec/world"
)

// Target brings up the server under test for one script.
type Target = suite.Target

// Instance is a running server for one script.
type Instance = suite.Instance

// URLTarget is a server that is already running with the standard seed
// world, reached at Endpoint with the tokens of a --tokens-out file, or a
// deployment of replicas, each reached at one of Replicas.
// Scripts that need their own world are skipped.
type URLTarget struct {
	Endpoint string
	Tokens   []world.Token
	// Replicas are, for a deployment of two or more replicas, every
	// replica's MCP endpoint, in replica order (Endpoint is the first).
	Replicas []string
}

// Skip skips scripts with their own fixture.
func (u *URLTarget) Skip(s *Script) string {
	if s.OwnFixture {
		return "needs its own world (fixture.json); --url runs only the scripts that use the standard seed world, use --server-cmd to run it"
	}
	return ""
}

// Start returns the running server.
func (u *URLTarget) Start(context.Context, *Script, string, string) (*Instance, error) {
	return &Instance{Endpoint: u.Endpoint, Tokens: u.Tokens, Replicas: u.Replicas}, nil
}

func (u *URLTarget) String() string {
	if len(u.Replicas) > 1 {
		return "url " + strings.Join(u.Replicas, " ")
	}
	return "url " + u.Endpoint
}

// UnreachableError reports a server that answered nothing at all: no
// script could have run against it.
type UnreachableError struct {
	Endpoint string
	Err      error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s is unreachable: %v", e.Endpoint, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Reachable asks the server (every replica) once, before any script: any
// HTTP answer (a 401 or a 405 will do) means it is there; a connection
// that fails is an *UnreachableError.
func (u *URLTarget) Reachable(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, endpoint := range (&Instance{Endpoint: u.Endpoint, Replicas: u.Replicas}).Endpoints() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
		if err != nil {
			return &UnreachableError{Endpoint: endpoint, Err: err}
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return &UnreachableError{Endpoint: endpoint, Err: err}
		}
		res.Body.Close()
	}
	return nil
}

// HandlerTarget starts an in-process server per script with New, on an
// httptest server, or a deployment of replicas with NewReplica, each on
// an httptest server of its own. The tokens are read from the fixture.
type HandlerTarget struct {
	// New builds the server's HTTP handler (serving MCP at Path, by default
	// /mcp) for the world in fixture. cleanup, if not nil, runs after the
	// script.
	New func(ctx context.Context, fixture []byte) (h http.Handler, cleanup func(), err error)
	// NewReplica, if set, is used instead of New: it builds replica r of a
	// deployment of Replicas (at least 1), in stateDir, a fresh folder
	// the replicas share (a database file in it, say), for the world in
	// fixture. Replica 0 is built first and loads the world; the others
	// then serve the world it loaded, and must not load it again.
	NewReplica func(ctx context.Context, r int, stateDir string, fixture []byte) (h http.Handler, cleanup func(), err error)
	// Replicas is how many replicas NewReplica builds per world; default 1.
	Replicas int
	// Path is the MCP endpoint's path; default /mcp.
	Path string
	// Name describes the target in reports; default "in-process".
	Name string
}

// Skip runs everything.
func (h *HandlerTarget) Skip(*Script) string { return "" }

// Start builds a handler (or the replicas' handlers) and serves it.
func (h *HandlerTarget) Start(ctx context.Context, s *Script, fixtureFile, dir string) (*Instance, error) {
	fx, toks, err := readFixture(fixtureFile)
	if err != nil {
		return nil, err
	}
	path := h.Path
	if path == "" {
		path = "/mcp"
	}
	if h.NewReplica == nil {
		handler, cleanup, err := h.New(ctx, fx)
		if err != nil {
			return nil, err
		}
		srv := httptest.NewServer(handler)
		return &Instance{Endpoint: srv.URL + path, Tokens: toks, Stop: func() {
			srv.CloseClientConnections()
			srv.Close()
			if cleanup != nil {
				cleanup()
			}
		}}, nil
	}
	stateDir := filepath.Join(dir, "state")
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return nil, err
	}
	n := max(h.Replicas, 1)
	var stops []func()
	stop := func() {
		for _, f := range slices.Backward(stops) {
			f()
		}
	}
	inst := &Instance{Tokens: toks, Stop: stop}
	for r := range n {
		handler, cleanup, err := h.NewReplica(ctx, r, stateDir, fx)
		if err != nil {
			stop()
			if n > 1 {
				err = fmt.Errorf("replica %d of %d: %w", r, n, err)
			}
			return nil, err
		}
		srv := httptest.NewServer(handler)
		stops = append(stops, func() {
			srv.CloseClientConnections()
			srv.Close()
			if cleanup != nil {
				cleanup()
			}
		})
		inst.Replicas = append(inst.Replicas, srv.URL+path)
	}
	inst.Endpoint = inst.Replicas[0]
	if n == 1 {
		inst.Replicas = nil
	}
	return inst, nil
}

func (h *HandlerTarget) String() string {
	if h.Name != "" {
		return h.Name
	}
	return "in-process"
}

// CmdTarget starts a fresh server process per script with `sh -c Command`,
// or Replicas processes of it as one deployment. The environment tells
// each what to serve:
//
//	PRICKLE_WORLD       path of the world to load (the world format of
//	                    spec/world/FIXTURE.md); always set
//	PRICKLE_FIXTURE     the same path, under its older name, which
//	                    servers written before PRICKLE_WORLD read
//	PRICKLE_ADDR        127.0.0.1:PORT to listen on (each replica its own)
//	PRICKLE_PORT        PORT alone
//	PRICKLE_STATE_DIR   a fresh empty folder for the server's files, one
//	                    for every replica of the deployment
//	PRICKLE_REPLICA     the replica's number, 0 to PRICKLE_REPLICAS-1
//	PRICKLE_REPLICAS    how many replicas the deployment has (1 alone)
//	PRICKLE_DEPLOYMENT  a name unique to the deployment, a lowercase SQL
//	                    identifier (prk_ and hex digits): a database or
//	                    schema of its own
//
// A server is ready when GET http://PRICKLE_ADDR/healthz answers 200 and
// it accepts a token of the world. Replica 0 starts first and loads the
// world; once it is ready, the others start at once and serve the world
// it loaded (conformance/README.md, "Replicas"). After the script every
// process gets SIGTERM (its whole process group), then SIGKILL after
// StopTimeout.
type CmdTarget struct {
	Command string
	// Path is the MCP endpoint's path; default /mcp.
	Path string
	// StartTimeout bounds the wait for /healthz; default 20s.
	StartTimeout time.Duration
	// StopTimeout is how long SIGTERM gets before SIGKILL; default 5s.
	StopTimeout time.Duration
	// Env is added to the command's environment (NAME=value), after the
	// variables above.
	Env []string
	// Replicas is how many processes of Command make one deployment;
	// default 1.
	Replicas int

	// pickPort picks the port (tests: a port another process holds).
	pickPort func() (int, func(), error)
}

// Skip runs everything.
func (c *CmdTarget) Skip(*Script) string { return "" }

func (c *CmdTarget) String() string { return "server-cmd " + c.Command }

// deployment is what the replicas of one start share.
type deployment struct {
	fixture, stateDir, name string
	replicas                int
	toks                    []world.Token
}

// Start starts the deployment, replica 0 first and then the others at
// once, and waits until every replica is ready; a replica that does not
// start stops those that did.
func (c *CmdTarget) Start(ctx context.Context, s *Script, fixtureFile, dir string) (*Instance, error) {
	_, toks, err := readFixture(fixtureFile)
	if err != nil {
		return nil, err
	}
	d := &deployment{fixture: fixtureFile, stateDir: filepath.Join(dir, "state"), name: deploymentName(),
		replicas: max(c.Replicas, 1), toks: toks}
	procs := make([]*Instance, d.replicas)
	stop := func() {
		var wg sync.WaitGroup
		for _, p := range procs {
			if p != nil {
				wg.Go(p.Stop)
			}
		}
		wg.Wait()
	}
	if procs[0], err = c.startReplica(ctx, d, 0); err != nil {
		return nil, err
	}
	errs := make([]error, d.replicas)
	var wg sync.WaitGroup
	for r := 1; r < d.replicas; r++ {
		wg.Go(func() { procs[r], errs[r] = c.startReplica(ctx, d, r) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		stop()
		return nil, err
	}
	inst := &Instance{Endpoint: procs[0].Endpoint, Tokens: toks, Stop: stop, Output: procs[0].Output, PID: procs[0].PID}
	if d.replicas > 1 {
		for _, p := range procs {
			inst.Replicas = append(inst.Replicas, p.Endpoint)
		}
		inst.Output = func() string {
			var b strings.Builder
			for r, p := range procs {
				fmt.Fprintf(&b, "replica %d:\n%s\n", r, suite.Indent(p.Output()))
			}
			return b.String()
		}
	}
	return inst, nil
}

// startReplica starts replica r of d, trying another port when the one
// it picked was taken; a failure of a deployment's replica names it.
func (c *CmdTarget) startReplica(ctx context.Context, d *deployment, r int) (*Instance, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		inst, retry, err := c.start(ctx, d, r)
		if err == nil {
			return inst, nil
		}
		lastErr = err
		if !retry {
			break
		}
	}
	if d.replicas > 1 {
		lastErr = fmt.Errorf("replica %d of %d: %w", r, d.replicas, lastErr)
	}
	return nil, lastErr
}

// deploymentName is a fresh PRICKLE_DEPLOYMENT: a lowercase SQL
// identifier, "prk_" and 16 hex digits.
func deploymentName() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "prk_" + hex.EncodeToString(b[:])
}

// lockedBuffer collects a process's output, bounded.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() < 1<<20 {
		b.buf.Write(p)
	}
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ports are the ports handed to servers this process started and that
// still run: two concurrent starts never get the same one.
var ports = struct {
	sync.Mutex
	inUse map[int]bool
}{inUse: map[int]bool{}}

// freePort picks a port nothing listens on and no other server of this run
// was given; release gives it back.
func freePort() (port int, release func(), err error) {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, nil, err
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
		ports.Lock()
		taken := ports.inUse[port]
		if !taken {
			ports.inUse[port] = true
		}
		ports.Unlock()
		if !taken {
			return port, sync.OnceFunc(func() {
				ports.Lock()
				delete(ports.inUse, port)
				ports.Unlock()
			}), nil
		}
	}
	return 0, nil, fmt.Errorf("no free port")
}

// ErrForeignServer is what a start fails with when the port is held by
// another process, or the server answering there does not know the run's
// tokens: nothing but the server started for this run may answer it.
var ErrForeignServer = errors.New("another process answers on the server's port")

// listening reports whether something accepts connections at addr.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// probe checks that the server at endpoint is the one that loaded this
// run's world: it accepts one of the world's fresh tokens.
func probe(ctx context.Context, endpoint string, toks []world.Token) error {
	if len(toks) == 0 {
		return nil
	}
	cl := wire.NewClient(endpoint, nil)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := cl.Open(ctx, toks[0].Token)
	var he *wire.HTTPError
	if errors.As(err, &he) && he.Status == http.StatusUnauthorized {
		return fmt.Errorf("%w: the server at %s refuses this run's tokens (%v): another process holds the port, or the server did not load $PRICKLE_FIXTURE", ErrForeignServer, endpoint, err)
	}
	if err != nil {
		return fmt.Errorf("server-cmd: opening an MCP session at %s with a token of the world: %w", endpoint, err)
	}
	return nil
}

// start starts replica r of d and waits until it is ready: one attempt.
func (c *CmdTarget) start(ctx context.Context, d *deployment, r int) (inst *Instance, retry bool, err error) {
	pick := c.pickPort
	if pick == nil {
		pick = freePort
	}
	port, release, err := pick()
	if err != nil {
		return nil, false, err
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if listening(addr) {
		return nil, true, fmt.Errorf("%w: port %d is held by another process before the server started", ErrForeignServer, port)
	}
	p, err := c.launch(d, r, addr, port, release)
	if err != nil {
		return nil, false, err
	}
	if retry, err := c.waitReady(ctx, p, addr); err != nil {
		return nil, retry, err
	}
	path := c.Path
	if path == "" {
		path = "/mcp"
	}
	endpoint := "http://" + addr + path
	// Healthy, but is it ours? Our process must still run, and the server
	// must accept this run's tokens.
	if err := probe(ctx, endpoint, d.toks); err != nil {
		select {
		case <-p.exited:
			log := p.out.String()
			err = fmt.Errorf("%w: the server exited (%v), yet something answered at %s; its output:\n%s", ErrForeignServer, p.waitErr, addr, suite.Indent(log))
		default:
		}
		p.stop()
		return nil, errors.Is(err, ErrForeignServer), err
	}
	select {
	case <-p.exited:
		return nil, true, fmt.Errorf("%w: the server exited (%v), yet something answered at %s", ErrForeignServer, p.waitErr, addr)
	default:
	}
	return &Instance{Endpoint: endpoint, Tokens: d.toks, Stop: p.stop, Output: p.out.String, PID: p.cmd.Process.Pid}, false, nil
}

// proc is a server process a CmdTarget started.
type proc struct {
	cmd *exec.Cmd
	out *lockedBuffer
	// exited is closed once the process has exited, waitErr then what
	// its wait returned.
	exited  chan struct{}
	waitErr error
	// stopTimeout is how long SIGTERM gets before SIGKILL; release gives
	// the process's port back.
	stopTimeout time.Duration
	release     func()
}

// launch starts replica r of d, to listen on addr (port), with the
// variables of the contract (see CmdTarget) in its environment, in a
// process group of its own; release gives the port back once it stops.
func (c *CmdTarget) launch(d *deployment, r int, addr string, port int, release func()) (*proc, error) {
	if err := os.MkdirAll(d.stateDir, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command("sh", "-c", c.Command)
	cmd.Env = append(os.Environ(),
		"PRICKLE_WORLD="+d.fixture,
		"PRICKLE_FIXTURE="+d.fixture,
		"PRICKLE_ADDR="+addr,
		"PRICKLE_PORT="+strconv.Itoa(port),
		"PRICKLE_STATE_DIR="+d.stateDir,
		"PRICKLE_REPLICA="+strconv.Itoa(r),
		"PRICKLE_REPLICAS="+strconv.Itoa(d.replicas),
		"PRICKLE_DEPLOYMENT="+d.name,
	)
	cmd.Env = append(cmd.Env, c.Env...)
	cmd.Dir = d.stateDir
	newGroup(cmd)
	cmd.WaitDelay = 2 * time.Second // a stray child holding the output open
	p := &proc{cmd: cmd, out: &lockedBuffer{}, exited: make(chan struct{}), stopTimeout: c.StopTimeout, release: release}
	cmd.Stdout = p.out
	cmd.Stderr = p.out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("server-cmd: %w", err)
	}
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
	if p.stopTimeout <= 0 {
		p.stopTimeout = 5 * time.Second
	}
	return p, nil
}

// stop stops p, if it still runs: SIGTERM to its process group, then
// SIGKILL after its stop timeout. It gives the port back.
func (p *proc) stop() {
	defer p.release()
	select {
	case <-p.exited:
		return
	default:
	}
	signalGroup(p.cmd, false)
	select {
	case <-p.exited:
	case <-time.After(p.stopTimeout):
		signalGroup(p.cmd, true)
		<-p.exited
	}
}

// waitReady waits until GET http://addr/healthz answers 200. It fails
// when p exits first (to be retried when its output says the address was
// in use), and stops p when ctx ends or the start timeout passes.
func (c *CmdTarget) waitReady(ctx context.Context, p *proc, addr string) (retry bool, err error) {
	startTimeout := c.StartTimeout
	if startTimeout <= 0 {
		startTimeout = 20 * time.Second
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil}}
	defer hc.CloseIdleConnections()
	deadline := time.Now().Add(startTimeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
		if res, err := hc.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return false, nil
			}
		}
		select {
		case <-p.exited:
			log := p.out.String()
			retry := strings.Contains(log, "address already in use")
			return retry, fmt.Errorf("server-cmd exited before it was ready (%v); its output:\n%s", p.waitErr, suite.Indent(log))
		case <-ctx.Done():
			p.stop()
			return false, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return false, fmt.Errorf("server-cmd: GET http://%s/healthz did not answer 200 within %s; its output:\n%s", addr, startTimeout, suite.Indent(p.out.String()))
		}
	}
}

// replicasOf is how many replicas t starts (or reaches) for each world:
// 1 for one server.
func replicasOf(t Target) int {
	switch t := t.(type) {
	case *CmdTarget:
		return max(t.Replicas, 1)
	case *HandlerTarget:
		if t.NewReplica != nil {
			return max(t.Replicas, 1)
		}
	case *URLTarget:
		return max(len(t.Replicas), 1)
	}
	return 1
}

// readFixture reads a fixture file and the tokens it gives.
func readFixture(file string) ([]byte, []world.Token, error) {
	fx, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	w, err := world.Decode(fx)
	if err != nil {
		return nil, nil, err
	}
	return fx, w.Tokens(), nil
}
