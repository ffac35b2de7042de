package regexlang

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
)

func TestSample(t *testing.T) {
	for _, c := range []struct {
		pattern   string
		min, max  int
		want      string
		wantErr   error
		undecided bool
	}{
		{`^[A-Za-z0-9_-]+$`, 1, 64, "a", nil, false},
		{`^[A-Za-z0-9_-]+$`, 5, 64, "aaaaa", nil, false},
		{`^[a-z0-9]+(?:-[a-z0-9]+)*$`, 3, 39, "aaa", nil, false},
		{`^\d{4}-\d{2}$`, 0, -1, "0000-00", nil, false},
		{`x`, 3, -1, "aax", nil, false}, // unanchored: anything around an x
		{`^ab$`, 3, 10, "", ErrEmpty, false},
		{`^[a-z]{5}$`, 0, 4, "", ErrEmpty, false},
		{`^(?=a)a$`, 0, -1, "", nil, true}, // lookahead: beyond RE2
	} {
		got, err := Sample(c.pattern, c.min, c.max)
		var ue *UndecidedError
		switch {
		case c.undecided:
			if !errors.As(err, &ue) {
				t.Errorf("Sample(%q) = %q, %v; want undecided", c.pattern, got, err)
			}
			continue
		case c.wantErr != nil:
			if !errors.Is(err, c.wantErr) {
				t.Errorf("Sample(%q, %d, %d) = %q, %v; want %v", c.pattern, c.min, c.max, got, err, c.wantErr)
			}
			continue
		case err != nil || got != c.want:
			t.Errorf("Sample(%q, %d, %d) = %q, %v; want %q", c.pattern, c.min, c.max, got, err, c.want)
			continue
		}
		re, err := ecmaregex.Compile(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := re.MatchString(got); !ok || err != nil {
			t.Errorf("Sample(%q) = %q, which the pattern does not match", c.pattern, got)
		}
		if n := utf8.RuneCountInString(got); n < c.min || (c.max >= 0 && n > c.max) {
			t.Errorf("Sample(%q) = %q: %d characters, want %d..%d", c.pattern, got, n, c.min, c.max)
		}
	}
}
