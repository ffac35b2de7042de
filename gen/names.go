package gen

import (
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// initialisms are written in capitals inside Go names, as golint wants:
// task_id → TaskID, avatar_url → AvatarURL.
var initialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "DNS": true,
	"EOF": true, "GUID": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true,
	"IP": true, "JSON": true, "JWT": true, "LHS": true, "MCP": true, "OS": true,
	"QPS": true, "RAM": true, "RHS": true, "RPC": true, "SHA": true, "SLA": true,
	"SMTP": true, "SQL": true, "SSH": true, "TCP": true, "TLS": true, "TTL": true,
	"UDP": true, "UI": true, "UID": true, "UUID": true, "URI": true, "URL": true,
	"UTF8": true, "VM": true, "XML": true, "XMPP": true, "XSRF": true, "XSS": true,
}

// words splits a name into words: at anything that is not an ASCII letter
// or digit, and at case changes (fooBar, HTTPServer). Latin letters with
// diacritics count as their base letter (naïve → naive), so that a Go
// name keeps the word whole.
func words(s string) []string {
	s = norm.NFD.String(s)
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		isAlnum := r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))
		if !isAlnum {
			flush()
			continue
		}
		if len(cur) > 0 {
			prev := cur[len(cur)-1]
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(r):
				flush()
			case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

// camel turns a JSON name into an exported Go name, with initialisms
// (task_id → TaskID). It returns "" when s has no ASCII letter or digit.
func camel(s string) string {
	var b strings.Builder
	for _, w := range words(s) {
		up := strings.ToUpper(w)
		if initialisms[up] {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]))
		b.WriteString(strings.ToLower(w[1:]))
	}
	return b.String()
}

// lowerCamel is camel with a lower-case first word (claim_task → claimTask).
func lowerCamel(s string) string {
	c := camel(s)
	ws := words(s)
	if len(ws) == 0 {
		return c
	}
	first := camel(ws[0])
	return strings.ToLower(first) + c[len(first):]
}

// fieldName is the Go name of a property: camel, or X-prefixed when it
// would start with a digit, or "Field" when nothing is left.
func fieldName(s string) string {
	c := camel(s)
	switch {
	case c == "":
		return "Field"
	case c[0] >= '0' && c[0] <= '9':
		return "X" + c
	}
	return c
}

// singular makes an array's item-type name from the array's name:
// People → Person, Capabilities → Capability, AllowedTools → AllowedTool;
// a name that does not look plural gets "Item".
func singular(name string) string {
	for _, ir := range [][2]string{{"People", "Person"}, {"Children", "Child"}, {"Women", "Woman"}, {"Men", "Man"}, {"Indices", "Index"}, {"Criteria", "Criterion"}} {
		if strings.HasSuffix(name, ir[0]) {
			return strings.TrimSuffix(name, ir[0]) + ir[1]
		}
	}
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, "ies") && len(name) > 3:
		return name[:len(name)-3] + "y"
	case strings.HasSuffix(lower, "sses"), strings.HasSuffix(lower, "xes"), strings.HasSuffix(lower, "ches"),
		strings.HasSuffix(lower, "shes"), strings.HasSuffix(lower, "zes"), strings.HasSuffix(lower, "uses"):
		return name[:len(name)-2]
	case strings.HasSuffix(lower, "ss"), strings.HasSuffix(lower, "us"), strings.HasSuffix(lower, "is"):
		return name + "Item"
	case strings.HasSuffix(lower, "s") && len(name) > 1:
		return name[:len(name)-1]
	}
	return name + "Item"
}

// enumConstName is the suffix naming one enum value: its camel form, or
// "Empty" for "", or "Value<i>" when nothing usable is left.
func enumConstName(v string, i int) string {
	if v == "" {
		return "Empty"
	}
	c := camel(v)
	if c == "" {
		return "Value" + strconv.Itoa(i)
	}
	return c
}

// names hands out package-level identifiers, never the same twice: a
// taken name gets 2, 3, ... appended.
type names struct {
	taken map[string]bool
}

func newNames() *names { return &names{taken: map[string]bool{}} }

func (n *names) reserve(name string) { n.taken[name] = true }

func (n *names) take(name string) string {
	if !n.taken[name] {
		n.taken[name] = true
		return name
	}
	for i := 2; ; i++ {
		c := name + strconv.Itoa(i)
		if !n.taken[c] {
			n.taken[c] = true
			return c
		}
	}
}
