package spec

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"slices"
	"strconv"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Marshal renders the canonical JSON of the spec, with its hash (see
// Hash), computed from what the spec holds now. s is not modified.
func (s *Spec) Marshal() ([]byte, error) {
	// The document is encoded after room for the hash: its start, up to
	// the empty hash, then moves back over the room, and the hash goes in
	// behind it.
	room := len(hashPrefix) + hex.EncodedLen(sha256.Size)
	e, err := encode(&document{Format: s.Format, Spec: s}, room)
	if err != nil {
		return nil, err
	}
	hash, err := e.hash(s)
	if err != nil {
		return nil, err
	}
	out, doc := e.out, e.doc()
	prefix := fmt.Sprintf("{\n  \"format\": %d,\n  \"hash\": \"", s.Format)
	if !bytes.HasPrefix(doc, []byte(prefix)) {
		return nil, fmt.Errorf("encode spec: unexpected start %.40q", doc)
	}
	copy(out, prefix)
	copy(out[len(prefix):], hash)
	return out, nil
}

// Hash returns the spec's hash, "sha256:" and the hex SHA-256 of its
// canonical document with the hash empty and the file names left out
// (every "page" "file" empty and every "pos" ":line:col"), written compact
// (no white space between tokens, as json.Compact writes it). The hash covers
// what the pages say, and where in each page, but not where the pages are:
// the same pages read from another folder hash the same. It is computed
// from what s holds at each call (one encoding of the whole document), so
// it is never stale; a caller that needs it more than once keeps it. It is
// empty only for a spec that does not encode (a JSON block changed to
// something that is not JSON).
func (s *Spec) Hash() string {
	e, err := encode(&document{Format: s.Format, Spec: s}, 0)
	if err != nil {
		return ""
	}
	h, err := e.hash(s)
	if err != nil {
		return ""
	}
	return h
}

const hashPrefix = "sha256:"

// encoding is a document as encode wrote it, and where its file names are.
type encoding struct {
	out  []byte // room, then the document
	room int
	// pos holds the span of each Pos token ("file:line:col"), and keep
	// the length of its end that is not the file. pages holds the span of
	// each PageText object. Offsets count from the document's start.
	pos   []span
	keep  []int
	pages []span
	// legacy is set when encoding/json wrote the document: the spans are
	// not known.
	legacy bool
}

type span struct{ start, end int }

// doc is the document, without the room before it.
func (e *encoding) doc() []byte { return e.out[e.room:] }

// hash is the hash of the document e holds, the spec s's: its bytes with
// the file names left out.
func (e *encoding) hash(s *Spec) (string, error) {
	if e.legacy {
		// Rare (see encode): the file names are left out of a copy, and
		// the copy encoded.
		c, err := encode(&document{Format: s.Format, Spec: s.withoutFiles()}, 0)
		if err != nil {
			return "", err
		}
		e = c
	}
	skips, err := e.fileSpans()
	if err != nil {
		return "", err
	}
	c := compactor{h: sha256.New(), skips: skips}
	c.write(e.doc())
	return hashPrefix + hex.EncodeToString(c.sum()), nil
}

// compactor hashes a document as encode indents it, written compact: it
// leaves out each line break with the indentation after it, the space
// after each member's name (which starts its line), and the spans skips
// (inside strings, in order). Outside strings, encode writes no other
// white space, and inside them, no line break.
type compactor struct {
	h     hash.Hash
	skips []span
	buf   []byte // what goes to h next: h takes large writes best
}

func (c *compactor) write(doc []byte) {
	c.buf = make([]byte, 0, 64<<10)
	for ls := 0; ls < len(doc); {
		le := bytes.IndexByte(doc[ls:], '\n')
		if le < 0 {
			le = len(doc)
		} else {
			le += ls
		}
		at := ls
		for at+8 <= le && binary.LittleEndian.Uint64(doc[at:]) == eightSpaces {
			at += 8
		}
		for at < le && doc[at] == ' ' {
			at++
		}
		if n := nameEnd(doc[at:le]); n > 0 && at+n+1 < le && doc[at+n] == ':' && doc[at+n+1] == ' ' {
			c.emit(doc, at, at+n+1)
			at += n + 2
		}
		c.emit(doc, at, le)
		ls = le + 1
	}
}

// nameEnd is the length of the string that line starts with, quotes
// included, or 0.
func nameEnd(line []byte) int {
	if len(line) == 0 || line[0] != '"' {
		return 0
	}
	for i := 1; i < len(line); i++ {
		j := bytes.IndexByte(line[i:], '"')
		if j < 0 {
			return 0
		}
		i += j
		// The quote ends the string unless an odd number of backslashes
		// escape it.
		k := i
		for k > 1 && line[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			return i + 1
		}
	}
	return 0
}

// eightSpaces is eight bytes of indentation read as one number.
const eightSpaces = 0x2020202020202020

// emit hashes doc[from:to] less the skips in it.
func (c *compactor) emit(doc []byte, from, to int) {
	for len(c.skips) > 0 && c.skips[0].start < to {
		sk := c.skips[0]
		c.add(doc[from:max(from, sk.start)])
		from = max(from, sk.end)
		c.skips = c.skips[1:]
	}
	c.add(doc[from:max(from, to)])
}

func (c *compactor) add(b []byte) {
	if len(c.buf)+len(b) > cap(c.buf) {
		c.h.Write(c.buf)
		c.buf = c.buf[:0]
	}
	if len(b) > cap(c.buf) {
		c.h.Write(b)
		return
	}
	c.buf = append(c.buf, b...)
}

func (c *compactor) sum() []byte {
	c.h.Write(c.buf)
	return c.h.Sum(nil)
}

// fileSpans returns the spans of the document's file names, in order: the
// file of each Pos, and the inside of each page's "file" string.
func (e *encoding) fileSpans() ([]span, error) {
	doc := e.doc()
	files := make([]span, 0, len(e.pages))
	for _, p := range e.pages {
		f, err := pageFile(doc[p.start:p.end])
		if err != nil {
			return nil, fmt.Errorf("encode spec: page at offset %d: %w", p.start, err)
		}
		files = append(files, span{p.start + f.start, p.start + f.end})
	}
	// Both lists are in order; they merge.
	out := make([]span, 0, len(e.pos)+len(files))
	for i, p := range e.pos {
		q := bytes.IndexByte(doc[p.start:p.end], '"')
		if q < 0 {
			return nil, fmt.Errorf("encode spec: no position at offset %d", p.start)
		}
		for len(files) > 0 && files[0].start < p.start {
			out, files = append(out, files[0]), files[1:]
		}
		out = append(out, span{p.start + q + 1, p.end - e.keep[i]})
	}
	return append(out, files...), nil
}

// pageFile returns the span of the inside of the "file" string of a
// PageText object, which starts after the separator before it.
func pageFile(obj []byte) (span, error) {
	lead := bytes.IndexByte(obj, '{')
	if lead < 0 {
		return span{}, fmt.Errorf("not an object")
	}
	dec := jsontext.NewDecoder(bytes.NewReader(obj[lead:]), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if _, err := dec.ReadToken(); err != nil {
		return span{}, err
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return span{}, err
		}
		isFile := name.String() == "file"
		v, err := dec.ReadValue()
		if err != nil {
			return span{}, err
		}
		if isFile {
			end := lead + int(dec.InputOffset())
			return span{end - len(v) + 1, end - 1}, nil
		}
	}
	return span{}, fmt.Errorf("no file")
}

// pageTextFields is PageText without the marshaler encode gives it.
type pageTextFields PageText

// encode writes v, after room bytes, as encoding/json's Encoder writes it
// with SetEscapeHTML(false) and a two-space indent, byte for byte, and
// notes where the file names are. go-json-experiment's encoder with v1's
// options writes the same, indenting as it writes instead of in a second
// pass over the document, except for invalid UTF-8: both replace it with
// U+FFFD, which only encoding/json escapes. A document in which a U+FFFD
// appears is written again, by encoding/json.
func encode(v any, room int) (*encoding, error) {
	e := &encoding{room: room}
	var text []byte // a Pos's text, file:line:col
	marshalers := jsonv2.JoinMarshalers(
		jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, p Pos) error {
			start := int(enc.OutputOffset())
			text = append(append(text[:0], p.File...), ':')
			text = append(strconv.AppendInt(text, int64(p.Line), 10), ':')
			text = strconv.AppendInt(text, int64(p.Col), 10)
			if err := enc.WriteToken(jsontext.String(string(text))); err != nil {
				return err
			}
			e.pos = append(e.pos, span{start, int(enc.OutputOffset())})
			e.keep = append(e.keep, len(text)-len(p.File)+1) // ":line:col" and the quote
			return nil
		}),
		jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, p PageText) error {
			start := int(enc.OutputOffset())
			if err := jsonv2.MarshalEncode(enc, (*pageTextFields)(&p)); err != nil {
				return err
			}
			e.pages = append(e.pages, span{start, int(enc.OutputOffset())})
			return nil
		}),
	)
	var w chunks
	defer w.release()
	watch := &fffdWatch{w: &w}
	if err := jsonv2.MarshalWrite(watch, v, jsonv1.DefaultOptionsV1(), jsontext.EscapeForHTML(false), jsontext.WithIndent("  "), jsonv2.WithMarshalers(marshalers)); err != nil {
		return nil, fmt.Errorf("encode spec: %w", err)
	}
	if !watch.seen {
		w.Write([]byte{'\n'})
		e.out = w.appendTo(make([]byte, room, room+w.n))
		return e, nil
	}
	var b bytes.Buffer
	b.Write(make([]byte, room))
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode spec: %w", err)
	}
	return &encoding{out: b.Bytes(), room: room, legacy: true}, nil
}

