//go:build linux

// Command deploy is a whole prickled deployment for the end-to-end tests:
// two replicas on one fresh PostgreSQL database, behind a round-robin
// reverse proxy. It is started as prickle-conformance's --server-cmd
// starts a server (conformance/README.md, "What the server gets"):
//
//	PRICKLE_E2E_PG=postgres://... deploy --prickled BIN [--db-prefix NAME]
//
// It creates the database NAME_<random> on the cluster of PRICKLE_E2E_PG
// (a URL of a database there to connect to, in the environment so that a
// password stays off command lines), then starts two prickled on it at
// once, each on a free port, with --fixture $PRICKLE_FIXTURE (the seed
// world when it is unset) and --tokens-out $PRICKLE_STATE_DIR/tokens.json:
// one loads the world and writes the tokens, the other finds it loaded.
// The proxy on PRICKLE_ADDR sends each request to the next replica in
// turn; its GET /healthz answers 200 when both replicas' /healthz do.
//
// On SIGTERM or SIGINT it stops the proxy and the replicas, then writes
// $PRICKLE_STATE_DIR/deployment.json: the database's name, each replica's
// URL, the number of requests the proxy sent it and the number of tool
// calls it answered (its "call" log lines). It exits 0 when both
// replicas exited 0. It drops no database: the test that gave it the
// cluster does.
//
// It runs prickled as a built binary, not in-process: it must import
// nothing of this module but internal/fsx.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/prickle-dev/prickle/internal/fsx"
)

// Report is deployment.json.
type Report struct {
	Database string          `json:"database"`
	Replicas []ReplicaReport `json:"replicas"`
}

// ReplicaReport is one replica's part of Report.
type ReplicaReport struct {
	URL      string `json:"url"`
	Requests int64  `json:"requests"`
	Calls    int64  `json:"calls"`
}

// maxBody bounds a request body the proxy holds: far above a replica's
// own bound (1 MiB by default), which answers for bodies below it.
const maxBody = 64 << 20

// stopTimeout is how long a replica has to exit after SIGTERM; the suite
// kills the process group 5 s after its own SIGTERM.
const stopTimeout = 4 * time.Second

// logger writes the deployment's and its replicas' output to stderr, a
// line at a time.
var logger = log.New(os.Stderr, "", 0)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		logger.Printf("deploy: %v", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) (err error) {
	bin := flag.String("prickled", "prickled", "the prickled `BINARY`")
	prefix := flag.String("db-prefix", "deploy", "the new database's name starts with `NAME`_")
	flag.Parse()
	addr, state := os.Getenv("PRICKLE_ADDR"), os.Getenv("PRICKLE_STATE_DIR")
	if addr == "" || state == "" {
		return errors.New("PRICKLE_ADDR and PRICKLE_STATE_DIR must be set")
	}
	dsn, db, err := createDatabase(ctx, os.Getenv("PRICKLE_E2E_PG"), *prefix)
	if err != nil {
		return err
	}
	replicas := make([]*replica, 2)
	defer func() {
		// However the deployment ends, no replica outlives it: each gets
		// SIGTERM at once, and SIGKILL stopTimeout later.
		deadline := time.Now().Add(stopTimeout)
		for _, r := range replicas {
			if r != nil {
				r.terminate()
			}
		}
		rep := Report{Database: db}
		for _, r := range replicas {
			if r == nil {
				continue
			}
			if serr := r.wait(deadline); serr != nil && err == nil {
				err = serr
			}
			rr := ReplicaReport{Requests: r.requests.Load(), Calls: r.calls.Load()}
			if r.url != nil {
				rr.URL = r.url.String()
			}
			rep.Replicas = append(rep.Replicas, rr)
		}
		if werr := fsx.WriteJSON(filepath.Join(state, "deployment.json"), rep, 0o644); werr != nil && err == nil {
			err = werr
		}
	}()
	for i := range replicas {
		if replicas[i], err = startReplica(i+1, *bin, dsn, state); err != nil {
			return err
		}
	}
	for _, r := range replicas {
		if err := r.waitListening(ctx); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	srv := &http.Server{Handler: proxy(replicas), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	logger.Printf("deploy: listening on %s, replicas %s and %s on database %s", addr, replicas[0].url, replicas[1].url, db)

	exited := make(chan *replica, len(replicas))
	for _, r := range replicas {
		go func() { <-r.exited; exited <- r }()
	}
	var failed error
	select {
	case <-ctx.Done():
	case r := <-exited:
		// The SIGTERM of the process group may reach a replica first: it
		// reaches the deployment too.
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
			failed = r.ended()
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close() // an event stream still open
	}
	return failed
}

// createDatabase creates a database of a new name starting with prefix_
// on the cluster of admin (a URL), and returns the URL of the new
// database, without a password (prickled gets it as PGPASSWORD), and its
// name.
func createDatabase(ctx context.Context, admin, prefix string) (dsn, name string, err error) {
	if admin == "" {
		return "", "", errors.New("PRICKLE_E2E_PG must be set to a postgres:// URL")
	}
	var b [6]byte
	rand.Read(b[:])
	name = prefix + "_" + hex.EncodeToString(b[:])
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, admin)
	if err != nil {
		return "", "", fmt.Errorf("PRICKLE_E2E_PG: %w", err) // pgx's errors show no password
	}
	defer conn.Close(cctx)
	if _, err := conn.Exec(cctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0"); err != nil {
		return "", "", fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", "", fmt.Errorf("PRICKLE_E2E_PG: %w", err)
	}
	u.Path = "/" + name
	return u.String(), name, nil
}

// replica is one prickled of the deployment.
type replica struct {
	n        int
	url      *url.URL // http://127.0.0.1:PORT, once it listens
	cmd      *exec.Cmd
	listen   chan string   // its address, once it logs it
	exited   chan struct{} // closed when it has exited
	err      error         // Wait's, once exited is closed
	requests atomic.Int64  // sent to it by the proxy
	calls    atomic.Int64  // tool calls it answered
}

// startReplica starts prickled on the database dsn, on a free port; its
// output goes to stderr, each line led by "replica N: ". A password in
// dsn goes to it as PGPASSWORD, off its command line.
func startReplica(n int, bin, dsn, state string) (*replica, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, fmt.Errorf("replica %d: %w", n, err)
	}
	env := os.Environ()
	if pw, ok := u.User.Password(); ok {
		env = append(env, "PGPASSWORD="+pw)
		u.User = url.User(u.User.Username())
	}
	// Every replica names the proxy's address, the one clients use, as
	// the protected resource.
	args := []string{"--addr", "127.0.0.1:0", "--db", u.String(), "--tokens-out", filepath.Join(state, "tokens.json"), "--log-json",
		"--public-url", "http://" + os.Getenv("PRICKLE_ADDR")}
	if f := os.Getenv("PRICKLE_FIXTURE"); f != "" {
		args = append(args, "--fixture", f)
	}
	r := &replica{n: n, listen: make(chan string, 1), exited: make(chan struct{})}
	r.cmd = exec.Command(bin, args...)
	r.cmd.Env = env
	r.cmd.Stdout = &lines{fn: r.line}
	r.cmd.Stderr = &lines{fn: r.line}
	// It dies with the deployment, however that ends.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("replica %d: %w", n, err)
	}
	go func() { r.err = r.cmd.Wait(); close(r.exited) }()
	return r, nil
}

