// Package script is the suite's script language: testscript, with the
// commands that call a server as a principal of its world and check its
// answers (call, deny, ok, refused, accepted, json, save, eq, time, tools;
// package conformance documents them for script authors), and the Runner
// that runs one script against a fresh server.
package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/spec/world"
)

// stateKey is the key of a script's *scriptState in testscript values.
type stateKey struct{}

// scriptState is the per-script state the commands share.
type scriptState struct {
	ix      *wire.Index
	profile suite.Profile
	// clients are the server's, one per replica of a deployment (one for
	// a single server); turn is how many calls went to the next replica
	// in turn, for the next (replica).
	clients []*wire.Client
	turn    int
	tokens  []world.Token
	last    *wire.Call
	// callStart and callEnd bracket the last call, for `time`.
	callStart, callEnd time.Time
	checks             int
	ctx                context.Context
	// secrets are the tokens of the world and the credential tokens the
	// server handed out in this script; the suite's logs and reports never
	// show them.
	secrets []string
	// fixtureNow is the instant the fixture was materialized at: "now" of
	// its relative times, and of `time PATH == now-3h`.
	fixtureNow time.Time
	// calls counts the tool calls; succeeded, per tool, the successes;
	// served is what tools/list served. The coverage verdict reads them.
	calls     int
	succeeded map[string]int
	served    []string
	// history is every tool call made, for `concurrently`'s check; queue
	// the calls `race` queued; group the last group's number.
	history []*HistoryCall
	queue   []queued
	group   int
	// endpoints are the server's MCP endpoints, one per replica.
	endpoints []string
	// replicaCalls counts, with two replicas or more, the tool calls each
	// answered.
	replicaCalls []int
	// short says why a concurrently's tries were too few to count: a
	// script that passes with one is skipped, never passed.
	short []string
}

// redact replaces every credential token seen so far with a placeholder:
// reports get published, and a token has no place in them.
func (st *scriptState) redact(s string) string {
	for _, sec := range st.secrets {
		s = strings.ReplaceAll(s, sec, "[token]")
	}
	return s
}

// collectSecrets remembers the values of "token" fields of v.
func (st *scriptState) collectSecrets(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "token" && len(s) >= 8 && !slices.Contains(st.secrets, s) {
				st.secrets = append(st.secrets, s)
			}
			st.collectSecrets(e)
		}
	case []any:
		for _, e := range x {
			st.collectSecrets(e)
		}
	}
}

func state(ts *testscript.TestScript) *scriptState {
	st, _ := ts.Value(stateKey{}).(*scriptState)
	if st == nil {
		ts.Fatalf("no server for this script (internal error)")
	}
	return st
}

// expect records one check and fails the script when it does not hold.
func (st *scriptState) expect(ts *testscript.TestScript, ok bool, format string, args ...any) {
	st.checks++
	if !ok {
		ts.Fatalf("%s", st.redact(fmt.Sprintf(format, args...)))
	}
}

// commands are the suite's testscript commands. See the package
// documentation for their syntax.
func commands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"call":         cmdCall,
		"ok":           cmdOK,
		"refused":      cmdRefused,
		"accepted":     cmdAccepted,
		"deny":         cmdDeny,
		"json":         cmdJSON,
		"save":         cmdSave,
		"eq":           cmdEq,
		"time":         cmdTime,
		"tools":        cmdTools,
		"race":         cmdRace,
		"concurrently": cmdConcurrently,
	}
}

// Quote quotes s as one argument of a script line (no expansion inside
// single quotes).
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// JSON is v as compact JSON for a script line, HTML characters as they
// are.
func JSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // the suite's own values: maps, slices, strings, numbers
	}
	return strings.TrimSpace(b.String())
}

