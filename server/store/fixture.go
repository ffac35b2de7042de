package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/schemax"
)

// FixtureVersion is the fixture format version LoadFixture reads (the
// schema's "version" const).
const FixtureVersion = 1

// FixtureError is a fixture problem, naming the JSON path of the bad entry
// (for example "$.agents[1].availability") and, when it is known, where
// that value starts in the fixture's text.
type FixtureError struct {
	// Path is the JSON path of the offending entry or field.
	Path string
	// Line and Column (1-based, columns in bytes) locate the offending
	// value in the fixture's text; both are 0 when unknown.
	Line, Column int
	// Err is the underlying problem.
	Err error
}

// Error returns "fixture: PATH: problem".
func (e *FixtureError) Error() string { return "fixture: " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the underlying problem.
func (e *FixtureError) Unwrap() error { return e.Err }

// maxFixtureErrors bounds the schema violations one load reports.
const maxFixtureErrors = 10

// The fixture format: fixture.schema.json says what is valid, FIXTURE.md
// what it means. These types only carry validated values; the schema is
// what checks them. omitzero lets the seed world marshal into a document
// the schema accepts.
type (
	fxProject struct {
		Slug string `json:"slug"`
		Name string `json:"name,omitzero"`
	}
	fxPerson struct {
		Handle      string  `json:"handle"`
		DisplayName string  `json:"display_name"`
		AvatarURL   *string `json:"avatar_url,omitzero"`
		Color       int     `json:"color,omitzero"`
		Away        bool    `json:"away,omitzero"`
	}
	fxMembership struct {
		Project string `json:"project"`
		Person  string `json:"person"`
	}
	fxAgent struct {
		ID           string       `json:"id"`
		AvatarURL    *string      `json:"avatar_url,omitzero"`
		Model        string       `json:"model"`
		Client       string       `json:"client"`
		Role         string       `json:"role,omitzero"`
		Capabilities []Capability `json:"capabilities,omitzero"`
		Availability string       `json:"availability"`
		TrustLevel   string       `json:"trust_level"`
		LastSeenAt   *time.Time   `json:"last_seen_at,omitzero"`
		Token        string       `json:"token,omitzero"`
	}
	fxRunner struct {
		ID    string `json:"id"`
		Agent string `json:"agent"`
		Name  string `json:"name,omitzero"`
		Token string `json:"token,omitzero"`
	}
	fxRoom struct {
		ID      string  `json:"id"`
		Project string  `json:"project"`
		Kind    string  `json:"kind"`
		Owner   *string `json:"owner,omitzero"`
		Name    string  `json:"name,omitzero"`
	}
	fxMessage struct {
		ID               string     `json:"id"`
		Room             string     `json:"room"`
		Kind             string     `json:"kind"`
		Author           string     `json:"author"`
		Body             string     `json:"body"`
		Provenance       string     `json:"provenance,omitzero"`
		ProvenanceStatus string     `json:"provenance_status,omitzero"`
		CreatedAt        *time.Time `json:"created_at,omitzero"`
		ReplyTurn        *string    `json:"reply_turn,omitzero"`
		ReplyRole        *string    `json:"reply_role,omitzero"`
	}
	fxTurnAgent struct {
		Agent string `json:"agent"`
		// ReplyPosted is derived from the replies; when given it must agree.
		ReplyPosted *bool `json:"reply_posted,omitzero"`
	}
	fxTurn struct {
		Message    string        `json:"message"`
		State      string        `json:"state,omitzero"`
		Agents     []fxTurnAgent `json:"agents"`
		ReplyLimit *int          `json:"reply_limit,omitzero"`
		ExpiresAt  *time.Time    `json:"expires_at,omitzero"`
	}
	fxTask struct {
		ID             string  `json:"id"`
		Project        string  `json:"project"`
		Agent          string  `json:"agent"`
		Title          string  `json:"title,omitzero"`
		RequestMessage *string `json:"request_message,omitzero"`
	}
	fxAttempt struct {
		ID             string     `json:"id,omitzero"`
		Task           string     `json:"task"`
		Runner         string     `json:"runner"`
		IdempotencyKey string     `json:"idempotency_key"`
		ClaimedAt      *time.Time `json:"claimed_at,omitzero"`
		LiveUntil      *time.Time `json:"live_until,omitzero"`
		Superseded     bool       `json:"superseded,omitzero"`
	}
	fxDiscussionClaim struct {
		ID             string     `json:"id,omitzero"`
		Message        string     `json:"message"`
		Runner         string     `json:"runner"`
		IdempotencyKey string     `json:"idempotency_key"`
		Role           string     `json:"role"`
		Reviewing      *string    `json:"reviewing,omitzero"`
		ClaimedAt      *time.Time `json:"claimed_at,omitzero"`
		LiveUntil      *time.Time `json:"live_until,omitzero"`
		Superseded     bool       `json:"superseded,omitzero"`
		// ReplyMessage and ReplyPosted are derived from the replies; when
		// given they must agree.
		ReplyMessage *string `json:"reply_message,omitzero"`
		ReplyPosted  *bool   `json:"reply_posted,omitzero"`
	}
	fixtureWorld struct {
		Version          int                 `json:"version"`
		Projects         []fxProject         `json:"projects,omitzero"`
		People           []fxPerson          `json:"people,omitzero"`
		Memberships      []fxMembership      `json:"memberships,omitzero"`
		Agents           []fxAgent           `json:"agents,omitzero"`
		Runners          []fxRunner          `json:"runners,omitzero"`
		Rooms            []fxRoom            `json:"rooms,omitzero"`
		Messages         []fxMessage         `json:"messages,omitzero"`
		Turns            []fxTurn            `json:"turns,omitzero"`
		Tasks            []fxTask            `json:"tasks,omitzero"`
		Attempts         []fxAttempt         `json:"attempts,omitzero"`
		DiscussionClaims []fxDiscussionClaim `json:"discussion_claims,omitzero"`
	}
)

// fixtureDecode reads integers by value, as the schema's "integer" means
// them (2.0 is 2). The schema bounds every integer of a fixture to a few
// units, which a float64 holds exactly.
var fixtureDecode = json.WithUnmarshalers(json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *int) error {
	if dec.PeekKind() != '0' {
		return errors.ErrUnsupported
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	f, err := tok.Float()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return fmt.Errorf("%s is not an integer the fixture allows", tok.String())
	}
	*v = int(f)
	return nil
}))

