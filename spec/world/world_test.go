package world_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/spec"
	"github.com/prickle-dev/prickle/spec/seed"
	"github.com/prickle-dev/prickle/spec/world"
)

// schema is the world schema with the bundled pages.
var schema = sync.OnceValue(func() *world.Schema {
	pages, err := spec.LoadBundled()
	if err != nil {
		panic(err)
	}
	s, err := world.CompileSchema(pages.Schemas())
	if err != nil {
		panic(err)
	}
	return s
})

// TestSchemaPublished: the schema the package checks with is the
// published file.
func TestSchemaPublished(t *testing.T) {
	file, err := os.ReadFile("fixture.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, world.SchemaJSON()) {
		t.Fatal("SchemaJSON() is not fixture.schema.json")
	}
}

// TestErrorPlaces: schema problems are reported together, in the order of
// the text, each at its line and column, at most ten of them.
func TestErrorPlaces(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\"version\": 1,\n \"people\": [\n")
	for i := range 12 {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "  {\"handle\": \"p%d\", \"display_name\": \"P\", \"color\": %d}", i, 10+i)
	}
	b.WriteString("\n]}\n")
	_, err := schema().Parse([]byte(b.String()))
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("err = %v, want the problems joined", err)
	}
	const most = 10
	errs := joined.Unwrap()
	if len(errs) != most+1 || !strings.Contains(errs[most].Error(), "2 more problems") {
		t.Fatalf("%d errors, want %d and a count of the rest:\n%v", len(errs), most+1, err)
	}
	for i, e := range errs[:most] {
		var fe *world.Error
		if !errors.As(e, &fe) || fe.Path != fmt.Sprintf("$.people[%d].color", i) || fe.Pointer != fmt.Sprintf("/people/%d/color", i) ||
			fe.Line != 3+i || fe.Column != 50 {
			t.Errorf("error %d: %v at %d:%d", i, e, fe.Line, fe.Column)
		}
	}
	var first *world.Error
	if !errors.As(err, &first) || first.Path != "$.people[0].color" {
		t.Errorf("errors.As finds %v, want the first problem", first)
	}
}

// TestSyntaxErrorPlaces: a document that is not JSON is reported at the
// line and column where reading it stopped, like any other problem, by
// Parse and Decode alike.
func TestSyntaxErrorPlaces(t *testing.T) {
	cases := []struct {
		text         string
		path         string
		line, column int
		want         string
	}{
		{"{\"version\": 1,\n \"projects\": [{\"slug\": \"a\"\n", "$.projects[0]", 3, 1, "ends early"},
		{"{\"version\": 1,\n \"projects\": [{\"slug\": nope}]}\n", "$.projects[0].slug", 2, 25, "invalid character"},
		{"{\"version\": 1,\n \"version\": 2}", "$.version", 2, 2, "duplicate"},
		{"{\"version\": 1}\n{}", "$", 2, 1, "more than one"},
	}
	for _, c := range cases {
		for name, read := range map[string]func([]byte) (*world.World, error){"Parse": schema().Parse, "Decode": world.Decode} {
			_, err := read([]byte(c.text))
			var fe *world.Error
			if !errors.As(err, &fe) || fe.Path != c.path || fe.Line != c.line || fe.Column != c.column || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %q: err = %v, want %s at %d:%d saying %q", name, c.text, err, c.path, c.line, c.column, c.want)
			}
		}
	}
}

