package ecmaregex

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dlclark/regexp2"
)

// MatchTimeout bounds one match on the backtracking engine, which a
// hostile input could otherwise stall (ReDoS). RE2 matches in linear time
// and needs no bound.
const MatchTimeout = 100 * time.Millisecond

// matchAttempts bounds the tries of one backtracking match that times out.
const matchAttempts = 3

// Regexp is a compiled ECMA-262 pattern. It is safe for concurrent use.
type Regexp struct {
	src     string
	re2     *regexp.Regexp  // the pattern in RE2 syntax, when RE2 can express it
	bt      *regexp2.Regexp // else regexp2
	btSrc   string          // the pattern in regexp2's syntax
	why     string          // why the pattern runs on regexp2
	matches matchCache
}

// NotRegularError reports a pattern RE2 cannot express: it has a
// lookaround or a backreference, or a repeat count beyond RE2's bound.
type NotRegularError struct {
	Pattern string
	Reason  string // e.g. "a lookahead at character 12"
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("pattern `%s` is beyond RE2: %s", e.Pattern, e.Reason)
}

// Translate returns src in the syntax of Go's regexp package (RE2), with
// the meaning ECMA-262 gives it (see the package documentation). It
// returns a *SyntaxError for an invalid pattern and a *NotRegularError for
// one RE2 cannot express.
func Translate(src string) (string, error) {
	n, serr := parse(src)
	if serr != nil {
		return "", serr
	}
	re2, _, err := toRE2(src, n)
	return re2, err
}

// toRE2 translates a parsed pattern and compiles it with Go's regexp.
func toRE2(src string, n *node) (string, *regexp.Regexp, error) {
	if b := blocker(n); b != nil {
		return "", nil, &NotRegularError{Pattern: src, Reason: fmt.Sprintf("%s at character %d", describe(b), runeIndex(src, b.pos)+1)}
	}
	s := re2Syntax(n)
	re, err := regexp.Compile(s)
	if err != nil {
		// A repeat count above 1000, or too large a program.
		return "", nil, &NotRegularError{Pattern: src, Reason: "a repeat count or a size beyond RE2's limits"}
	}
	return s, re, nil
}

func runeIndex(s string, off int) int {
	n := 0
	for i := range s {
		if i >= off {
			break
		}
		n++
	}
	return n
}

// Compile compiles an ECMA-262 pattern. What RE2 can express runs on Go's
// regexp; a pattern with a lookaround or a backreference runs on regexp2,
// given the pattern as this package reads it. The error is a *SyntaxError
// for a pattern that is not valid.
func Compile(src string) (*Regexp, error) {
	if v, ok := cache.get(src); ok {
		return v.re, v.err
	}
	re, err := compile(src)
	if len(src) <= maxCachedLen {
		cache.put(src, compiled{re, err})
	}
	return re, err
}

func compile(src string) (*Regexp, error) {
	n, serr := parse(src)
	if serr != nil {
		return nil, serr
	}
	_, re, err := toRE2(src, n)
	if err == nil {
		return &Regexp{src: src, re2: re}, nil
	}
	bt, err2 := regexp2.Compile(backtrackSyntax(n), regexp2.ECMAScript)
	if err2 != nil {
		return nil, &SyntaxError{Pattern: src, Msg: fmt.Sprintf("cannot be matched: %v", err2), Unsupported: true}
	}
	bt.MatchTimeout = MatchTimeout
	return &Regexp{src: src, bt: bt, btSrc: backtrackSyntax(n), why: err.(*NotRegularError).Reason}, nil
}

// MustCompile is Compile for patterns known to be valid; it panics on an
// error.
func MustCompile(src string) *Regexp {
	re, err := Compile(src)
	if err != nil {
		panic(err)
	}
	return re
}

// String returns the pattern as written.
func (r *Regexp) String() string { return r.src }

// Backtracking reports whether the pattern runs on regexp2, and why (RE2
// cannot express it).
func (r *Regexp) Backtracking() (bool, string) { return r.bt != nil, r.why }

// TimeoutError reports a match that did not finish within MatchTimeout,
// in any of its attempts: the string was neither matched nor refused. It
// never quotes the string.
type TimeoutError struct {
	Pattern  string
	Timeout  time.Duration
	Attempts int
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("pattern `%s` did not finish matching within %v (attempts: %d)", e.Pattern, e.Timeout, e.Attempts)
}

// MatchString reports whether the pattern matches somewhere in s, as
// JSON Schema's pattern keyword asks (patterns are not anchored). The
// error is a *TimeoutError, only ever from the backtracking engine. A
// timeout is tried again, up to matchAttempts times: one that fired early
// (regexp2's shared clock lagging on a loaded machine) or late (this
// goroutine starved of CPU) usually does not fire twice, while a match
// that is truly slow times out every time, so its cost stays bounded.
func (r *Regexp) MatchString(s string) (bool, error) {
	if ok, hit := r.matches.get(s); hit {
		return ok, nil
	}
	ok, err := r.match(s)
	if err == nil {
		r.matches.put(s, ok)
	}
	return ok, err
}

