package spec

import "strings"

// ShortHash is a spec's Hash as reports show it: its first 12 hex digits.
func ShortHash(hash string) string {
	h := strings.TrimPrefix(hash, "sha256:")
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