// TestDecodeErrors: Decode checks what it reads as the format's Go form,
// not the schema: a member the format does not have, a value of the wrong
// JSON type, an integer that is not one, a document that is no object.
func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct{ text, path, want string }{
		{`{"version": 1, "widgets": []}`, "$.widgets", "unknown"},
		{`{"version": 1, "agents": [{"id": "a/b", "colour": 1}]}`, "$.agents[0].colour", "unknown"},
		{`{"version": 1, "people": "x"}`, "$.people", "array"},
		{`{"version": 1, "turns": [{"message": "m", "agents": [], "reply_limit": 2.5}]}`, "$.turns[0].reply_limit", "not an integer"},
		{`[]`, "$", "not a JSON object"},
		{`null`, "$", "not a JSON object"},
	} {
		_, err := world.Decode([]byte(c.text))
		var fe *world.Error
		if !errors.As(err, &fe) || fe.Path != c.path || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want an error at %s saying %q", c.text, err, c.path, c.want)
		}
	}
	// An integer is read by its value: 2.0 is 2.
	w, err := world.Decode([]byte(`{"version": 1.0, "turns": [{"message": "m", "agents": [], "reply_limit": 2e0}]}`))
	if err != nil || w.Version != 1 || *w.Turns[0].ReplyLimit != 2 {
		t.Errorf("integers by value: %+v, %v", w, err)
	}
}

// TestPointer: every value of a world is named by the JSON pointer its
// JSON tags spell, at any depth; a value outside the world by none.
func TestPointer(t *testing.T) {
	w := seed.World()
	w.Turns = append(w.Turns, world.Turn{Message: "m", Agents: []world.TurnAgent{{Agent: "a/b"}, {Agent: "c/d"}}})
	w.Agents[1].Capabilities = append(w.Agents[1].Capabilities, world.Capability{Kind: "mcp", Name: "x"})
	other := seed.World()
	for want, field := range map[string]any{
		"":                                  w,
		"/version":                          &w.Version,
		"/agents":                           &w.Agents,
		"/agents/1":                         &w.Agents[1],
		"/agents/1/id":                      &w.Agents[1].ID,
		"/agents/2/token":                   &w.Agents[2].Token,
		"/agents/1/capabilities/1/name":     &w.Agents[1].Capabilities[1].Name,
		"/messages/2/reply_turn":            &w.Messages[2].ReplyTurn,
		"/turns/1/agents/1":                 &w.Turns[1].Agents[1],
		"/turns/1/agents/1/reply_posted":    &w.Turns[1].Agents[1].ReplyPosted,
		"/tasks/0/request_message":          &w.Tasks[0].RequestMessage,
		"/projects/1/slug":                  &w.Projects[1].Slug,
		"/people/2/avatar_url":              &w.People[2].AvatarURL,
		"/turns/0/expires_at":               &w.Turns[0].ExpiresAt,
		"(another world's)":                 &other.Agents[1].ID,
		"(not a pointer)":                   w.Agents[1],
		"(a pointer to what a field holds)": w.People[0].AvatarURL,
	} {
		got := w.Pointer(field)
		if strings.HasPrefix(want, "(") {
			want = ""
		}
		if got != want {
			t.Errorf("Pointer(%T) = %q, want %q", field, got, want)
		}
	}
	err := w.Errorf(&w.Turns[1].Agents[1].Agent, "unknown agent %q", "c/d")
	if err.Error() != `fixture: $.turns[1].agents[1].agent: unknown agent "c/d"` {
		t.Errorf("Errorf: %v", err)
	}
}

// TestErrorfPlaces: an error of a world read from text is placed at its
// line and column.
func TestErrorfPlaces(t *testing.T) {
	w, err := world.Decode([]byte("{\"version\": 1,\n \"projects\": [{\"slug\": \"a\"},\n  {\"slug\": \"b\"}]}"))
	if err != nil {
		t.Fatal(err)
	}
	var fe *world.Error
	if !errors.As(w.Errorf(&w.Projects[1].Slug, "taken"), &fe) || fe.Line != 3 || fe.Column != 12 {
		t.Errorf("at %d:%d, want 3:12", fe.Line, fe.Column)
	}
}