// Match is MatchString for a string held as bytes; it keeps no reference
// to b.
func (r *Regexp) Match(b []byte) (bool, error) {
	if ok, hit := r.matches.getBytes(b); hit {
		return ok, nil
	}
	if r.re2 != nil {
		ok := r.re2.Match(b)
		r.matches.putBytes(b, ok)
		return ok, nil
	}
	s := string(b)
	ok, err := r.match(s)
	if err == nil {
		r.matches.put(s, ok)
	}
	return ok, err
}

func (r *Regexp) match(s string) (bool, error) {
	if r.re2 != nil {
		return r.re2.MatchString(s), nil
	}
	for attempt := 1; ; attempt++ {
		bt := r.bt
		if starveAttempt() {
			bt = regexp2.MustCompile(r.btSrc, regexp2.ECMAScript)
			bt.MatchTimeout = staleDeadline
		}
		ok, err := bt.MatchString(s)
		if err == nil {
			return ok, nil
		}
		if attempt == matchAttempts {
			return false, &TimeoutError{Pattern: r.src, Timeout: MatchTimeout, Attempts: attempt}
		}
		runtime.Gosched() // let the clock goroutine run
	}
}

// Bounds of a matchCache.
const (
	matchCacheEntries = 4096 // entries per pattern; a full cache starts over
	matchCacheMaxLen  = 256  // longer strings are matched, not remembered
)

// matchCache remembers whether strings matched one pattern. A validator
// sees the same ids, handles, agent ids and tool names call after call,
// and a match costs from a hundred nanoseconds (RE2) to microseconds
// (regexp2); a map lookup costs less. The result of a match depends only
// on the pattern and the string, so a remembered result is the result the
// match would give (timed-out matches are never remembered).
type matchCache struct {
	mu sync.RWMutex
	m  map[string]bool
}

func (c *matchCache) get(s string) (ok, hit bool) {
	if len(s) > matchCacheMaxLen {
		return false, false
	}
	c.mu.RLock()
	ok, hit = c.m[s]
	c.mu.RUnlock()
	return ok, hit
}

// getBytes is get for a string held as bytes.
func (c *matchCache) getBytes(b []byte) (ok, hit bool) {
	if len(b) > matchCacheMaxLen {
		return false, false
	}
	c.mu.RLock()
	ok, hit = c.m[string(b)]
	c.mu.RUnlock()
	return ok, hit
}

// putBytes is put for a string held as bytes: the key is a copy.
func (c *matchCache) putBytes(b []byte, ok bool) {
	if len(b) <= matchCacheMaxLen {
		c.put(string(b), ok)
	}
}

func (c *matchCache) put(s string, ok bool) {
	if len(s) > matchCacheMaxLen {
		return
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= matchCacheEntries {
		c.m = make(map[string]bool)
	}
	c.m[s] = ok
	c.mu.Unlock()
}

// starve counts the backtracking match attempts StarveClock has yet to
// starve; negative: all of them.
var starve atomic.Int64

// staleDeadline, as a regexp2 MatchTimeout, puts the deadline before the
// clock's current reading when the match starts.
const staleDeadline = -time.Hour

// StarveClock makes the next n backtracking match attempts (every one,
// when n is negative) run as they do when the goroutine that advances
// regexp2's shared clock has been starved: the deadline is already behind
// the clock when the match starts, so its timeout fires at the first
// check however trivial the match. The function it returns ends the
// starvation. It exists for tests, in this module and others' packages,
// and must not run concurrently with other matches of the same test.
func StarveClock(n int) (restore func()) {
	starve.Store(int64(n))
	return func() { starve.Store(0) }
}

func starveAttempt() bool {
	for {
		n := starve.Load()
		switch {
		case n == 0:
			return false
		case n < 0:
			return true
		case starve.CompareAndSwap(n, n-1):
			return true
		}
	}
}

// IsTimeout reports whether err is or wraps a *TimeoutError.
func IsTimeout(err error) bool {
	var te *TimeoutError
	return errors.As(err, &te)
}

// compiled is a cached result of compile.
type compiled struct {
	re  *Regexp
	err error
}

// Bounds of the compile cache: patterns also come from instances (format
// "regex"), so a caller could otherwise grow it.
const (
	cacheEntries = 1024 // a full cache starts over
	maxCachedLen = 1024 // longer patterns are compiled, not remembered
)

// cache remembers compiled patterns: schemas repeat the same few.
var cache = &compileCache{}

type compileCache struct {
	mu sync.RWMutex
	m  map[string]compiled
}

func (c *compileCache) get(src string) (compiled, bool) {
	c.mu.RLock()
	v, ok := c.m[src]
	c.mu.RUnlock()
	return v, ok
}

func (c *compileCache) put(src string, v compiled) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= cacheEntries {
		c.m = make(map[string]compiled) // full: start over
	}
	c.m[src] = v
	c.mu.Unlock()
}
