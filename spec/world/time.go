package world

import (
	"fmt"
	"regexp"
	"time"
)

// Time is a time of a world: an RFC 3339 date-time, as the pages write
// every time ("2026-05-01T12:00:00Z"), or, in a world not yet
// materialized, one relative to the moment it is: "now", "now-3h",
// "now+10m" (a Go duration after the sign). The zero Time is no time: the
// field is absent or null, and takes its default.
type Time string

var relTimeRe = regexp.MustCompile(`^now(?:([+-])([0-9][0-9a-z.]*))?$`)

// IsRelative reports whether t is relative to the moment of
// materializing.
func (t Time) IsRelative() bool { return relTimeRe.MatchString(string(t)) }

// Resolve returns the instant t names, a relative time counting from now.
func (t Time) Resolve(now time.Time) (time.Time, error) {
	m := relTimeRe.FindStringSubmatch(string(t))
	if m == nil {
		return time.Parse(time.RFC3339Nano, string(t))
	}
	if m[1] == "" {
		return now, nil
	}
	d, err := time.ParseDuration(m[2])
	if err != nil {
		return time.Time{}, fmt.Errorf("relative time %q: %w", string(t), err)
	}
	if m[1] == "-" {
		d = -d
	}
	return now.Add(d), nil
}

// times yields every time of w, to resolve or check them in turn.
func (w *World) times(yield func(*Time) bool) {
	for i := range w.Agents {
		if !yield(&w.Agents[i].LastSeenAt) {
			return
		}
	}
	for i := range w.Messages {
		if !yield(&w.Messages[i].CreatedAt) {
			return
		}
	}
	for i := range w.Turns {
		if !yield(&w.Turns[i].ExpiresAt) {
			return
		}
	}
	for i := range w.Attempts {
		if !yield(&w.Attempts[i].ClaimedAt) || !yield(&w.Attempts[i].LiveUntil) {
			return
		}
	}
	for i := range w.DiscussionClaims {
		if !yield(&w.DiscussionClaims[i].ClaimedAt) || !yield(&w.DiscussionClaims[i].LiveUntil) {
			return
		}
	}
}

// Materialize makes w a world to hand to a server: every agent and runner
// gets a fresh token from mint, whatever w gave it, so that only a server
// that loaded this world knows them; and every relative time is resolved
// against now and written in RFC 3339, in UTC, to the second. It returns
// the tokens, in the order of a tokens file (Tokens).
func (w *World) Materialize(now time.Time, mint func() string) ([]Token, error) {
	for i := range w.Agents {
		w.Agents[i].Token = mint()
	}
	for i := range w.Runners {
		w.Runners[i].Token = mint()
	}
	for t := range w.times {
		if !t.IsRelative() {
			continue
		}
		at, err := t.Resolve(now)
		if err != nil {
			return nil, w.Errorf(t, "%w", err)
		}
		*t = Time(at.UTC().Format(time.RFC3339))
	}
	return w.Tokens(), nil
}
