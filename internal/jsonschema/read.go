package jsonschema

import (
	"bytes"
	"errors"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prickle-dev/prickle/internal/jsonpointer"
)

// errDuplicate stops a read that met a name written twice.
var errDuplicate = errors.New("a name written twice")

// reader builds a document's schemas in one pass over its JSON, where
// parse splits each object anew at every level. A name written twice in an
// object the model splits makes it give up (errDuplicate), and the
// document is parsed the other way, whose rule for it (first place, last
// value) read leaves to parse.
type reader struct {
	d   *Document
	dec *jsontext.Decoder
	raw []byte
	err error
}

// read returns the document's root schema, or an error when raw, with no
// white space around it, is not one JSON value or holds a name written
// twice (errDuplicate).
func read(d *Document, raw []byte) (*Schema, error) {
	r := &reader{d: d, raw: raw,
		dec: jsontext.NewDecoder(bytes.NewBuffer(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))}
	s := r.schema("")
	if r.err == nil && int(r.dec.InputOffset()) != len(raw) {
		r.fail(errors.New("data after the top-level value"))
	}
	if r.err != nil {
		return nil, r.err
	}
	return s, nil
}

// start returns the offset of the next value: past the white space, the
// colon or the comma after the last token read.
func (r *reader) start() int { return jsonpointer.ValueStart(r.raw, int(r.dec.InputOffset())) }

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// token reads one token, which must be of kind k.
func (r *reader) token(k jsontext.Kind) jsontext.Token {
	t, err := r.dec.ReadToken()
	if err != nil {
		r.fail(err)
	} else if t.Kind() != k {
		r.fail(errors.New("unexpected token"))
	}
	return t
}

// value reads and returns the next value as written.
func (r *reader) value() []byte {
	start := r.start()
	if err := r.dec.SkipValue(); err != nil {
		r.fail(err)
		return nil
	}
	return r.raw[start:r.dec.InputOffset()]
}

// schema reads the next value as the schema at ptr.
func (r *reader) schema(ptr string) *Schema {
	if r.dec.PeekKind() != '{' {
		v := r.value()
		if r.err != nil {
			return nil // not JSON: read gives up
		}
		return r.d.parse(ptr, v) // not an object: nothing to split
	}
	start := r.start()
	s := &Schema{doc: r.d, ptr: ptr}
	r.d.byPtr[ptr] = s
	r.token('{')
	for r.err == nil && r.dec.PeekKind() != '}' {
		name := r.token('"').String()
		if indexOf(s.kws, name) >= 0 {
			r.fail(errDuplicate)
			break
		}
		k := &Keyword{Name: name, Ptr: jsonpointer.Append(ptr, name)}
		vstart := r.start()
		switch kind := r.dec.PeekKind(); {
		case Info(name).Form == FormSchema:
			k.schema = r.schema(k.Ptr)
		case Info(name).Form == FormSchemaList && kind == '[':
			r.token('[')
			for i := 0; r.err == nil && r.dec.PeekKind() != ']'; i++ {
				k.list = append(k.list, r.schema(jsonpointer.AppendIndex(k.Ptr, i)))
			}
			r.token(']')
		case Info(name).Form == FormSchemaMap && kind == '{':
			r.token('{')
			for r.err == nil && r.dec.PeekKind() != '}' {
				mname := r.token('"').String()
				for _, m := range k.members {
					if m.Name == mname {
						r.fail(errDuplicate)
					}
				}
				k.members = append(k.members, Member{Name: mname, Schema: r.schema(jsonpointer.Append(k.Ptr, mname))})
			}
			r.token('}')
		default:
			r.value()
		}
		if r.err != nil {
			return nil
		}
		k.Value = r.raw[vstart:r.dec.InputOffset()]
		s.kws = append(s.kws, k)
	}
	r.token('}')
	if r.err != nil {
		return nil
	}
	s.raw = r.raw[start:r.dec.InputOffset()]
	return s
}
