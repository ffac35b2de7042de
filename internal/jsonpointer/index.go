package jsonpointer

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Index maps the pointer of every value of a document ("" is the root) to
// the byte offset at which the value starts.
type Index map[string]int

// NewIndex indexes doc. It fails on malformed JSON with the decoder's
// error.
func NewIndex(doc []byte) (Index, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	idx := Index{}
	type frame struct {
		ptr    string
		object bool
		key    string // pending key in an object
		haveK  bool
		n      int // next array index
	}
	var stack []*frame
	start := func() int {
		off := int(dec.InputOffset())
		for off < len(doc) {
			switch doc[off] {
			case ' ', '\t', '\n', '\r', ',', ':':
				off++
				continue
			}
			break
		}
		return off
	}
	for {
		off := start()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		// A string in key position is a key, not a value.
		if top != nil && top.object && !top.haveK {
			top.key, top.haveK = tok.(string), true
			continue
		}
		ptr := ""
		if top != nil {
			if top.object {
				ptr = Append(top.ptr, top.key)
				top.haveK = false
			} else {
				ptr = top.ptr + "/" + strconv.Itoa(top.n)
				top.n++
			}
		}
		idx[ptr] = off
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{ptr: ptr, object: d == '{'})
		}
	}
	if len(stack) != 0 {
		return nil, errors.New("unexpected end of JSON input")
	}
	return idx, nil
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
