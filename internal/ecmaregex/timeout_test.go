package ecmaregex

import (
	"errors"
	"strings"
	"testing"
)

const projectPattern = `^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$` // a lookahead: regexp2

// A starved clock makes regexp2 time out at once on a trivial match. That
// is an error, never "no match"; a single spurious timeout is retried.
func TestStarvedClock(t *testing.T) {
	re := MustCompile(projectPattern)
	if bt, _ := re.Backtracking(); !bt {
		t.Fatal("the project pattern should run on regexp2")
	}

	// Each case matches a string no test matched before: a remembered match
	// meets no clock.
	restore := StarveClock(-1)
	ok, err := re.MatchString("starved-1")
	restore()
	var te *TimeoutError
	if !errors.As(err, &te) || ok {
		t.Fatalf("starved clock: MatchString = %v, %v; want a *TimeoutError", ok, err)
	}
	if te.Attempts != matchAttempts {
		t.Errorf("%d attempts, want %d: timeouts are retried", te.Attempts, matchAttempts)
	}
	if strings.Contains(err.Error(), "starved-1") {
		t.Errorf("the error quotes the string: %v", err)
	}

	// One stale attempt, then a healthy clock: the retry answers.
	restore = StarveClock(1)
	ok, err = re.MatchString("starved-2")
	left := starve.Load()
	restore()
	if !ok || err != nil || left != 0 {
		t.Errorf("one spurious timeout: MatchString = %v, %v (%d starved attempts left); want true", ok, err, left)
	}

	// All but the last attempt stale: the last answers. As many stale
	// attempts as there are tries: an error.
	restore = StarveClock(matchAttempts - 1)
	ok, err = re.MatchString("starved-3")
	restore()
	if !ok || err != nil {
		t.Errorf("%d spurious timeouts: MatchString = %v, %v; want true", matchAttempts-1, ok, err)
	}
	restore = StarveClock(matchAttempts)
	ok, err = re.MatchString("starved-4")
	restore()
	if !errors.As(err, &te) || ok {
		t.Errorf("%d spurious timeouts: MatchString = %v, %v; want a *TimeoutError", matchAttempts, ok, err)
	}

	// What RE2 can express never meets the clock: the pattern of issue
	// 10's spurious refusal.
	defer StarveClock(-1)()
	if ok, err := MustCompile(`^[A-Za-z0-9_-]+$`).MatchString("example-message-id"); !ok || err != nil {
		t.Errorf("RE2 pattern under a starved clock: %v, %v", ok, err)
	}
}

// A match that is truly slow times out on every attempt: a *TimeoutError.
func TestCatastrophicMatchTimesOut(t *testing.T) {
	re := MustCompile(`^(?=x)(x+x+)+y$`)
	ok, err := re.MatchString(strings.Repeat("x", 40))
	var te *TimeoutError
	if !errors.As(err, &te) || ok {
		t.Fatalf("MatchString = %v, %v; want a *TimeoutError", ok, err)
	}
	if te.Attempts != matchAttempts {
		t.Errorf("%d attempts, want %d", te.Attempts, matchAttempts)
	}
}
