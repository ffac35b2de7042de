package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/spec/world"
)

// HistoryCall is one tool call a script made, as a linearizability check
// reads it.
type HistoryCall struct {
	// Token is the bearer token ("" for none).
	Token string
	Tool  string
	Args  map[string]any
	// Group numbers the calls sent at once; 0 is a call alone.
	Group int
	// Start and End bracket the call.
	Start, End time.Time
	// Answer is the call and its answer.
	Answer *wire.Call
}

// History is what a script's calls were: the world it ran on and every
// call, in the order they were made (a group's in any order).
type History struct {
	Profile suite.Profile
	// World is the script's world as the server loaded it (with its
	// tokens), materialized at Now.
	World  *world.World
	Now    time.Time
	Tokens []world.Token
	Calls  []*HistoryCall
}

// Linearize checks that some order of each group's calls, consistent
// with real time, has every answer of h accepted by the exploration
// model: nil if so, else what is wrong; unknown when the check ran out of
// budget. Package explore sets it (it has the model; it imports this
// package).
var Linearize func(h *History) (unknown bool, err error)

// Overlapped judges whether a try's calls overlapped on the wire
// (wire.Overlapped). A variable for tests: one that stands for a machine
// that kept every try's calls apart replaces it.
var Overlapped = wire.Overlapped

// record adds a finished call to the script's history.
func (st *scriptState) record(token, tool, args string, group int, start, end time.Time, r *wire.Call) {
	var a map[string]any
	_ = json.Unmarshal([]byte(args), &a)
	st.history = append(st.history, &HistoryCall{Token: token, Tool: tool, Args: a, Group: group, Start: start, End: end, Answer: r})
}

// queued is a call that `race` queued for `concurrently`.
type queued struct {
	who, tool, args string
	replica         int // as -replica named it; -1 for none
}

// race -as PRINCIPAL [-replica N] TOOL [JSON]
//
// Queues a call for the next `concurrently`; nothing is sent yet.
// Against a deployment of replicas it goes to replica N, or without
// -replica to the replica of its place in the group (the first call to
// replica 0, the second to replica 1, ..., round robin).
func cmdRace(ts *testscript.TestScript, neg bool, args []string) {
	st := state(ts)
	who, replica, args := callFlags(ts, args)
	if neg || who == "" || len(args) < 1 {
		ts.Fatalf("usage: race -as PRINCIPAL [-replica N] TOOL [JSON]")
	}
	argText := strings.Join(args[1:], " ")
	if argText == "" {
		argText = "{}"
	}
	st.queue = append(st.queue, queued{who: who, tool: args[0], args: argText, replica: replica})
}

