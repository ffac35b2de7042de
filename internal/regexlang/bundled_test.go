package regexlang_test

import (
	"testing"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/internal/regexlang"
	"github.com/prickle-dev/prickle/spec"
)

// Every pattern of the bundled pages equals itself, or is unknown for a
// lookahead.
func TestBundledPatterns(t *testing.T) {
	sp, err := spec.LoadBundled()
	if err != nil {
		t.Fatal(err)
	}
	pats := map[string]bool{}
	for _, tool := range sp.Tools {
		for _, b := range []*spec.JSONBlock{tool.InputSchema, tool.OutputSchema} {
			b.Schema().Walk(func(s *jsonschema.Schema) {
				if p, ok := s.String("pattern"); ok {
					pats[p] = true
				}
				for _, m := range s.Members("patternProperties") {
					pats[m.Name] = true
				}
			})
		}
	}
	if len(pats) == 0 {
		t.Fatal("found no pattern in the bundled pages")
	}
	for p := range pats {
		r := regexlang.Compare(p, p)
		_, err := ecmaregex.Translate(p)
		switch {
		case err == nil && r.Relation != regexlang.Equal:
			t.Errorf("%s -> itself: %v %s", p, r.Relation, r.Reason)
		case err != nil && r.Relation != regexlang.Unknown:
			t.Errorf("%s -> itself: %v, though RE2 cannot express it", p, r.Relation)
		}
	}
}