// chunks keeps what is written to it in blocks that are never copied as
// they fill: the document is copied out once, at its size.
type chunks struct {
	full [][]byte
	cur  []byte
	n    int
}

const chunkSize = 64 << 10

var chunkPool = sync.Pool{New: func() any { return new([chunkSize]byte) }}

func (c *chunks) Write(p []byte) (int, error) {
	c.n += len(p)
	n := len(p)
	for len(p) > 0 {
		if len(c.cur) == cap(c.cur) {
			if c.cur != nil {
				c.full = append(c.full, c.cur)
			}
			c.cur = chunkPool.Get().(*[chunkSize]byte)[:0]
		}
		k := copy(c.cur[len(c.cur):cap(c.cur)], p)
		c.cur, p = c.cur[:len(c.cur)+k], p[k:]
	}
	return n, nil
}

// appendTo appends what was written to dst.
func (c *chunks) appendTo(dst []byte) []byte {
	for _, f := range c.full {
		dst = append(dst, f...)
	}
	return append(dst, c.cur...)
}

// release gives the blocks back for the next document.
func (c *chunks) release() {
	for _, f := range append(c.full, c.cur) {
		if cap(f) == chunkSize {
			chunkPool.Put((*[chunkSize]byte)(f[:chunkSize]))
		}
	}
	*c = chunks{}
}

