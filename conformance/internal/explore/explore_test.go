package explore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/conformance/internal/wire"
	"github.com/prickle-dev/prickle/conformance/report"
	"github.com/prickle-dev/prickle/server"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/world"
)

// reference starts the reference server in-process on each world.
type reference struct{}

func (reference) Skip(*suite.Script) string { return "" }
func (reference) String() string            { return "reference (in-process)" }

// readWorld reads the world of a fixture file.
func readWorld(fixtureFile string) (*world.World, []byte, error) {
	fx, err := os.ReadFile(fixtureFile)
	if err != nil {
		return nil, nil, err
	}
	w, err := world.Decode(fx)
	return w, fx, err
}

func (reference) Start(ctx context.Context, _ *suite.Script, fixtureFile, _ string) (*suite.Instance, error) {
	w, fx, err := readWorld(fixtureFile)
	if err != nil {
		return nil, err
	}
	srv, _, err := server.New(ctx, server.Config{World: bytes.NewReader(fx), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	hs := httptest.NewServer(srv.Handler())
	return &suite.Instance{Endpoint: hs.URL + server.PathMCP, Tokens: w.Tokens(), Stop: func() {
		hs.CloseClientConnections()
		hs.Close()
		srv.Close()
	}}, nil
}

// TestExplorationReachesEveryRule: at the default budget, exploration of
// the reference server gets every refusal the model knows, every success
// and an HTTP 401, for each tool: a generator that stopped reaching
// a rule would leave it untested without anyone noticing.
func TestExplorationReachesEveryRule(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	r, rep := Run(context.Background(), "explore", Config{Target: reference{}, Index: wire.NewIndex(sp), Profile: suite.Reference,
		Sequences: 100, Seed: 1, Parallel: runtime.GOMAXPROCS(0), Timeout: 2 * time.Minute}, t.TempDir())
	if r.Status != report.Pass {
		t.Fatalf("exploration of the reference server: %s\n%s", r.Status, r.Log)
	}
	var want []string
	for _, tool := range []string{"claim_task", "claim_discussion", "discover_team_agents"} {
		want = append(want, tool+" ok", tool+" HTTP 401")
	}
	for _, r := range modelRules {
		if r == ruleExecCredTool {
			continue // the reference server's execution credentials allow the tool
		}
		want = append(want, r.tool+" refused "+r.code)
	}
	for _, k := range want {
		if rep.Outcomes[k]+rep.Outcomes[k+inARace] == 0 {
			t.Errorf("exploration never got %q", k)
		}
	}
	t.Logf("%d sequences, %d calls (%d in %d concurrent groups, %d unknown), outcomes: %v", rep.Sequences, rep.Calls, rep.GroupCalls, rep.Groups, rep.Unknown, rep.Outcomes)
}

// TestGeneratedWorldsLoad: the generated worlds are valid fixtures (the
// reference store loads them), and so is every world a shrink makes.
func TestGeneratedWorldsLoad(t *testing.T) {
	ctx := context.Background()
	for i := range 40 {
		w := genWorld(rand.New(rand.NewPCG(7, uint64(i))))
		worlds := []*world.World{w}
		for _, kind := range []string{"project", "person", "agent", "message", "turn"} {
			if w2, ok := withoutEntity(w, kind, 0); ok {
				worlds = append(worlds, w2)
			}
		}
		for j, w := range worlds {
			fx, _, err := suite.Materialize(w.Marshal(), suite.Now())
			if err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(ctx, ":memory:", store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.LoadWorld(ctx, bytes.NewReader(fx)); err != nil {
				t.Errorf("world %d (shrunk %d) does not load: %v", i, j, err)
			}
			st.Close()
		}
	}
}

// TestRemoveSteps: dropping a step drops the steps that use its
// credential, and renumbers the others' references.
func TestRemoveSteps(t *testing.T) {
	cmds := []*command{
		{tool: "claim_task", p: principal{kind: "runner", id: "r"}},
		{tool: "claim_task", p: principal{kind: "runner", id: "r"}},
		{tool: "discover_team_agents", p: principal{kind: "cred", step: 0}},
		{tool: "discover_team_agents", p: principal{kind: "cred", step: 1}},
	}
	out := removeSteps(cmds, map[int]bool{0: true})
	if len(out) != 2 || out[1].p.kind != "cred" || out[1].p.step != 0 || cmds[3].p.step != 1 {
		var got []string
		for _, c := range out {
			got = append(got, c.tool+"/"+c.p.kind)
		}
		t.Errorf("got %s", strings.Join(got, " "))
	}
	if !slices.Equal([]string{out[0].tool}, []string{"claim_task"}) {
		t.Errorf("first step %s", out[0].tool)
	}
}

// TestSerialized: a shrink sends a concurrent group's calls one at a time
// in the order the model accepted them (a call with no place, in the
// order its answer came back; one never answered, last), and renumbers
// the credential references of the steps after it.
func TestSerialized(t *testing.T) {
	at := func(ms int) *answer { return &answer{end: time.Unix(0, int64(ms)*1e6)} }
	cmds := []*command{
		{tool: "claim_task", p: principal{kind: "runner", id: "r"}},
		{tool: "claim_task", p: principal{kind: "runner", id: "r"}, group: 1, class: TaskSameKey},
		{tool: "discover_team_agents", p: principal{kind: "cred", step: 0}, group: 1, class: TaskSameKey},
		{tool: "claim_task", p: principal{kind: "runner", id: "s"}, group: 1, class: TaskSameKey},
		{tool: "discover_team_agents", p: principal{kind: "cred", step: 1}},
		{tool: "claim_task", p: principal{kind: "runner", id: "a"}, group: 2},
		{tool: "claim_task", p: principal{kind: "runner", id: "b"}, group: 2},
		{tool: "claim_task", p: principal{kind: "runner", id: "c"}, group: 2},
	}
	x := &exploreRun{steps: []*stepRun{
		{ans: at(1)},
		{ans: at(2), place: 2}, {ans: at(5), place: 1}, {ans: at(3), place: 3},
		{ans: at(6)},
		{}, {ans: at(9)}, {ans: at(8)},
	}}
	out, ok := serialized(cmds, x)
	if !ok {
		t.Fatal("a sequence with groups: not serialized")
	}
	var got []string
	for _, c := range out {
		if c.group != 0 || c.class != "" {
			t.Errorf("%s still in group %d (%s)", c.tool, c.group, c.class)
		}
		who := c.p.id
		if c.p.kind == "cred" {
			who = fmt.Sprint("step ", c.p.step)
		}
		got = append(got, c.tool+" as "+who)
	}
	want := []string{
		"claim_task as r",
		"discover_team_agents as step 0",
		"claim_task as r",
		"claim_task as s",
		"discover_team_agents as step 2",
		"claim_task as c",
		"claim_task as b",
		"claim_task as a",
	}
	if !slices.Equal(got, want) {
		t.Errorf("serialized:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cmds[4].p.step != 1 || cmds[1].group != 1 {
		t.Error("serialized changed the commands it was given")
	}
	if _, ok := serialized(out, x); ok {
		t.Error("a sequence without groups: serialized again")
	}
}

// TestSequencesReproducible: the same seed and index generate the same
// world and the same calls, every time ("the same seed, budget and server
// explore the same sequences").
func TestSequencesReproducible(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		for i := range 25 {
			a, b := genSequence(seed, i), genSequence(seed, i)
			if !bytes.Equal(a.world.Marshal(), b.world.Marshal()) || !reflect.DeepEqual(a.cmds, b.cmds) {
				t.Fatalf("seed %d, sequence %d: two generations differ", seed, i)
			}
		}
	}
}

// TestRefusalOrder: where several refusals apply, the reference profile
// wants the first of server/README.md's refusal order (a harness above 2
// in a turn that has ended is harness_unsupported, not turn_ended; a wake
// that is not the cause of a task routed elsewhere is not_routed), and
// core accepts any of them.
func TestRefusalOrder(t *testing.T) {
	owner, req := "ann", "req"
	w := &world.World{
		Projects:    []world.Project{{Slug: "p", Name: "P"}},
		People:      []world.Person{{Handle: owner, DisplayName: "Ann"}},
		Memberships: []world.Membership{{Project: "p", Person: owner}},
		Agents:      []world.Agent{{ID: "ann/bot"}, {ID: "ann/other"}},
		Runners:     []world.Runner{{ID: "r1", Agent: "ann/bot"}},
		Rooms:       []world.Room{{ID: "ann-private", Project: "p", Kind: "private", Owner: &owner}},
		Messages: []world.Message{{ID: "m1", Room: "ann-private", Kind: "room_message", Author: owner},
			{ID: req, Room: "ann-private", Kind: "task_request", Author: owner}},
		Turns: []world.Turn{{Message: "m1", State: "ended", Agents: []world.TurnAgent{{Agent: "ann/bot"}}}},
		Tasks: []world.Task{{ID: "t1", Project: "p", Agent: "ann/other", RequestMessage: &req}},
	}
	disc := &command{tool: "claim_discussion", args: map[string]any{"message_id": "m1", "idempotency_key": "k", "harness": 3}}
	task := &command{tool: "claim_task", args: map[string]any{"task_id": "t1", "idempotency_key": "k", "wake": map[string]any{"message_id": "m1"}}}
	for _, tc := range []struct {
		profile suite.Profile
		cmd     *command
		code    string
		ok      bool
	}{
		{suite.Reference, disc, "harness_unsupported", true},
		{suite.Reference, disc, "turn_ended", false},
		{suite.Core, disc, "turn_ended", true},
		{suite.Core, disc, "harness_unsupported", true},
		{suite.Reference, task, "not_routed", true},
		{suite.Reference, task, "cause_mismatch", false},
		{suite.Core, task, "cause_mismatch", true},
	} {
		cmd := tc.cmd
		m := newModel(w, tc.profile, time.Now(), nil)
		c, _ := m.resolve(principal{kind: "runner", id: "r1"}, nil)
		e := m.expect(cmd, c)
		fs := m.judge(e, &answer{refused: true, code: tc.code, text: tc.code + ": refused"})
		if (len(fs) == 0) != tc.ok {
			t.Errorf("%s profile, %s %s: failures %v, want ok %v", tc.profile, cmd.tool, tc.code, fs, tc.ok)
		}
		if cmd == task && !tc.ok && len(fs) > 0 && !strings.Contains(fs[0].msg, dOrder) {
			t.Errorf("the failure does not cite the refusal order: %s", fs[0].msg)
		}
	}
}

// counting starts the reference server and counts the starts.
type counting struct {
	reference
	starts atomic.Int32
}

func (c *counting) Start(ctx context.Context, s *suite.Script, fixtureFile, dir string) (*suite.Instance, error) {
	c.starts.Add(1)
	return c.reference.Start(ctx, s, fixtureFile, dir)
}

// TestBatchesShareServers: sequences that share a server, each in its own
// part of its world, get the very answers they get on servers of their
// own, in far fewer starts.
func TestBatchesShareServers(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	var outcomes [2]map[string]int
	var starts [2]int32
	for i, alone := range []bool{true, false} {
		target := &counting{}
		r, rep := Run(context.Background(), "explore", Config{Target: target, Index: wire.NewIndex(sp), Profile: suite.Reference,
			Sequences: 16, Seed: 3, Parallel: 2, Timeout: 2 * time.Minute, Alone: alone}, t.TempDir())
		if r.Status != report.Pass {
			t.Fatalf("alone %v: %s\n%s", alone, r.Status, r.Log)
		}
		outcomes[i], starts[i] = bySchedule(rep.Outcomes), target.starts.Load()
	}
	if !maps.Equal(outcomes[0], outcomes[1]) {
		t.Errorf("outcomes differ:\nalone  %v\nshared %v", outcomes[0], outcomes[1])
	}
	if starts[0] != 16 || starts[1] != 2 {
		t.Errorf("%d starts alone, %d shared; want 16 and 2", starts[0], starts[1])
	}
}

// bySchedule is outcomes with those of races, which the schedule decides,
// counted by tool alone.
func bySchedule(outcomes map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range outcomes {
		if strings.HasSuffix(k, inARace) {
			k = strings.Fields(k)[0] + inARace
		}
		out[k] += n
	}
	return out
}

// TestPartsShareNoName: renamed parts merge into a world the reference
// store loads, and no name of one part is a name of another.
func TestPartsShareNoName(t *testing.T) {
	var parts []*world.World
	names := map[string]int{}
	for i := range 5 {
		s := genSequence(9, i)
		w, cmds := renamed(s.world, s.cmds, partPrefix(i))
		parts = append(parts, w)
		for _, id := range worldNames(w) {
			if j, ok := names[id]; ok && j != i {
				t.Errorf("%q is a name of parts %d and %d", id, j, i)
			}
			names[id] = i
		}
		for _, c := range cmds {
			if (c.p.kind == "agent" || c.p.kind == "runner") && !strings.HasPrefix(c.p.id, partPrefix(i)) {
				t.Errorf("part %d calls as %s", i, c.p.id)
			}
		}
		if reflect.DeepEqual(s.cmds, cmds) || s.world.Projects[0].Slug != genProjects[0] {
			t.Errorf("part %d: renaming changed the sequence as generated", i)
		}
	}
	fx, _, err := suite.Materialize(world.Merge(parts...).Marshal(), suite.Now())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.LoadWorld(context.Background(), bytes.NewReader(fx)); err != nil {
		t.Errorf("the merged world does not load: %v", err)
	}
}

// worldNames are the names w gives: the ids of its entities, and keys.
func worldNames(w *world.World) []string {
	var out []string
	for _, p := range w.Projects {
		out = append(out, p.Slug)
	}
	for _, p := range w.People {
		out = append(out, p.Handle)
	}
	for _, a := range w.Agents {
		out = append(out, a.ID)
	}
	for _, r := range w.Runners {
		out = append(out, r.ID)
	}
	for _, r := range w.Rooms {
		out = append(out, r.ID)
	}
	for _, m := range w.Messages {
		out = append(out, m.ID)
	}
	for _, t := range w.Tasks {
		out = append(out, t.ID)
	}
	for _, a := range w.Attempts {
		out = append(out, a.ID, a.IdempotencyKey)
	}
	for _, c := range w.DiscussionClaims {
		out = append(out, c.ID, c.IdempotencyKey)
	}
	return out
}

// sharedOnlyBug is the reference server, but one that loads a world of
// several parts without its memberships: it fails only when sequences
// share it.
type sharedOnlyBug struct{ reference }

func (b sharedOnlyBug) Start(ctx context.Context, s *suite.Script, fixtureFile, dir string) (*suite.Instance, error) {
	w, _, err := readWorld(fixtureFile)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(w.Projects[0].Slug, partPrefix(0)) {
		w.Memberships = nil
		fixtureFile = filepath.Join(dir, "without-memberships.json")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(fixtureFile, w.Marshal(), 0o600); err != nil {
			return nil, err
		}
	}
	return b.reference.Start(ctx, s, fixtureFile, dir)
}

// TestFailureOnlyWhenShared: a failure that a sequence does not show
// alone on a fresh server still fails the run, and says so; nothing is
// shrunk from it.
func TestFailureOnlyWhenShared(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	r, rep := Run(context.Background(), "explore", Config{Target: sharedOnlyBug{}, Index: wire.NewIndex(sp), Profile: suite.Core,
		Sequences: 4, Seed: 1, Parallel: 1, Timeout: time.Minute, FailFast: true}, t.TempDir())
	if r.Status != report.Fail || len(rep.Failures) != 1 {
		t.Fatalf("%s, %d failures\n%s", r.Status, len(rep.Failures), r.Log)
	}
	f := rep.Failures[0]
	if f.Script != "" || !strings.Contains(f.Message, "alone on a fresh server the sequence passes") || !strings.Contains(r.Log, f.Message) {
		t.Errorf("the failure does not say it shows only when shared: %+v\n%s", f, r.Log)
	}
}

// TestInScope: a scope keeps only its tools' calls, and drops the calls
// made with a credential of a dropped claim, renumbering the others.
func TestInScope(t *testing.T) {
	cmds := []*command{
		{p: principal{kind: "runner", id: "r"}, tool: "claim_task"},
		{p: principal{kind: "agent", id: "a"}, tool: "discover_team_agents"},
		{p: principal{kind: "cred", step: 0}, tool: "discover_team_agents"},
		{p: principal{kind: "runner", id: "r"}, tool: "claim_discussion"},
		{p: principal{kind: "cred", step: 3}, tool: "claim_discussion"},
	}
	if got := inScope(cmds, nil); len(got) != len(cmds) {
		t.Errorf("no scope: %d calls of %d", len(got), len(cmds))
	}
	got := inScope(cmds, []string{"discover_team_agents"})
	if len(got) != 1 || got[0] != cmds[1] {
		t.Errorf("discover_team_agents alone: %+v", got)
	}
	got = inScope(cmds, []string{"discover_team_agents", "claim_discussion"})
	if len(got) != 3 || got[0] != cmds[1] || got[1] != cmds[3] || got[2].p.kind != "cred" || got[2].p.step != 1 {
		t.Errorf("discover_team_agents and claim_discussion: %+v", got)
	}
}

// TestEvidenceDrawnEverySeed: what a run's evidence needs is drawn by
// construction, not by luck. From any seed, a run of 100 sequences (the
// default budget) races each race class in 20 of them, 3 groups each,
// and every sequence probes, each probe of the list aimed at first in at
// least 100/len(probes) sequences.
func TestEvidenceDrawnEverySeed(t *testing.T) {
	const sequences = 100
	nProbes := 0
	for seed := int64(1); seed <= 60; seed++ {
		classes := map[RaceClass]int{}
		first := map[int]int{}
		for i := range sequences {
			s := genSequence(seed*7919, i)
			groups := map[int]RaceClass{}
			for _, c := range s.cmds {
				if c.group != 0 {
					groups[c.group] = c.class
				}
			}
			for _, c := range groups {
				classes[c]++
			}
			if len(s.probes) == 0 {
				t.Fatalf("seed %d, sequence %d: no probe", seed*7919, i)
			}
			first[s.probes[0]]++
			nProbes = max(nProbes, s.probes[0]+1)
		}
		for _, c := range RaceClasses {
			if classes[c] != sequences/len(RaceClasses)*Tries {
				t.Errorf("seed %d: race class %s has %d groups, want %d", seed*7919, c, classes[c], sequences/len(RaceClasses)*Tries)
			}
		}
		for p := range nProbes {
			if first[p] < sequences/nProbes {
				t.Errorf("seed %d: probe %d is the first of %d sequences, want %d or more", seed*7919, p, first[p], sequences/nProbes)
			}
		}
	}
	if nProbes < 20 {
		t.Errorf("only %d probes aimed at first", nProbes)
	}
}
