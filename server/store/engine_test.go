package store

import (
	"os"
	"slices"
	"strings"
	"testing"
)

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
		{"host=db user=u password=pw dbname=p", "host=db user=u password=xxxxx dbname=p"},
		{"host=db password = 'p w\\'x' sslmode=require", "host=db password = xxxxx sslmode=require"},
		{"dbname=p password=", "dbname=p password=xxxxx"},
	} {
		if got := Redact(c.dsn); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.dsn, got, c.want)
		}
	}
}

// A libpq key=value string is refused, not taken for a SQLite file's
// name (which would create a file of that name), and its password is
// not shown.
func TestOpenRefusesKeywordStrings(t *testing.T) {
	dir := t.TempDir()
	dsn := "host=" + dir + " user=u password=hunter2 dbname=p"
	_, err := Open(ctx, dsn, Options{})
	if err == nil || !strings.Contains(err.Error(), "postgres:// URL") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("open %q: %v; want a refusal asking for a URL, without the password", dsn, err)
	}
	if entries, _ := os.ReadDir("."); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), "host=") }) {
		t.Fatal("a file was created under the string's name")
	}
}