// callFlags splits a call's leading flags, in either order: "-as
// PRINCIPAL", and "-replica N", the replica of a deployment the call goes
// to (-1 when it names none).
func callFlags(ts *testscript.TestScript, args []string) (who string, replica int, rest []string) {
	replica = -1
	for len(args) > 0 {
		switch args[0] {
		case "-as":
			if len(args) < 2 {
				ts.Fatalf("-as needs a principal")
			}
			who, args = args[1], args[2:]
		case "-replica":
			n := -1
			if len(args) >= 2 {
				n, _ = strconv.Atoi(args[1])
			}
			if n < 0 {
				ts.Fatalf("-replica needs a replica's number: 0, 1, ...")
			}
			replica, args = n, args[2:]
		default:
			return who, replica, args
		}
	}
	return who, replica, args
}

// replica is the replica a call goes to: the one it names (modulo the
// deployment's replicas, so that a script saved against more replicas
// still runs), else the next in turn, so that a script's calls alternate
// between replicas and a write on one is read on another.
func (st *scriptState) replica(named int) int {
	if named >= 0 {
		return named % len(st.clients)
	}
	r := st.turn % len(st.clients)
	st.turn++
	return r
}

// answered counts a tool call that replica r answered (with any answer
// but a failure of the transport), when there are two replicas or more.
func (st *scriptState) answered(r int, c *wire.Call) {
	var he *wire.HTTPError
	var re *wire.RPCError
	if len(st.clients) < 2 || c.ProtoErr != nil && !errors.As(c.ProtoErr, &he) && !errors.As(c.ProtoErr, &re) {
		return
	}
	if st.replicaCalls == nil {
		st.replicaCalls = make([]int, len(st.clients))
	}
	st.replicaCalls[r]++
}

// call [-as PRINCIPAL] [-replica N] TOOL [JSON]
//
// Calls a tool and checks the answer on the wire. Against a deployment of
// replicas the call goes to replica N, or without -replica to the next
// replica in turn. With !, a protocol
// error (a JSON-RPC error or an HTTP error status) is expected instead of
// a tool result.
func cmdCall(ts *testscript.TestScript, neg bool, args []string) {
	st := state(ts)
	r := st.doCall(ts, "call", args)
	if neg {
		fmt.Fprintln(ts.Stdout(), st.redact(describeProtoErr(r.ProtoErr)))
		st.expect(ts, r.ProtoErr != nil, "call %s: expected a protocol error, got a tool result: %s", r.Tool, wire.Short(r.Raw))
		return
	}
	if r.ProtoErr != nil {
		fmt.Fprintln(ts.Stdout(), st.redact(describeProtoErr(r.ProtoErr)))
		st.expect(ts, false, "call %s: answered with a protocol error (%v); a refusal must be a tool result with isError: true", r.Tool, r.ProtoErr)
		return
	}
	st.wireChecks(ts, r)
}

// deny [-as PRINCIPAL] [-replica N] TOOL [JSON]
//
// Calls a tool as someone who must not get an answer (no token, an unknown
// token): the call must fail, as a protocol error (HTTP 401, say) or as a
// refusal, which is then checked like any other.
func cmdDeny(ts *testscript.TestScript, neg bool, args []string) {
	st := state(ts)
	if neg {
		ts.Fatalf("deny does not take !")
	}
	r := st.doCall(ts, "deny", args)
	if r.ProtoErr != nil {
		fmt.Fprintln(ts.Stdout(), st.redact(describeProtoErr(r.ProtoErr)))
		st.expect(ts, true, "")
		return
	}
	st.wireChecks(ts, r)
	st.expect(ts, r.IsError, "deny %s: the call succeeded: %s", r.Tool, wire.Short(r.Structured))
}

// doCall makes the call of `call` and `deny`, and records it as the last.
func (st *scriptState) doCall(ts *testscript.TestScript, cmd string, args []string) *wire.Call {
	who, replica, args := callFlags(ts, args)
	if who == "" || len(args) < 1 {
		ts.Fatalf("usage: %s -as PRINCIPAL [-replica N] TOOL [JSON]", cmd)
	}
	tool := args[0]
	argText := strings.Join(args[1:], " ")
	if argText == "" {
		argText = "{}"
	}
	if !json.Valid([]byte(argText)) {
		ts.Fatalf("%s %s: arguments are not JSON: %s", cmd, tool, argText)
	}
	token, err := ResolvePrincipal(st.tokens, who)
	ts.Check(err)
	st.calls++
	rep := st.replica(replica)
	st.callStart = time.Now()
	r := sendCall(st.ctx, st.clients[rep], token, tool, argText)
	st.callEnd = time.Now()
	st.answered(rep, r)
	st.last = r
	st.record(token, tool, argText, 0, st.callStart, st.callEnd, r)
	var he *wire.HTTPError
	var re *wire.RPCError
	if r.ProtoErr != nil && !errors.As(r.ProtoErr, &he) && !errors.As(r.ProtoErr, &re) {
		ts.Fatalf("%s %s: %v", cmd, tool, r.ProtoErr)
	}
	return r
}

