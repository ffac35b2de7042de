package load

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// cpuProfile builds a CPU profile whose samples have the given stacks
// (leaf first) and CPU times in nanoseconds.
func cpuProfile(samples map[string]int64) *profile.Profile {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
	funcs := map[string]*profile.Function{}
	for stack, ns := range samples {
		s := &profile.Sample{Value: []int64{1, ns}}
		for _, name := range strings.Split(stack, " < ") {
			f := funcs[name]
			if f == nil {
				f = &profile.Function{ID: uint64(len(funcs) + 1), Name: name}
				funcs[name] = f
				p.Function = append(p.Function, f)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, loc)
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// Each sample goes to the first cause, in the order of Causes, with a frame
// on its stack: what a call does before the layers it runs in.
func TestAccountChargesEachSampleOnce(t *testing.T) {
	const sdk = "github.com/modelcontextprotocol/go-sdk/mcp.(*Server).callTool"
	p := cpuProfile(map[string]int64{
		"runtime.scanobject < runtime.gcDrain < runtime.gcBgMarkWorker":                                                                                               4000,
		"modernc.org/sqlite/lib._sqlite3VdbeExec < github.com/prickle-dev/prickle/server/store.(*Store).ClaimTask < " + sdk:                                           6000,
		"modernc.org/sqlite.(*conn).step < github.com/prickle-dev/prickle/server/store.(*Store).lookupToken < github.com/prickle-dev/prickle/server.(*Server).verify": 2000,
		"runtime.mallocgc < github.com/prickle-dev/prickle/api.checkClaimTaskInput < " + sdk:                                                                          1000,
		"github.com/segmentio/encoding/json.(*Decoder).Decode < " + sdk:                                                                                               3000,
		"somewhere.else": 2000,
		"modernc.org/sqlite.(*stmt).exec < github.com/prickle-dev/prickle/server/store.(*writer).begin < github.com/prickle-dev/prickle/server/store.(*writer).do":       800,
		"modernc.org/sqlite.(*stmt).exec < github.com/prickle-dev/prickle/server/store.(*writer).begin.func2 < github.com/prickle-dev/prickle/server/store.(*writer).do": 1200,
		// prickled accepts through its own listener; the bare server
		// through net/http's: the same cause, not prickled's layers.
		"syscall.accept4 < net.(*TCPListener).Accept < github.com/prickle-dev/prickle/server.(*conns).Accept < net/http.(*Server).Serve": 600,
		"syscall.accept4 < net.(*TCPListener).Accept < net/http.(*Server).Serve":                                                         400,
		// A stack grown under a statement is the growth's, not the statement's.
		"runtime.adjustframe < runtime.copystack < runtime.newstack < runtime.morestack < modernc.org/sqlite/lib._sqlite3VdbeExec < github.com/prickle-dev/prickle/server/store.(*Store).ClaimTask < " + sdk: 500,
	})
	a, err := account(p, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		Causes[0].Name:          2, // GC
		"SQLite statements":     3,
		"token check":           1,
		"validation":            0.5,
		"MCP SDK and JSON-RPC":  1.5,
		otherCause:              1,
		"SQLite begin":          0.4,
		"SQLite commit and WAL": 0.6,
		"accepting connections": 0.5,
		"stack growth":          0.25,
	}
	for c, us := range want {
		if got := a.ByCause[c]; got != us {
			t.Errorf("%s: %.2f µs/call, want %.2f", c, got, us)
		}
	}
	if len(a.ByCause) != len(want) {
		t.Errorf("causes charged: %v, want only %v", a.ByCause, want)
	}
	if got := a.Samples["SQLite statements"]; got != 1 {
		t.Errorf("SQLite statements: %d samples, want 1", got)
	}
	if a.Total != 10.75 {
		t.Errorf("total %.2f µs/call, want 10.75", a.Total)
	}
	if _, err := account(&profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}}}, 1); err == nil {
		t.Error("a heap profile was accounted as CPU")
	}
}

func TestAccountsText(t *testing.T) {
	rows := []AccountRow{{
		Scenario: "claim_task, 1 client, p50",
		Server: &Account{Calls: 10, Total: 300, ByCause: map[string]float64{"SQLite begin": 100, "MCP SDK and JSON-RPC": 200},
			Samples: map[string]int64{"SQLite begin": 100, "MCP SDK and JSON-RPC": 200}},
		Baseline: &Account{Calls: 10, Total: 150, ByCause: map[string]float64{"MCP SDK and JSON-RPC": 150},
			Samples: map[string]int64{"MCP SDK and JSON-RPC": 150}},
	}}
	var out bytes.Buffer
	writeAccounts(&out, rows, "")
	text := out.String()
	for _, want := range []string{"claim_task, 1 client, p50 (10 calls server, 10 baseline)", "+100.0", "67%", "+50.0", "33%", "+150.0", "100/0", "200/150"} {
		if !strings.Contains(text, want) {
			t.Errorf("accounting text lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "SQLite begin") > strings.Index(text, "MCP SDK") {
		t.Errorf("the larger difference is not listed first:\n%s", text)
	}
}
