package schemacompile

import (
	"testing"
	"unicode/utf8"

	"github.com/prickle-dev/prickle/internal/validation"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// formatSeeds are strings at the edges of the formats: valid, one
// character off, and of the other formats.
var formatSeeds = []string{
	"", "a", "-", ".", "x.", "/", "~", "/a~0b/~1c", "/a~", "/~2", "0", "01", "1#", "1/a", "0/a~x",
	"00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-00000000000g", "0000000-0000-4000-8000-000000000000", "a-b-c",
	"P1D", "P", "PT", "P1W", "PW", "P1DW", "P1Y2M3DT4H5M6S", "P1M1Y", "PT1H1D", "P1X", "P1", "PT1H2T3S", "P1DT",
	"192.0.2.1", "192.0.2", "192.0.2.256", "01.0.2.1", "1.2.3.-4", "+1.2.3.4", "1..2.3",
	"2001:db8::1", "::", "::ffff:192.0.2.1", "fe80::1%eth0", "2001:db8:::1", "2001:db8::g", "1.2.3.4:5",
	"example.com", "example.com.", "-a.com", "a-.com", "a_b.com", "a..b", "xn--bcher-kva.example",
	"user@example.com", "user", "@example.com", `"a b"@example.com`, `"a\"b"@example.com`, ".a@b.c", "a.@b.c",
	"a..b@c.d", "a@[192.0.2.1]", "a@[IPv6:2001:db8::1]", "a@[IPv6:x]", "a@[1.2.3]", "a(b)@c.d", "é@x.y",
	"2026-01-15", "2026-02-29", "2024-02-29", "2026-13-01", "2026-1-01", "26-01-15", "2026-01-15x",
	"09:30:00Z", "09:30:00.5+01:00", "23:59:60Z", "22:59:60Z", "23:59:60+01:00", "00:59:60+01:00", "24:00:00Z",
	"09:30:00", "09:30:00.Z", "09:30:00+1:00", "09:30:00+01-00", "09:30:00 01:00", "9:30:00Z", "09:30:0aZ",
	"09:30:00+24:00", "09:30:00-00:60", "+9:30:00Z", "09:-3:00Z",
	"2026-01-15T09:30:00Z", "2026-01-15t09:30:00z", "2026-01-15 09:30:00Z", "2026-01-15T09:30:00", "2026-01-15T09:30:00.123456789+05:30",
	"2026-02-30T09:30:00Z", "2026-01-15T25:30:00Z", "2026-01-15T09:30:00+05:3", "10000-01-15T09:30:00Z",
	"https://example.com/", "https://example.com/a b", "example.com", "mailto:a@b.c", "http://[::1]:80/", "http://::1/",
	"http://[fe80::1%25eth0]/", "http://[::g]/", "//example.com", "a:b", "%zz", "http://a/%zz", `http://a/b\c`, "#frag", "?q",
	"http://example.com/{id}", "http://example.com/{a{b}}", "http://example.com/}a{", "http://example.com/{a", "http://a/%7Bx%7D", "http://a/%7B%7B",
	"^a$", "(", "[a-", "a{2,1}", "(?=x)", "\\p{L}", "\\", "a**",
	"1.0.0", "1.0", "01.0.0", "1.0.0-alpha", "1.0.0-alpha.01", "1.0.0-", "1.0.0+build.1", "1.0.0+", "1.0.0+a..b", "1.0.0-a_b", "1.a.0", "1.0.0-0a",
	"2026-01-15T09:30:00Z/P1D", "P1D/2026-01-15T09:30:00Z", "2026-01-15T09:30:00Z/2026-01-16T09:30:00Z", "P1D/P2D", "x/y", "2026-01-15T09:30:00Z",
}

// theirs compiles {"format": name} with the library's own format checks.
func theirs(t testing.TB, name string) *jsonschema.Schema {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseRegexpEngine(ecmaEngine)
	c.AssertFormat()
	if err := c.AddResource("prickle:f", map[string]any{"format": name}); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("prickle:f")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sameFormat requires the format check of name to judge s as the
// library's does, with the same message.
func sameFormat(t *testing.T, name string, lib *jsonschema.Schema, s string) {
	t.Helper()
	var want string
	if err := lib.Validate(s); err != nil {
		vs := Violations(err)
		if len(vs) != 1 {
			t.Fatalf("%s %q: %v", name, s, vs)
		}
		want = vs[0].Message
	}
	var got string
	if err := validation.Format(name)(s); err != nil {
		got = validation.FormatMessage(s, name, err)
	}
	if got != want {
		t.Errorf("format %s of %q:\n ours:    %q\n library: %q", name, s, got, want)
	}
}

// Every format check says what the library says of every seed.
func TestFormatsMatchTheLibrary(t *testing.T) {
	for _, name := range validation.FormatNames() {
		lib := theirs(t, name)
		for _, s := range formatSeeds {
			sameFormat(t, name, lib, s)
		}
	}
	// What the library does not know, it does not assert; neither do we.
	if validation.Format("color") != nil || validation.Format("idn-email") != nil {
		t.Error("a format the library does not assert is asserted")
	}
}

// FuzzFormats: the format checks against the library's, on any string.
func FuzzFormats(f *testing.F) {
	names := validation.FormatNames()
	for i, s := range formatSeeds {
		f.Add(uint8(i), s)
	}
	libs := map[string]*jsonschema.Schema{}
	for _, n := range names {
		libs[n] = theirs(f, n)
	}
	f.Fuzz(func(t *testing.T, which uint8, s string) {
		if !utf8.ValidString(s) {
			return // a document with invalid UTF-8 is refused before any format
		}
		name := names[int(which)%len(names)]
		sameFormat(t, name, libs[name], s)
	})
}