// wireChecks applies the checks every tool result gets, and prints its
// text (credential tokens redacted).
func (st *scriptState) wireChecks(ts *testscript.TestScript, r *wire.Call) {
	checks := wire.CheckResult(st.ix, st.profile, r, r.Result)
	if !r.IsError && r.Structured != nil {
		st.succeeded[r.Tool]++
	}
	if r.Structured != nil {
		if v, err := wire.Decode(r.Structured); err == nil {
			st.collectSecrets(v)
		}
	}
	fmt.Fprintln(ts.Stdout(), st.redact(r.Text))
	if r.Structured != nil && strings.TrimSpace(r.Text) != strings.TrimSpace(string(r.Structured)) {
		fmt.Fprintf(ts.Stderr(), "%s\n", st.redact(string(r.Structured)))
	}
	for _, c := range checks {
		if c.Internal {
			ts.Fatalf("%s", st.redact(fmt.Sprintf("%s: internal error of the runner, not a finding about the server: %s", r.Tool, c.What)))
		}
		st.expect(ts, c.OK, "%s: %s\nresponse: %s", r.Tool, c.What, wire.Short(r.Raw))
	}
}

func describeProtoErr(err error) string {
	if err == nil {
		return "no protocol error"
	}
	return err.Error()
}

func (st *scriptState) lastResult(ts *testscript.TestScript, cmd string) *wire.Call {
	if st.last == nil {
		ts.Fatalf("%s: no call yet", cmd)
	}
	return st.last
}

// ok: the last call succeeded.
func cmdOK(ts *testscript.TestScript, neg bool, args []string) {
	st := state(ts)
	if neg || len(args) != 0 {
		ts.Fatalf("usage: ok (to expect a refusal, use refused)")
	}
	r := st.lastResult(ts, "ok")
	st.expect(ts, r.ProtoErr == nil && !r.IsError, "%s %s: expected success, got %s", r.Tool, r.Args, outcome(r))
}

// refused [CODE]: the last call was refused as a tool error; in the
// reference profile, with CODE (or one of CODE|CODE...).
func cmdRefused(ts *testscript.TestScript, neg bool, args []string) {
	st := state(ts)
	if len(args) > 1 {
		ts.Fatalf("usage: refused [CODE]")
	}
	r := st.lastResult(ts, "refused")
	if neg {
		// ! refused CODE: refused or not, but not with CODE (reference) /
		// ! refused: not refused.
		if len(args) == 0 {
			st.expect(ts, r.ProtoErr == nil && !r.IsError, "%s %s: expected no refusal, got %s", r.Tool, r.Args, outcome(r))
			return
		}
		if st.profile == suite.Reference {
			st.expect(ts, !(r.IsError && r.Code == args[0]), "%s %s: expected no %s refusal, got %s", r.Tool, r.Args, args[0], outcome(r))
		}
		return
	}
	st.expect(ts, r.ProtoErr == nil && r.IsError, "%s %s: expected a refusal (isError: true), got %s", r.Tool, r.Args, outcome(r))
	if len(args) == 1 && st.profile == suite.Reference {
		st.expect(ts, slices.Contains(strings.Split(args[0], "|"), r.Code), "%s %s: expected refusal code %s, got %q (%s)", r.Tool, r.Args, args[0], r.Code, r.Text)
	}
}

