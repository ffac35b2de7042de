package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Token is a bearer token of the world a server was started with: the
// format of prickled's --tokens-out file (a JSON array of these).
type Token struct {
	// Kind is "agent" or "runner".
	Kind string `json:"kind"`
	// Agent is the agent, "owner/name" (for a runner, the agent it is
	// paired to).
	Agent string `json:"agent"`
	// Runner is the runner's id, for runner tokens (optional).
	Runner string `json:"runner,omitempty"`
	// Token is the plaintext bearer token.
	Token string `json:"token"`
}

// ReadTokens reads a tokens file: a JSON array of Token.
func ReadTokens(r io.Reader) ([]Token, error) {
	var ts []Token
	dec := json.NewDecoder(r)
	if err := dec.Decode(&ts); err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	for i, t := range ts {
		if t.Kind != "agent" && t.Kind != "runner" {
			return nil, fmt.Errorf("tokens: [%d]: kind must be agent or runner, got %q", i, t.Kind)
		}
		if t.Agent == "" || t.Token == "" {
			return nil, fmt.Errorf("tokens: [%d]: agent and token are required", i)
		}
	}
	return ts, nil
}

// TokensFromFixture returns the agent and runner tokens a fixture gives.
// The suite's fixtures give every agent and runner a token, so the suite
// knows them without asking the server.
func TokensFromFixture(fixture []byte) ([]Token, error) {
	var w fxWorld
	if err := json.Unmarshal(fixture, &w); err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	var ts []Token
	for _, a := range w.Agents {
		if a.Token != "" {
			ts = append(ts, Token{Kind: "agent", Agent: a.ID, Token: a.Token})
		}
	}
	for _, r := range w.Runners {
		if r.Token != "" {
			ts = append(ts, Token{Kind: "runner", Agent: r.Agent, Runner: r.ID, Token: r.Token})
		}
	}
	return ts, nil
}

// resolvePrincipal turns a principal as scripts write it into a bearer
// token: "agent:OWNER/NAME", "runner:OWNER/NAME" (the runner paired to
// that agent) or "runner:RUNNER-ID", "none" (no Authorization header), or
// anything else, taken as the token itself (a credential saved earlier).
func resolvePrincipal(tokens []Token, p string) (string, error) {
	if p == "none" {
		return "", nil
	}
	kind, who, ok := strings.Cut(p, ":")
	if !ok || (kind != "agent" && kind != "runner") {
		if p == "" {
			return "", fmt.Errorf("empty principal (an unset variable?)")
		}
		return p, nil
	}
	for _, t := range tokens {
		if t.Kind != kind {
			continue
		}
		if t.Agent == who || (kind == "runner" && t.Runner == who) {
			return t.Token, nil
		}
	}
	return "", fmt.Errorf("no %s token for %q in this world", kind, who)
}
