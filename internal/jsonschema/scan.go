package jsonschema

import (
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prickle-dev/prickle/internal/jsonpointer"
)

// PropertyItemsEnums returns, for every schema of a document that has a
// property name whose "items" has an "enum", that "enum" keyword, in
// Walk's order. It scans raw, the document's JSON, without building the
// model; where the scan cannot promise Parse's reading of raw (a name
// written twice in a schema or in a map of schemas, a name written with
// escapes, invalid UTF-8), it walks doc(), the parsed document, which may
// be nil.
func PropertyItemsEnums(raw []byte, name string, doc func() *Document) []*Keyword {
	if found, ok := scanPropertyItemsEnums(raw, name); ok {
		return found
	}
	return walkPropertyItemsEnums(doc(), name)
}

// walkPropertyItemsEnums is PropertyItemsEnums' rule, on the model.
func walkPropertyItemsEnums(d *Document, name string) []*Keyword {
	if d == nil {
		return nil
	}
	var found []*Keyword
	d.Walk(func(s *Schema) {
		if p := s.Property(name); p != nil {
			if items := p.Sub("items"); items != nil {
				if k := items.Get("enum"); k != nil {
					found = append(found, k)
				}
			}
		}
	})
	return found
}

// scanPropertyItemsEnums is PropertyItemsEnums' scan; ok is false when it
// cannot promise Parse's reading of raw. The decoder reads raw in place (a
// bytes.Buffer), and leaves names written twice to the scan, which minds
// them only where read does: in schemas and in maps of them.
func scanPropertyItemsEnums(raw []byte, name string) (found []*Keyword, ok bool) {
	raw = bytes.TrimSpace(raw)
	sc := &scanner{raw: raw, name: name, names: make([][]byte, 0, 32),
		dec: jsontext.NewDecoder(bytes.NewBuffer(raw), jsontext.AllowDuplicateNames(true))}
	if sc.schema(plainSchema, 0) != nil {
		return nil, false
	}
	if _, err := sc.dec.ReadToken(); err != io.EOF {
		return nil, false
	}
	// A schema's own match comes before its children's, as in Walk.
	slices.SortStableFunc(sc.found, func(a, b scanned) int { return a.owner - b.owner })
	for _, f := range sc.found {
		found = append(found, f.k)
	}
	return found, true
}

// scanner is scanPropertyItemsEnums' one pass: it follows the keyword table
// into every subschema, as read does, and skips every other value whole.
type scanner struct {
	raw   []byte
	name  string
	dec   *jsontext.Decoder
	next  int // the pre-order number of the next schema, Walk's order
	found []scanned
	names [][]byte // the names of the objects being read, innermost last
}

// errUnread stops a scan that meets what it leaves to the walk.
var errUnread = errors.New("not read by the scan")

// scanned is an enum found, with the number of the schema whose property
// holds it.
type scanned struct {
	owner int
	k     *Keyword
}

// The roles a scanned schema can have on the way to an enum.
const (
	plainSchema    = iota
	propertySchema // the property name of a "properties"
	itemsSchema    // the "items" of such a property
)

// schema reads the next value as a schema of the given role; owner is the
// number of the schema that holds the property, for the other roles.
func (sc *scanner) schema(role, owner int) error {
	if sc.dec.PeekKind() != '{' {
		return sc.dec.SkipValue()
	}
	self := sc.next
	sc.next++
	return sc.object(func(kw []byte) error {
		kind := sc.dec.PeekKind()
		switch form := keywordTable[string(kw)].Form; {
		case role == itemsSchema && string(kw) == "enum":
			ptr := string(sc.dec.StackPointer())
			start := jsonpointer.ValueStart(sc.raw, int(sc.dec.InputOffset()))
			if err := sc.dec.SkipValue(); err != nil {
				return err
			}
			v := sc.raw[start:sc.dec.InputOffset()]
			sc.found = append(sc.found, scanned{owner: owner, k: &Keyword{Name: "enum", Ptr: ptr, Value: v}})
			return nil
		case role == propertySchema && string(kw) == "items":
			return sc.schema(itemsSchema, owner)
		case form == FormSchema:
			return sc.schema(plainSchema, 0)
		case form == FormSchemaList && kind == '[':
			return sc.list()
		case form == FormSchemaMap && kind == '{':
			// In "properties", the member named sc.name is a property
			// schema of this one.
			properties := string(kw) == "properties"
			return sc.object(func(m []byte) error {
				if properties && string(m) == sc.name {
					return sc.schema(propertySchema, self)
				}
				return sc.schema(plainSchema, 0)
			})
		default:
			return sc.dec.SkipValue()
		}
	})
}

// list reads an array of schemas.
func (sc *scanner) list() error {
	if _, err := sc.dec.ReadToken(); err != nil {
		return err
	}
	for sc.dec.PeekKind() != ']' {
		if err := sc.schema(plainSchema, 0); err != nil {
			return err
		}
	}
	_, err := sc.dec.ReadToken()
	return err
}

// object reads the next value, an object (a schema, or a map of schemas),
// and calls member with each name, the decoder at the member's value.
func (sc *scanner) object(member func(name []byte) error) error {
	if _, err := sc.dec.ReadToken(); err != nil {
		return err
	}
	from := len(sc.names)
	defer func() { sc.names = sc.names[:from] }()
	for sc.dec.PeekKind() != '}' {
		name, err := sc.readName(from)
		if err != nil {
			return err
		}
		if err := member(name); err != nil {
			return err
		}
	}
	_, err := sc.dec.ReadToken()
	return err
}

// readName reads the name of a member of the object whose names start at
// sc.names[from]. A name written with escapes, or twice, is left to the
// walk (errUnread).
func (sc *scanner) readName(from int) ([]byte, error) {
	v, err := sc.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(v, '\\') >= 0 {
		return nil, errUnread
	}
	end := int(sc.dec.InputOffset()) // raw's bytes, which stay
	name := sc.raw[end-len(v)+1 : end-1]
	for _, n := range sc.names[from:] {
		if bytes.Equal(n, name) {
			return nil, errUnread
		}
	}
	sc.names = append(sc.names, name)
	return name, nil
}
