package app

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/internal/cmdline"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/world"
)

// The certification, prickle-conformance's own command line: it reads the
// flags, runs the suite against the server they name, writes the reports
// and prints the summary.

// runSuite is "prickle-conformance [flags]": a certification run.
func runSuite(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, code, ok := parseCertify(args, stderr)
	if !ok {
		return code
	}
	opts, scripts, code, ok := f.options(stdout, stderr)
	if !ok {
		return code
	}
	if f.list {
		if err := writeList(stdout, opts.Select(scripts), opts.Explores()); err != nil {
			return usageErr(stderr, "%v", err)
		}
		return exitOK
	}
	if code, ok := f.server(&opts, scripts, stderr); !ok {
		return code
	}
	rep, err := conformance.Run(ctx, scripts, opts)
	var unreachable *conformance.UnreachableError
	switch {
	case errors.As(err, &unreachable):
		fmt.Fprintf(stderr, "prickle-conformance: %v\n", err)
		return exitFail
	case err != nil:
		fmt.Fprintf(stderr, "prickle-conformance: %v\n", err)
		return exitUsage
	}
	return f.finish(rep, opts.Spec, len(scripts), stdout, stderr)
}

// certifyFlags is a certification's command line, as read.
type certifyFlags struct {
	fs                                   *flag.FlagSet
	serverCmd, tokensFile, mcpPath       string
	urls                                 urlsFlag
	replicas                             int
	startTimeout                         time.Duration
	profile, pages, scriptsDir, tools    string
	runRe, save, keep, xfailFile         string
	parallel, explore                    int
	raceBudget                           time.Duration
	seed                                 int64
	freshStarts, list, annotate, verbose bool
	reports                              reportFiles
}

// parseCertify reads a certification's command line. ok is false when
// the command is done (-h, a usage error), with its exit status.
func parseCertify(args []string, stderr io.Writer) (f *certifyFlags, code int, ok bool) {
	f = &certifyFlags{fs: flag.NewFlagSet("prickle-conformance", flag.ContinueOnError)}
	fs := f.fs
	fs.SetOutput(stderr)
	fs.StringVar(&f.serverCmd, "server-cmd", "", "start a fresh server per script with sh -c `CMD` (see PRICKLE_* in conformance/README.md)")
	fs.Var(&f.urls, "url", "test the already running server at `URL` (its MCP endpoint, or its base URL: /mcp is added), loaded with the seed world; once per replica for a deployment of replicas")
	fs.IntVar(&f.replicas, "replicas", 1, "with --server-cmd: start each world as a deployment of `N` processes of the command (conformance/README.md, \"Replicas\")")
	fs.StringVar(&f.tokensFile, "tokens", "", "with --url: the server's tokens `FILE` (prickled --tokens-out format)")
	fs.StringVar(&f.profile, "profile", "core", "`core` checks what the pages say; reference also checks the reference server's documented choices")
	fs.StringVar(&f.pages, "pages", "", "certify against these pages instead of the bundled ones: a `PATH` to a folder of pages, a page, or a spec file (prickle-gen spec -o FILE.json)")
	fs.StringVar(&f.scriptsDir, "scripts", "", "also run the scripts in `DIR` (your own, or sequences saved by --save)")
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "run `N` scripts (and exploration sequences) at once")
	fs.BoolVar(&f.freshStarts, "fresh-starts", false, "start a server of its own for every script and sequence, none shared (slower)")
	fs.StringVar(&f.tools, "tools", "", "certify only the documented tools `NAMES` (comma-separated) the server implements: the whole suite runs, and the exit status asks only that these tools be certified")
	fs.StringVar(&f.runRe, "run", "", "run only the scripts whose names match `REGEX` (exploration is the script \"explore\"); a partial run never certifies")
	fs.IntVar(&f.explore, "explore", conformance.DefaultExplore, "stateful exploration: `N` random sequences of calls (0: none, and the run cannot certify)")
	fs.DurationVar(&f.raceBudget, "race-budget", conformance.DefaultRaceBudget, "after exploration's sequences, race each race class short of evidence (its K groups whose calls overlapped on the wire) for at most `DURATION`; a class still short leaves the run incomplete")
	fs.Int64Var(&f.seed, "seed", 0, "seed of exploration (`N`; 0: a random one, which the report names)")
	fs.StringVar(&f.save, "save", "", "write every shrunk failing exploration sequence as a script to `DIR`")
	fs.StringVar(&f.keep, "keep", "", "keep the materialized scripts, fixtures and server folders in `DIR`")
	fs.BoolVar(&f.list, "list", false, "list the scripts (after --run) and exit")
	fs.StringVar(&f.reports.junit, "junit", "", "write a JUnit XML report to `FILE`")
	fs.StringVar(&f.reports.json, "json", "", "write a JSON report to `FILE`")
	fs.StringVar(&f.reports.markdown, "markdown", "", "write a Markdown summary to `FILE` (for $GITHUB_STEP_SUMMARY or a pull-request comment)")
	fs.StringVar(&f.reports.badge, "badge", "", "write a shields.io endpoint badge to `FILE` (verdict, passed/total, profile)")
	fs.StringVar(&f.reports.html, "html", "", "write an HTML report to `FILE`: each page with every sentence marked by its result, one file that opens offline")
	fs.BoolVar(&f.annotate, "github-annotations", false, "print a GitHub Actions annotation per failure, at the page line of the sentence it breaks (default true when $GITHUB_ACTIONS is true)")
	fs.StringVar(&f.xfailFile, "expected-failures", "", "`FILE` of script names known to fail: their failure keeps the run from failing, their passing fails it")
	fs.BoolVar(&f.verbose, "v", false, "show the whole log of every script")
	fs.DurationVar(&f.startTimeout, "start-timeout", 20*time.Second, "with --server-cmd: how long a server may take to answer GET /healthz")
	fs.StringVar(&f.mcpPath, "mcp-path", "/mcp", "with --server-cmd: the MCP endpoint's path")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: prickle-conformance --server-cmd 'CMD ARGS' [--replicas N] [flags]
       prickle-conformance --url URL [--url URL ...] --tokens FILE [flags]
       prickle-conformance --list [--run REGEX]
       prickle-conformance trace [--json] [--pages PATH]
       prickle-conformance call [--url URL] [--token TOKEN | --as PRINCIPAL --tokens FILE] TOOL [JSON]

