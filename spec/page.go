package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Section names, in the order a page must give them.
const (
	SectionExample = "Example input"
	SectionInput   = "Input schema"
	SectionOutput  = "Output schema"
)

var sectionOrder = []string{SectionExample, SectionInput, SectionOutput}

// readOnline is the text of the link that closes every page.
const readOnline = "Read online"

var toolNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Paragraph is a paragraph of a page, kept as its markdown source.
type Paragraph struct {
	Text string `json:"text"`
	Pos  Pos    `json:"pos"`
}

// JSONBlock is the JSON of a ```json fence, kept exactly: key order and
// number literals as written.
type JSONBlock struct {
	JSON json.RawMessage `json:"json"`
	Pos  Pos             `json:"pos"` // the first line inside the fence

	page   *Page
	segs   []segment // where the body's bytes sit in the page
	body   []byte    // the fence's body as written
	parsed bool      // JSON is valid
	index  jsonpointer.Index
	schema struct {
		once sync.Once
		doc  *jsonschema.Document
	}
}

type segment struct{ start, stop, bodyOff int }

// Page is one parsed tool-reference page.
type Page struct {
	File string
	Src  []byte

	Title       string
	TitlePos    Pos
	Preamble    []Paragraph
	Tool        string
	ToolPos     Pos
	Description []Paragraph
	Sections    map[string]*JSONBlock
	SectionPos  map[string]Pos
	Notes       []Paragraph
	DocURL      string
	DocURLPos   Pos

	lines []int // byte offsets of line starts
}

