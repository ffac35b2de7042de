package load

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/seed"
)

// MaxFixtureTasks bounds the tasks Fixture adds.
const MaxFixtureTasks = 10_000_000

// Fixture returns a world (server/store/FIXTURE.md) for load runs: the
// standard seed world (package seed, so DefaultWorld
// names work on it) plus tasks FreshTaskPrefix+0 ... +(tasks-1) in the
// seed project, routed to the seed runner's agent, for fresh claims. Every
// agent and runner gets a fresh random token (the seed file's well-known
// ones are replaced); tokens lists them in the tokens-file format.
func Fixture(tasks int) (world []byte, tokens []conformance.Token, err error) {
	if tasks < 0 || tasks > MaxFixtureTasks {
		return nil, nil, fmt.Errorf("tasks must be between 0 and %d, got %d", MaxFixtureTasks, tasks)
	}
	var w map[string]json.RawMessage
	if err := json.Unmarshal(conformance.SeedFixture(), &w); err != nil {
		return nil, nil, fmt.Errorf("seed fixture: %w", err)
	}
	var agents, runners []map[string]json.RawMessage
	var taskList []json.RawMessage
	for name, into := range map[string]any{"agents": &agents, "runners": &runners, "tasks": &taskList} {
		if err := json.Unmarshal(w[name], into); err != nil {
			return nil, nil, fmt.Errorf("seed fixture: %s: %w", name, err)
		}
	}
	str := func(m map[string]json.RawMessage, k string) string {
		var s string
		_ = json.Unmarshal(m[k], &s)
		return s
	}
	retoken := func(m map[string]json.RawMessage) (string, error) {
		tok, err := newToken()
		if err != nil {
			return "", err
		}
		m["token"], _ = json.Marshal(tok)
		return tok, nil
	}
	for _, a := range agents {
		tok, err := retoken(a)
		if err != nil {
			return nil, nil, err
		}
		tokens = append(tokens, conformance.Token{Kind: string(store.KindAgent), Agent: str(a, "id"), Token: tok})
	}
	for _, r := range runners {
		tok, err := retoken(r)
		if err != nil {
			return nil, nil, err
		}
		tokens = append(tokens, conformance.Token{Kind: string(store.KindRunner), Agent: str(r, "agent"), Runner: str(r, "id"), Token: tok})
	}
	for n := range tasks {
		t, _ := json.Marshal(map[string]string{
			"id": FreshTaskID(FreshTaskPrefix, n), "project": seed.Project, "agent": seed.BuilderAgent,
		})
		taskList = append(taskList, t)
	}
	for name, v := range map[string]any{"agents": agents, "runners": runners, "tasks": taskList} {
		if w[name], err = json.Marshal(v); err != nil {
			return nil, nil, err
		}
	}
	out, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	return append(out, '\n'), tokens, nil
}

// newToken returns a random bearer token in the format prickled mints.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return store.TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}
