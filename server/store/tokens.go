package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/prickle-dev/prickle/spec/world"
)

// TokenPrefix starts every token the store mints (world.NewToken's).
const TokenPrefix = world.TokenPrefix

// TokenKind is the kind of bearer token: a world's (agent and runner), or
// a credential a claim mints.
type TokenKind = world.TokenKind

// Token kinds.
const (
	// KindAgent identifies an agent (owner/name) connected over MCP.
	KindAgent = world.KindAgent
	// KindRunner identifies a runner device paired to exactly one agent.
	KindRunner = world.KindRunner
	// KindExecution is an execution credential minted by ClaimTask for one
	// attempt.
	KindExecution TokenKind = "execution_credential"
	// KindDiscussion is a discussion credential minted by ClaimDiscussion for
	// one message's discussion.
	KindDiscussion TokenKind = "discussion_credential"
)

// Errors returned by Authenticate. Match them with errors.Is.
var (
	// ErrUnknownToken: no such token (also for malformed tokens).
	ErrUnknownToken = errors.New("unknown token")
	// ErrExpiredToken: the token's expiry has passed.
	ErrExpiredToken = errors.New("expired token")
	// ErrRevokedToken: the token was revoked (for example replaced by a
	// fresh credential on replay, or its runner was unpaired).
	ErrRevokedToken = errors.New("revoked token")
)

// Scope narrows what a credential acts on. Every field is empty for agent
// and runner tokens.
type Scope struct {
	// Project is the project slug the credential belongs to.
	Project string
	// TaskID and AttemptID are set for execution credentials.
	TaskID, AttemptID string
	// RoomID, MessageID and DiscussionID are set for discussion credentials.
	RoomID, MessageID, DiscussionID string
}

// Principal is the authenticated caller. It never holds the token.
type Principal struct {
	// Kind is the token kind.
	Kind TokenKind
	// Agent is the agent the caller is or acts for, "owner/name".
	Agent string
	// Owner is the agent's owner handle.
	Owner string
	// RunnerID is the runner, for runner tokens and for credentials minted
	// by a runner's claim.
	RunnerID string
	// AllowedTools lists the tools a credential may call, as the claim that
	// minted it wrote them (Options.ExecutionTools, DiscussionTools); nil for
	// agent and runner tokens, whose tools the server fixes by kind.
	AllowedTools []string
	// ExpiresAt is when the token expires; nil means never.
	ExpiresAt *time.Time
	// Scope narrows a credential; zero for agent and runner tokens.
	Scope Scope
}

// IssuedToken is a freshly issued agent or runner token, as a tokens file
// lists it. Token is the plaintext, shown once: it is not stored and
// cannot be recovered. Its LogValue redacts it.
type IssuedToken = world.Token

// Credential is a short-lived credential returned once by a claim. Its JSON
// form matches the execution_credential / discussion_credential schemas.
type Credential struct {
	// Token is the plaintext credential, shown once.
	Token string `json:"token"`
	// ExpiresAt is when the credential stops working.
	ExpiresAt time.Time `json:"expires_at"`
	// AllowedTools are the only tools the credential may call.
	AllowedTools []string `json:"allowed_tools"`
}

// LogValue redacts the token so a Credential can be logged safely.
func (c Credential) LogValue() slog.Value {
	return slog.GroupValue(slog.String("token", "[redacted]"), slog.Time("expires_at", c.ExpiresAt),
		slog.Any("allowed_tools", c.AllowedTools))
}

// requireRunner refuses a caller that is not a runner: only a paired
// runner claims (not_runner), whatever tools the MCP layer lets it call.
func requireRunner(p *Principal, what string) error {
	if p == nil {
		return refuse(CodeUnauthenticated, "no caller identity")
	}
	if p.Kind != KindRunner {
		return refuse(CodeNotRunner, "only a paired runner can %s", what)
	}
	return nil
}

// newToken returns a fresh plaintext token and its SHA-256 hash.
func newToken() (string, []byte) {
	tok := world.NewToken()
	return tok, hashToken(tok)
}

func hashToken(tok string) []byte {
	h := HashToken(tok)
	return h[:]
}

