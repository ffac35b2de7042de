// Package app is the prickled command, the reference Prickle server, as a
// function: cmd/prickled calls [Main], and tests run it in-process.
// The command's usage and behaviour are documented in cmd/prickled and
// server/README.md.
//
// It may import the server, its store, the world format and the ground
// floor of internal/; only cmd/prickled's main and tests import it, and it
// must not import the generator, the conformance suite or another command.
package app

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/prickle-dev/prickle/internal/cmdline"
	"github.com/prickle-dev/prickle/internal/fsx"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/world"
)

// Main runs one prickled command line (args without the program name)
// until it is done or ctx ends, and returns the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	tuneGC()
	if len(args) > 0 && args[0] == "token" {
		return runToken(ctx, args[1:], stdout, stderr)
	}
	return serve(ctx, args, stdin, stdout, stderr)
}

// gcPercent is prickled's GOGC when the environment sets none. Each call
// allocates about 200 KB, most of it the go-sdk's decoding buffers, over a
// live heap of a few MB: at Go's default of 100 the collector runs every
// dozen calls or so. At 400 it runs a quarter as often, and a call costs
// about a third less CPU, for a heap of up to five times the live one
// (server/README.md, "Memory and the collector").
const gcPercent = 400

// tuneGC sets the collector's target to gcPercent unless GOGC is set: an
// operator's GOGC wins, and GOMEMLIMIT, which the runtime reads itself,
// still caps the heap.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

// serve runs the server until ctx is done; it returns the exit status.
func serve(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, code, ok := parseServe(args, stdout, stderr)
	if !ok {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "prickled: %v\n", err)
		return 1
	}
	if err := startPprof(stderr); err != nil {
		return fail(err)
	}

	var lh slog.Handler = slog.NewTextHandler(stderr, nil)
	if o.logJSON {
		lh = slog.NewJSONHandler(stderr, nil)
	}
	logger := slog.New(lh)
	cfg := o.cfg
	cfg.DB, cfg.LaunchTimeout, cfg.Logger = o.db, o.launch, logger
	cfg.Stateless = o.stateless.or(store.IsPostgres(o.db))
	// What can be checked before anything is created is checked first: a
	// world must not be seeded with tokens that cannot be shown.
	stdioToken := os.Getenv("PRICKLE_TOKEN")
	if o.stdio && stdioToken == "" {
		return fail(errors.New("--stdio needs the caller's token in PRICKLE_TOKEN"))
	}
	if o.world != "" {
		f, err := os.Open(o.world)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		cfg.World = f
	}
	if o.tokensOut != "" {
		if err := fsx.CheckWritable(o.tokensOut); err != nil {
			return fail(fmt.Errorf("tokens: %w", err))
		}
	}
	var ln net.Listener
	if !o.stdio {
		var err error
		if ln, err = net.Listen("tcp", o.addr); err != nil {
			return fail(err)
		}
		defer ln.Close()
		cfg.BaseURL = "http://" + ln.Addr().String()
		if o.publicURL != "" {
			cfg.BaseURL = o.publicURL
		}
	}
	srv, issued, err := server.New(ctx, cfg)
	if err != nil {
		return failStart(stderr, o.world, err)
	}
	defer srv.Close()
	// Tokens go to the terminal (or only to --tokens-out), never to the
	// log. With --stdio, stdout is the protocol, so they go to stderr.
	tokOut := stdout
	if o.stdio {
		tokOut = stderr
	}
	if srv.WorldLoadedBefore() {
		fmt.Fprintf(tokOut, "prickled: %s holds the world of %s already (an earlier start, or another replica, loaded it): not loaded again, no new tokens\n",
			store.Redact(o.db), o.world)
	} else if err := showTokens(tokOut, o.tokensOut, o.db, o.world != "", issued); err != nil {
		return fail(err)
	}

	if o.stdio {
		if err := srv.ServeStdio(ctx, stdioToken, stdin, stdout); err != nil && ctx.Err() == nil {
			return fail(err)
		}
		return 0
	}

	logger.Info("listening", "addr", ln.Addr().String(), "mcp", "http://"+ln.Addr().String()+server.PathMCP, "db", store.Redact(o.db), "stateless", cfg.Stateless,
		"version", cmdline.Version())
	if err := srv.Serve(ctx, ln); err != nil {
		return fail(err)
	}
	logger.Info("stopped")
	return 0
}

// serveOptions are prickled's flags when it serves; cfg holds those that
// go to the server as they are (origins, limits).
type serveOptions struct {
	addr, db, world, tokensOut, publicURL string
	launch                                time.Duration
	stdio, logJSON, version               bool
	stateless                             autoBool
	cfg                                   server.Config
}

