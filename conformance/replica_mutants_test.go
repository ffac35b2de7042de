package conformance_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/prickle-dev/prickle/api"
	"github.com/prickle-dev/prickle/conformance"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/server/store"
	"github.com/prickle-dev/prickle/spec/world"
)

// Replica mutants: servers that keep a promise in their process's memory
// while their replicas share one database (a SQLite file). Each is
// correct as one process, so a run against one replica certifies it, and
// wrong as two: a claim or a revocation on one replica does not reach the
// other's memory. SQLite's BEGIN IMMEDIATE serializes the real store's
// checks across processes, so each keeps its check outside the database.
// (Mutants are never switches in the server: each wraps its tool handler,
// or how a token resolves to its principal.)
var replicaMutants = []mutant{
	{
		name:     "replica-same-key-in-memory",
		breaks:   `claim_task#1d2c6a82`,
		rule:     "claim_task: the same key replays the same attempt; this server tells a key it has seen by its own memory (the key stored with the process's suffix), so a retry on another replica is a new claim",
		explore:  []conformance.Profile{conformance.Core, conformance.Reference},
		replicas: 2,
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			known := map[string]bool{} // the world's keys, which every replica replays
			if fx, err := world.Decode(w.fixture); err == nil {
				for _, a := range fx.Attempts {
					known[a.Task+"\x00"+a.Runner+"\x00"+a.IdempotencyKey] = true
				}
			}
			return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
				if p := caller(ctx); p != nil && !known[in.TaskID+"\x00"+p.RunnerID+"\x00"+in.IdempotencyKey] {
					mine := *in
					mine.IdempotencyKey += fmt.Sprintf("~%d", w.replica)
					in = &mine
				}
				return inner.ClaimTask(ctx, in)
			}}
		}),
	},
	{
		name:     "replica-live-attempt-in-memory",
		breaks:   `server/README.md: claim_task`,
		rule:     "claim_task (reference): one live attempt per task; this server knows the live attempts by its own memory (its claims of a task one at a time, by an in-process lock), and expires the others in the database before it claims, so a claim on another replica under a new key is granted",
		explore:  []conformance.Profile{conformance.Reference},
		replicas: 2,
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			live, db := worldLive(w), w.openDB()
			return &wrapped{claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
				p := caller(ctx)
				if p == nil {
					return inner.ClaimTask(ctx, in)
				}
				return claimInMemory(live, "task "+in.TaskID, func(now int64) {
					exec(db, `UPDATE attempts SET live_until = ? WHERE task = ? AND superseded_at IS NULL AND live_until > ?
						AND NOT (runner = ? AND idempotency_key = ?)`, now, in.TaskID, now, p.RunnerID, in.IdempotencyKey)
				}, func() (*api.ClaimTaskOutput, error) { return inner.ClaimTask(ctx, in) },
					func(out *api.ClaimTaskOutput) time.Time { return out.ExecutionCredential.ExpiresAt })
			}}
		}),
	},
	{
		name:     "replica-discussion-claim-in-memory",
		breaks:   `server/README.md: claim_discussion`,
		rule:     "claim_discussion (reference): one live discussion claim per agent and turn; this server knows the live claims by its own memory (its claims one at a time, by an in-process lock), and expires the others in the database before it claims, so a claim on another replica under a new key is granted",
		explore:  []conformance.Profile{conformance.Reference},
		replicas: 2,
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			live, db := worldLive(w), w.openDB()
			return &wrapped{claimDiscussion: func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
				p := caller(ctx)
				if p == nil {
					return inner.ClaimDiscussion(ctx, in)
				}
				return claimInMemory(live, "message "+in.MessageID+" "+p.Agent, func(now int64) {
					exec(db, `UPDATE discussion_claims SET live_until = ? WHERE message = ? AND agent = ? AND superseded_at IS NULL
						AND replied_at IS NULL AND live_until > ? AND NOT (runner = ? AND idempotency_key = ?)`,
						now, in.MessageID, p.Agent, now, p.RunnerID, in.IdempotencyKey)
				}, func() (*api.ClaimDiscussionOutput, error) { return inner.ClaimDiscussion(ctx, in) },
					func(out *api.ClaimDiscussionOutput) time.Time { return out.DiscussionCredential.ExpiresAt })
			}}
		}),
	},
	{
		name:     "replica-credential-cache",
		breaks:   `server/README.md: claim_task`,
		rule:     "a replay revokes the earlier credential (reference); this server caches the principals of the tokens it authenticated, and only its own claims evict them, so a credential replaced on another replica still works here",
		explore:  []conformance.Profile{conformance.Reference},
		replicas: 2,
		auth: func(w *scene) func(authenticate) authenticate {
			c := w.principals()
			return func(next authenticate) authenticate {
				return func(ctx context.Context, h store.TokenHash) (*store.Principal, error) {
					if p, ok := c.get(h); ok {
						return p, nil
					}
					gen := c.generation()
					p, err := next(ctx, h)
					if err == nil {
						c.put(h, *p, gen)
					}
					return p, err
				}
			}
		},
		handler: handlerMutant(func(w *scene, inner api.Handler) *wrapped {
			c := w.principals()
			return &wrapped{
				claimTask: func(ctx context.Context, in *api.ClaimTaskInput) (*api.ClaimTaskOutput, error) {
					out, err := inner.ClaimTask(ctx, in)
					if err == nil { // its replay or newer claim revoked the task's earlier credentials
						c.evict(func(p *store.Principal) bool { return p.Scope.TaskID == in.TaskID })
					}
					return out, err
				},
				claimDiscussion: func(ctx context.Context, in *api.ClaimDiscussionInput) (*api.ClaimDiscussionOutput, error) {
					out, err := inner.ClaimDiscussion(ctx, in)
					if err == nil {
						c.evict(func(p *store.Principal) bool { return p.Scope.MessageID == in.MessageID })
					}
					return out, err
				},
			}
		}),
	},
}

