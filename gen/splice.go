package gen

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"
)

// literals holds the long string literals of a file, which go/format need
// not read: while the file is formatted each stands as a short placeholder,
// and goes in where it stands after. The printer copies a string literal as
// written (a raw one without a carriage return, which its scanner drops),
// and the placeholder takes the literal's place in a line of the same
// shape, so the file comes out as formatting it whole prints it. The
// schemas and descriptions are most of the bytes of schemas.go, and so
// most of formatting it.
type literals struct {
	lits   []string // each literal as written in Go
	inline bool     // the literals themselves, for a file formatted whole
}

// maxLineSize bounds the literals that a placeholder stands for: the
// printer aligns a line's parts by their sizes unless a part is longer than
// a line can be (1e6 bytes), and a placeholder never is.
const maxLineSize = 1e5

// raw is s, which holds no backquote and no carriage return, as a raw
// string literal.
func (r *literals) raw(s string) jen.Code { return r.stand("`"+s+"`", jen.Op("`"+s+"`")) }

// quoted is s as an interpreted string literal, as jen.Lit writes it.
func (r *literals) quoted(s string) jen.Code {
	return r.stand(fmt.Sprintf("%#v", s), jen.Lit(s)) // jen.Lit's own text
}

// stand returns a placeholder for lit, or code, lit as jennifer renders
// it, where the literal goes through formatting.
func (r *literals) stand(lit string, code jen.Code) jen.Code {
	if r.inline || len(lit) > maxLineSize {
		return code
	}
	r.lits = append(r.lits, lit)
	return jen.Op("`§" + strconv.Itoa(len(r.lits)-1) + "§`")
}

// splice puts each literal in where its placeholder is in src. ok is false
// unless every placeholder is there once and nothing else looks like one
// (text from the pages could), and then the file is formatted whole.
func (r *literals) splice(src []byte) (_ []byte, ok bool) {
	n := len(src)
	for _, l := range r.lits {
		n += len(l)
	}
	out := make([]byte, 0, n)
	seen := make([]bool, len(r.lits))
	open, shut := []byte("`§"), []byte("§`")
	for {
		i := bytes.Index(src, open)
		if i < 0 {
			break
		}
		j := bytes.Index(src[i+len(open):], shut)
		if j < 0 {
			return nil, false
		}
		k, err := strconv.Atoi(string(src[i+len(open) : i+len(open)+j]))
		if err != nil || k < 0 || k >= len(r.lits) || seen[k] {
			return nil, false
		}
		seen[k] = true
		out = append(append(out, src[:i]...), r.lits[k]...)
		src = src[i+len(open)+j+len(shut):]
	}
	for _, s := range seen {
		if !s {
			return nil, false
		}
	}
	return append(out, src...), true
}