// parseServe reads serve's command line. ok is false when the command is
// done (--version, -h, a usage error), with its exit status.
func parseServe(args []string, stdout, stderr io.Writer) (o *serveOptions, code int, ok bool) {
	o = &serveOptions{}
	fs := flag.NewFlagSet("prickled", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen on `HOST:PORT` (port 0 picks a free one)")
	fs.StringVar(&o.db, "db", "prickled.db", "the database: a SQLite `FILE`, :memory:, or a PostgreSQL URL (postgres://...; the PG* variables and ~/.pgpass fill in what it leaves out), which replicas share")
	fs.StringVar(&o.world, "world", "", "add the world described in `FILE` (spec/world/FIXTURE.md) to the database, instead of seeding an empty one")
	fs.StringVar(&o.world, "fixture", "", "the same as --world `FILE` (its older name)")
	fs.StringVar(&o.tokensOut, "tokens-out", "", "write the new tokens as JSON to `FILE` (mode 0600) instead of printing them")
	fs.DurationVar(&o.launch, "launch-timeout", store.DefaultLaunchTimeout, "lifetime of an execution credential")
	fs.BoolVar(&o.stdio, "stdio", false, "serve MCP on standard input and output; the caller's token is $PRICKLE_TOKEN")
	fs.BoolVar(&o.logJSON, "log-json", false, "log as JSON lines instead of text")
	fs.BoolVar(&o.version, "version", false, "print prickled's version and exit")
	fs.StringVar(&o.publicURL, "public-url", "", "the `URL` clients reach this server at, scheme://host[:port] (behind a load balancer: the same for every replica); it names the protected resource in the OAuth metadata and in 401 answers (default: http:// and --addr)")
	fs.Var(&o.stateless, "stateless", "serve MCP without sessions, so that any replica answers any request (default: on with PostgreSQL, off with SQLite)")
	fs.Func("allow-origin", "also allow browser requests from `ORIGIN` (scheme://host[:port]; repeatable)", func(v string) error {
		o.cfg.AllowedOrigins = append(o.cfg.AllowedOrigins, v)
		return nil
	})
	o.cfg.LimitFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: prickled [flags]\n       prickled token issue|rotate -h\n\nThe reference Prickle server. Flags:")
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nEnvironment:\n  GOGC\n    \tthe garbage collector's target (default %d here, not Go's 100; server/README.md)\n", gcPercent)
	}
	if code, ok := cmdline.Parse(fs, args, false); !ok {
		return nil, code, false
	}
	if o.version {
		fmt.Fprintln(stdout, "prickled", cmdline.Version())
		return nil, 0, false
	}
	if o.publicURL != "" {
		u, err := url.Parse(o.publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
			fmt.Fprintf(stderr, "prickled: --public-url %q is not scheme://host[:port] (http or https, no path)\n", o.publicURL)
			return nil, cmdline.ExitUsage, false
		}
		o.publicURL = u.Scheme + "://" + u.Host
	}
	if _, _, err := net.SplitHostPort(o.addr); err != nil && !o.stdio {
		fmt.Fprintf(stderr, "prickled: --addr %q is not HOST:PORT (e.g. 127.0.0.1:8080, or 127.0.0.1:0 for any free port)\n", o.addr)
		return nil, cmdline.ExitUsage, false
	}
	return o, 0, true
}

// autoBool is a boolean flag whose default is decided later, from other
// flags, unless the command line sets it.
type autoBool struct {
	set, v bool
}

func (b *autoBool) String() string {
	if b == nil || !b.set {
		return "auto"
	}
	return strconv.FormatBool(b.v)
}

func (b *autoBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	b.set, b.v = true, v
	return nil
}

// IsBoolFlag lets the flag stand alone (--stateless).
func (b *autoBool) IsBoolFlag() bool { return true }

// or is the flag's value, or def when the command line did not set it.
func (b *autoBool) or(def bool) bool {
	if b.set {
		return b.v
	}
	return def
}

// showTokens shows the tokens created now, once: written to tokensOut
// (mode 0600) when it is set, and then only their number and the file are
// printed; otherwise, or when that write fails, printed to w. A start that
// created none says how to get one. (A world given with --world that
// holds no agents or runners is still "the fixture", in the words
// prickled printed before --world had its name.)
func showTokens(w io.Writer, tokensOut, db string, loaded bool, issued []store.IssuedToken) error {
	if len(issued) == 0 {
		// Never overwrite an earlier tokens file with nothing.
		if loaded {
			fmt.Fprintln(w, "prickled: the fixture holds no agents or runners: no new tokens")
			return nil
		}
		fmt.Fprintf(w, "prickled: %s already holds a world; its tokens were shown when it was created.\n", store.Redact(db))
		fmt.Fprintf(w, "prickled: a new token: %s; one in place of a lost or leaked one: %s\n",
			tokenCommand("issue", db, "", ""), tokenCommand("rotate", db, "", ""))
		return nil
	}
	var werr error
	if tokensOut != "" {
		if werr = writeTokens(tokensOut, issued); werr == nil {
			fmt.Fprintf(w, "prickled: %d new tokens written to %s (mode 0600; shown nowhere else)\n", len(issued), tokensOut)
			return nil
		}
		// They exist now, and are stored only hashed: printed rather
		// than lost.
		werr = fmt.Errorf("%w; the tokens are printed instead", werr)
	}
	fmt.Fprintln(w, "prickled: new tokens (shown once, not stored; keep them out of logs):")
	for _, t := range issued {
		fmt.Fprintf(w, "  %-6s %-20s %s\n", t.Kind, t.Agent, t.Token)
	}
	return werr
}

// writeTokens writes a tokens file (server/README.md, "The tokens file"):
// through a temporary file (mode 0600) renamed into place, so the tokens
// are never readable by others, nor half-written.
func writeTokens(name string, tokens []world.Token) error {
	var b bytes.Buffer
	if err := world.WriteTokens(&b, tokens); err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(name, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("write tokens: %w", err)
	}
	return nil
}

// failStart reports a failed start. A world's problems are one line
// each, led by the place in the world's file (FILE:LINE:COLUMN) when it is
// known, so that an editor can jump to it.
func failStart(stderr io.Writer, file string, err error) int {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var fe *world.Error
		if file != "" && errors.As(e, &fe) && fe.Line > 0 {
			fmt.Fprintf(stderr, "prickled: %s:%d:%d: %v\n", file, fe.Line, fe.Column, e)
			continue
		}
		fmt.Fprintf(stderr, "prickled: %v\n", e)
	}
	return 1
}
