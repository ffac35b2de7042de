package conformance

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/world"
)

func TestReadSSE(t *testing.T) {
	stream := ": keep-alive\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		"event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\n" + "data: \"id\":7,\"result\":{\"ok\":true}}\n\n"
	r, err := readSSE(strings.NewReader(stream), 7)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Result) != `{"ok":true}` {
		t.Errorf("result %s", r.Result)
	}
	if _, err := readSSE(strings.NewReader("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), 2); err == nil {
		t.Error("a stream without our response must fail")
	}
	for _, bad := range []string{
		`{"jsonrpc":"1.0","id":3,"result":{}}`,
		`{"jsonrpc":"2.0","id":3}`,
		`{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}`,
		`not json`,
	} {
		if _, err := parseResponse([]byte(bad), 3); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	r, err = parseResponse([]byte(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown tool"}}`), 3)
	if err != nil || r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("%v %+v", err, r)
	}
}

func TestLookup(t *testing.T) {
	v, _ := decode([]byte(`{"agents":[{"agent_id":"maya/builder","caps":[1,2]},{"agent_id":"theo/reviewer","x":null}],"a.b":{"c":3}}`))
	for _, c := range []struct {
		path  string
		want  string
		found bool
	}{
		{".", "", true},
		{"agents.0.agent_id", `"maya/builder"`, true},
		{"agents[1].agent_id", `"theo/reviewer"`, true},
		{"agents[agent_id=theo/reviewer].x", "null", true},
		{"agents[agent_id=maya/builder].caps", "[1,2]", true},
		{"agents[agent_id=nobody].x", "", false},
		{"agents.7", "", false},
		{"/a.b/c", "3", true},
		{"missing", "", false},
	} {
		got, found, err := lookup(v, c.path)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if found != c.found || (c.want != "" && compact(got) != c.want) {
			t.Errorf("%s: got %s (found %v), want %s (found %v)", c.path, compact(got), found, c.want, c.found)
		}
	}
}

func TestSemanticDiff(t *testing.T) {
	if d := semanticDiff([]byte(`{"a":1,"b":[1,{"c":"x"}]}`), []byte(`{ "b":[1,{"c":"x"}], "a":1.0 }`)); d != "" {
		t.Errorf("key order or number spelling made a difference: %s", d)
	}
	if d := semanticDiff([]byte(`{"a":{"pattern":"^x$"}}`), []byte(`{"a":{}}`)); !strings.Contains(d, "/a/pattern") {
		t.Errorf("diff %q", d)
	}
	if d := semanticDiff([]byte(`{"a":[1,2]}`), []byte(`{"a":[2,1]}`)); !strings.Contains(d, "/a/0") {
		t.Errorf("diff %q", d)
	}
}

func TestResolvePrincipal(t *testing.T) {
	toks := []world.Token{{Kind: world.KindAgent, Agent: "maya/builder", Token: "A"}, {Kind: world.KindRunner, Agent: "maya/builder", Runner: "maya-laptop", Token: "R"}}
	for in, want := range map[string]string{"agent:maya/builder": "A", "runner:maya/builder": "R", "runner:maya-laptop": "R", "none": "", "prk_literal": "prk_literal"} {
		got, err := resolvePrincipal(toks, in)
		if err != nil || got != want {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
	if _, err := resolvePrincipal(toks, "agent:theo/reviewer"); err == nil {
		t.Error("an unknown agent resolved")
	}
}

// A check that cannot be decided (a pattern match did not finish: here a
// starved regexp2 clock) is the runner's internal error, never a finding
// that the server's output breaks its schema.
func TestUndecidedCheckIsInternal(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	ix := newSpecIndex(sp)
	res := func(handle string) json.RawMessage {
		out := `{"people":[{"handle":"` + handle + `","display_name":"Maya","avatar_url":null,"color":1,"away":false}],"agents":[]}`
		return json.RawMessage(`{"content":[{"type":"text","text":` + strconv.Quote(out) + `}],"structuredContent":` + out + `}`)
	}
	judge := func(handle string) (failed, internal []string) {
		r := &callResult{tool: "discover_team_agents"}
		for _, c := range checkCallResult(ix, Core, r, res(handle)) {
			switch {
			case c.internal:
				internal = append(internal, c.what)
			case !c.ok:
				failed = append(failed, c.what)
			}
		}
		return failed, internal
	}
	if failed, internal := judge("maya"); len(failed)+len(internal) > 0 {
		t.Fatalf("a valid result: failed %q, internal %q", failed, internal)
	}
	restore := ecmaregex.StarveClock(-1)
	failed, internal := judge("theo") // a handle the match cache has not seen
	restore()
	if len(failed) > 0 || len(internal) != 1 || !strings.Contains(internal[0], "did not finish") {
		t.Errorf("starved clock: failed %q, internal %q; want one internal error", failed, internal)
	}
}
