package store

import (
	"errors"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// engine is what differs between the store's two databases in the SQL
// it runs. The store's SQL is written once, in SQLite's dialect, which
// PostgreSQL shares but for its parameters: rebind turns SQLite's "?" and
// "?N" into PostgreSQL's "$N". The few statements whose meaning differs
// (the row locks, lockRow) are the engine's to skip.
type engine struct {
	pg bool
	// rebound caches the PostgreSQL text of each query rebound, by its
	// SQLite text: the store's queries are constants, so it stays small.
	rebound sync.Map
}

// sqliteEngine and the PostgreSQL engine of each store.
var sqliteEngine = &engine{}

// rebind returns query in the engine's dialect.
func (e *engine) rebind(query string) string {
	if !e.pg {
		return query
	}
	if q, ok := e.rebound.Load(query); ok {
		return q.(string)
	}
	q := dollarParams(query)
	e.rebound.Store(query, q)
	return q
}

// dollarParams rewrites SQLite's parameters, "?" (the next one) and "?N"
// (the Nth), as PostgreSQL's "$N". A "?" inside a string literal, a
// quoted identifier or a comment is left alone.
func dollarParams(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 8)
	next := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+2])
			i += end + 1
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+1])
			i += end
		case c == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			n := next + 1
			if j > i+1 {
				n, _ = strconv.Atoi(query[i+1 : j])
			}
			next = max(next, n)
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isUniqueViolation reports whether err is a UNIQUE or PRIMARY KEY
// constraint failure, of either database.
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// IsPostgres reports whether dsn names a PostgreSQL database: a URL whose
// scheme is postgres or postgresql (any case).
func IsPostgres(dsn string) bool {
	scheme, _, ok := strings.Cut(dsn, "://")
	return ok && (strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql"))
}

// IsURL reports whether dsn is a URL (scheme://...): Open opens those
// of PostgreSQL and refuses any other.
func IsURL(dsn string) bool { return urlScheme(dsn) != "" }

// urlScheme returns the scheme of dsn when it is a URL ("scheme://..."),
// or "".
func urlScheme(dsn string) string {
	scheme, _, ok := strings.Cut(dsn, "://")
	if !ok || scheme == "" {
		return ""
	}
	for i, r := range scheme {
		alpha := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !alpha && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return ""
		}
	}
	return scheme
}

// keywordPassword is the password of a libpq key=value string.
var keywordPassword = regexp.MustCompile(`(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)`)

// isKeywordDSN reports whether dsn is a libpq connection string of
// key=value pairs ("host=db user=prickle password=..."): some word of it
// sets a connection keyword. Open refuses those (a postgres:// URL says
// the same), rather than take one for a SQLite file's name.
func isKeywordDSN(dsn string) bool {
	for _, f := range strings.Fields(dsn) {
		k, _, ok := strings.Cut(f, "=")
		if ok && libpqKeywords[strings.TrimSpace(k)] {
			return true
		}
	}
	return false
}

// libpqKeywords are the libpq connection keywords that name a server or
// a login.
var libpqKeywords = map[string]bool{"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true,
	"password": true, "passfile": true, "sslmode": true, "service": true}

// Redact returns dsn fit to show: the password of a URL (in its user
// part, or a password parameter) replaced by "xxxxx", whatever its
// scheme (one that Open refuses is shown in its error). Anything else is
// returned as it is.
func Redact(dsn string) string {
	if isKeywordDSN(dsn) {
		return keywordPassword.ReplaceAllString(dsn, "${1}xxxxx")
	}
	if urlScheme(dsn) == "" {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		// Unparsable: nothing of it can be trusted to hold no password.
		scheme, _, _ := strings.Cut(dsn, "://")
		return scheme + "://(a URL that does not parse)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
