package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prickle-dev/prickle/spec/world"
)

func TestLoadWorld(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		c := newClock()
		s := db.open(t, c)
		f, err := os.Open("testdata/world.json")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		issued, err := s.LoadWorld(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if got := tokenOf(t, issued, KindAgent, "maya/builder"); got != fxBuilderAgent {
			t.Fatalf("the world's agent token not returned as given: %q", got)
		}
		if got := tokenOf(t, issued, KindRunner, "maya/builder"); got != fxBuilderRunner {
			t.Fatalf("the world's runner token not returned as given")
		}
		if got := tokenOf(t, issued, KindAgent, "maya/critic"); !strings.HasPrefix(got, TokenPrefix) {
			t.Fatalf("generated token %q", got)
		}
		if len(issued) != 5+4 {
			t.Fatalf("issued %d tokens, want 9", len(issued))
		}
		p := auth(t, s, fxTheoAgent)
		res, err := s.DiscoverTeamAgents(ctx, p, "website-v2")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.People) != 2 || len(res.Agents) != 4 {
			t.Fatalf("people %d agents %d", len(res.People), len(res.Agents))
		}
		// Generated tokens work.
		auth(t, s, tokenOf(t, issued, KindAgent, "maya/critic"))
		// The same world again is loaded already: nothing is loaded, no
		// token issued, and it says when it was loaded.
		b, err := os.ReadFile("testdata/world.json")
		if err != nil {
			t.Fatal(err)
		}
		again, err := s.LoadWorld(ctx, bytes.NewReader(b))
		var le *LoadedError
		if !errors.Is(err, ErrLoaded) || !errors.As(err, &le) || !le.At.Equal(t0) || again != nil {
			t.Fatalf("the same world again: %v, %v; want ErrLoaded at %v and no tokens", again, err, t0)
		}
		// Another world that names the same entries collides on ids,
		// naming the first entry.
		_, err = s.LoadWorld(ctx, bytes.NewReader(append(b, '\n')))
		var fe *world.Error
		if !errors.As(err, &fe) || fe.Path != "$.projects[0].slug" || !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("second load: %v", err)
		}
	})
}

const baseWorld = `{
  "version": 1,
  "projects": [{"slug": "p"}],
  "people": [{"handle": "a", "display_name": "A", "color": 1}, {"handle": "b", "display_name": "B", "color": 2}],
  "memberships": [{"project": "p", "person": "a"}],
  "agents": [{"id": "a/x", "model": "m", "client": "c", "availability": "online", "trust_level": "unverified", "token": "prk_base-world-token-ax"},
             {"id": "b/y", "model": "m", "client": "c", "availability": "idle", "trust_level": "owner_verified"}],
  "runners": [{"id": "r", "agent": "a/x", "token": "prk_base-world-runner-r"}],
  "rooms": [{"id": "room", "project": "p", "kind": "private", "owner": "a"}],
  "messages": [{"id": "m1", "room": "room", "kind": "room_message", "author": "a", "body": "hi"},
               {"id": "req", "room": "room", "kind": "task_request", "author": "a", "body": "do it"}],
  "turns": [{"message": "m1", "agents": [{"agent": "a/x"}]}],
  "tasks": [{"id": "t1", "project": "p", "agent": "a/x", "request_message": "req"}],
  "attempts": [{"task": "t1", "runner": "r", "idempotency_key": "k"}],
  "discussion_claims": [{"message": "m1", "runner": "r", "idempotency_key": "k", "role": "draft"}]
}`

func mutate(t *testing.T, f func(w map[string]any)) string {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(baseWorld), &w); err != nil {
		t.Fatal(err)
	}
	f(w)
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func entry(w map[string]any, section string, i int) map[string]any {
	return w[section].([]any)[i].(map[string]any)
}

