package store

import (
	"sync"
	"sync/atomic"
	"time"
)

// The store keeps two small read caches in memory, both of data that only
// changes through the Store's own rare operations:
//
//   - the principals of agent and runner tokens, by token hash, because
//     Authenticate runs on every HTTP request (RevokeToken and RevokeRunner
//     invalidate it); execution and discussion credentials are never
//     cached, since claims replace and revoke them all the time;
//   - each project's team directory (its people, their agents) and each
//     person's memberships (the projects whose directory its agents may
//     see) for discover_team_agents (loading a world invalidates them; no
//     tool changes people, agents or memberships).
//
// Changes made through the Store take effect at once. On SQLite, cacheTTL
// bounds how late a change made behind the Store's back (another process
// on the same database file, hand-written SQL) is seen. On PostgreSQL the
// stores of one database tell each other of their changes (postgres.go),
// and cacheTTL bounds only what a notification lost in flight could keep.
const cacheTTL = time.Second

// cacheMax bounds the entries of each cache; a full cache is emptied. Only
// what the database confirmed is cached (valid tokens, projects with
// members, the memberships of authenticated callers' owners), so unknown
// keys cannot grow it.
const cacheMax = 10000

// genCache maps keys to values read from the database, each trusted for
// cacheTTL. A lookup that missed reads the database and offers its result
// with the generation it started under: put drops it if the cache was
// invalidated in between, so a value read before a change is never cached
// after it.
type genCache[K comparable, V any] struct {
	// on, when set, says whether the cache may be used now: a PostgreSQL
	// store keeps its caches only while it hears other stores' changes
	// (postgres.go). Nil means always.
	on  *atomic.Bool
	mu  sync.Mutex
	gen uint64
	m   map[K]cacheEntry[V]
	now func() time.Time // nil means time.Now; tests move it past the TTL
}

type cacheEntry[V any] struct {
	v     V
	until time.Time // wall clock (monotonic), not the store's clock
}

// get returns the value for k, if cached and fresh, and the current
// generation for a later put.
func (c *genCache[K, V]) get(k K) (v V, ok bool, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on != nil && !c.on.Load() {
		return v, false, c.gen
	}
	e, ok := c.m[k]
	if ok && !c.clock().Before(e.until) {
		delete(c.m, k)
		ok = false
	}
	return e.v, ok, c.gen
}

// put caches v for k unless the cache was invalidated since gen.
func (c *genCache[K, V]) put(k K, v V, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || c.on != nil && !c.on.Load() {
		return
	}
	if c.m == nil || len(c.m) >= cacheMax {
		c.m = make(map[K]cacheEntry[V])
	}
	c.m[k] = cacheEntry[V]{v: v, until: c.clock().Add(cacheTTL)}
}

// invalidate forgets every entry. The operations that change what a cache
// holds call it after their write.
func (c *genCache[K, V]) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.m = nil
}

func (c *genCache[K, V]) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}
