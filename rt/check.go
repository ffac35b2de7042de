package rt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/prickle-dev/prickle/internal/validation"
)

// A generated validator is one function per schema of a document, each
// reading one JSON value from a *Checker and reporting, through the
// Checker's methods (one per keyword, in keywords.go), what the schema
// finds wrong with it. The functions read the document's tokens as they
// come (jsontext, which refuses what is not I-JSON: a member named twice,
// invalid UTF-8); a schema that applies several subschemas to one value
// (anyOf, oneOf, allOf, not, if, a $ref beside other keywords) reads the
// value whole and checks it once per subschema. Violations are worded by
// internal/validation, as a compiled schema's are.

// Kind is the JSON kind of a value a check reads.
type Kind byte

// The kinds of JSON values (jsontext's, both booleans 't').
const (
	KindNull   Kind = 'n'
	KindBool   Kind = 't'
	KindNumber Kind = '0'
	KindString Kind = '"'
	KindObject Kind = '{'
	KindArray  Kind = '['
)

// Value is the value a check reads (Checker.Read, Checker.ValueOf): its
// kind and, for a scalar, its text. The text is valid until the checker
// reads again.
type Value struct {
	Kind Kind
	text []byte // a string's characters (unquoted), a number's literal, true, false, null
	raw  []byte // the whole value as written, when it was read whole
	open bool   // an object or array whose members or items are still to be read
}

// Text is a string's characters (unquoted) or the literal of any other
// scalar.
func (v Value) Text() []byte { return v.text }

// Checker reads one JSON value for a generated check function and records
// what the check finds wrong with it. It is not safe for concurrent use; a
// validation runs on one goroutine.
type Checker struct {
	dec    *jsontext.Decoder
	in     bytes.Buffer
	run    *run
	parent *Checker // the checker that read the value this one reads again
	// up: the value's pointer is the parent's parent (a property name is
	// judged at its object).
	up     bool
	quiet  bool // only whether the value passes matters: nothing is worded
	failed bool // the value failed a check
	// str and name are the checker's own buffers for a string and a name
	// with escapes, never the decoder's bytes: unquoting into those would
	// overwrite the document being read.
	str  []byte
	name []byte
	// nameText is the name Member read: name's bytes or the decoder's.
	nameText []byte
	quoted   []byte
}

// run is one validation: what it found, and the checkers it reuses.
type run struct {
	vs     []Violation
	err    error // a check that did not finish
	broken error // the decoder stopped: the document is not one I-JSON value
	subs   []*Checker
	nsub   int
}

var runs = sync.Pool{New: func() any { return &run{} }}

func newChecker(r *run) *Checker {
	c := &Checker{run: r}
	c.dec = jsontext.NewDecoder(&c.in)
	return c
}

// reset makes c read raw (copied) for r.
func (c *Checker) reset(raw []byte, parent *Checker, quiet bool) {
	c.in.Reset()
	c.in.Write(raw)
	c.dec.Reset(&c.in)
	c.parent, c.up, c.quiet, c.failed = parent, false, quiet, false
}

// sub returns a checker of raw, a value c has read, for r's nested checks;
// release gives it back.
func (c *Checker) sub(raw []byte, quiet bool) *Checker {
	r := c.run
	if r.nsub == len(r.subs) {
		r.subs = append(r.subs, newChecker(r))
	}
	s := r.subs[r.nsub]
	r.nsub++
	s.reset(raw, c, quiet || c.quiet)
	return s
}

func (c *Checker) release(s *Checker) {
	c.run.nsub--
	s.parent = nil
}