func TestWorldErrorsNamePath(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		cases := []struct {
			name, path, doc string
		}{
			{"syntax", "$", `{"version": 1,`},
			{"version", "$.version", mutate(t, func(w map[string]any) { w["version"] = 2 })},
			{"unknown section", "$", mutate(t, func(w map[string]any) { w["widgets"] = []any{} })},
			{"section not array", "$.people", mutate(t, func(w map[string]any) { w["people"] = "x" })},
			{"bad slug", "$.projects[0].slug", mutate(t, func(w map[string]any) { entry(w, "projects", 0)["slug"] = "Bad Slug" })},
			{"color range", "$.people[1].color", mutate(t, func(w map[string]any) { entry(w, "people", 1)["color"] = 9 })},
			{"color type", "$.people[0].color", mutate(t, func(w map[string]any) { entry(w, "people", 0)["color"] = "red" })},
			{"avatar url", "$.people[0].avatar_url", mutate(t, func(w map[string]any) { entry(w, "people", 0)["avatar_url"] = "not a url" })},
			{"duplicate person", "$.people[1].handle", mutate(t, func(w map[string]any) { entry(w, "people", 1)["handle"] = "a" })},
			{"unknown field", "$.agents[0]", mutate(t, func(w map[string]any) { entry(w, "agents", 0)["colour"] = 1 })},
			{"membership project", "$.memberships[0].project", mutate(t, func(w map[string]any) { entry(w, "memberships", 0)["project"] = "nope" })},
			{"agent id", "$.agents[0].id", mutate(t, func(w map[string]any) { entry(w, "agents", 0)["id"] = "A/x" })},
			{"agent owner", "$.agents[1].id", mutate(t, func(w map[string]any) { entry(w, "agents", 1)["id"] = "zed/y" })},
			{"availability", "$.agents[1].availability", mutate(t, func(w map[string]any) { entry(w, "agents", 1)["availability"] = "busy" })},
			{"capability kind", "$.agents[0].capabilities[1].kind", mutate(t, func(w map[string]any) {
				entry(w, "agents", 0)["capabilities"] = []any{map[string]any{"kind": "repo", "name": "r"}, map[string]any{"kind": "magic", "name": "x"}}
			})},
			{"short token", "$.agents[0].token", mutate(t, func(w map[string]any) { entry(w, "agents", 0)["token"] = "short" })},
			{"duplicate token", "$.agents[1].token", mutate(t, func(w map[string]any) { entry(w, "agents", 1)["token"] = "prk_base-world-token-ax" })},
			{"runner agent", "$.runners[0].agent", mutate(t, func(w map[string]any) { entry(w, "runners", 0)["agent"] = "a/nope" })},
			{"private room owner", "$.rooms[0]", mutate(t, func(w map[string]any) { delete(entry(w, "rooms", 0), "owner") })},
			{"message room", "$.messages[1].room", mutate(t, func(w map[string]any) { entry(w, "messages", 1)["room"] = "nope" })},
			{"message kind", "$.messages[0].kind", mutate(t, func(w map[string]any) { entry(w, "messages", 0)["kind"] = "shout" })},
			{"message author", "$.messages[0].author", mutate(t, func(w map[string]any) { entry(w, "messages", 0)["author"] = "a/ghost" })},
			{"reply without role", "$.messages[0]", mutate(t, func(w map[string]any) { entry(w, "messages", 0)["reply_turn"] = "m1" })},
			{"turn agent", "$.turns[0].agents[0].agent", mutate(t, func(w map[string]any) {
				entry(w, "turns", 0)["agents"] = []any{map[string]any{"agent": "a/ghost"}}
			})},
			{"turn state", "$.turns[0].state", mutate(t, func(w map[string]any) { entry(w, "turns", 0)["state"] = "paused" })},
			{"reply limit", "$.turns[0].reply_limit", mutate(t, func(w map[string]any) { entry(w, "turns", 0)["reply_limit"] = 9 })},
			{"task request", "$.tasks[0].request_message", mutate(t, func(w map[string]any) { entry(w, "tasks", 0)["request_message"] = "m1" })},
			{"attempt runner", "$.attempts[0].runner", mutate(t, func(w map[string]any) {
				entry(w, "tasks", 0)["agent"] = "b/y"
			})},
			{"claim reviewing", "$.discussion_claims[0]", mutate(t, func(w map[string]any) { entry(w, "discussion_claims", 0)["role"] = "review" })},
			{"claim not woken", "$.discussion_claims[0].message", mutate(t, func(w map[string]any) { entry(w, "discussion_claims", 0)["message"] = "req" })},
		}
		// The base itself loads.
		base := db.open(t, newClock())
		if _, err := base.LoadWorld(ctx, strings.NewReader(baseWorld)); err != nil {
			t.Fatalf("base world: %v", err)
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s := db.open(t, newClock())
				_, err := s.LoadWorld(ctx, strings.NewReader(c.doc))
				var fe *world.Error
				if !errors.As(err, &fe) {
					t.Fatalf("err = %v, want *world.Error", err)
				}
				if fe.Path != c.path {
					t.Fatalf("path = %q, want %q (%v)", fe.Path, c.path, err)
				}
				if !strings.HasPrefix(err.Error(), "fixture: "+c.path+": ") {
					t.Fatalf("message %q does not name the path", err)
				}
				// All or nothing.
				for _, table := range []string{"projects", "people", "agents", "tokens", "messages"} {
					if n := count(t, s, `SELECT count(*) FROM `+table); n != 0 {
						t.Fatalf("%s has %d rows after a failed load", table, n)
					}
				}
			})
		}
	})
}

