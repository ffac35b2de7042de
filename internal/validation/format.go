package validation

import (
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
)

// FormatCheck reports what is wrong with a string of one format, or nil.
type FormatCheck func(s string) error

// Format returns the check of the format name as the validators assert
// it, or nil for a name they do not assert (a format unknown to JSON
// Schema is an annotation). The checks judge and word a string as the
// compiled schemas (santhosh-tekuri/jsonschema) do; FuzzFormats holds
// them to it.
func Format(name string) FormatCheck {
	return formats[name]
}

// FormatNames are the formats the validators assert, sorted.
func FormatNames() []string { return slices.Sorted(maps.Keys(formats)) }

var formats = map[string]FormatCheck{
	"date":                  checkDate,
	"date-time":             checkDateTime,
	"duration":              checkDuration,
	"email":                 checkEmail,
	"hostname":              checkHostname,
	"ipv4":                  checkIPv4,
	"ipv6":                  checkIPv6,
	"iri":                   checkURI,
	"iri-reference":         checkURIReference,
	"json-pointer":          checkJSONPointer,
	"period":                checkPeriod,
	"regex":                 checkRegex,
	"relative-json-pointer": checkRelativeJSONPointer,
	"semver":                checkSemver,
	"time":                  checkTime,
	"uri":                   checkURI,
	"uri-reference":         checkURIReference,
	"uri-template":          checkURITemplate,
	"uuid":                  checkUUID,
}

// formatError is what a format check finds wrong, worded when it is made.
type formatError string

func (e formatError) Error() string { return string(e) }

func bad(format string, args ...any) error { return formatError(Printer.Sprintf(format, args...)) }

func isDigit(c rune) bool { return c >= '0' && c <= '9' }

// leadingDigits counts the ASCII digits s starts with.
func leadingDigits(s string) int {
	n := 0
	for n < len(s) && isDigit(rune(s[n])) {
		n++
	}
	return n
}

// checkJSONPointer: RFC 6901; every character is allowed but "~" not
// followed by 0 or 1.
func checkJSONPointer(s string) error {
	if s == "" {
		return nil
	}
	if s[0] != '/' {
		return bad("not starting with /")
	}
	for _, tok := range strings.Split(s[1:], "/") {
		for i := 0; i < len(tok); i++ {
			if tok[i] == '~' && (i+1 == len(tok) || tok[i+1] != '0' && tok[i+1] != '1') {
				return bad("~ must be followed by 0 or 1")
			}
			if tok[i] == '~' {
				i++
			}
		}
	}
	return nil
}

// checkRelativeJSONPointer: a non-negative integer, then "#" or a JSON
// pointer.
func checkRelativeJSONPointer(s string) error {
	n := leadingDigits(s)
	switch {
	case n == 0:
		return bad("must start with non-negative integer")
	case n > 1 && s[0] == '0':
		return bad("starts with zero")
	}
	if s[n:] == "#" {
		return nil
	}
	return checkJSONPointer(s[n:])
}

// checkUUID: five groups of 8, 4, 4, 4 and 12 hex digits.
func checkUUID(s string) error {
	sizes := [...]int{8, 4, 4, 4, 12}
	groups := strings.Split(s, "-")
	if len(groups) != len(sizes) {
		return bad("must have %d elements", len(sizes))
	}
	for i, g := range groups {
		if len(g) != sizes[i] {
			return bad("element %d must be %d characters long", i+1, sizes[i])
		}
		for _, c := range g {
			if !isDigit(c) && !(c >= 'a' && c <= 'f') && !(c >= 'A' && c <= 'F') {
				return bad("non-hex character %q", c)
			}
		}
	}
	return nil
}

