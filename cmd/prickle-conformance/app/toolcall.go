package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/conformance/call"
	"github.com/prickle-dev/prickle/internal/cmdline"
	"github.com/prickle-dev/prickle/spec/world"
)

const callUsage = `usage: prickle-conformance call [flags] TOOL [JSON | -]

Make one tool call on a Prickle server, as a given caller, print the
answer (structuredContent, or the refusal's code and text) and check it
as a certification run checks every answer: a success must carry
structuredContent valid against the page's output schema.

The caller is a token: --token TOKEN (or $PRICKLE_TOKEN), or --as
PRINCIPAL from a tokens file (prickled --tokens-out) or a world fixture
whose agents and runners carry tokens. PRINCIPAL is agent:OWNER/NAME,
runner:OWNER/NAME (the runner paired to that agent) or runner:RUNNER-ID;
with one token in the file, --as may be left out. JSON is the arguments
("-": read from standard input; none: {}).

Exit status: 0 a success that passes the checks; 1 a refusal, an answer
that fails the checks, or no tool result (an HTTP or JSON-RPC error);
2 a usage error or a server that cannot be reached.

flags:
`

// runCall is "prickle-conformance call".
func runCall(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("prickle-conformance call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rawURL := fs.String("url", "http://127.0.0.1:8080", "the server's `URL` (its MCP endpoint, or its base URL: /mcp is added)")
	token := fs.String("token", "", "call with this bearer `TOKEN` (default $PRICKLE_TOKEN)")
	tokensFile := fs.String("tokens", "", "a tokens `FILE` (prickled --tokens-out) to take --as's token from")
	worldFile := fs.String("world", "", "a world fixture `FILE` whose tokens --as takes its token from")
	as := fs.String("as", "", "call as `PRINCIPAL`: agent:OWNER/NAME, runner:OWNER/NAME or runner:RUNNER-ID")
	profile := fs.String("profile", "core", "the wire checks of `core` or reference")
	pages := fs.String("pages", "", "check against these pages instead of the bundled ones (a folder, a page or a spec file)")
	asJSON := fs.Bool("json", false, "print the answer and its checks as one JSON object")
	fs.Usage = func() {
		fmt.Fprint(stderr, callUsage)
		fs.PrintDefaults()
	}
	if code, ok := cmdline.Parse(fs, args, true); !ok {
		return code
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return usageErr(stderr, "call needs TOOL and at most one JSON argument (-h for help)")
	}
	prof, err := conformance.ParseProfile(*profile)
	if err != nil {
		return usageErr(stderr, "call: %v", err)
	}
	endpoint, err := cmdline.MCPEndpoint(*rawURL)
	if err != nil {
		return usageErr(stderr, "call: --url: %v", err)
	}
	bearer, err := callerToken(*token, *tokensFile, *worldFile, *as)
	if err != nil {
		return usageErr(stderr, "call: %v", err)
	}
	argsJSON := []byte("{}")
	if fs.NArg() == 2 {
		if argsJSON = []byte(fs.Arg(1)); fs.Arg(1) == "-" {
			if argsJSON, err = io.ReadAll(stdin); err != nil {
				return usageErr(stderr, "call: standard input: %v", err)
			}
		}
	}
	if !json.Valid(argsJSON) {
		return usageErr(stderr, "call: the arguments are not JSON: %s", bytes.TrimSpace(argsJSON))
	}
	sp, _, _, ok := loadSpec(stderr, *pages, "")
	if !ok {
		return exitUsage
	}
	res, err := call.Do(ctx, call.Options{Endpoint: endpoint, Token: bearer, Tool: fs.Arg(0),
		Args: json.RawMessage(bytes.TrimSpace(argsJSON)), Spec: sp, Profile: prof})
	var pe *call.ProtocolError
	switch {
	case errors.As(err, &pe):
		fmt.Fprintf(stdout, "%s: no tool result: %v\n", fs.Arg(0), pe)
		return exitFail
	case err != nil:
		fmt.Fprintf(stderr, "prickle-conformance: call: %v\n", err)
		return exitUsage
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return usageErr(stderr, "call: %v", err)
		}
	} else {
		writeCall(stdout, res)
	}
	if res.IsError || len(res.Problems) > 0 {
		return exitFail
	}
	return exitOK
}