// line passes one line of the replica's output on, picks its address from
// its "listening" log line and counts its "call" lines.
func (r *replica) line(s string) {
	logger.Printf("replica %d: %s", r.n, s)
	var l struct{ Msg, Addr string }
	if json.Unmarshal([]byte(s), &l) != nil {
		return
	}
	switch {
	case l.Msg == "call":
		r.calls.Add(1)
	case l.Msg == "listening" && l.Addr != "":
		select {
		case r.listen <- l.Addr:
		default:
		}
	}
}

// waitListening waits until the replica listens, and sets its URL.
func (r *replica) waitListening(ctx context.Context) error {
	select {
	case a := <-r.listen:
		r.url = &url.URL{Scheme: "http", Host: a}
		return nil
	case <-r.exited:
		return fmt.Errorf("%w, before it listened", r.ended())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// terminate sends the replica SIGTERM, unless it has exited.
func (r *replica) terminate() {
	select {
	case <-r.exited:
	default:
		r.cmd.Process.Signal(syscall.SIGTERM)
	}
}

// wait waits until the replica exits, and kills it at deadline; it must
// exit 0.
func (r *replica) wait(deadline time.Time) error {
	select {
	case <-r.exited:
	case <-time.After(time.Until(deadline)):
		r.cmd.Process.Kill()
		<-r.exited
		return fmt.Errorf("replica %d did not exit within %v of SIGTERM", r.n, stopTimeout)
	}
	if r.err != nil {
		return fmt.Errorf("replica %d: %w", r.n, r.err)
	}
	return nil
}

// ended says that the replica exited when it should not have.
func (r *replica) ended() error {
	if r.err == nil {
		return fmt.Errorf("replica %d exited (status 0)", r.n)
	}
	return fmt.Errorf("replica %d exited: %w", r.n, r.err)
}

// proxy sends each request to the next replica in turn, counting them,
// and answers GET /healthz itself: 200 when every replica's /healthz
// answers 200.
func proxy(replicas []*replica) http.Handler {
	var next atomic.Uint64
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			r := replicas[(next.Add(1)-1)%uint64(len(replicas))]
			r.requests.Add(1)
			pr.SetURL(r.url)
			pr.Out.Host = pr.In.Host // the Origin check compares with the address the client used
		},
		FlushInterval: -1, // event streams pass at once
		ErrorLog:      logger,
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	mux := http.NewServeMux()
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// The body is read whole before the request goes on. Streamed
		// through, Go's HTTP/1 server closes it as the answer begins: a
		// replica that answers before the transport's last read of it
		// (the one that checks it ends) has that read fail, and the
		// transport drops the connection mid-answer (golang/go#40747).
		if req.Body != nil && req.Body != http.NoBody {
			body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBody))
			if err != nil {
				http.Error(w, fmt.Sprintf("deploy: reading the request body: %v", err), http.StatusRequestEntityTooLarge)
				return
			}
			req.Body, req.ContentLength, req.TransferEncoding = io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil
		}
		rp.ServeHTTP(w, req)
	}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, req *http.Request) {
		for _, r := range replicas {
			res, err := hc.Get(r.url.JoinPath("healthz").String())
			if err != nil {
				http.Error(w, fmt.Sprintf("replica %d: %v", r.n, err), http.StatusServiceUnavailable)
				return
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				http.Error(w, fmt.Sprintf("replica %d: %s", r.n, res.Status), http.StatusServiceUnavailable)
				return
			}
		}
		w.Write([]byte("ok\n"))
	})
	return mux
}

// lines is an io.Writer that hands each complete line to fn (and what is
// left of the last one to nobody: prickled ends its lines).
type lines struct {
	buf []byte
	fn  func(string)
}

func (l *lines) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.fn(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}