// checkDuration: RFC 3339 appendix A, P then weeks, or date units (Y M D)
// and time units (T H M S) in order.
func checkDuration(s string) error {
	rest, ok := strings.CutPrefix(s, "P")
	if !ok {
		return bad("must start with P")
	}
	if rest == "" {
		return bad("nothing after P")
	}
	if weeks, ok := strings.CutSuffix(rest, "W"); ok {
		if weeks == "" {
			return bad("no number in week")
		}
		for _, c := range weeks {
			if !isDigit(c) {
				return bad("invalid week")
			}
		}
		return nil
	}
	const dateUnits, timeUnits = "YMD", "HMS"
	for i, part := range strings.Split(rest, "T") {
		if i > 0 && part == "" {
			return bad("no time elements")
		}
		if i > 1 {
			return bad("more than one T")
		}
		all := dateUnits
		if i == 1 {
			all = timeUnits
		}
		left := all
		for part != "" {
			n := leadingDigits(part)
			if n == 0 {
				return bad("missing number")
			}
			part = part[n:]
			if part == "" {
				return bad("missing unit")
			}
			u := part[0]
			j := strings.IndexByte(left, u)
			if j < 0 {
				if strings.IndexByte(all, u) >= 0 {
					return bad("unit %q out of order", u)
				}
				return bad("invalid unit %q", u)
			}
			left, part = left[j+1:], part[1:]
		}
	}
	return nil
}

// checkIPv4: four decimals from 0 to 255, without leading zeros.
func checkIPv4(s string) error {
	groups := strings.Split(s, ".")
	if len(groups) != 4 {
		return bad("expected four decimals")
	}
	for _, g := range groups {
		if len(g) > 1 && g[0] == '0' {
			return bad("leading zeros")
		}
		n, err := strconv.Atoi(g)
		if err != nil {
			return err
		}
		if n < 0 || n > 255 {
			return bad("decimal must be between 0 and 255")
		}
	}
	return nil
}

// checkIPv6: an IPv6 address, without a zone.
func checkIPv6(s string) error {
	if !strings.Contains(s, ":") {
		return bad("missing colon")
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return err
	}
	if a.Zone() != "" {
		return bad("zone id is not a part of ipv6 address")
	}
	return nil
}

// checkHostname: at most 253 characters (a final dot aside) of labels of
// 1 to 63 letters, digits and inner hyphens.
func checkHostname(s string) error {
	s = strings.TrimSuffix(s, ".")
	if len(s) > 253 {
		return bad("more than 253 characters long")
	}
	for _, label := range strings.Split(s, ".") {
		switch {
		case len(label) < 1 || len(label) > 63:
			return bad("label must be 1 to 63 characters long")
		case label[0] == '-':
			return bad("label starts with hyphen")
		case label[len(label)-1] == '-':
			return bad("label ends with hyphen")
		}
		for _, c := range label {
			if !isDigit(c) && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && c != '-' {
				return bad("invalid character %q", c)
			}
		}
	}
	return nil
}

// checkEmail: a local part (quoted, or dot-separated atoms) of at most 64
// characters, "@", and a hostname or a bracketed IP address.
func checkEmail(s string) error {
	if len(s) > 254 {
		return bad("more than 255 characters long")
	}
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return bad("missing @")
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > 64 {
		return bad("local part more than 64 characters long")
	}
	if len(local) > 1 && local[0] == '"' && local[len(local)-1] == '"' {
		if strings.ContainsAny(local[1:len(local)-1], `\"`) {
			return bad("backslash and quote are not allowed within quoted local part")
		}
	} else {
		switch {
		case strings.HasPrefix(local, "."):
			return bad("starts with dot")
		case strings.HasSuffix(local, "."):
			return bad("ends with dot")
		case strings.Contains(local, ".."):
			return bad("consecutive dots")
		}
		for _, c := range local {
			if !isDigit(c) && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !strings.ContainsRune(".!#$%&'*+-/=?^_`{|}~", c) {
				return bad("invalid character %q", c)
			}
		}
	}
	if len(domain) >= 2 && domain[0] == '[' && domain[len(domain)-1] == ']' {
		ip := domain[1 : len(domain)-1]
		if v6, ok := strings.CutPrefix(ip, "IPv6:"); ok {
			if err := checkIPv6(v6); err != nil {
				return bad("invalid ipv6 address: %v", err)
			}
			return nil
		}
		if err := checkIPv4(ip); err != nil {
			return bad("invalid ipv4 address: %v", err)
		}
		return nil
	}
	if err := checkHostname(domain); err != nil {
		return bad("invalid domain: %v", err)
	}
	return nil
}