// caller is the principal of a tool call.
func caller(ctx context.Context) *store.Principal {
	if ti := rt.TokenInfoFrom(ctx); ti != nil {
		p, _ := ti.Extra["prickle.principal"].(*store.Principal)
		return p
	}
	return nil
}

// openDB opens a connection of the mutant's own to the database the
// replicas share, closed with the replica.
func (w *scene) openDB() *sql.DB {
	db, err := sql.Open("sqlite", w.db+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return nil
	}
	db.SetMaxOpenConns(1)
	w.closers = append(w.closers, func() { db.Close() })
	return db
}

// exec runs a statement on db (a failure is the statement's effect
// missing: the mutant is then the reference server for that call).
func exec(db *sql.DB, query string, args ...any) {
	if db != nil {
		_, _ = db.Exec(query, args...)
	}
}

// liveness is what a replica believes is live: for each key, until when.
// It believes whatever it cannot date live for ever, so that as one
// process it never believes less than the database holds; and its claims
// of a key take the key's lock in turn, so that as one process none
// believes what another is changing.
type liveness struct {
	mu    sync.Mutex
	until map[string]time.Time
	locks map[string]*sync.Mutex
}

// lock takes k's lock, and returns its unlock.
func (l *liveness) lock(k string) func() {
	l.mu.Lock()
	m := l.locks[k]
	if m == nil {
		m = &sync.Mutex{}
		l.locks[k] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// worldLive is what replica w believes live of its world: the attempts
// and discussion claims the world gives, not superseded.
func worldLive(w *scene) *liveness {
	l := &liveness{until: map[string]time.Time{}, locks: map[string]*sync.Mutex{}}
	fx, err := world.Decode(w.fixture)
	if err != nil {
		return l
	}
	forever := time.Now().AddDate(100, 0, 0)
	when := func(t world.Time) time.Time {
		if v, err := time.Parse(time.RFC3339Nano, string(t)); err == nil {
			return v
		}
		return forever
	}
	for _, a := range fx.Attempts {
		if !a.Superseded {
			l.extend("task "+a.Task, when(a.LiveUntil))
		}
	}
	agentOf := map[string]string{}
	for _, r := range fx.Runners {
		agentOf[r.ID] = r.Agent
	}
	for _, c := range fx.DiscussionClaims {
		if !c.Superseded {
			l.extend("message "+c.Message+" "+agentOf[c.Runner], when(c.LiveUntil))
		}
	}
	return l
}

func (l *liveness) holds(k string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Now().Before(l.until[k])
}

func (l *liveness) extend(k string, t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.After(l.until[k]) {
		l.until[k] = t
	}
}

// claimInMemory makes a claim under k, as a replica that knows what is
// live by its own memory: under k's lock, it expires the others' claims
// in the database (expire, given the time now) unless it believes one
// live, then claims; a granted claim is live until its credential
// expires (until).
func claimInMemory[T any](live *liveness, k string, expire func(now int64), claim func() (T, error), until func(T) time.Time) (T, error) {
	defer live.lock(k)()
	if !live.holds(k) {
		expire(time.Now().UnixNano())
	}
	out, err := claim()
	if err == nil {
		live.extend(k, until(out))
	}
	return out, err
}

// principalCache is a replica's cache of the principals of the tokens it
// authenticated. A lookup that started before an eviction is not cached
// after it (the generation), so as one process it never holds a revoked
// credential.
type principalCache struct {
	mu  sync.Mutex
	gen uint64
	m   map[store.TokenHash]store.Principal
}

// principals is replica w's cache, which its mutant's wrappers share.
func (w *scene) principals() *principalCache {
	if w.cache == nil {
		w.cache = &principalCache{m: map[store.TokenHash]store.Principal{}}
	}
	return w.cache
}

func (c *principalCache) get(h store.TokenHash) (*store.Principal, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[h]
	if !ok || p.ExpiresAt != nil && !time.Now().Before(*p.ExpiresAt) {
		return nil, false
	}
	return &p, true
}

func (c *principalCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *principalCache) put(h store.TokenHash, p store.Principal, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen {
		c.m[h] = p
	}
}

// evict forgets the principals drop holds for, after a claim that
// revoked them.
func (c *principalCache) evict(drop func(*store.Principal) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for h, p := range c.m {
		if drop(&p) {
			delete(c.m, h)
		}
	}
}
