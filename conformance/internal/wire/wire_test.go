package wire

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/spec"
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

func TestSemanticDiff(t *testing.T) {
	if d := SemanticDiff([]byte(`{"a":1,"b":[1,{"c":"x"}]}`), []byte(`{ "b":[1,{"c":"x"}], "a":1.0 }`)); d != "" {
		t.Errorf("key order or number spelling made a difference: %s", d)
	}
	if d := SemanticDiff([]byte(`{"a":{"pattern":"^x$"}}`), []byte(`{"a":{}}`)); !strings.Contains(d, "/a/pattern") {
		t.Errorf("diff %q", d)
	}
	if d := SemanticDiff([]byte(`{"a":[1,2]}`), []byte(`{"a":[2,1]}`)); !strings.Contains(d, "/a/0") {
		t.Errorf("diff %q", d)
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
	ix := NewIndex(sp)
	res := func(handle string) json.RawMessage {
		out := `{"people":[{"handle":"` + handle + `","display_name":"Maya","avatar_url":null,"color":1,"away":false}],"agents":[]}`
		return json.RawMessage(`{"content":[{"type":"text","text":` + strconv.Quote(out) + `}],"structuredContent":` + out + `}`)
	}
	judge := func(handle string) (failed, internal []string) {
		r := &Call{Tool: "discover_team_agents"}
		for _, c := range CheckResult(ix, suite.Core, r, res(handle)) {
			switch {
			case c.Internal:
				internal = append(internal, c.What)
			case !c.OK:
				failed = append(failed, c.What)
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
