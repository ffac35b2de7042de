// Package jsonpointer handles JSON pointers (RFC 6901), the one way the
// toolchain names a place in a JSON document: escaping reference tokens,
// building and splitting pointers, the URI-fragment form a "$ref" uses,
// looking a pointer up in a document, and an index from pointers to the
// byte offsets where values start (so that a finding can name a line).
//
// It imports nothing of this module.
package jsonpointer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Escape escapes one reference token: "~" becomes "~0", "/" becomes "~1".
func Escape(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// Unescape reverses Escape.
func Unescape(token string) string {
	if !strings.Contains(token, "~") {
		return token
	}
	return strings.ReplaceAll(strings.ReplaceAll(token, "~1", "/"), "~0", "~")
}

// Append returns ptr with the reference tokens added, each escaped.
func Append(ptr string, tokens ...string) string {
	n := len(ptr)
	for _, t := range tokens {
		n += 1 + len(t) // more only where a token is escaped
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(ptr)
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(Escape(t))
	}
	return b.String()
}

// AppendIndex returns ptr with an array index added.
func AppendIndex(ptr string, i int) string { return ptr + "/" + strconv.Itoa(i) }

// Join builds the pointer of a path of unescaped reference tokens.
func Join(tokens []string) string { return Append("", tokens...) }

// Split returns the unescaped reference tokens of ptr; the root ("") has
// none.
func Split(ptr string) ([]string, error) {
	if ptr == "" {
		return nil, nil
	}
	if ptr[0] != '/' {
		return nil, fmt.Errorf("json pointer %q does not start with /", ptr)
	}
	toks := strings.Split(ptr[1:], "/")
	for i, t := range toks {
		toks[i] = Unescape(t)
	}
	return toks, nil
}

// Last returns the last reference token of ptr, unescaped ("" for the root).
func Last(ptr string) string {
	return Unescape(ptr[strings.LastIndexByte(ptr, '/')+1:])
}

// Parent returns ptr without its last reference token ("" for the root).
func Parent(ptr string) string {
	if i := strings.LastIndexByte(ptr, '/'); i >= 0 {
		return ptr[:i]
	}
	return ""
}

// Show renders ptr for a message: the root is "/".
func Show(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

// FromFragment turns a URI fragment that holds a JSON pointer, as a local
// "$ref" writes it ("#/$defs/a%20b"), into the pointer ("/$defs/a b"). The
// leading "#" is optional.
func FromFragment(frag string) (string, error) {
	frag = strings.TrimPrefix(frag, "#")
	p, err := url.PathUnescape(frag)
	if err != nil {
		return "", fmt.Errorf("json pointer fragment %q: %w", frag, err)
	}
	if p != "" && p[0] != '/' {
		return "", fmt.Errorf("json pointer fragment %q does not start with /", frag)
	}
	return p, nil
}

// ErrNotFound is returned by Lookup when the pointer names nothing.
var ErrNotFound = errors.New("json pointer names no value")

// Lookup returns the value at ptr in the JSON document doc, as written.
func Lookup(doc []byte, ptr string) (json.RawMessage, error) {
	toks, err := Split(ptr)
	if err != nil {
		return nil, err
	}
	cur := json.RawMessage(bytes.TrimSpace(doc))
	for _, tok := range toks {
		switch {
		case len(cur) > 0 && cur[0] == '{':
			var m map[string]json.RawMessage
			if err := json.Unmarshal(cur, &m); err != nil {
				return nil, err
			}
			v, ok := m[tok]
			if !ok {
				return nil, fmt.Errorf("%w: %s", ErrNotFound, ptr)
			}
			cur = bytes.TrimSpace(v)
		case len(cur) > 0 && cur[0] == '[':
			var a []json.RawMessage
			if err := json.Unmarshal(cur, &a); err != nil {
				return nil, err
			}
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(a) || (len(tok) > 1 && tok[0] == '0') {
				return nil, fmt.Errorf("%w: %s", ErrNotFound, ptr)
			}
			cur = bytes.TrimSpace(a[i])
		default:
			return nil, fmt.Errorf("%w: %s", ErrNotFound, ptr)
		}
	}
	return cur, nil
}