Certify a Prickle server against the tool reference pages. Exit status 0
only when the run certifies the server; 1 when a script failed or the run
is incomplete (it says what is missing); 2 for a usage or I/O error.

flags:
`)
		fs.PrintDefaults()
	}
	if code, ok := cmdline.Parse(fs, args, false); !ok {
		return nil, code, false
	}
	return f, exitOK, true
}

// options are the run's options but its target: the profile, the
// selection, exploration's budget and the scope the flags give, with the
// pages to certify against and the suite for them. ok is false on a
// usage error, with the exit status.
func (f *certifyFlags) options(stdout, stderr io.Writer) (opts conformance.Options, scripts []*conformance.Script, code int, ok bool) {
	prof, err := conformance.ParseProfile(f.profile)
	if err != nil {
		return opts, nil, usageErr(stderr, "%v", err), false
	}
	var filter *regexp.Regexp
	if f.runRe != "" {
		if filter, err = regexp.Compile(f.runRe); err != nil {
			return opts, nil, usageErr(stderr, "--run: %v", err), false
		}
	}
	if f.explore < 0 {
		return opts, nil, usageErr(stderr, "--explore: %d is negative", f.explore), false
	}
	if f.raceBudget <= 0 {
		return opts, nil, usageErr(stderr, "--race-budget: %s is not positive", f.raceBudget), false
	}
	sp, source, scripts, ok := loadSpec(stderr, f.pages, f.scriptsDir)
	if !ok {
		return opts, nil, exitUsage, false
	}
	opts = conformance.Options{Profile: prof, Spec: sp, SpecSource: source, Parallel: f.parallel, Run: filter,
		Verbose: f.verbose, Progress: stdout, Explore: f.explore, Seed: f.seed, SaveDir: f.save, KeepDir: f.keep,
		RerunArgs: rerunArgs(f.fs), FreshStarts: f.freshStarts, RaceBudget: f.raceBudget}
	if f.tools != "" {
		opts.Tools = strings.Split(f.tools, ",")
		if err := opts.CheckScope(); err != nil {
			return opts, nil, usageErr(stderr, "%v", err), false
		}
	}
	return opts, scripts, exitOK, true
}

// server sets opts' target, the server the flags name, and the expected
// failures of the run of scripts. ok is false on a usage error, with the
// exit status.
func (f *certifyFlags) server(opts *conformance.Options, scripts []*conformance.Script, stderr io.Writer) (code int, ok bool) {
	if f.replicas < 1 {
		return usageErr(stderr, "--replicas: %d is not a count of processes (1 or more)", f.replicas), false
	}
	if flagSet(f.fs, "replicas") && f.serverCmd == "" {
		return usageErr(stderr, "--replicas goes with --server-cmd (an already running deployment: --url once per replica)"), false
	}
	var err error
	if opts.Target, err = target(f.serverCmd, f.urls, f.tokensFile, f.mcpPath, f.startTimeout, f.replicas); err != nil {
		return usageErr(stderr, "%v", err), false
	}
	if f.xfailFile != "" {
		if opts.ExpectedFailures, err = expectedFailures(f.xfailFile, scripts); err != nil {
			return usageErr(stderr, "%v", err), false
		}
	}
	return exitOK, true
}

// finish writes the report files and the annotations the flags ask for
// and prints the summary of a run of a suite of n scripts; it returns the
// exit status.
func (f *certifyFlags) finish(rep *conformance.Report, sp *spec.Spec, n int, stdout, stderr io.Writer) int {
	code := exitOK
	if err := writeReports(rep, sp, f.reports); err != nil {
		fmt.Fprintf(stderr, "prickle-conformance: report: %v\n", err)
		code = exitUsage
	}
	if f.annotate || !flagSet(f.fs, "github-annotations") && os.Getenv("GITHUB_ACTIONS") == "true" {
		if err := rep.WriteGitHubAnnotations(stdout, sp); err != nil {
			fmt.Fprintf(stderr, "prickle-conformance: annotations: %v\n", err)
			code = exitUsage
		}
	}
	writeSummary(stdout, rep, f.runRe, n+1) // exploration too
	if code == exitOK && !rep.Clean() {
		code = exitFail
	}
	return code
}

// rerunFlags are the flags a rerun repeats: those that name the server and
// the pages.
var rerunFlags = []string{"server-cmd", "replicas", "url", "tokens", "mcp-path", "start-timeout", "pages", "scripts", "tools"}

// rerunArgs are the rerun flags as the command line set them (--url as
// often as it was given).
func rerunArgs(fs *flag.FlagSet) []string {
	var args []string
	for _, name := range rerunFlags {
		if !flagSet(fs, name) {
			continue
		}
		values := []string{fs.Lookup(name).Value.String()}
		if u, ok := fs.Lookup(name).Value.(*urlsFlag); ok {
			values = *u
		}
		for _, v := range values {
			args = append(args, "--"+name, v)
		}
	}
	return args
}

// urlsFlag is --url, given once per replica of a running deployment.
type urlsFlag []string

func (u *urlsFlag) String() string { return strings.Join(*u, " ") }

func (u *urlsFlag) Set(v string) error {
	*u = append(*u, v)
	return nil
}

// flagSet reports whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// target is the server the command line names: a command that starts it
// (--server-cmd, as --replicas processes), or one running at a URL with
// its tokens (--url, once per replica, --tokens).
func target(serverCmd string, urls []string, tokensFile, mcpPath string, startTimeout time.Duration, replicas int) (conformance.Target, error) {
	switch {
	case serverCmd != "" && len(urls) > 0:
		return nil, errors.New("--server-cmd and --url exclude each other")
	case serverCmd != "":
		if tokensFile != "" {
			return nil, errors.New("--tokens goes with --url (with --server-cmd the tokens come from the fixtures)")
		}
		return &conformance.CmdTarget{Command: serverCmd, Path: mcpPath, StartTimeout: startTimeout, Replicas: replicas}, nil
	case len(urls) > 0:
		if tokensFile == "" {
			return nil, errors.New("--url needs --tokens FILE (the server's tokens, prickled --tokens-out format)")
		}
		var endpoints []string
		for _, u := range urls {
			endpoint, err := cmdline.MCPEndpoint(u)
			if err != nil {
				return nil, fmt.Errorf("--url: %w", err)
			}
			endpoints = append(endpoints, endpoint)
		}
		f, err := os.Open(tokensFile)
		if err != nil {
			return nil, fmt.Errorf("--tokens: %w", err)
		}
		toks, err := world.ReadTokens(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--tokens %s: %w", tokensFile, err)
		}
		t := &conformance.URLTarget{Endpoint: endpoints[0], Tokens: toks}
		if len(endpoints) > 1 {
			t.Replicas = endpoints
		}
		return t, nil
	}
	return nil, errors.New("say which server to test: --server-cmd 'CMD' or --url URL --tokens FILE (-h for help)")
}

// expectedFailures reads the expected-failures file, every name in it a
// script of the suite or exploration.
func expectedFailures(file string, scripts []*conformance.Script) (map[string]bool, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("--expected-failures: %w", err)
	}
	names, err := readExpectedFailures(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("--expected-failures %s: %w", file, err)
	}
	known := map[string]bool{report.ExploreScript: true}
	for _, s := range scripts {
		known[s.Name] = true
	}
	out := map[string]bool{}
	for _, n := range names {
		if !known[n] {
			return nil, fmt.Errorf("--expected-failures %s: no script is named %q", file, n)
		}
		out[n] = true
	}
	return out, nil
}

// readExpectedFailures reads an expected-failures file: one script name a
// line ("- NAME" is accepted too); blank lines and lines starting with #
// are ignored.
func readExpectedFailures(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "- "))
		if strings.ContainsAny(line, " \t") {
			return nil, fmt.Errorf("expected failures: %q is not a script name", line)
		}
		out = append(out, line)
	}
	return out, sc.Err()
}