// callerToken is the token the call goes with: --token, else --as's from
// the tokens of --tokens or --world, else $PRICKLE_TOKEN.
func callerToken(token, tokensFile, worldFile, as string) (string, error) {
	if tokensFile != "" && worldFile != "" {
		return "", errors.New("--tokens and --world exclude each other")
	}
	if token != "" {
		if as != "" || tokensFile != "" || worldFile != "" {
			return "", errors.New("--token excludes --as, --tokens and --world")
		}
		return token, nil
	}
	var toks []world.Token
	switch {
	case tokensFile != "":
		f, err := os.Open(tokensFile)
		if err != nil {
			return "", fmt.Errorf("--tokens: %w", err)
		}
		defer f.Close()
		if toks, err = world.ReadTokens(f); err != nil {
			return "", fmt.Errorf("--tokens %s: %w", tokensFile, err)
		}
	case worldFile != "":
		b, err := os.ReadFile(worldFile)
		if err != nil {
			return "", fmt.Errorf("--world: %w", err)
		}
		w, err := world.Decode(b)
		if err != nil {
			return "", fmt.Errorf("--world %s: %w", worldFile, err)
		}
		toks = w.Tokens()
	default:
		if as != "" {
			return "", errors.New("--as needs --tokens FILE or --world FILE to find its token in")
		}
		if t := os.Getenv("PRICKLE_TOKEN"); t != "" {
			return t, nil
		}
		return "", errors.New("say who calls: --token TOKEN, $PRICKLE_TOKEN, or --as PRINCIPAL with --tokens FILE or --world FILE")
	}
	principals := make([]string, len(toks))
	for i, t := range toks {
		principals[i] = t.Principal()
	}
	if as == "" {
		if len(toks) == 1 {
			return toks[0].Token, nil
		}
		return "", fmt.Errorf("--as PRINCIPAL: the file has %d tokens: %s", len(toks), strings.Join(principals, ", "))
	}
	t, ok, err := world.TokenOf(toks, as)
	switch {
	case !ok:
		return "", fmt.Errorf("--as %q: want agent:OWNER/NAME, runner:OWNER/NAME or runner:RUNNER-ID", as)
	case err != nil:
		return "", fmt.Errorf("--as: %w; the file has %s", err, strings.Join(principals, ", "))
	}
	return t, nil
}

// writeCall prints an answer: the outcome, the structuredContent, the
// text, and what the checks found.
func writeCall(w io.Writer, r *call.Result) {
	switch {
	case r.IsError && r.Code != "":
		fmt.Fprintf(w, "%s: refused %s\n", r.Tool, r.Code)
	case r.IsError:
		fmt.Fprintf(w, "%s: refused\n", r.Tool)
	default:
		fmt.Fprintf(w, "%s: ok\n", r.Tool)
	}
	if len(r.Structured) > 0 {
		var b bytes.Buffer
		if json.Indent(&b, r.Structured, "", "  ") != nil {
			b.Reset()
			b.Write(r.Structured)
		}
		fmt.Fprintf(w, "structuredContent:\n%s\n", b.Bytes())
	}
	if r.Text != "" && (r.IsError || len(r.Structured) == 0) {
		fmt.Fprintf(w, "text: %s\n", r.Text)
	}
	if len(r.Problems) == 0 {
		fmt.Fprintf(w, "checked: %s: ok\n", r.Checked)
		return
	}
	fmt.Fprintf(w, "checked: %s: %d problem%s\n", r.Checked, len(r.Problems), plural(len(r.Problems)))
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
