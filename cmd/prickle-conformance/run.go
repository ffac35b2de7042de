package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/internal/cmdline"
	"github.com/prickle-dev/prickle/spec"
)

// Exit statuses.
const (
	exitOK    = cmdline.ExitOK
	exitFail  = 1
	exitUsage = cmdline.ExitUsage
)

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "trace" {
		return runTrace(args[1:], stdout, stderr)
	}
	return runSuite(args, stdout, stderr)
}

func usageErr(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "prickle-conformance: "+format+"\n", args...)
	return exitUsage
}

func loadSpec(stderr io.Writer) (*spec.Spec, []*conformance.Script, bool) {
	sp, err := spec.LoadBundled()
	if err == nil {
		_, err = sp.Marshal() // computes the spec's hash, shown in reports
	}
	if err != nil {
		fmt.Fprintf(stderr, "prickle-conformance: the bundled spec: %v\n", err)
		return nil, nil, false
	}
	scripts, warns, err := conformance.Suite(sp)
	if err != nil {
		fmt.Fprintf(stderr, "prickle-conformance: %v\n", err)
		return nil, nil, false
	}
	for _, w := range warns {
		fmt.Fprintf(stderr, "prickle-conformance: warning: %s\n", w)
	}
	return sp, scripts, true
}

func runSuite(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("prickle-conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	serverCmd := fs.String("server-cmd", "", "start a fresh server per script with sh -c `CMD` (see PRICKLE_* in conformance/README.md)")
	rawURL := fs.String("url", "", "test the already running server at `URL` (its MCP endpoint, or its base URL: /mcp is added), loaded with the seed world")
	tokensFile := fs.String("tokens", "", "with --url: the server's tokens `FILE` (prickled --tokens-out format)")
	profile := fs.String("profile", "core", "`core` checks what the pages say; reference also checks the reference server's documented choices")
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "run `N` scripts at once")
	runRe := fs.String("run", "", "run only the scripts whose names match `REGEX`")
	list := fs.Bool("list", false, "list the scripts (after --run) and exit")
	junit := fs.String("junit", "", "write a JUnit XML report to `FILE`")
	jsonOut := fs.String("json", "", "write a JSON report to `FILE`")
	xfailFile := fs.String("expected-failures", "", "`FILE` of script names known to fail: their failure keeps the run clean, their passing fails it")
	verbose := fs.Bool("v", false, "show the whole log of every script")
	startTimeout := fs.Duration("start-timeout", 20*time.Second, "with --server-cmd: how long a server may take to answer GET /healthz")
	mcpPath := fs.String("mcp-path", "/mcp", "with --server-cmd: the MCP endpoint's path")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: prickle-conformance --server-cmd 'CMD ARGS' [flags]
       prickle-conformance --url URL --tokens FILE [flags]
       prickle-conformance --list [--run REGEX]
       prickle-conformance trace [--json]

Certify a Prickle server against the tool reference pages.

flags:
`)
		fs.PrintDefaults()
	}
	if code, ok := cmdline.Parse(fs, args, false); !ok {
		return code
	}
	prof, err := conformance.ParseProfile(*profile)
	if err != nil {
		return usageErr(stderr, "%v", err)
	}
	var filter *regexp.Regexp
	if *runRe != "" {
		if filter, err = regexp.Compile(*runRe); err != nil {
			return usageErr(stderr, "--run: %v", err)
		}
	}
	sp, scripts, ok := loadSpec(stderr)
	if !ok {
		return exitUsage
	}
	opts := conformance.Options{Profile: prof, Spec: sp, Parallel: *parallel, Run: filter, Verbose: *verbose, Progress: stdout}
	if *list {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, s := range opts.Select(scripts) {
			world := "seed world"
			if s.OwnFixture {
				world = "own world"
			}
			kind := "hand-written"
			if s.Derived {
				kind = "derived"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, kind, world, s.Summary)
		}
		tw.Flush()
		return exitOK
	}
	switch {
	case *serverCmd != "" && *rawURL != "":
		return usageErr(stderr, "--server-cmd and --url exclude each other")
	case *serverCmd != "":
		if *tokensFile != "" {
			return usageErr(stderr, "--tokens goes with --url (with --server-cmd the tokens come from the fixtures)")
		}
		opts.Target = &conformance.CmdTarget{Command: *serverCmd, Path: *mcpPath, StartTimeout: *startTimeout}
	case *rawURL != "":
		if *tokensFile == "" {
			return usageErr(stderr, "--url needs --tokens FILE (the server's tokens, prickled --tokens-out format)")
		}
		endpoint, err := cmdline.MCPEndpoint(*rawURL)
		if err != nil {
			return usageErr(stderr, "--url: %v", err)
		}
		f, err := os.Open(*tokensFile)
		if err != nil {
			return usageErr(stderr, "--tokens: %v", err)
		}
		toks, err := conformance.ReadTokens(f)
		f.Close()
		if err != nil {
			return usageErr(stderr, "--tokens %s: %v", *tokensFile, err)
		}
		opts.Target = &conformance.URLTarget{Endpoint: endpoint, Tokens: toks}
	default:
		return usageErr(stderr, "say which server to test: --server-cmd 'CMD' or --url URL --tokens FILE (-h for help)")
	}
	if *xfailFile != "" {
		f, err := os.Open(*xfailFile)
		if err != nil {
			return usageErr(stderr, "--expected-failures: %v", err)
		}
		names, err := conformance.ReadExpectedFailures(f)
		f.Close()
		if err != nil {
			return usageErr(stderr, "--expected-failures %s: %v", *xfailFile, err)
		}
		known := map[string]bool{}
		for _, s := range scripts {
			known[s.Name] = true
		}
		opts.ExpectedFailures = map[string]bool{}
		for _, n := range names {
			if !known[n] {
				return usageErr(stderr, "--expected-failures %s: no script is named %q", *xfailFile, n)
			}
			opts.ExpectedFailures[n] = true
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(stdout, "prickle-conformance: profile %s, %s, spec %s\n", prof, opts.Target, shortHash(sp.Hash))
	rep, err := conformance.Run(ctx, scripts, opts)
	if err != nil {
		fmt.Fprintf(stderr, "prickle-conformance: %v\n", err)
		return exitUsage
	}
	code := exitOK
	if *jsonOut != "" {
		if err := writeFile(*jsonOut, func(w io.Writer) error { return conformance.WriteJSON(w, rep) }); err != nil {
			fmt.Fprintf(stderr, "prickle-conformance: --json: %v\n", err)
			code = exitUsage
		}
	}
	if *junit != "" {
		if err := writeFile(*junit, func(w io.Writer) error { return conformance.WriteJUnit(w, rep) }); err != nil {
			fmt.Fprintf(stderr, "prickle-conformance: --junit: %v\n", err)
			code = exitUsage
		}
	}
	fmt.Fprintln(stdout)
	var failed []string
	for _, r := range rep.Results {
		if r.Status == conformance.Fail {
			failed = append(failed, r.Name)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(stdout, "failed: %s\n", strings.Join(failed, " "))
	}
	if rep.XFailed > 0 {
		fmt.Fprintf(stdout, "%d expected failures still fail\n", rep.XFailed)
	}
	fmt.Fprintf(stdout, "%d checks in %.1fs\n", rep.Checks, rep.Duration.Seconds())
	fmt.Fprintln(stdout, rep.Summary())
	if code == exitOK && !rep.Clean() {
		code = exitFail
	}
	return code
}

func shortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func writeFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func runTrace(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("prickle-conformance trace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the matrix as JSON")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: prickle-conformance trace [--json]

Print the traceability matrix: every normative sentence of the pages, with
the scripts that test it or the reason it cannot be tested from outside.
Exit status 1 when a sentence is neither, or an ID is stale.

flags:
`)
		fs.PrintDefaults()
	}
	if code, ok := cmdline.Parse(fs, args, false); !ok {
		return code
	}
	sp, scripts, ok := loadSpec(stderr)
	if !ok {
		return exitUsage
	}
	rows, problems, err := conformance.Trace(sp, scripts)
	if err != nil {
		fmt.Fprintf(stderr, "prickle-conformance: %v\n", err)
		return exitUsage
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"sentences": rows, "problems": nonNil(problems)}); err != nil {
			return exitUsage
		}
	} else {
		covered, explained := 0, 0
		for _, r := range rows {
			fmt.Fprintf(stdout, "%s  %s\n", r.ID, r.Text)
			if len(r.Scripts) > 0 {
				covered++
				fmt.Fprintf(stdout, "    tested by: %s\n", strings.Join(r.Scripts, ", "))
			}
			if r.Reason != "" {
				explained++
				fmt.Fprintf(stdout, "    not testable from outside: %s\n", r.Reason)
			}
			if len(r.Scripts) == 0 && r.Reason == "" {
				fmt.Fprintf(stdout, "    UNTRACKED\n")
			}
		}
		fmt.Fprintf(stdout, "\n%d sentences: %d tested, %d with a reason they cannot be (fully) tested, %d problems\n",
			len(rows), covered, explained, len(problems))
	}
	for _, p := range problems {
		fmt.Fprintf(stderr, "prickle-conformance: %s\n", p)
	}
	if len(problems) > 0 {
		return exitFail
	}
	return exitOK
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