func TestWorldDocExampleLoads(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		doc, err := os.ReadFile("../../spec/world/FIXTURE.md")
		if err != nil {
			t.Fatal(err)
		}
		_, after, ok := strings.Cut(string(doc), "## Example")
		if !ok {
			t.Fatal("FIXTURE.md has no example section")
		}
		_, after, _ = strings.Cut(after, "```json\n")
		example, _, _ := strings.Cut(after, "```")
		s := db.open(t, newClock())
		issued, err := s.LoadWorld(ctx, strings.NewReader(example))
		if err != nil {
			t.Fatalf("FIXTURE.md example: %v", err)
		}
		if len(issued) != 3 {
			t.Fatalf("issued %d tokens, want 3", len(issued))
		}
		runner := auth(t, s, "prk_fixture-runner-maya-laptop-0001")
		res, err := s.ClaimTask(ctx, runner, "example-task-id", "earlier-key", nil)
		if err != nil || !res.Replayed || !res.Attempt.ClaimedAt.Equal(t0.Add(-5*time.Minute)) {
			t.Fatalf("replay of the example's earlier claim: %+v, %v", res, err)
		}
		if _, err := s.ClaimDiscussion(ctx, runner, "example-message-id", "k", ptrTo(2)); err != nil {
			t.Fatal(err)
		}
	})
}

// pairWorld is a world with one two-agent turn: the lead (a/x) drafted,
// the reviewer (a/z) reviewed, and each holds the claim it posted under.
// Nothing says "reply posted" but the replies themselves.
const pairWorld = `{
  "version": 1,
  "projects": [{"slug": "p"}],
  "people": [{"handle": "a", "display_name": "A"}],
  "memberships": [{"project": "p", "person": "a"}],
  "agents": [{"id": "a/x", "model": "m", "client": "c", "availability": "online", "trust_level": "unverified"},
             {"id": "a/z", "model": "m", "client": "c", "availability": "online", "trust_level": "unverified"}],
  "runners": [{"id": "rx", "agent": "a/x", "token": "prk_pair-world-runner-rx"},
              {"id": "rz", "agent": "a/z", "token": "prk_pair-world-runner-rz"}],
  "rooms": [{"id": "room", "project": "p", "kind": "private", "owner": "a"},
            {"id": "general", "project": "p", "kind": "general", "owner": null}],
  "messages": [{"id": "ask", "room": "room", "kind": "room_message", "author": "a", "body": "?"},
               {"id": "draft", "room": "general", "kind": "room_message", "author": "a/x", "body": "d",
                "reply_turn": "ask", "reply_role": "draft"},
               {"id": "review", "room": "general", "kind": "room_message", "author": "a/z", "body": "r",
                "reply_turn": "ask", "reply_role": "review"}],
  "turns": [{"message": "ask", "agents": [{"agent": "a/x"}, {"agent": "a/z"}]}],
  "discussion_claims": [{"message": "ask", "runner": "rx", "idempotency_key": "kx", "role": "draft"},
                        {"message": "ask", "runner": "rz", "idempotency_key": "kz", "role": "review", "reviewing": "draft"}]
}`

