package specdiff

import (
	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/internal/regexlang"
)

// comparePattern grades a changed pattern by the languages of the old
// and the new regular expression; op and np place the change, oc and nc
// are the patterns as shown.
func (w *walker) comparePattern(old, new, op, np, oc, nc string) {
	r := regexlang.Compare(old, new)
	quote := func(s *string) string { return shorten(jsonschema.Quote(*s)) }
	switch r.Relation {
	case regexlang.Equal:
		w.add(KindPatternRewritten, np, op, np, "pattern rewritten from %s to %s: the same strings match", oc, nc)
	case regexlang.Widened:
		w.add(KindPatternWidened, np, op, np, "pattern widened from %s to %s: %s now matches", oc, nc, quote(r.Gained))
	case regexlang.Narrowed:
		w.add(KindPatternNarrowed, np, op, np, "pattern narrowed from %s to %s: %s no longer matches", oc, nc, quote(r.Lost))
	case regexlang.Incomparable:
		w.add(KindPatternChanged, np, op, np, "pattern changed from %s to %s: %s now matches, %s no longer does", oc, nc, quote(r.Gained), quote(r.Lost))
	default:
		w.add(KindPatternUnknown, np, op, np, "pattern changed from %s to %s; compatibility unknown: %s", oc, nc, r.Reason)
	}
}
