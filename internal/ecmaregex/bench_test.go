package ecmaregex

// Benchmarks of one match, on patterns of the bundled pages and values
// they see, by this package (RE2 where it can) and by regexp2 on the
// pattern as written (how patterns ran before this package):
//
//	go test ./internal/ecmaregex -run '^$' -bench . -benchmem
//
// errors/op counts the matches that timed out (on regexp2, a spurious
// timeout on a loaded machine; here, one that timed out three times).

import (
	"testing"

	"github.com/dlclark/regexp2"
)

var benchPatterns = []struct{ name, pattern, s string }{
	{"id", `^[A-Za-z0-9_-]+$`, "example-message-id"},
	{"slug", projectPattern, "website-v2"},
	{"date-time", `^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$`, "2026-05-01T12:15:00.123Z"},
}

func BenchmarkMatch(b *testing.B) {
	for _, c := range benchPatterns {
		b.Run(c.name+"/ecmaregex", func(b *testing.B) {
			benchMatch(b, MustCompile(c.pattern).MatchString, c.s)
		})
		b.Run(c.name+"/regexp2", func(b *testing.B) {
			re := regexp2.MustCompile(c.pattern, regexp2.ECMAScript)
			re.MatchTimeout = MatchTimeout
			benchMatch(b, re.MatchString, c.s)
		})
	}
}

func benchMatch(b *testing.B, match func(string) (bool, error), s string) {
	b.ReportAllocs()
	errs := 0
	for b.Loop() {
		ok, err := match(s)
		if err != nil {
			errs++
		} else if !ok {
			b.Fatal("no match")
		}
	}
	b.ReportMetric(float64(errs)/float64(b.N), "errors/op")
}

func BenchmarkCompile(b *testing.B) {
	for _, c := range benchPatterns {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := compile(c.pattern); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