// accepted [POINTER...]: the last call's arguments were accepted as to
// shape: it succeeded, or it was refused for another reason than its
// arguments (reference: not invalid_arguments; both profiles: the refusal
// names none of POINTERs).
func cmdAccepted(ts *testscript.TestScript, neg bool, args []string) {
	st := state(ts)
	if neg {
		ts.Fatalf("accepted does not take !")
	}
	r := st.lastResult(ts, "accepted")
	st.expect(ts, r.ProtoErr == nil, "%s %s: expected a tool result, got %s", r.Tool, r.Args, outcome(r))
	if !r.IsError {
		return
	}
	if st.profile == suite.Reference {
		st.expect(ts, r.Code != "invalid_arguments", "%s %s: the arguments were refused as invalid: %s", r.Tool, r.Args, r.Text)
	}
	for _, p := range args {
		re := regexp.MustCompile(`(^|[^\w])` + regexp.QuoteMeta(p) + `\b`)
		st.expect(ts, !re.MatchString(r.Text), "%s %s: the refusal names the argument %s, as if it were invalid: %s", r.Tool, r.Args, p, r.Text)
	}
}

func outcome(r *wire.Call) string {
	switch {
	case r.ProtoErr != nil:
		return "a protocol error: " + r.ProtoErr.Error()
	case r.IsError:
		if r.Code != "" {
			return fmt.Sprintf("a refusal (%s): %s", r.Code, r.Text)
		}
		return "a refusal: " + r.Text
	default:
		return "success: " + wire.Short(r.Structured)
	}
}

func (st *scriptState) structured(ts *testscript.TestScript, cmd string) any {
	r := st.lastResult(ts, cmd)
	if r.Structured == nil {
		ts.Fatalf("%s: the last call (%s) has no structuredContent: %s", cmd, r.Tool, outcome(r))
	}
	v, err := wire.Decode(r.Structured)
	ts.Check(err)
	return v
}

// parseValue reads a script value: JSON if it parses, else a bare string.
func parseValue(s string) any {
	if v, err := wire.Decode([]byte(s)); err == nil {
		return v
	}
	return s
}

// json PATH OP [VALUE]
//
// OP is == != exists absent null len contains within matches type. With !, the
// assertion is negated.
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	st := state(ts)
	if len(args) < 2 {
		ts.Fatalf("usage: json PATH OP [VALUE]")
	}
	path, op, rest := args[0], args[1], args[2:]
	root := st.structured(ts, "json")
	v, found, err := lookup(root, path)
	ts.Check(err)
	want := strings.Join(rest, " ")
	needArg := func() {
		if len(rest) == 0 {
			ts.Fatalf("json %s %s: needs a value", path, op)
		}
	}
	var ok bool
	var desc string
	switch op {
	case "==", "!=":
		needArg()
		ok = found && reflect.DeepEqual(v, parseValue(want))
		if op == "!=" {
			ok = found && !ok
		}
		desc = op + " " + want
	case "exists":
		ok, desc = found, "exists"
	case "absent":
		ok, desc = !found, "is absent"
	case "null":
		ok, desc = found && v == nil, "is null"
	case "len":
		needArg()
		n, err := strconv.Atoi(want)
		ts.Check(err)
		switch x := v.(type) {
		case []any:
			ok = len(x) == n
		case map[string]any:
			ok = len(x) == n
		case string:
			ok = len([]rune(x)) == n
		}
		desc = "has length " + want
	case "contains":
		needArg()
		switch x := v.(type) {
		case []any:
			w := parseValue(want)
			ok = slices.ContainsFunc(x, func(e any) bool { return reflect.DeepEqual(e, w) })
		case string:
			ok = strings.Contains(x, want)
		}
		desc = "contains " + want
	case "within":
		needArg()
		allowed, isArr := parseValue(want).([]any)
		if !isArr {
			ts.Fatalf("json %s within: the value must be a JSON array", path)
		}
		x, isArr := v.([]any)
		ok = isArr
		for _, e := range x {
			if !slices.ContainsFunc(allowed, func(a any) bool { return reflect.DeepEqual(a, e) }) {
				ok = false
			}
		}
		desc = "has every element within " + want
	case "matches":
		needArg()
		re, err := regexp.Compile(want)
		ts.Check(err)
		s, isStr := v.(string)
		ok = isStr && re.MatchString(s)
		desc = "matches " + want
	case "type":
		needArg()
		ok = found && (jsonType(v) == want || (want == "number" && jsonType(v) == "integer"))
		desc = "has type " + want
	default:
		ts.Fatalf("json: unknown operator %q (want == != exists absent null len contains within matches type)", op)
	}
	got := "nothing"
	if found {
		got = wire.Compact(v)
	}
	if neg {
		st.expect(ts, !ok, "json %s: expected it not to be so that it %s; it is %s", path, desc, got)
		return
	}
	st.expect(ts, ok, "json %s: expected it %s; got %s", path, desc, got)
}