func mutateFrom(t *testing.T, base string, f func(w map[string]any)) string {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(base), &w); err != nil {
		t.Fatal(err)
	}
	f(w)
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWorldRepliesAreTheRecord: the replies (messages with reply_turn)
// are the one record of what was posted. A reviewer whose review is in is
// done with the turn, and each claim's reply is its agent's reply under
// its role, with no flag saying so; the lead, whose draft is not its last
// reply, still has its revise to come.
func TestWorldRepliesAreTheRecord(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		s := db.open(t, newClock())
		if _, err := s.LoadWorld(ctx, strings.NewReader(pairWorld)); err != nil {
			t.Fatal(err)
		}
		rx, rz := auth(t, s, "prk_pair-world-runner-rx"), auth(t, s, "prk_pair-world-runner-rz")
		two := ptrTo(2)
		// The reviewer's part is done: a new key is refused.
		if _, err := s.ClaimDiscussion(ctx, rz, "ask", "new", two); RefusalCode(err) != CodeReplyPosted {
			t.Errorf("reviewer, new key: %v, want %s", err, CodeReplyPosted)
		}
		// Each claim posted its reply: replaying either key is refused.
		for _, c := range []struct {
			p   *Principal
			key string
		}{{rx, "kx"}, {rz, "kz"}} {
			if _, err := s.ClaimDiscussion(ctx, c.p, "ask", c.key, two); RefusalCode(err) != CodeReplyPosted {
				t.Errorf("replay of %s: %v, want %s", c.key, err, CodeReplyPosted)
			}
		}
		// The lead revises the one review.
		res, err := s.ClaimDiscussion(ctx, rx, "ask", "revise", two)
		if err != nil || res.Role != RoleRevise || res.Reviewing == nil || res.Reviewing.MessageID != "draft" || res.RepliesLeft != MaxReplies-2 {
			t.Errorf("lead after the review: %+v, %v", res, err)
		}
	})
}

