package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
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
// world, reached at Endpoint with the tokens of a --tokens-out file.
// Scripts that need their own world are skipped.
type URLTarget struct {
	Endpoint string
	Tokens   []world.Token
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
	return &Instance{Endpoint: u.Endpoint, Tokens: u.Tokens}, nil
}

func (u *URLTarget) String() string { return "url " + u.Endpoint }

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

// Reachable asks the server once, before any script: any HTTP answer (a
// 401 or a 405 will do) means it is there; a connection that fails is an
// *UnreachableError.
func (u *URLTarget) Reachable(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.Endpoint, nil)
	if err != nil {
		return &UnreachableError{Endpoint: u.Endpoint, Err: err}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return &UnreachableError{Endpoint: u.Endpoint, Err: err}
	}
	res.Body.Close()
	return nil
}

// HandlerTarget starts an in-process server per script with New, on an
// httptest server. The tokens are read from the fixture.
type HandlerTarget struct {
	// New builds the server's HTTP handler (serving MCP at Path, by default
	// /mcp) for the world in fixture. cleanup, if not nil, runs after the
	// script.
	New func(ctx context.Context, fixture []byte) (h http.Handler, cleanup func(), err error)
	// Path is the MCP endpoint's path; default /mcp.
	Path string
	// Name describes the target in reports; default "in-process".
	Name string
}

// Skip runs everything.
func (h *HandlerTarget) Skip(*Script) string { return "" }

// Start builds a handler and serves it.
func (h *HandlerTarget) Start(ctx context.Context, s *Script, fixtureFile, dir string) (*Instance, error) {
	fx, toks, err := readFixture(fixtureFile)
	if err != nil {
		return nil, err
	}
	handler, cleanup, err := h.New(ctx, fx)
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(handler)
	path := h.Path
	if path == "" {
		path = "/mcp"
	}
	return &Instance{Endpoint: srv.URL + path, Tokens: toks, Stop: func() {
		srv.CloseClientConnections()
		srv.Close()
		if cleanup != nil {
			cleanup()
		}
	}}, nil
}

func (h *HandlerTarget) String() string {
	if h.Name != "" {
		return h.Name
	}
	return "in-process"
}

// CmdTarget starts a fresh server process per script with `sh -c Command`.
// The environment tells it what to serve:
//
//	PRICKLE_FIXTURE    path of the world to load (fixture format, see
//	                   spec/world/FIXTURE.md); always set
//	PRICKLE_ADDR       127.0.0.1:PORT to listen on
//	PRICKLE_PORT       PORT alone
//	PRICKLE_STATE_DIR  a fresh empty folder for the server's files
//
// The server is ready when GET http://PRICKLE_ADDR/healthz answers 200.
// After the script it gets SIGTERM (its whole process group), then SIGKILL
// after StopTimeout.
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

	// pickPort picks the port (tests: a port another process holds).
	pickPort func() (int, func(), error)
}

// Skip runs everything.
func (c *CmdTarget) Skip(*Script) string { return "" }

func (c *CmdTarget) String() string { return "server-cmd " + c.Command }

// Start starts the process and waits until it is healthy.
func (c *CmdTarget) Start(ctx context.Context, s *Script, fixtureFile, dir string) (*Instance, error) {
	_, toks, err := readFixture(fixtureFile)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		inst, retry, err := c.start(ctx, fixtureFile, dir, toks)
		if err == nil {
			inst.Tokens = toks
			return inst, nil
		}
		lastErr = err
		if !retry {
			break
		}
	}
	return nil, lastErr
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

func (c *CmdTarget) start(ctx context.Context, fixtureFile, dir string, toks []world.Token) (inst *Instance, retry bool, err error) {
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
	stateDir := filepath.Join(dir, "state")
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return nil, false, err
	}
	cmd := exec.Command("sh", "-c", c.Command)
	cmd.Env = append(os.Environ(),
		"PRICKLE_FIXTURE="+fixtureFile,
		"PRICKLE_ADDR="+addr,
		"PRICKLE_PORT="+strconv.Itoa(port),
		"PRICKLE_STATE_DIR="+stateDir,
	)
	cmd.Env = append(cmd.Env, c.Env...)
	cmd.Dir = stateDir
	newGroup(cmd)
	cmd.WaitDelay = 2 * time.Second // a stray child holding the output open
	out := &lockedBuffer{}
	cmd.Stdout = out
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		return nil, false, fmt.Errorf("server-cmd: %w", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	stopTimeout := c.StopTimeout
	if stopTimeout <= 0 {
		stopTimeout = 5 * time.Second
	}
	stop := func() {
		defer release()
		select {
		case <-exited:
			return
		default:
		}
		signalGroup(cmd, false)
		select {
		case <-exited:
		case <-time.After(stopTimeout):
			signalGroup(cmd, true)
			<-exited
		}
	}
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
				break
			}
		}
		select {
		case <-exited:
			log := out.String()
			retry := strings.Contains(log, "address already in use")
			return nil, retry, fmt.Errorf("server-cmd exited before it was ready (%v); its output:\n%s", waitErr, suite.Indent(log))
		case <-ctx.Done():
			stop()
			return nil, false, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, false, fmt.Errorf("server-cmd: GET http://%s/healthz did not answer 200 within %s; its output:\n%s", addr, startTimeout, suite.Indent(out.String()))
		}
	}
	path := c.Path
	if path == "" {
		path = "/mcp"
	}
	endpoint := "http://" + addr + path
	// Healthy, but is it ours? Our process must still run, and the server
	// must accept this run's tokens.
	if err := probe(ctx, endpoint, toks); err != nil {
		select {
		case <-exited:
			log := out.String()
			err = fmt.Errorf("%w: the server exited (%v), yet something answered at %s; its output:\n%s", ErrForeignServer, waitErr, addr, suite.Indent(log))
		default:
		}
		stop()
		return nil, errors.Is(err, ErrForeignServer), err
	}
	select {
	case <-exited:
		return nil, true, fmt.Errorf("%w: the server exited (%v), yet something answered at %s", ErrForeignServer, waitErr, addr)
	default:
	}
	return &Instance{Endpoint: endpoint, Stop: stop, Output: out.String, PID: cmd.Process.Pid}, false, nil
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