// checkDate: full-date of RFC 3339, as Go's time package reads it.
func checkDate(s string) error {
	_, err := time.Parse("2006-01-02", s)
	return err
}

// checkTime: full-time of RFC 3339 (hh:mm:ss, a fraction, Z or an
// offset); a leap second only at 23:59 UTC.
func checkTime(s string) error {
	if len(s) < 9 {
		return bad("less than 9 characters long")
	}
	if s[2] != ':' || s[5] != ':' {
		return bad("missing colon in correct place")
	}
	var hms [3]int
	h, rest, _ := strings.Cut(s[:8], ":")
	m, sec, _ := strings.Cut(rest, ":")
	for i, tok := range [3]string{h, m, sec} {
		n, err := strconv.Atoi(tok)
		if err != nil {
			return bad("invalid hour/min/sec")
		}
		if n < 0 {
			return bad("non-positive hour/min/sec")
		}
		hms[i] = n
	}
	hh, mm, ss := hms[0], hms[1], hms[2]
	if hh > 23 || mm > 59 || ss > 60 {
		return bad("hour/min/sec out of range")
	}
	rest = s[8:]
	if frac, ok := strings.CutPrefix(rest, "."); ok {
		n := leadingDigits(frac)
		if n == 0 {
			return bad("no digits in second fraction")
		}
		rest = frac[n:]
	}
	if rest != "z" && rest != "Z" {
		if len(rest) != 6 {
			return bad("offset must be 6 characters long")
		}
		var sign int
		switch rest[0] {
		case '+':
			sign = -1
		case '-':
			sign = +1
		default:
			return bad("offset must begin with plus/minus")
		}
		if rest[3] != ':' {
			return bad("missing colon in offset in correct place")
		}
		var zhm [2]int
		zh, zm, _ := strings.Cut(rest[1:], ":")
		for i, tok := range [2]string{zh, zm} {
			n, err := strconv.Atoi(tok)
			if err != nil {
				return bad("invalid hour/min in offset")
			}
			if n < 0 {
				return bad("non-positive hour/min in offset")
			}
			zhm[i] = n
		}
		if zhm[0] > 23 || zhm[1] > 59 {
			return bad("hour/min in offset out of range")
		}
		hm := hh*60 + mm + sign*(zhm[0]*60+zhm[1])
		if hm < 0 {
			hm += 24 * 60
		}
		hh, mm = hm/60, hm%60
	}
	if ss >= 60 && (hh != 23 || mm != 59) {
		return bad("invalid leap second")
	}
	return nil
}

// checkDateTime: date-time of RFC 3339.
func checkDateTime(s string) error {
	if len(s) < 20 {
		return bad("less than 20 characters long")
	}
	if s[10] != 't' && s[10] != 'T' {
		return bad("11th character must be t or T")
	}
	if err := checkDate(s[:10]); err != nil {
		return bad("invalid date element: %v", err)
	}
	if err := checkTime(s[11:]); err != nil {
		return bad("invalid time element: %v", err)
	}
	return nil
}

// parseURL parses s as Go's net/url does, with an IPv6 host checked.
func parseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if host := u.Hostname(); strings.Contains(host, ":") {
		if !strings.Contains(u.Host, "[") || !strings.Contains(u.Host, "]") {
			return nil, bad("ipv6 address not enclosed in brackets")
		}
		if err := checkIPv6(host); err != nil {
			return nil, bad("invalid ipv6 address: %v", err)
		}
	}
	return u, nil
}

