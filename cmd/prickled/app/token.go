package app

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/prickle-dev/prickle/internal/cmdline"
	"github.com/prickle-dev/prickle/internal/fsx"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/world"
)

// tokenUsage describes "prickled token".
const tokenUsage = `usage: prickled token issue|rotate --agent OWNER/NAME [--runner ID] [--db FILE|URL] [--tokens-out FILE]

Issue or rotate an agent's or a runner's token in a database that already
holds a world. The new token is shown once: printed, or added to the
tokens file --tokens-out names (mode 0600). It is stored only as a hash.

  issue   a new token: the agent's (its other tokens stay valid), or, with
          --runner, the token of a new runner ID paired to the agent
  rotate  a new token in place of the earlier ones, which are revoked: the
          agent's, or, with --runner, those of runner ID (paired to the
          agent). A prickled serving the same database refuses the revoked
          ones at once on PostgreSQL, within a second on SQLite.
          Credentials already minted live out their time.

Flags:`

// tokenCommand is the command line of "prickled token ACTION" for db, the
// agent and the runner; an empty agent is left for the operator to fill
// in, with the runner optional.
func tokenCommand(action, db, agent, runner string) string {
	c := "prickled token " + action
	if db != "prickled.db" {
		c += " --db " + shellQuote(store.Redact(db))
	}
	if agent == "" {
		return c + " --agent OWNER/NAME [--runner ID]"
	}
	c += " --agent " + shellQuote(agent)
	if runner != "" {
		c += " --runner " + shellQuote(runner)
	}
	return c
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runToken runs "prickled token issue|rotate".
func runToken(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "issue" && args[0] != "rotate") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fmt.Fprintln(stdout, tokenUsage)
			return cmdline.ExitOK
		}
		fmt.Fprintln(stderr, tokenUsage)
		return cmdline.ExitUsage
	}
	action := args[0]
	fs := flag.NewFlagSet("prickled token "+action, flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "prickled.db", "the database of the world: a SQLite `FILE`, or a PostgreSQL URL")
	agent := fs.String("agent", "", "the agent, `OWNER/NAME` (required)")
	runner := fs.String("runner", "", "a runner `ID`: its token instead of the agent's")
	tokensOut := fs.String("tokens-out", "", "add the new token to the tokens `FILE` (mode 0600; on rotate, in place of the revoked ones) instead of printing it")
	fs.Usage = func() {
		fmt.Fprintln(stderr, tokenUsage)
		fs.PrintDefaults()
	}
	if code, ok := cmdline.Parse(fs, args[1:], false); !ok {
		return code
	}
	if *agent == "" {
		fmt.Fprintf(stderr, "prickled token %s: --agent is required\n", action)
		return cmdline.ExitUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "prickled token %s: %v\n", action, err)
		return 1
	}
	// The tokens file is read before anything is issued: a token that
	// cannot be written must not be issued unseen.
	var earlier []store.IssuedToken
	if *tokensOut != "" {
		var err error
		if earlier, err = readTokensFile(*tokensOut); err != nil {
			return fail(err)
		}
		if err := fsx.CheckWritable(*tokensOut); err != nil {
			return fail(err)
		}
	}
	st, err := openWorld(ctx, *db)
	if err != nil {
		return fail(err)
	}
	defer st.Close()

	var issued store.IssuedToken
	var revoked int64
	switch {
	case action == "issue" && *runner == "":
		issued, err = st.IssueAgentToken(ctx, *agent)
	case action == "issue":
		issued, err = st.PairRunner(ctx, *agent, *runner)
		if errors.Is(err, store.ErrRunnerExists) {
			err = fmt.Errorf("%w; for a new token of it: %s", err, tokenCommand("rotate", *db, *agent, *runner))
		}
	case *runner == "":
		var r store.Rotated
		r, err = st.RotateAgentToken(ctx, *agent)
		issued, revoked = r.Issued, r.Revoked
	default:
		var r store.Rotated
		r, err = st.RotateRunnerToken(ctx, *agent, *runner)
		issued, revoked = r.Issued, r.Revoked
	}
	if err != nil {
		return fail(err)
	}
	written := false
	if *tokensOut != "" {
		if err := writeTokens(*tokensOut, withToken(earlier, issued, action == "rotate")); err != nil {
			fmt.Fprintf(stderr, "prickled token %s: %v; the token is printed instead\n", action, err)
		} else {
			written = true
			fmt.Fprintf(stdout, "prickled: the new %s token of %s added to %s (mode 0600; shown nowhere else)\n", issued.Kind, whose(issued), *tokensOut)
		}
	}
	if !written {
		fmt.Fprintln(stdout, "prickled: new token (shown once, not stored; keep it out of logs):")
		fmt.Fprintf(stdout, "  %-6s %-20s %s\n", issued.Kind, whose(issued), issued.Token)
	}
	if action == "rotate" {
		fmt.Fprintf(stdout, "prickled: revoked %d earlier %s token(s) of %s\n", revoked, issued.Kind, whose(issued))
	}
	if *tokensOut != "" && !written {
		return 1
	}
	return 0
}

// whose names the holder of a token: the agent, or the runner and its agent.
func whose(t store.IssuedToken) string {
	if t.Runner != "" {
		return t.Runner + " (" + t.Agent + ")"
	}
	return t.Agent
}

// openWorld opens an existing database that holds a world. It never
// creates one: a token for a database that does not exist is a mistake.
func openWorld(ctx context.Context, db string) (*store.Store, error) {
	if db == ":memory:" {
		return nil, errors.New("--db :memory: holds no world: name the database file the server uses")
	}
	if !strings.HasPrefix(db, "file:") && !store.IsURL(db) { // a URL: Open refuses those it cannot open
		if _, err := os.Stat(db); err != nil {
			return nil, fmt.Errorf("no database: %w", err)
		}
	}
	st, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		return nil, err
	}
	has, err := st.HasWorld(ctx)
	if err == nil && !has {
		err = fmt.Errorf("%s holds no world yet: start prickled on it first", store.Redact(db))
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// readTokensFile reads the tokens file name, or nothing when it does not
// exist yet.
func readTokensFile(name string) ([]store.IssuedToken, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read tokens: %w", err)
	}
	tokens, err := world.ReadTokens(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s is not a tokens file: %w", name, err)
	}
	return tokens, nil
}

// withToken returns tokens with t added; with replace, without the earlier
// tokens of t's holder (revoked now).
func withToken(tokens []store.IssuedToken, t store.IssuedToken, replace bool) []store.IssuedToken {
	var out []store.IssuedToken
	for _, old := range tokens {
		if !replace || old.Kind != t.Kind || old.Agent != t.Agent || old.Runner != t.Runner {
			out = append(out, old)
		}
	}
	return append(out, t)
}
