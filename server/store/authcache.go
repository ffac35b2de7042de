package store

import (
	"sync"
	"time"
)

// authCacheTTL bounds how long a cached agent or runner principal is
// trusted without asking the database again. Revocations made through this
// Store take effect at once (they clear the cache); the TTL only bounds how
// late a change made behind the Store's back (another process on the same
// database file, hand-written SQL) is seen.
const authCacheTTL = time.Second

// authCacheMax bounds the number of cached principals; the cache is
// emptied when it is full. Only valid tokens are cached, so unknown tokens
// cannot grow it.
const authCacheMax = 10000

// authCache remembers the principals of agent and runner tokens by token
// hash, so that the token lookup that runs on every HTTP request does not
// query the database each time. Execution and discussion credentials are
// never cached: claims replace and revoke them all the time.
//
// A lookup that missed reads the database and then offers its result with
// the generation it started under; put drops it if a revocation happened
// in between, so a stale principal is never cached.
type authCache struct {
	mu  sync.Mutex
	gen uint64
	m   map[[32]byte]authEntry
	now func() time.Time // nil means time.Now; tests move it past the TTL
}

type authEntry struct {
	p     Principal
	until time.Time // wall clock (monotonic), not the store's clock
}

// get returns a copy of the cached principal for hash, if any and fresh,
// and the current generation for a later put.
func (c *authCache) get(hash [32]byte) (*Principal, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	if !ok {
		return nil, c.gen
	}
	if !c.clock().Before(e.until) {
		delete(c.m, hash)
		return nil, c.gen
	}
	p := e.p
	return &p, c.gen
}

// put caches p for hash unless the cache was invalidated since gen.
func (c *authCache) put(hash [32]byte, p *Principal, gen uint64) {
	if p.Kind != KindAgent && p.Kind != KindRunner {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.m == nil || len(c.m) >= authCacheMax {
		c.m = make(map[[32]byte]authEntry)
	}
	c.m[hash] = authEntry{p: *p, until: c.clock().Add(authCacheTTL)}
}

func (c *authCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// invalidate forgets every cached principal. Every operation that can
// revoke an agent or runner token calls it after its write.
func (c *authCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.m = nil
}
