package world

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// TokenKind is the kind of a bearer token. A world's tokens are agent and
// runner tokens; a server mints other kinds (the credentials of claims).
type TokenKind string

// The kinds of a world's tokens.
const (
	// KindAgent identifies an agent (owner/name).
	KindAgent TokenKind = "agent"
	// KindRunner identifies a runner device paired to exactly one agent.
	KindRunner TokenKind = "runner"
)

// Token is a bearer token of an agent or a runner of a world, as a tokens
// file lists it (server/README.md, "The tokens file"): what a server
// prints when it loads a world, and what a client is given to call as
// them.
type Token struct {
	// Kind is KindAgent or KindRunner.
	Kind TokenKind `json:"kind"`
	// Agent is the agent, "owner/name" (for a runner, the agent it is
	// paired to).
	Agent string `json:"agent"`
	// Runner is the runner's id, for runner tokens only.
	Runner string `json:"runner,omitempty"`
	// Token is the plaintext bearer token.
	Token string `json:"token"`
}

// LogValue redacts the token, so that a Token can be logged.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("kind", string(t.Kind)), slog.String("agent", t.Agent),
		slog.String("runner", t.Runner), slog.String("token", "[redacted]"))
}

// Tokens returns the tokens w gives its agents and runners (those with
// one): the agents', then the runners', in the order of w.
func (w *World) Tokens() []Token {
	var ts []Token
	for _, a := range w.Agents {
		if a.Token != "" {
			ts = append(ts, Token{Kind: KindAgent, Agent: a.ID, Token: a.Token})
		}
	}
	for _, r := range w.Runners {
		if r.Token != "" {
			ts = append(ts, Token{Kind: KindRunner, Agent: r.Agent, Runner: r.ID, Token: r.Token})
		}
	}
	return ts
}

// ReadTokens reads a tokens file: a JSON array of Token, every one with
// its kind, agent and token, and nothing else.
func ReadTokens(r io.Reader) ([]Token, error) {
	var ts []Token
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ts); err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	for i, t := range ts {
		if t.Kind != KindAgent && t.Kind != KindRunner {
			return nil, fmt.Errorf("tokens: [%d]: kind must be agent or runner, got %q", i, t.Kind)
		}
		if t.Agent == "" || t.Token == "" {
			return nil, fmt.Errorf("tokens: [%d]: agent and token are required", i)
		}
	}
	return ts, nil
}

// WriteTokens writes tokens as a tokens file: an indented JSON array,
// ending in a newline.
func WriteTokens(w io.Writer, tokens []Token) error {
	if tokens == nil {
		tokens = []Token{}
	}
	b, err := json.MarshalIndent(tokens, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// TokenPrefix starts every token NewToken mints.
const TokenPrefix = "prk_"

// NewToken returns a fresh random bearer token: TokenPrefix and 32 random
// bytes in unpadded base64url, within the b64token of RFC 6750 that a
// world's tokens are written in.
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// Principal names the agent or runner a token is of, as the conformance
// scripts and the call command write it: "agent:OWNER/NAME", or
// "runner:RUNNER-ID".
func (t Token) Principal() string {
	if t.Kind == KindRunner {
		return string(KindRunner) + ":" + t.Runner
	}
	return string(KindAgent) + ":" + t.Agent
}

// TokenOf returns the token among tokens of the principal p:
// "agent:OWNER/NAME", "runner:OWNER/NAME" (the runner paired to that
// agent) or "runner:RUNNER-ID". ok is false when p names no principal in
// that form.
func TokenOf(tokens []Token, p string) (token string, ok bool, err error) {
	k, who, found := strings.Cut(p, ":")
	kind := TokenKind(k)
	if !found || kind != KindAgent && kind != KindRunner {
		return "", false, nil
	}
	for _, t := range tokens {
		if t.Kind == kind && (t.Agent == who || kind == KindRunner && t.Runner == who) {
			return t.Token, true, nil
		}
	}
	return "", true, fmt.Errorf("no %s token for %q", kind, who)
}