// Validate checks the JSON document raw with check, a generated validator
// of one schema. It returns nil, a *ValidationError (violations sorted by
// pointer, keyword location and message; JSON that does not parse, or
// that is not I-JSON, is one violation of keyword "json", see
// validation.DocumentViolation), or another error when the validation could
// not finish (a pattern match that timed out): the document is then
// neither valid nor invalid.
func Validate(raw []byte, check func(*Checker)) error {
	r := runs.Get().(*run)
	defer r.done()
	if len(r.subs) == 0 {
		r.subs = append(r.subs, newChecker(r))
	}
	c := r.subs[0]
	r.nsub = 1
	c.reset(raw, nil, false)
	check(c)
	if r.broken == nil {
		if _, err := c.dec.ReadToken(); err != io.EOF {
			c.broke(err)
		}
	}
	switch {
	case r.broken != nil:
		if v := validation.DocumentViolation(raw); v != nil {
			return &ValidationError{Violations: []Violation{*v}}
		}
		return fmt.Errorf("rt: the document could not be read: %w", r.broken)
	case r.err != nil:
		return r.err
	case len(r.vs) > 0:
		vs := slices.Clone(r.vs)
		validation.SortViolations(vs)
		return &ValidationError{Violations: vs}
	}
	return nil
}

// maxKept bounds the bytes a pooled run keeps of the documents it read:
// the copy of one large document is let go rather than kept for ever.
const maxKept = 64 << 10

// done readies r for the next validation and puts it back in the pool.
func (r *run) done() {
	clear(r.vs)
	r.vs, r.err, r.broken, r.nsub = r.vs[:0], nil, nil, 0
	if cap(r.vs) > maxKept/64 {
		r.vs = nil
	}
	for _, c := range r.subs {
		if c.in.Cap() > maxKept || cap(c.str) > maxKept || cap(c.name) > maxKept || cap(c.quoted) > maxKept {
			c.in, c.str, c.name, c.nameText, c.quoted = bytes.Buffer{}, nil, nil, nil, nil
			c.dec.Reset(&c.in)
		}
	}
	runs.Put(r)
}

// broke records that the decoder stopped; every read after it reads
// nothing.
func (c *Checker) broke(err error) {
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if c.run.broken == nil {
		c.run.broken = err
	}
}

// Read reads the next value: a scalar whole; an object or an array up to
// its first member or item, which the check then reads with Member or
// Item (or skips with Rest).
func (c *Checker) Read() Value {
	if c.run.broken != nil {
		return Value{}
	}
	switch k := c.dec.PeekKind(); k {
	case '{', '[':
		if _, err := c.dec.ReadToken(); err != nil {
			c.broke(err)
			return Value{}
		}
		return Value{Kind: Kind(k), open: true}
	}
	raw, err := c.dec.ReadValue()
	if err != nil {
		c.broke(err)
		return Value{}
	}
	return c.scalar(raw)
}

// Raw reads the next value whole and returns it as written; it is valid
// until c reads again.
func (c *Checker) Raw() []byte {
	if c.run.broken != nil {
		return nil
	}
	raw, err := c.dec.ReadValue()
	if err != nil {
		c.broke(err)
		return nil
	}
	return raw
}

// ValueOf is the Value of raw, a value Raw returned.
func (c *Checker) ValueOf(raw []byte) Value {
	if len(raw) == 0 {
		return Value{}
	}
	switch raw[0] {
	case '{', '[':
		return Value{Kind: Kind(raw[0]), raw: raw}
	}
	v := c.scalar(raw)
	v.raw = raw
	return v
}

// scalar is the Value of a scalar's raw JSON.
func (c *Checker) scalar(raw []byte) Value {
	switch raw[0] {
	case 'n':
		return Value{Kind: KindNull, text: raw}
	case 't', 'f':
		return Value{Kind: KindBool, text: raw}
	case '"':
		return Value{Kind: KindString, text: unquoteInto(&c.str, raw)}
	}
	return Value{Kind: KindNumber, text: raw}
}

// unquote returns the characters of the JSON string raw: raw's own bytes
// when it has no escapes, else new ones.
func unquote(raw []byte) []byte {
	var buf []byte
	return unquoteInto(&buf, raw)
}

