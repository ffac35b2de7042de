package gen

import (
	"strconv"
	"strings"
)

// goSrc writes Go source as gofmt prints it, for shapes whose layout is
// fixed: declarations and statements one to a line, indented by tabs, with
// no column to align. The validators are written with it rather than with
// jennifer, whose output go/format must parse and print again: for them
// that was most of generate's cost. The tests check that gofmt leaves what
// it writes unchanged.
type goSrc struct {
	b     []byte
	depth int // the indentation of the next line, in tabs
}

// line writes one line of parts at the current indentation.
func (w *goSrc) line(parts ...string) {
	for range w.depth {
		w.b = append(w.b, '\t')
	}
	for _, p := range parts {
		w.b = append(w.b, p...)
	}
	w.b = append(w.b, '\n')
}

// open writes a line of parts that opens a block, " {", and indents.
func (w *goSrc) open(parts ...string) {
	w.line(append(parts, " {")...)
	w.depth++
}

// close ends the innermost block.
func (w *goSrc) close() { w.end("}") }

// end ends the innermost block with the line end: "}", ")".
func (w *goSrc) end(end string) {
	w.depth--
	w.line(end)
}

// label writes a case or default clause ("case x:") of the switch just
// opened: at the switch's indentation, as gofmt puts it, with the clause's
// statements following at the block's.
func (w *goSrc) label(parts ...string) {
	w.depth--
	w.line(append(parts, ":")...)
	w.depth++
}

// blank writes an empty line.
func (w *goSrc) blank() { w.b = append(w.b, '\n') }

// comment writes text as // lines wrapped at 77 columns, as comment does.
func (w *goSrc) comment(text string) {
	for _, l := range commentLines(text) {
		w.line(l)
	}
}

// varBlock writes var ( name = value ... ) with the = aligned, as gofmt
// aligns a block of one-line specs.
func (w *goSrc) varBlock(names, values []string) {
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	w.line("var (")
	w.depth++
	for i, n := range names {
		w.line(n, strings.Repeat(" ", width-len(n)), " = ", values[i])
	}
	w.end(")")
}

// goCall is the Go call fn(args...).
func goCall(fn string, args ...string) string {
	return fn + "(" + strings.Join(args, ", ") + ")"
}

// goLit is s as an interpreted Go string literal, as jen.Lit writes it.
func goLit(s string) string { return strconv.Quote(s) }