// fixtureText is a fixture's text, to locate a JSON pointer in it for an
// error. The index is built only when an error needs it.
type fixtureText struct {
	data []byte
	idx  jsonpointer.Index
}

// errAt returns a *FixtureError for the value at ptr (RFC 6901).
func (t *fixtureText) errAt(ptr string, err error) *FixtureError {
	fe := &FixtureError{Path: dollarPath(ptr), Err: err}
	if t.idx == nil {
		t.idx, _ = jsonpointer.NewIndex(t.data)
	}
	if t.idx != nil {
		fe.Line, fe.Column = t.position(t.idx.Offset(ptr))
	}
	return fe
}

// position returns the line and column (1-based, in bytes) of offset off.
func (t *fixtureText) position(off int) (line, column int) {
	before := t.data[:min(max(off, 0), len(t.data))]
	return bytes.Count(before, []byte{'\n'}) + 1, len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
}

// syntaxError returns nil when the text is one JSON value, otherwise a
// *FixtureError at the byte where reading it stopped, so that an editor
// can jump there (the schema's violations need a document to point into).
func (t *fixtureText) syntaxError() *FixtureError {
	if jsontext.Value(t.data).IsValid() {
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(t.data))
	_, err := dec.ReadValue()
	off := int(dec.InputOffset())
	if err == nil {
		rest := t.data[off:]
		off += len(rest) - len(bytes.TrimLeft(rest, " \t\r\n")) // the second value's first byte
		if _, err = dec.ReadToken(); err == io.EOF {
			return nil
		} else if err == nil {
			err = errors.New("more than one JSON value")
		}
	}
	fe := &FixtureError{Path: "$", Err: err}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		fe.Path, fe.Err, off = dollarPath(string(se.JSONPointer)), se.Err, int(se.ByteOffset)
	}
	if errors.Is(fe.Err, io.ErrUnexpectedEOF) {
		fe.Err = errors.New("the JSON ends early (unexpected end of file)")
	}
	fe.Err = fmt.Errorf("invalid JSON: %w", fe.Err)
	fe.Line, fe.Column = t.position(off)
	return fe
}

func (t *fixtureText) errf(ptr, format string, args ...any) *FixtureError {
	return t.errAt(ptr, fmt.Errorf(format, args...))
}