// unquoteInto returns the characters of the JSON string raw: raw's own
// bytes when it has no escapes, else *buf's, which it reuses. *buf is only
// ever set to bytes it owns, so that a later string is never unquoted
// into raw's.
func unquoteInto(buf *[]byte, raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1]
	}
	out, err := jsontext.AppendUnquote((*buf)[:0], raw)
	if err != nil { // the decoder has checked raw
		panic(err)
	}
	*buf = out
	return out
}

// Member reads the next member name of the object Read opened and reports
// whether there is one; after the last it reads the closing brace.
func (c *Checker) Member() bool {
	if c.run.broken != nil {
		return false
	}
	if c.dec.PeekKind() == '}' {
		if _, err := c.dec.ReadToken(); err != nil {
			c.broke(err)
		}
		return false
	}
	raw, err := c.dec.ReadValue()
	if err != nil {
		c.broke(err)
		return false
	}
	c.nameText = unquoteInto(&c.name, raw)
	return true
}

// Name is the name Member read; it is valid until c reads again.
func (c *Checker) Name() []byte { return c.nameText }

// Item reports whether the array Read opened has another item, for the
// check to read; after the last it reads the closing bracket.
func (c *Checker) Item() bool {
	if c.run.broken != nil {
		return false
	}
	switch c.dec.PeekKind() {
	case ']':
		if _, err := c.dec.ReadToken(); err != nil {
			c.broke(err)
		}
		return false
	case 0:
		_, err := c.dec.ReadToken()
		c.broke(err)
		return false
	}
	return true
}

// Skip reads the next value and checks nothing.
func (c *Checker) Skip() {
	if c.run.broken != nil {
		return
	}
	if err := c.dec.SkipValue(); err != nil {
		c.broke(err)
	}
}

// Rest reads what is left of v, an object or array Read opened, checking
// nothing; for any other value it does nothing.
func (c *Checker) Rest(v Value) {
	switch {
	case !v.open:
	case v.Kind == KindObject:
		for c.Member() {
			c.Skip()
		}
	case v.Kind == KindArray:
		for c.Item() {
			c.Skip()
		}
	}
}

// pointer is the JSON pointer of the value c read last.
func (c *Checker) pointer() string {
	p := string(c.dec.StackPointer())
	switch {
	case c.parent == nil:
		return p
	case c.up:
		return string(jsontext.Pointer(c.parent.pointer()).Parent()) + p
	}
	return c.parent.pointer() + p
}

// report records that the value failed and says whether the violation is
// to be worded (not when only a verdict is asked for, nor after the
// document turned out unreadable).
func (c *Checker) report() bool {
	c.failed = true
	return !c.quiet && c.run.broken == nil
}

// add records a worded violation of the value c read last.
func (c *Checker) add(keyword, loc, msg string) {
	c.run.vs = append(c.run.vs, Violation{Pointer: c.pointer(), Keyword: keyword, Message: msg, KeywordLocation: loc})
}

// stop records err, a check that could not finish.
func (c *Checker) stop(err error) {
	c.failed = true
	if c.run.err == nil {
		c.run.err = fmt.Errorf("validation did not complete: %w", err)
	}
}

// Check checks raw, a value c read whole (Raw), with check and reports
// what it finds; it returns whether raw passed.
func (c *Checker) Check(raw []byte, check func(*Checker)) bool {
	s := c.sub(raw, false)
	check(s)
	ok := !s.failed
	c.release(s)
	if !ok {
		c.failed = true
	}
	return ok
}

// Matches reports whether raw, a value c read whole, passes check,
// reporting nothing.
func (c *Checker) Matches(raw []byte, check func(*Checker)) bool {
	s := c.sub(raw, true)
	check(s)
	ok := !s.failed
	c.release(s)
	return ok
}

// stringUnsafe is b as a string, for a call that keeps no reference to
// it once it returns.
func stringUnsafe(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// errBadSchema reports a schema value rt cannot read: generated code
// passes only what the generator checked.
var errBadSchema = errors.New("rt: a generated check holds a schema value it cannot read")
