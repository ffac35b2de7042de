package store

import "testing"

// Redact hides the password of any URL, whatever its scheme: a database
// named by a URL Open refuses is shown in its error too.
func TestRedact(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{"postgres://u:pw@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgresql://h/db?password=pw&user=u", "postgresql://h/db?password=xxxxx&user=u"},
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"mysql://u:pw@h/db", "mysql://u:xxxxx@h/db"},
		{"MySQL://h/db?password=pw", "mysql://h/db?password=xxxxx"},
		{"postgres://u:p%zzw@h/db", "postgres://(a URL that does not parse)"},
		{"mysql://u:pw@[::1/db", "mysql://(a URL that does not parse)"},
		{"prickled.db", "prickled.db"},
		{"file:p.db?mode=rwc", "file:p.db?mode=rwc"},
		{":memory:", ":memory:"},
	} {
		if got := Redact(c.dsn); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.dsn, got, c.want)
		}
	}
}
