package jsonpointer

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Index maps the pointer of every value of a document ("" is the root) to
// the byte offset at which the value starts.
type Index map[string]int

// NewIndex indexes doc, one JSON value. It fails on malformed JSON with
// the decoder's error. A name written twice indexes its last value, and
// a name's invalid UTF-8 is read as U+FFFD, as encoding/json reads them.
func NewIndex(doc []byte) (Index, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(doc), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	idx := Index{}
	for {
		// In an object, a token read after an even count is a name.
		kind, n := dec.StackIndex(dec.StackDepth())
		name := kind == '{' && n%2 == 0
		if dec.StackDepth() == 0 && n > 0 {
			if _, err := dec.ReadToken(); err != io.EOF {
				return nil, errors.New("data after the top-level value")
			}
			return idx, nil
		}
		off := ValueStart(doc, int(dec.InputOffset()))
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		if k := tok.Kind(); name || k == '}' || k == ']' {
			continue
		}
		idx[string(dec.StackPointer())] = off
	}
}

// ValueStart returns the offset of the value that follows offset off in
// doc: past the white space, the colon or the comma a decoder's last token
// left unread.
func ValueStart(doc []byte, off int) int {
	for ; off < len(doc); off++ {
		switch doc[off] {
		case ' ', '\t', '\r', '\n', ':', ',':
		default:
			return off
		}
	}
	return off
}

// Offset returns the offset of ptr, or of its nearest ancestor that is
// indexed (so a pointer to a missing member lands on its parent object).
func (x Index) Offset(ptr string) int {
	for {
		if off, ok := x[ptr]; ok {
			return off
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return 0
		}
		ptr = ptr[:i]
	}
}