// Pos converts a byte offset in the page into a position.
func (p *Page) Pos(off int) Pos {
	i := sort.Search(len(p.lines), func(i int) bool { return p.lines[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	return Pos{File: p.File, Line: i + 1, Col: off - p.lines[i] + 1}
}

// endPos is where the page ends: the start of its last line (a final
// newline does not open a line of its own).
func (p *Page) endPos() Pos {
	end := len(p.Src)
	if end > 0 && p.Src[end-1] == '\n' {
		end--
	}
	pos := p.Pos(end)
	pos.Col = 1
	return pos
}

// SrcOffset maps an offset in the fence body to an offset in the page.
func (b *JSONBlock) SrcOffset(bodyOff int) int {
	for i := len(b.segs) - 1; i >= 0; i-- {
		if s := b.segs[i]; bodyOff >= s.bodyOff {
			return s.start + bodyOff - s.bodyOff
		}
	}
	if len(b.segs) > 0 {
		return b.segs[0].start
	}
	return 0
}

// PosAt maps an offset in the fence body to a position in the page.
func (b *JSONBlock) PosAt(bodyOff int) Pos {
	if b.page == nil {
		return b.Pos
	}
	return b.page.Pos(b.SrcOffset(bodyOff))
}

// Body returns the fence's body exactly as written.
func (b *JSONBlock) Body() []byte { return b.body }

// Valid reports whether the block holds syntactically valid JSON.
func (b *JSONBlock) Valid() bool { return b.parsed }

var md = goldmark.New()

// ParsePage parses one page. It always returns a page (possibly partial)
// and the structural findings: sections missing, repeated or misordered,
// JSON syntax errors, a link that disagrees with the heading, and so on.
func ParsePage(file string, src []byte) (*Page, Diagnostics) {
	p := &Page{File: file, Src: src, Sections: map[string]*JSONBlock{}, SectionPos: map[string]Pos{}, lines: lineStarts(src)}
	pp := &pageParser{p: p, lastSection: -1}
	pp.report = func(pos Pos, sev Severity, rule, format string, args ...any) {
		pp.ds = append(pp.ds, Diagnostic{Pos: pos, Severity: sev, Rule: rule, Message: fmt.Sprintf(format, args...)})
	}
	doc := md.Parser().Parse(text.NewReader(src))
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if !pp.block(n) {
			break // the rest of the page belongs to a second tool
		}
	}
	pp.finish()
	return p, pp.ds
}

// lineStarts returns the byte offsets at which the lines of src start.
func lineStarts(src []byte) []int {
	lines := make([]int, 1, bytes.Count(src, []byte{'\n'})+1)
	for off := 0; ; {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return lines
		}
		off += i + 1
		lines = append(lines, off)
	}
}

// Where ParsePage is in a page: what the next block may be.
const (
	stTop = iota
	stPreamble
	stDescription
	stSection // just after a ### heading: a fence must follow
	stAfterFence
	stNotes
)

// pageParser reads a page's top-level blocks one by one into p.
type pageParser struct {
	p      *Page
	ds     Diagnostics
	report func(pos Pos, sev Severity, rule, format string, args ...any)

	state       int
	curSection  string
	lastSection int        // index in sectionOrder of the latest section read
	lastPara    *Paragraph // trailing paragraph: the link, if it is one
	beforeTitle Pos        // the first text before the # title
	skipFence   bool       // the next fence belongs to a section already reported
	notesFrom   int        // index in p.Notes of the first paragraph after the last fence
}

// block reads one top-level block; it returns false when the rest of the
// page is not to be read.
func (pp *pageParser) block(n ast.Node) bool {
	p := pp.p
	pos := p.Pos(nodeStart(n))
	if pp.skipFence {
		pp.skipFence = false
		if _, ok := n.(*ast.FencedCodeBlock); ok {
			return true // the body of a repeated or unknown section
		}
	}
	if pp.state == stSection {
		if fb, ok := n.(*ast.FencedCodeBlock); ok {
			p.Sections[pp.curSection] = p.parseFence(fb, pp.curSection, pp.report)
			pp.state = stAfterFence
			return true
		}
		pp.report(p.SectionPos[pp.curSection], Error, "fence-missing", "section %q has no ```json fence after its heading", pp.curSection)
		pp.state = stAfterFence
	}
	switch n := n.(type) {
	case *ast.Heading:
		return pp.heading(n, pos)
	case *ast.Paragraph:
		pp.paragraph(n, pos)
	case *ast.FencedCodeBlock:
		pp.report(pos, Error, "fence-unexpected", "code fence outside a section")
	default:
		pp.report(pos, Error, "block-unexpected", "unexpected %s block; a page holds headings, paragraphs and ```json fences", n.Kind())
	}
	return true
}

// heading reads a heading: the page's title, its tool or a section.
func (pp *pageParser) heading(n *ast.Heading, pos Pos) bool {
	title := headingText(n, pp.p.Src)
	switch n.Level {
	case 1:
		pp.title(title, pos)
	case 2:
		return pp.tool(title, pos)
	case 3:
		pp.section(title, pos)
	default:
		pp.report(pos, Error, "heading-level", "unexpected level-%d heading %q", n.Level, title)
	}
	return true
}

func (pp *pageParser) title(title string, pos Pos) {
	p := pp.p
	if p.TitlePos.Line != 0 {
		pp.report(pos, Error, "heading-duplicate", "second page title %q; a page has one # title", title)
		return
	}
	if pp.state != stTop {
		pp.report(pos, Error, "section-order", "page title %q must come first", title)
	}
	p.Title, p.TitlePos = title, pos
	pp.state = stPreamble
}

// tool reads the tool's heading; it returns false for a second tool, to
// which the rest of the page belongs.
func (pp *pageParser) tool(name string, pos Pos) bool {
	p := pp.p
	if p.Tool != "" {
		pp.report(pos, Error, "tool-multiple", "second tool %q on the page of %q; a page documents one tool", name, p.Tool)
		return false
	}
	if !toolNameRE.MatchString(name) {
		pp.report(pos, Error, "tool-name", "tool name %q is not snake_case (want %s)", name, toolNameRE)
	}
	p.Tool, p.ToolPos = name, pos
	pp.state = stDescription
	return true
}

// section reads a section's heading; its fence comes next.
func (pp *pageParser) section(title string, pos Pos) {
	p := pp.p
	idx := indexOf(sectionOrder, title)
	switch {
	case p.Tool == "":
		pp.report(pos, Error, "section-order", "section %q comes before the tool heading", title)
	case idx < 0:
		pp.report(pos, Error, "section-unknown", "unknown section %q (want %s)", title, strings.Join(quoteAll(sectionOrder), ", "))
		pp.state, pp.skipFence = stAfterFence, true
		return
	case p.Sections[title] != nil || p.SectionPos[title].Line != 0:
		pp.report(pos, Error, "section-duplicate", "section %q repeated (first at line %d)", title, p.SectionPos[title].Line)
		pp.state, pp.skipFence = stAfterFence, true
		return
	case idx < pp.lastSection:
		pp.report(pos, Error, "section-order", "section %q must come before %q", title, sectionOrder[pp.lastSection])
	}
	if idx < 0 {
		return
	}
	if pp.state == stNotes {
		// The paragraphs since the last fence sit between sections.
		pp.report(p.Notes[pp.notesFrom].Pos, Error, "section-order", "paragraph between sections; notes come after %q", SectionOutput)
	}
	pp.lastSection = max(pp.lastSection, idx)
	pp.curSection = title
	p.SectionPos[title] = pos
	pp.state = stSection
}

// paragraph files a paragraph by where it stands: preamble, description
// or notes.
func (pp *pageParser) paragraph(n *ast.Paragraph, pos Pos) {
	p := pp.p
	para := Paragraph{Text: paragraphText(n, p.Src), Pos: pos}
	switch pp.state {
	case stTop:
		if pp.beforeTitle.Line == 0 {
			pp.beforeTitle = pos
		}
	case stPreamble:
		p.Preamble = append(p.Preamble, para)
	case stDescription:
		p.Description = append(p.Description, para)
	case stAfterFence, stNotes:
		if pp.state == stAfterFence {
			pp.notesFrom = len(p.Notes)
		}
		p.Notes = append(p.Notes, para)
		pp.lastPara = &p.Notes[len(p.Notes)-1]
		pp.state = stNotes
	}
}

// finish reports, once every block is read, what the page lacks, and
// takes the closing link off its notes.
func (pp *pageParser) finish() {
	p := pp.p
	if pp.state == stSection {
		pp.report(p.SectionPos[pp.curSection], Error, "fence-missing", "section %q has no ```json fence after its heading", pp.curSection)
	}
	switch {
	case p.TitlePos.Line == 0:
		pp.report(Pos{File: p.File, Line: 1, Col: 1}, Error, "title-missing", "the page has no # title")
	case pp.beforeTitle.Line != 0:
		pp.report(pp.beforeTitle, Error, "title-missing", "text before the page's # title")
	}
	if p.Tool == "" {
		pp.report(p.endPos(), Error, "tool-missing", "the page documents no tool (no ## heading)")
		return
	}
	if len(p.Description) == 0 {
		pp.report(p.ToolPos, Error, "description-missing", "tool %q has no description paragraph", p.Tool)
	}
	for _, s := range sectionOrder {
		if p.SectionPos[s].Line == 0 {
			pp.report(p.ToolPos, Error, "section-missing", "tool %q has no %q section", p.Tool, s)
		}
	}
	// The closing [Read online](URL) link.
	if pp.lastPara != nil {
		if u, ok := linkParagraph(pp.lastPara.Text); ok {
			p.DocURL, p.DocURLPos = u, pp.lastPara.Pos
			p.Notes = p.Notes[:len(p.Notes)-1]
		}
	}
	if p.DocURL == "" {
		pp.report(p.endPos(), Error, "link-missing", "the page does not end with a [%s](URL) link", readOnline)
	} else {
		checkDocURL(p, pp.report)
	}
}

func checkDocURL(p *Page, report func(Pos, Severity, string, string, ...any)) {
	u, err := url.Parse(p.DocURL)
	if err != nil || !u.IsAbs() {
		report(p.DocURLPos, Error, "link-url", "doc link %q is not an absolute URL", p.DocURL)
		return
	}
	switch t := u.Query().Get("tool"); {
	case t == "":
		report(p.DocURLPos, Error, "link-tool", "doc link %q has no tool= parameter", p.DocURL)
	case t != p.Tool:
		report(p.DocURLPos, Error, "link-tool", "doc link names tool=%s but the heading documents %q", t, p.Tool)
	}
}

// linkParagraph recognises a paragraph that is exactly [Read online](URL).
func linkParagraph(s string) (string, bool) {
	const pre = "[" + readOnline + "]("
	if !strings.HasPrefix(s, pre) || !strings.HasSuffix(s, ")") {
		return "", false
	}
	u := s[len(pre) : len(s)-1]
	if u == "" || strings.ContainsAny(u, " \t\n()") {
		return "", false
	}
	return u, true
}

func (p *Page) parseFence(fb *ast.FencedCodeBlock, section string, report func(Pos, Severity, string, string, ...any)) *JSONBlock {
	b := &JSONBlock{page: p}
	lines := fb.Lines()
	if n := lines.Len(); n > 0 {
		b.segs = make([]segment, 0, n)
		b.body = make([]byte, 0, lines.At(n-1).Stop-lines.At(0).Start)
	}
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.segs = append(b.segs, segment{start: seg.Start, stop: seg.Stop, bodyOff: len(b.body)})
		b.body = append(b.body, seg.Value(p.Src)...)
	}
	fencePos := p.Pos(fb.Pos())
	if len(b.segs) > 0 {
		b.Pos = p.Pos(b.segs[0].start)
	} else {
		b.Pos = fencePos
	}
	if lang := string(fb.Language(p.Src)); lang != "json" {
		report(fencePos, Error, "fence-language", "section %q: fence language is %q, want \"json\"", section, lang)
	}
	if len(bytes.TrimSpace(b.body)) == 0 {
		report(fencePos, Error, "json-syntax", "section %q: empty JSON fence", section)
		return b
	}
	compact, cerr := compactJSON(b.body) // validates, cheaper than decoding
	if cerr != nil {
		off, err := checkJSON(b.body) // the decoder's message and offset
		if err == nil {
			off, err = 0, fmt.Errorf("invalid JSON: %v", cerr)
		}
		report(b.PosAt(off), Error, "json-syntax", "section %q: %v", section, err)
		return b
	}
	b.JSON = compact
	b.parsed = true
	return b
}