// TokenHash is the SHA-256 of a token: all the store keeps of it, and
// what it looks tokens up by.
type TokenHash [sha256.Size]byte

// HashToken returns the hash of a plaintext token.
func HashToken(token string) TokenHash {
	var buf [128]byte // a token fits: hashed without a copy on the heap
	if len(token) <= len(buf) {
		return sha256.Sum256(append(buf[:0], token...))
	}
	return sha256.Sum256([]byte(token))
}

// newID returns prefix followed by 24 random hex digits.
func newID(prefix string) (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}

// tokenRow is what is inserted for an agent or runner token (the
// tokens table holds no credentials: a claim holds its own, migration
// 0006).
type tokenRow struct {
	kind   TokenKind
	agent  string
	runner *string
}

func insertToken(ctx context.Context, tx *txn, hash []byte, r tokenRow, now time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO tokens(hash, kind, agent, runner, created_at) VALUES (?,?,?,?,?)`,
		hash, string(r.kind), r.agent, dbString(r.runner), toDB(now))
	if err != nil {
		return fmt.Errorf("insert token: %w", err)
	}
	return nil
}

// credential is a credential being minted by a claim: what the caller is
// shown once, and what the claim's row keeps (the hash, and the allowed
// tools as JSON).
type credential struct {
	Credential
	hash      []byte
	toolsJSON string
}

// newCredential mints a credential that may call tools (toolsJSON is
// their JSON) until expires.
func (s *Store) newCredential(tools []string, toolsJSON string, expires time.Time) credential {
	tok, hash := newToken()
	return credential{Credential: Credential{Token: tok, ExpiresAt: expires, AllowedTools: slices.Clone(tools)},
		hash: hash, toolsJSON: toolsJSON}
}

// toolsJSON is the JSON of a credential's allowed tools as a claim's row
// keeps it ([] for none).
func toolsJSON(tools []string) string {
	if tools == nil {
		tools = []string{}
	}
	b, _ := json.Marshal(tools) // a []string always marshals
	return string(b)
}

// mintToken creates a random token, stores its hash and returns the
// plaintext.
func mintToken(ctx context.Context, tx *txn, r tokenRow, now time.Time) (string, error) {
	tok, hash := newToken()
	if err := insertToken(ctx, tx, hash, r, now); err != nil {
		return "", err
	}
	return tok, nil
}

// Authenticate resolves a bearer token to its Principal. It fails with an
// error matching ErrUnknownToken, ErrExpiredToken or ErrRevokedToken. The
// token is looked up by its SHA-256 hash and never stored or logged.
//
// The principals of agent and runner tokens are cached in memory (see
// cache.go): revoking through the Store takes effect at once; a change
// made behind its back is seen within cacheTTL. Expiry is checked on every
// call, against the store's clock.
func (s *Store) Authenticate(ctx context.Context, token string) (*Principal, error) {
	if token == "" {
		return nil, fmt.Errorf("store: authenticate: %w", ErrUnknownToken)
	}
	return s.AuthenticateHash(ctx, HashToken(token))
}

// AuthenticateHash is Authenticate for a token known by its hash: the
// server checks that the token that opened a session is still valid
// without keeping the token.
func (s *Store) AuthenticateHash(ctx context.Context, want TokenHash) (*Principal, error) {
	cached, ok, gen := s.auth.get(want)
	p := &cached // a copy: callers may change it
	if !ok {
		var err error
		if p, err = s.lookupToken(ctx, want[:]); err != nil {
			return nil, fmt.Errorf("store: authenticate: %w", err)
		}
		if p.Kind == KindAgent || p.Kind == KindRunner {
			s.auth.put(want, *p, gen)
		}
	}
	if p.ExpiresAt != nil && !s.Now().Before(*p.ExpiresAt) {
		return nil, fmt.Errorf("store: authenticate: %w", ErrExpiredToken)
	}
	return p, nil
}

// lookupToken reads the principal of the token whose hash is want: an
// agent or runner token, or the credential a claim holds. A revoked token
// (or a credential of a retired runner) is ErrRevokedToken; a credential
// its claim replaced is no longer known (ErrUnknownToken); expiry is the
// caller's check.
func (s *Store) lookupToken(ctx context.Context, want []byte) (*Principal, error) {
	var (
		stored                                                         []byte
		kind, agent, owner                                             string
		runner, attempt, discussion, project, room, message, task, tls sql.NullString
		expires, revoked, runnerRevoked                                sql.NullInt64
	)
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	scan := func(row *sql.Row) error {
		return row.Scan(&stored, &kind, &agent, &owner, &runner,
			&attempt, &discussion, &project, &room, &message, &task, &tls, &expires, &revoked, &runnerRevoked)
	}
	var err error
	if s.e.pg {
		// The statement's text: pgx runs it prepared on the connection
		// (as the *sql.Stmt would), which must be one PostgreSQL had not
		// closed (firstOnConn).
		var conn *sql.Conn
		conn, err = firstOnConn(s.db, s.opts.MaxConns, ctx, ctx, func(conn *sql.Conn) error {
			return scan(conn.QueryRowContext(ctx, s.e.rebind(stmtSQL[stAuthenticate]), want))
		})
		if conn != nil {
			conn.Close()
		}
	} else {
		err = scan(s.stmts.get(stAuthenticate).QueryRowContext(ctx, want))
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrUnknownToken
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(stored, want) != 1 {
		return nil, ErrUnknownToken
	}
	if revoked.Valid || runnerRevoked.Valid {
		return nil, ErrRevokedToken
	}
	p := &Principal{Kind: TokenKind(kind), Agent: agent, Owner: owner, RunnerID: runner.String,
		ExpiresAt: nullTime(expires),
		Scope: Scope{Project: project.String, TaskID: task.String, AttemptID: attempt.String,
			RoomID: room.String, MessageID: message.String, DiscussionID: discussion.String}}
	if tls.Valid {
		p.AllowedTools = []string{}
		if err := json.Unmarshal([]byte(tls.String), &p.AllowedTools); err != nil {
			return nil, fmt.Errorf("allowed tools: %w", err)
		}
	}
	return p, nil
}

// RevokeToken revokes the given token. Revoking a runner token unpairs
// nothing else; use RevokeRunner to retire a runner and all its tokens.
// Revoking a credential drops it from its claim (it is then unknown); a
// replay of the claim mints a new one.
func (s *Store) RevokeToken(ctx context.Context, token string) error {
	defer s.auth.invalidate()
	hash := hashToken(token)
	err := s.inTx(ctx, func(tx *txn) error {
		var n int64
		for _, u := range []struct {
			query string
			args  []any
		}{
			{`UPDATE tokens SET revoked_at = ? WHERE hash = ? AND revoked_at IS NULL`, []any{toDB(s.Now()), hash}},
			{`UPDATE attempts SET credential = NULL WHERE credential = ?`, []any{hash}},
			{`UPDATE discussion_claims SET credential = NULL WHERE credential = ?`, []any{hash}},
		} {
			res, err := tx.ExecContext(ctx, u.query, u.args...)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += k
		}
		if n == 0 {
			return ErrUnknownToken
		}
		return tx.notifyCaches(ctx)
	})
	if err != nil {
		return fmt.Errorf("store: revoke token: %w", err)
	}
	return nil
}

// RevokeRunner retires a runner: its token and every credential it minted
// stop working.
func (s *Store) RevokeRunner(ctx context.Context, runnerID string) error {
	defer s.auth.invalidate()
	err := s.inTx(ctx, func(tx *txn) error {
		now := toDB(s.Now())
		res, err := tx.ExecContext(ctx, `UPDATE runners SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, now, runnerID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("no active runner %q", runnerID)
		}
		// The runner's own token, by the tokens_runner_token index. The
		// credentials its claims hold fail authentication through the
		// runner row from now on.
		_, err = tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE runner = ? AND kind = 'runner' AND revoked_at IS NULL`,
			now, runnerID)
		if err != nil {
			return err
		}
		return tx.notifyCaches(ctx)
	})
	if err != nil {
		return fmt.Errorf("store: revoke runner: %w", err)
	}
	return nil
}

// exists reports whether query (cold, unprepared SQL) returns a row.
func exists(ctx context.Context, tx *txn, query string, args ...any) (bool, error) {
	return hasRow(tx.QueryRowContext(ctx, query, args...))
}