// withoutFiles is a copy of s with every file name left out: what Hash
// hashes. Only encode's rare fallback needs it; TestHashWithoutFiles
// holds it to the spans that encode notes.
func (s *Spec) withoutFiles() *Spec {
	c := *s
	paras := func(ps []Paragraph) []Paragraph {
		out := slices.Clone(ps)
		for i := range out {
			out[i].Pos.File = ""
		}
		return out
	}
	block := func(b *JSONBlock) *JSONBlock {
		if b == nil {
			return nil
		}
		return &JSONBlock{JSON: b.JSON, Pos: Pos{Line: b.Pos.Line, Col: b.Pos.Col}}
	}
	c.Preamble, c.Notes = paras(s.Preamble), paras(s.Notes)
	c.Catalog = slices.Clone(s.Catalog)
	for i := range c.Catalog {
		c.Catalog[i].Pos.File = ""
	}
	c.Tools = make([]*Tool, len(s.Tools))
	for i, t := range s.Tools {
		ct := *t
		ct.Pos.File, ct.DocURLPos.File = "", ""
		ct.Description, ct.Notes = paras(t.Description), paras(t.Notes)
		ct.Sentences = slices.Clone(t.Sentences)
		for j := range ct.Sentences {
			ct.Sentences[j].Pos.File = ""
		}
		ct.ExampleInput, ct.InputSchema, ct.OutputSchema = block(t.ExampleInput), block(t.InputSchema), block(t.OutputSchema)
		ct.Page.File, ct.Page.TitlePos.File = "", ""
		ct.Page.Preamble = paras(t.Page.Preamble)
		c.Tools[i] = &ct
	}
	return &c
}

// fffdWatch passes writes on and notes a U+FFFD among them, also one
// split between two writes.
type fffdWatch struct {
	w    io.Writer
	tail []byte // the last bytes written, fewer than U+FFFD's
	seen bool
}

var fffd = []byte("\uFFFD")

func (w *fffdWatch) Write(p []byte) (int, error) {
	if k := len(fffd) - 1; !w.seen {
		edge := append(w.tail, p[:min(len(p), k)]...)
		w.seen = bytes.Contains(edge, fffd) || bytes.Contains(p, fffd)
		if len(p) < k {
			all := edge // the old tail, then all of p
			w.tail = append(w.tail[:0], all[max(0, len(all)-k):]...)
		} else {
			w.tail = append(w.tail[:0], p[len(p)-k:]...)
		}
	}
	return w.w.Write(p)
}

// Unmarshal reads a canonical spec document (as written by Marshal).
func Unmarshal(data []byte) (*Spec, error) {
	var s Spec
	d := document{Spec: &s}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	s.Format = d.Format
	if s.Format != FormatVersion {
		return nil, fmt.Errorf("read spec: format %d, this tool reads format %d", s.Format, FormatVersion)
	}
	for _, t := range s.Tools {
		for _, b := range []*JSONBlock{t.ExampleInput, t.InputSchema, t.OutputSchema} {
			if b != nil && len(b.JSON) > 0 {
				c, err := compactJSON(b.JSON)
				if err != nil {
					return nil, fmt.Errorf("read spec: tool %s: %w", t.Name, err)
				}
				b.JSON, b.body, b.parsed = c, c, true
			}
		}
	}
	return &s, nil
}
