package ecmaregex

import (
	"fmt"
	"testing"
)

// Remembered matches give the answers the matcher gives, the second time
// as the first, and the cache stays bounded.
func TestMatchCache(t *testing.T) {
	r := MustCompile(projectPattern)
	long := "a" + string(make([]byte, matchCacheMaxLen)) // not remembered
	for range 2 {
		for in, want := range map[string]bool{"website-v2": true, "a": true, "-a": false, "a-": false, "a--b": false, long: false} {
			if got, err := r.MatchString(in); got != want || err != nil {
				t.Errorf("MatchString(%.20q) = %v, %v; want %v", in, got, err, want)
			}
		}
	}
	if _, hit := r.matches.get("website-v2"); !hit {
		t.Error("a match was not remembered")
	}
	if _, hit := r.matches.get(long); hit {
		t.Error("a string over matchCacheMaxLen was remembered")
	}
	for i := range matchCacheEntries + 10 {
		r.MatchString(fmt.Sprintf("p%d", i))
	}
	r.matches.mu.RLock()
	n := len(r.matches.m)
	r.matches.mu.RUnlock()
	if n > matchCacheEntries {
		t.Errorf("cache holds %d entries, want at most %d", n, matchCacheEntries)
	}
}
