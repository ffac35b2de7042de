package conformance

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// Materializing a fixture
//
// The suite hands every server a fixture in the format of
// server/store/FIXTURE.md (version 1). Before it does, it rewrites two
// things, so that every run is isolated and every saved script can be run
// again later:
//
//   - every agent and runner gets a fresh random token, whatever the
//     script's fixture says (or whether it says anything): a run can only
//     be answered by a server that loaded this run's world;
//   - a time field (fixtureTimeFields) may be written relative to the
//     moment the fixture is materialized: "now", "now-3h", "now+10m". It is
//     replaced by that instant in RFC 3339. The same "now" is what
//     `time PATH == now-3h` compares with in the script.
//
// Servers only ever see plain version-1 fixtures.

// fixtureTimeFields are the fields of FIXTURE.md that hold times.
var fixtureTimeFields = map[string]bool{
	"claimed_at": true, "live_until": true, "expires_at": true, "created_at": true, "last_seen_at": true,
}

var relTimeRe = regexp.MustCompile(`^now(?:([+-])([0-9][0-9a-z.]*))?$`)

// resolveRelTime resolves "now", "now-3h", "now+10m" against now. ok is
// false when s is not of that form.
func resolveRelTime(s string, now time.Time) (time.Time, bool, error) {
	m := relTimeRe.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false, nil
	}
	if m[1] == "" {
		return now, true, nil
	}
	d, err := time.ParseDuration(m[2])
	if err != nil {
		return time.Time{}, true, fmt.Errorf("relative time %q: %w", s, err)
	}
	if m[1] == "-" {
		d = -d
	}
	return now.Add(d), true, nil
}

// newFixtureToken returns a fresh random bearer token for a fixture's agent
// or runner.
func newFixtureToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("conformance: random token: %v", err)) // crypto/rand does not fail on supported platforms
	}
	return "prk_conformance_" + hex.EncodeToString(b[:])
}

// materializeFixture returns src with fresh tokens for every agent and
// runner and its relative times resolved against now, and the tokens.
func materializeFixture(src []byte, now time.Time) ([]byte, []Token, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var w map[string]any
	if err := dec.Decode(&w); err != nil {
		return nil, nil, fmt.Errorf("fixture: %w", err)
	}
	if w == nil {
		return nil, nil, fmt.Errorf("fixture: not a JSON object")
	}
	for _, section := range []string{"agents", "runners"} {
		list, _ := w[section].([]any)
		for i, e := range list {
			obj, ok := e.(map[string]any)
			if !ok {
				return nil, nil, fmt.Errorf("fixture: $.%s[%d]: not an object", section, i)
			}
			obj["token"] = newFixtureToken()
		}
	}
	var walk func(path string, v any) error
	walk = func(path string, v any) error {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && fixtureTimeFields[k] {
					t, rel, err := resolveRelTime(s, now)
					if err != nil {
						return fmt.Errorf("fixture: %s.%s: %w", path, k, err)
					}
					if rel {
						x[k] = t.UTC().Format(time.RFC3339)
					}
					continue
				}
				if err := walk(path+"."+k, e); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range x {
				if err := walk(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk("$", w); err != nil {
		return nil, nil, err
	}
	out, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("fixture: %w", err)
	}
	out = append(out, '\n')
	toks, err := TokensFromFixture(out)
	if err != nil {
		return nil, nil, err
	}
	return out, toks, nil
}

// fixtureNow is the instant a fixture is materialized at: whole seconds, so
// that a server storing times to the second reads back exactly what it was
// given.
func fixtureNow() time.Time { return time.Now().UTC().Truncate(time.Second) }