// TestMaterialize: every agent and runner gets a fresh token, and every
// relative time, wherever the format has one, is resolved to the second;
// absolute times are left alone.
func TestMaterialize(t *testing.T) {
	w, err := world.Decode([]byte(`{"version": 1,
		"agents": [{"id": "a/x", "token": "prk_given-token-0001", "last_seen_at": "now-90m"}],
		"runners": [{"id": "r", "agent": "a/x"}],
		"messages": [{"id": "m", "created_at": "2026-01-15T09:30:00+02:00"}],
		"turns": [{"message": "m", "agents": [], "expires_at": "now+2h"}],
		"attempts": [{"task": "t", "claimed_at": "now", "live_until": "now+15m"}],
		"discussion_claims": [{"message": "m", "claimed_at": "now-3h", "live_until": "now-2h50m"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.FixedZone("x", 3600))
	n := 0
	toks, err := w.Materialize(now, func() string { n++; return fmt.Sprintf("prk_fresh-%d", n) })
	if err != nil {
		t.Fatal(err)
	}
	want := []world.Token{{Kind: world.KindAgent, Agent: "a/x", Token: "prk_fresh-1"}, {Kind: world.KindRunner, Agent: "a/x", Runner: "r", Token: "prk_fresh-2"}}
	if !reflect.DeepEqual(toks, want) || !reflect.DeepEqual(w.Tokens(), want) {
		t.Errorf("tokens %+v, want %+v", toks, want)
	}
	for got, want := range map[world.Time]string{
		w.Agents[0].LastSeenAt: "2026-05-01T09:30:00Z", w.Messages[0].CreatedAt: "2026-01-15T09:30:00+02:00",
		w.Turns[0].ExpiresAt: "2026-05-01T13:00:00Z", w.Attempts[0].ClaimedAt: "2026-05-01T11:00:00Z",
		w.Attempts[0].LiveUntil: "2026-05-01T11:15:00Z", w.DiscussionClaims[0].ClaimedAt: "2026-05-01T08:00:00Z",
		w.DiscussionClaims[0].LiveUntil: "2026-05-01T08:10:00Z",
	} {
		if string(got) != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	bad, _ := world.Decode([]byte(`{"version": 1, "attempts": [{"claimed_at": "now-3x"}]}`))
	if _, err := bad.Materialize(now, world.NewToken); err == nil || !strings.HasPrefix(err.Error(), "fixture: $.attempts[0].claimed_at: relative time") {
		t.Errorf("a bad relative time: %v", err)
	}
}

// TestSeedRoundTrips: the seed world is valid, and what Marshal writes
// of it is the same world.
func TestSeedRoundTrips(t *testing.T) {
	if _, err := schema().Parse(seed.JSON()); err != nil {
		t.Fatal(err)
	}
	w := seed.World()
	again, err := schema().Parse(w.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Marshal(), w.Marshal()) || !reflect.DeepEqual(w.Clone().Marshal(), w.Marshal()) {
		t.Errorf("Marshal does not round-trip:\n%s", w.Marshal())
	}
}

// TestTokensFile: a tokens file reads back as written, and a file that is
// not one is refused, saying why.
func TestTokensFile(t *testing.T) {
	toks := []world.Token{{Kind: world.KindAgent, Agent: "a/x", Token: world.NewToken()},
		{Kind: world.KindRunner, Agent: "a/x", Runner: "r", Token: world.NewToken()}}
	var b bytes.Buffer
	if err := world.WriteTokens(&b, toks); err != nil {
		t.Fatal(err)
	}
	got, err := world.ReadTokens(&b)
	if err != nil || !reflect.DeepEqual(got, toks) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if toks[0].Token == toks[1].Token || !strings.HasPrefix(toks[0].Token, world.TokenPrefix) || len(toks[0].Token) != len(world.TokenPrefix)+43 {
		t.Errorf("NewToken: %q, %q", toks[0].Token, toks[1].Token)
	}
	for text, want := range map[string]string{
		`{}`: "cannot unmarshal",
		`[{"kind": "agent", "agent": "a/x", "token": "t", "extra": 1}]`: "unknown field",
		`[{"kind": "credential", "agent": "a/x", "token": "t"}]`:        "kind must be agent or runner",
		`[{"kind": "runner", "agent": "a/x"}]`:                          "agent and token are required",
	} {
		if _, err := world.ReadTokens(strings.NewReader(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", text, err, want)
		}
	}
}