// dollarPath writes a JSON pointer into the fixture as the JSON path its
// errors name: "/agents/1/id" is "$.agents[1].id". Every array of a
// fixture holds objects whose member names are words, so a token of
// digits is an index.
func dollarPath(ptr string) string {
	toks, err := jsonpointer.Split(ptr)
	if err != nil {
		return "$" + ptr
	}
	var b strings.Builder
	b.WriteString("$")
	for _, t := range toks {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
		} else {
			b.WriteString("." + t)
		}
	}
	return b.String()
}

// at is the JSON pointer of entry i of a section, or of a field in it.
func at(section string, i int, field ...string) string {
	return jsonpointer.Append(jsonpointer.AppendIndex("/"+section, i), field...)
}

// parseFixture validates data against the fixture schema and decodes it.
func parseFixture(text *fixtureText) (fixtureWorld, error) {
	var w fixtureWorld
	if fe := text.syntaxError(); fe != nil {
		return w, fe
	}
	fs, err := compiledFixtureSchemas()
	if err != nil {
		return w, fmt.Errorf("fixture: schema: %w", err)
	}
	if err := schemax.Validate(fs.world, text.data); err != nil {
		var ve *schemax.ValidationError
		if !errors.As(err, &ve) {
			// A pattern match that did not finish: neither valid nor invalid.
			return w, fmt.Errorf("fixture: %w", err)
		}
		return w, violationsError(text, ve.Violations)
	}
	if err := json.Unmarshal(text.data, &w, fixtureDecode); err != nil {
		var se *json.SemanticError
		if errors.As(err, &se) && se.Err != nil {
			return w, text.errAt(string(se.JSONPointer), se.Err)
		}
		return w, text.errAt("", err)
	}
	return w, nil
}

// violationsError reports schema violations in the order of the text, the
// reasons for one value together, at most maxFixtureErrors values.
func violationsError(text *fixtureText, vs []schemax.Violation) error {
	var ptrs []string
	reasons := map[string][]string{}
	for _, v := range vs {
		if _, ok := reasons[v.Pointer]; !ok {
			ptrs = append(ptrs, v.Pointer)
		}
		reasons[v.Pointer] = append(reasons[v.Pointer], v.Message)
	}
	errs := make([]*FixtureError, len(ptrs))
	for i, p := range ptrs {
		errs[i] = text.errAt(p, errors.New(strings.Join(reasons[p], "; ")))
	}
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
	})
	var out []error
	for i, e := range errs {
		if i == maxFixtureErrors {
			out = append(out, fmt.Errorf("fixture: %d more problems", len(errs)-i))
			break
		}
		out = append(out, e)
	}
	if len(out) == 1 {
		return out[0]
	}
	return errors.Join(out...)
}

// LoadFixture loads the JSON world description in r (format: FIXTURE.md,
// schema: FixtureSchema) into the store, all or nothing, in one
// transaction. The store may already hold a world: the fixture adds to
// it, its ids must not collide with what is there, and its references may
// name what is there. It returns one IssuedToken per agent and per runner:
// the fixture's plaintext token, or a freshly minted one where the fixture
// gives none. A bad fixture is a *FixtureError naming the JSON path of the
// bad entry (several schema violations are joined with errors.Join;
// errors.As finds the first).
func (s *Store) LoadFixture(ctx context.Context, r io.Reader) ([]IssuedToken, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("fixture: read: %w", err)
	}
	return s.loadFixture(ctx, data, false)
}

// loadFixture parses and loads a fixture. With onlyIntoEmpty it loads
// nothing, and returns no tokens, when the store already holds a world.
func (s *Store) loadFixture(ctx context.Context, data []byte, onlyIntoEmpty bool) ([]IssuedToken, error) {
	text := &fixtureText{data: data}
	w, err := parseFixture(text)
	if err != nil {
		return nil, err
	}
	defer s.worldChanged()
	var issued []IssuedToken
	err = s.inTx(ctx, func(tx *txn) error {
		if onlyIntoEmpty {
			if has, err := exists(ctx, tx, `SELECT 1 FROM projects LIMIT 1`); err != nil || has {
				return err
			}
		}
		var err error
		issued, err = s.loadWorld(ctx, tx, w, text)
		return err
	})
	if err != nil {
		var fe *FixtureError
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, fmt.Errorf("fixture: %w", err)
	}
	return issued, nil
}