// checkJSON reports the first syntax error and its offset in raw.
func checkJSON(raw []byte) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := int(se.Offset)
			if off > 0 {
				off-- // Offset is just past the offending byte
			}
			return off, fmt.Errorf("invalid JSON: %s", se.Error())
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return len(bytes.TrimRight(raw, " \t\r\n")), errors.New("invalid JSON: unexpected end of input")
		}
		return 0, fmt.Errorf("invalid JSON: %w", err)
	}
	off := int(dec.InputOffset())
	rest := raw[off:]
	if trimmed := bytes.TrimLeft(rest, " \t\r\n"); len(trimmed) > 0 {
		return off + len(rest) - len(trimmed), errors.New("invalid JSON: data after the top-level value")
	}
	return 0, nil
}

// compactJSON is raw without white space, strings and numbers as written
// (as json.Compact writes it, at a fraction of its cost).
func compactJSON(raw []byte) (json.RawMessage, error) {
	return jsontext.AppendFormat(nil, raw, asWritten...)
}

// appendIndented appends raw to dst indented by two spaces, strings and
// numbers as written (as json.Indent writes it with no prefix).
func appendIndented(dst, raw []byte) ([]byte, error) {
	return jsontext.AppendFormat(dst, raw, indented...)
}

// asWritten formats JSON keeping what it says as written, and whatever
// json.Compact and json.Indent accept; indented also indents.
var (
	asWritten = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true), jsontext.PreserveRawStrings(true)}
	indented  = append(slices.Clip(asWritten), jsontext.Multiline(true), jsontext.WithIndent("  "))
)

// nodeStart is the offset at which a block starts: its first line for a
// paragraph or an HTML block, its marker for a heading, a fence or a list.
func nodeStart(n ast.Node) int {
	switch n.(type) {
	case *ast.Heading, *ast.FencedCodeBlock:
	default:
		if l := n.Lines(); l != nil && l.Len() > 0 {
			return l.At(0).Start
		}
	}
	if off := n.Pos(); off >= 0 {
		return off
	}
	return 0
}

func headingText(h *ast.Heading, src []byte) string {
	var b strings.Builder
	l := h.Lines()
	for i := 0; i < l.Len(); i++ {
		seg := l.At(i)
		b.Write(seg.Value(src))
	}
	return strings.TrimSpace(b.String())
}

// paragraphText is the paragraph's markdown source, without trailing space.
func paragraphText(pg *ast.Paragraph, src []byte) string {
	l := pg.Lines()
	if l.Len() == 0 {
		return ""
	}
	return strings.TrimRight(string(src[l.At(0).Start:l.At(l.Len()-1).Stop]), " \t\r\n")
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