// concurrently [-tries N]
//
// Sends the calls queued by `race` at once, each from an MCP session and
// a connection of its own, N times (default 1), and checks every answer
// on the wire and that some order of each try's calls, consistent with
// real time, explains the script's answers so far by the exploration
// model (the profile's rules). In the calls' JSON, ${TRY} is the try, 1 to
// N: a try may race on a task or a turn of its own.
func cmdConcurrently(ts *testscript.TestScript, neg bool, args []string) {
	st := state(ts)
	tries := 1
	if len(args) == 2 && args[0] == "-tries" {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 {
			ts.Fatalf("concurrently: -tries takes a count, not %q", args[1])
		}
		tries, args = n, nil
	}
	if neg || len(args) != 0 || len(st.queue) < 2 {
		ts.Fatalf("usage: concurrently [-tries N], after two or more race lines")
	}
	if Linearize == nil {
		ts.Fatalf("concurrently: no linearizability check in this build (internal error)")
	}
	calls := st.queue
	st.queue = nil
	clients := make([]*wire.Client, len(calls))
	replicas := make([]int, len(calls))
	for i, c := range calls {
		replicas[i] = c.replica
		if replicas[i] < 0 {
			replicas[i] = i
		}
		replicas[i] %= len(st.endpoints)
		clients[i] = wire.NewClient(st.endpoints[replicas[i]], &http.Client{Transport: &http.Transport{}})
		defer clients[i].Close()
	}
	overlapped := 0
	for try := 1; try <= tries; try++ {
		st.group++
		tokens, argTexts := make([]string, len(calls)), make([]string, len(calls))
		group := make([]*wire.AtOnce, len(calls))
		for i, c := range calls {
			token, err := ResolvePrincipal(st.tokens, c.who)
			ts.Check(err)
			args := strings.ReplaceAll(c.args, "${TRY}", strconv.Itoa(try))
			if !json.Valid([]byte(args)) {
				ts.Fatalf("race %s: arguments are not JSON: %s", c.tool, args)
			}
			tokens[i], argTexts[i] = token, args
			group[i] = &wire.AtOnce{Client: clients[i], Token: token, Tool: c.tool, Args: json.RawMessage(args)}
		}
		wire.SendAtOnce(st.ctx, group)
		if Overlapped(group) {
			overlapped++
		}
		rs := make([]*wire.Call, len(calls))
		for i, a := range group {
			rs[i] = callOf(calls[i].tool, argTexts[i], a.Resp, a.Err)
			st.record(tokens[i], rs[i].Tool, rs[i].Args, st.group, a.Start, a.End, rs[i])
			st.answered(replicas[i], rs[i])
		}
		for _, r := range rs {
			st.calls++
			var he *wire.HTTPError
			var re *wire.RPCError
			if r.ProtoErr != nil && !errors.As(r.ProtoErr, &he) && !errors.As(r.ProtoErr, &re) {
				ts.Fatalf("race %s: %v", r.Tool, r.ProtoErr)
			}
			if r.ProtoErr == nil {
				st.wireChecks(ts, r)
			} else {
				fmt.Fprintln(ts.Stdout(), st.redact(describeProtoErr(r.ProtoErr)))
			}
		}
		h, err := st.historyOf(ts)
		ts.Check(err)
		unknown, err := Linearize(h)
		switch {
		case unknown:
			ts.Fatalf("concurrently: try %d of %d: the linearizability check could not decide (unknown, not a pass)", try, tries)
		case err != nil:
			st.expect(ts, false, "concurrently: try %d of %d: %v", try, tries, err)
		}
		st.checks++
	}
	ts.Logf("concurrently: %d of %d tries overlapped on the wire", overlapped, tries)
	if need := needOverlapped(tries); overlapped < need {
		st.short = append(st.short, fmt.Sprintf(ShortEvidence+": %d of %d tries of a concurrently overlapped on the wire, %d needed (a try that did not tested no race); run on a quieter machine", overlapped, tries, need))
	}
}

// ShortEvidence leads the reason of a script skipped because too few of
// a concurrently's tries overlapped on the wire.
const ShortEvidence = "race evidence short"

// needOverlapped is how many of a concurrently's tries must overlap on
// the wire (wire.Overlapped) for its pass to count: half of them, rounded
// up. The suite's sender overlaps two thirds or more of its groups of 2
// to 16 calls, loaded or not (conformance/README.md, "Race evidence"), so
// fewer than half means the machine kept the calls apart, and the race
// went untested.
func needOverlapped(tries int) int { return (tries + 1) / 2 }

// sendCall makes one tool call on cl.
func sendCall(ctx context.Context, cl *wire.Client, token, tool, args string) *wire.Call {
	resp, err := cl.CallTool(ctx, token, tool, json.RawMessage(args))
	return callOf(tool, args, resp, err)
}

// callOf is a tool call with args and what it got back: a response or an
// error.
func callOf(tool, args string, resp *wire.Response, err error) *wire.Call {
	r := &wire.Call{Tool: tool, Args: args}
	switch {
	case err != nil:
		r.ProtoErr = err
	case resp.Error != nil:
		r.ProtoErr, r.Raw = resp.Error, resp.Raw
	default:
		r.Raw = resp.Raw
		var result struct {
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(resp.Raw, &result)
		r.Result = result.Result
	}
	return r
}

// historyOf is the script's history with its world.
func (st *scriptState) historyOf(ts *testscript.TestScript) (*History, error) {
	fx, err := os.ReadFile(filepath.Join(ts.Getenv("WORK"), suite.FixtureFile))
	if err != nil {
		return nil, fmt.Errorf("concurrently: the script's world: %w", err)
	}
	w, err := world.Decode(fx)
	if err != nil {
		return nil, fmt.Errorf("concurrently: the script's world: %w", err)
	}
	return &History{Profile: st.profile, World: w, Now: st.fixtureNow, Tokens: st.tokens, Calls: st.history}, nil
}