// TestWorldReplyRules: what the replies say is checked against the
// deprecated flags that repeat it, and against the harness: who replies
// what, once.
func TestWorldReplyRules(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		claim := func(w map[string]any, i int) map[string]any { return entry(w, "discussion_claims", i) }
		turnAgent := func(w map[string]any, j int) map[string]any {
			return entry(w, "turns", 0)["agents"].([]any)[j].(map[string]any)
		}
		cases := []struct {
			name, path, want string
			f                func(w map[string]any)
		}{
			// The deprecated flags load when they agree...
			{"flags agree", "", "", func(w map[string]any) {
				turnAgent(w, 0)["reply_posted"] = false
				turnAgent(w, 1)["reply_posted"] = true
				claim(w, 0)["reply_message"], claim(w, 0)["reply_posted"] = "draft", true
				claim(w, 1)["reply_message"] = "review"
			}},
			// ... and are errors when they do not.
			{"lead not done", "$.turns[0].agents[0].reply_posted", "a/x has no final reply", func(w map[string]any) {
				turnAgent(w, 0)["reply_posted"] = true
			}},
			{"reviewer done", "$.turns[0].agents[1].reply_posted", "a/z has its final reply", func(w map[string]any) {
				turnAgent(w, 1)["reply_posted"] = false
			}},
			{"claim reply message", "$.discussion_claims[1].reply_message", "that is message review", func(w map[string]any) {
				claim(w, 1)["reply_message"] = "draft"
			}},
			{"claim not replied", "$.discussion_claims[0].reply_posted", "says false", func(w map[string]any) {
				claim(w, 0)["reply_posted"] = false
			}},
			{"superseded claim replied", "$.discussion_claims[0].reply_posted", "a superseded claim posted nothing", func(w map[string]any) {
				claim(w, 0)["superseded"], claim(w, 0)["reply_posted"] = true, true
			}},
			// The harness: the lead drafts, revises one review or combines several; reviewers review.
			{"lead reviews", "$.messages[1].reply_role", "the lead drafts and revises", func(w map[string]any) {
				entry(w, "messages", 1)["reply_role"] = "review"
			}},
			{"lead combines one review", "$.messages[1].reply_role", "the lead drafts and revises", func(w map[string]any) {
				entry(w, "messages", 1)["reply_role"] = "combine"
			}},
			{"reviewer drafts", "$.discussion_claims[1].role", "a reviewer reviews", func(w map[string]any) {
				claim(w, 1)["role"], claim(w, 1)["reviewing"] = "draft", nil
			}},
			{"second review", "$.messages[3]", "a/z already posted its review reply", func(w map[string]any) {
				w["messages"] = append(w["messages"].([]any), map[string]any{"id": "review-2", "room": "general",
					"kind": "room_message", "author": "a/z", "body": "again", "reply_turn": "ask", "reply_role": "review"})
			}},
			{"two live claims of a role", "$.discussion_claims[2]", "a/z already holds a review claim", func(w map[string]any) {
				w["discussion_claims"] = append(w["discussion_claims"].([]any), map[string]any{"message": "ask", "runner": "rz",
					"idempotency_key": "kz2", "role": "review", "reviewing": "draft"})
			}},
			{"a superseded claim beside it", "", "", func(w map[string]any) {
				w["discussion_claims"] = append(w["discussion_claims"].([]any), map[string]any{"message": "ask", "runner": "rz",
					"idempotency_key": "kz0", "role": "review", "reviewing": "draft", "superseded": true})
			}},
			{"general room owner", "$.rooms[1].owner", "want null", func(w map[string]any) {
				entry(w, "rooms", 1)["owner"] = "a"
			}},
			{"general room without owner", "", "", func(w map[string]any) { delete(entry(w, "rooms", 1), "owner") }},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s := db.open(t, newClock())
				_, err := s.LoadWorld(ctx, strings.NewReader(mutateFrom(t, pairWorld, c.f)))
				if c.path == "" {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				var fe *world.Error
				if !errors.As(err, &fe) || fe.Path != c.path || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err = %v, want a *world.Error at %s saying %q", err, c.path, c.want)
				}
			})
		}
	})
}

// TestWorldIntegersByValue: an integer is read by its value, as the
// schema's "integer" means it: a reply limit written 2.0 is 2.
func TestWorldIntegersByValue(t *testing.T) {
	eachDB(t, func(t *testing.T, db testDB) {
		turn := `"agents": [{"agent": "a/x"}, {"agent": "a/z"}]}`
		for _, c := range []struct{ limit, err string }{{"2.0", ""}, {"2e0", ""}, {"2.5", "$.turns[0].reply_limit"}} {
			s := db.open(t, newClock())
			doc := strings.Replace(pairWorld, turn, `"agents": [{"agent": "a/x"}, {"agent": "a/z"}], "reply_limit": `+c.limit+`}`, 1)
			_, err := s.LoadWorld(ctx, strings.NewReader(doc))
			var fe *world.Error
			if c.err != "" {
				if !errors.As(err, &fe) || fe.Path != c.err {
					t.Errorf("reply_limit %s: %v, want an error at %s", c.limit, err, c.err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("reply_limit %s: %v", c.limit, err)
			}
			// Two replies are in: a limit of 2 leaves none for the lead's revise.
			_, err = s.ClaimDiscussion(ctx, auth(t, s, "prk_pair-world-runner-rx"), "ask", "revise", ptrTo(2))
			if RefusalCode(err) != CodeNoRepliesLeft {
				t.Errorf("reply_limit %s: the lead's revise: %v, want %s", c.limit, err, CodeNoRepliesLeft)
			}
		}
	})
}