// checkURI: an absolute URI (iri too).
func checkURI(s string) error {
	u, err := parseURL(s)
	if err != nil {
		return err
	}
	if !u.IsAbs() {
		return bad("relative url")
	}
	return nil
}

// checkURIReference: a URI or a relative reference, without a backslash
// (iri-reference too).
func checkURIReference(s string) error {
	if strings.Contains(s, `\`) {
		return bad(`contains \`)
	}
	_, err := parseURL(s)
	return err
}

// checkURITemplate: a URI whose escaped path segments pair their braces.
func checkURITemplate(s string) error {
	u, err := parseURL(s)
	if err != nil {
		return err
	}
	for _, seg := range strings.Split(u.RawPath, "/") {
		seg, err := url.PathUnescape(seg)
		if err != nil {
			return bad("percent decode failed: %v", err)
		}
		open := false
		for _, c := range seg {
			switch {
			case c == '{' && open, c == '}' && !open:
				return bad("nested curly braces")
			case c == '{' || c == '}':
				open = !open
			}
		}
		if open {
			return bad("no matching closing brace")
		}
	}
	return nil
}

// checkPeriod: start/end, each a date-time or one of them a duration.
func checkPeriod(s string) error {
	slash := strings.IndexByte(s, '/')
	if slash < 0 {
		return bad("missing slash")
	}
	start, end := s[:slash], s[slash+1:]
	if strings.HasPrefix(start, "P") {
		if err := checkDuration(start); err != nil {
			return bad("invalid start duration: %v", err)
		}
		if err := checkDateTime(end); err != nil {
			return bad("invalid end date-time: %v", err)
		}
		return nil
	}
	if err := checkDateTime(start); err != nil {
		return bad("invalid start date-time: %v", err)
	}
	if strings.HasPrefix(end, "P") {
		if err := checkDuration(end); err != nil {
			return bad("invalid end duration: %v", err)
		}
	} else if err := checkDateTime(end); err != nil {
		return bad("invalid end date-time: %v", err)
	}
	return nil
}

// checkSemver: semver.org's grammar: major.minor.patch, a pre-release and
// build metadata.
func checkSemver(s string) error {
	if i := strings.IndexByte(s, '+'); i >= 0 {
		build := s[i+1:]
		if build == "" {
			return bad("build is empty")
		}
		for _, id := range strings.Split(build, ".") {
			if id == "" {
				return bad("build identifier is empty")
			}
			for _, c := range id {
				if !isDigit(c) && !isIdentLetter(c) {
					return bad("invalid character %q in build identifier", c)
				}
			}
		}
		s = s[:i]
	}
	if i := strings.IndexByte(s, '-'); i >= 0 {
		for _, id := range strings.Split(s[i+1:], ".") {
			if id == "" {
				return bad("pre-release identifier is empty")
			}
			digits := true
			for _, c := range id {
				switch {
				case isDigit(c):
				case isIdentLetter(c):
					digits = false
				default:
					return bad("invalid character %q in pre-release identifier", c)
				}
			}
			if digits && len(id) > 1 && id[0] == '0' {
				return bad("pre-release numeric identifier starts with zero")
			}
		}
		s = s[:i]
	}
	core := strings.Split(s, ".")
	if len(core) != 3 {
		return bad("versionCore must have 3 numbers separated by dot")
	}
	for i, v := range core {
		name := [...]string{"major", "minor", "patch"}[i]
		switch {
		case v == "":
			return bad("%s is empty", name)
		case len(v) > 1 && v[0] == '0':
			return bad("%s starts with zero", name)
		}
		for _, c := range v {
			if !isDigit(c) {
				return bad("%s contains non-digit", name)
			}
		}
	}
	return nil
}

func isIdentLetter(c rune) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' }

// checkRegex: an ECMA-262 pattern the validators can compile.
func checkRegex(s string) error {
	_, err := ecmaregex.Compile(s)
	return err
}