// save PATH NAME | save -text [-redact STRING] NAME
//
// Stores a value of the last result in the environment: the value at PATH
// of structuredContent (strings bare, others as JSON), or the result's
// text with every occurrence of STRING replaced by <redacted>.
func cmdSave(ts *testscript.TestScript, neg bool, args []string) {
	st := state(ts)
	if neg {
		ts.Fatalf("save does not take !")
	}
	if len(args) >= 2 && args[0] == "-text" {
		r := st.lastResult(ts, "save")
		text := r.Text
		if r.ProtoErr != nil {
			text = r.ProtoErr.Error()
		}
		args = args[1:]
		if len(args) == 3 && args[0] == "-redact" {
			text = strings.ReplaceAll(text, args[1], "<redacted>")
			args = args[2:]
		}
		if len(args) != 1 {
			ts.Fatalf("usage: save -text [-redact STRING] NAME")
		}
		ts.Setenv(args[0], text)
		return
	}
	if len(args) != 2 {
		ts.Fatalf("usage: save PATH NAME")
	}
	v, found, err := lookup(st.structured(ts, "save"), args[0])
	ts.Check(err)
	if !found {
		ts.Fatalf("save: nothing at %s", args[0])
	}
	ts.Setenv(args[1], scalarString(v))
}

// eq A B: A and B are the same string (with !, they differ).
func cmdEq(ts *testscript.TestScript, neg bool, args []string) {
	st := state(ts)
	if len(args) != 2 {
		ts.Fatalf("usage: eq A B")
	}
	if neg {
		st.expect(ts, args[0] != args[1], "expected different values, both are %q", args[0])
		return
	}
	st.expect(ts, args[0] == args[1], "expected equal values:\n\t%q\n\t%q", args[0], args[1])
}

// time PATH ~ DURATION [TOLERANCE] | time PATH > DURATION |
// time PATH < DURATION | time PATH == TIME
//
// PATH names an RFC 3339 time in the last structuredContent. "~ D" holds
// when it is D after the last call, within TOLERANCE (default 30s); "> D"
// and "< D" when it is more or less than D after the call; "== T" when it
// is the same instant as T.
func cmdTime(ts *testscript.TestScript, neg bool, args []string) {
	st := state(ts)
	if neg {
		ts.Fatalf("time does not take !")
	}
	if len(args) < 3 || len(args) > 4 {
		ts.Fatalf("usage: time PATH (~|>|<) DURATION [TOLERANCE] | time PATH == TIME")
	}
	path, op := args[0], args[1]
	v, found, err := lookup(st.structured(ts, "time"), path)
	ts.Check(err)
	s, isStr := v.(string)
	st.expect(ts, found && isStr, "time %s: expected a time string, got %s", path, wire.Compact(v))
	t, err := time.Parse(time.RFC3339Nano, s)
	st.expect(ts, err == nil, "time %s: %q is not an RFC 3339 time: %v", path, s, err)
	if op == "==" {
		other, err := world.Time(args[2]).Resolve(st.fixtureNow)
		ts.Check(err)
		st.expect(ts, t.Equal(other), "time %s: expected %s, got %s", path, args[2], s)
		return
	}
	d, err := time.ParseDuration(args[2])
	ts.Check(err)
	tol := suite.TimeTolerance
	if len(args) == 4 {
		tol, err = time.ParseDuration(args[3])
		ts.Check(err)
	}
	// The time the server stamped lies between the call's start and end.
	lo, hi := t.Sub(st.callEnd), t.Sub(st.callStart)
	after := fmt.Sprintf("%s after the call (%s)", hi.Round(time.Second), s)
	switch op {
	case "~":
		st.expect(ts, hi >= d-tol && lo <= d+tol, "time %s: expected about %s after the call (±%s), got %s", path, d, tol, after)
	case ">":
		st.expect(ts, hi > d, "time %s: expected more than %s after the call, got %s", path, d, after)
	case "<":
		st.expect(ts, lo < d, "time %s: expected less than %s after the call, got %s", path, d, after)
	default:
		ts.Fatalf("time: unknown operator %q (want ~ > < ==)", op)
	}
}

// tools [-as PRINCIPAL] [-replica N]
//
// Lists the tools (on replica N, or the next in turn) and checks that every documented tool is served with
// input and output schemas semantically equal to the documented ones (key
// order ignored). In the reference profile the list must be exactly the
// documented tools. Prints the served names, one a line.
func cmdTools(ts *testscript.TestScript, neg bool, args []string) {
	st := state(ts)
	who, replica, args := callFlags(ts, args)
	if neg || len(args) != 0 {
		ts.Fatalf("usage: tools [-as PRINCIPAL] [-replica N]")
	}
	cl := st.clients[st.replica(replica)]
	if who == "" {
		who = "agent:" + firstAgent(st.tokens)
	}
	token, err := ResolvePrincipal(st.tokens, who)
	ts.Check(err)
	type servedTool struct {
		Name         string          `json:"name"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	var served []servedTool
	params := map[string]any{}
	for page := 0; ; page++ {
		resp, err := cl.Request(st.ctx, token, "tools/list", params)
		st.expect(ts, err == nil, "tools/list: %v", err)
		st.expect(ts, resp.Error == nil, "tools/list: %v", resp.Error)
		var res struct {
			Tools      []servedTool `json:"tools"`
			NextCursor string       `json:"nextCursor"`
		}
		st.expect(ts, json.Unmarshal(resp.Result, &res) == nil && res.Tools != nil, "tools/list: the result has no tools array: %s", wire.Short(resp.Result))
		served = append(served, res.Tools...)
		if res.NextCursor == "" || page > 100 {
			break
		}
		params = map[string]any{"cursor": res.NextCursor}
	}
	byName := map[string]servedTool{}
	var names []string
	for _, t := range served {
		st.expect(ts, byName[t.Name].Name == "", "tools/list: %s is listed twice", t.Name)
		byName[t.Name] = t
		names = append(names, t.Name)
	}
	sort.Strings(names)
	st.served = names
	fmt.Fprintln(ts.Stdout(), strings.Join(names, "\n"))
	var documented []string
	for _, t := range st.ix.Spec.Tools {
		documented = append(documented, t.Name)
		got, ok := byName[t.Name]
		st.expect(ts, ok, "tools/list: the documented tool %s is not served (served: %s)", t.Name, strings.Join(names, ", "))
		if t.InputSchema != nil {
			d := wire.SemanticDiff(t.InputSchema.JSON, got.InputSchema)
			st.expect(ts, d == "", "tools/list: %s inputSchema differs from the documented one: %s", t.Name, d)
		}
		if t.OutputSchema != nil {
			d := wire.SemanticDiff(t.OutputSchema.JSON, got.OutputSchema)
			st.expect(ts, d == "", "tools/list: %s outputSchema differs from the documented one: %s", t.Name, d)
		}
	}
	for _, n := range names {
		if st.profile == suite.Reference {
			st.expect(ts, slices.Contains(documented, n), "tools/list: %s is served but has no page (the reference server serves only documented tools)", n)
		} else if !st.ix.Catalog[n] {
			ts.Logf("note: %s is served but is not in the Prickle catalog", n)
		}
	}
}

func firstAgent(tokens []world.Token) string {
	for _, t := range tokens {
		if t.Kind == world.KindAgent {
			return t.Agent
		}
	}
	return ""
}
