package spec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/jsonschema"
)

// FormatVersion is the version of the canonical spec document.
const FormatVersion = 1

// Spec is the canonical spec: every page merged into one document. Its
// JSON form (see Marshal) is deterministic to the byte; FORMAT.md
// describes it.
type Spec struct {
	Format int `json:"format"`
	// Title, Preamble, Notes and DocsBase are the text the pages share, as
	// most pages give it (lint warns where a page disagrees).
	Title    string         `json:"title"`
	Preamble []Paragraph    `json:"preamble"`
	Notes    []Paragraph    `json:"notes"`
	DocsBase string         `json:"docs_base"`
	Catalog  []CatalogEntry `json:"catalog"`
	Tools    []*Tool        `json:"tools"`
}

// document is a spec's JSON form: its format and its hash, then the rest
// of the spec (whose own Format the first hides, encoding/json's rule).
type document struct {
	Format int    `json:"format"`
	Hash   string `json:"hash"`
	*Spec
}

// CatalogEntry is one tool name the API knows: a tool with a page, or a
// name listed in an allowed_tools enum.
type CatalogEntry struct {
	Name       string `json:"name"`
	Documented bool   `json:"documented"`
	Pos        Pos    `json:"pos"` // its page's heading, or its first enum listing
}

// Tool is one documented tool.
type Tool struct {
	Name         string      `json:"name"`
	Pos          Pos         `json:"pos"`
	Description  []Paragraph `json:"description"`
	Sentences    []Sentence  `json:"sentences"`
	ExampleInput *JSONBlock  `json:"example_input"`
	InputSchema  *JSONBlock  `json:"input_schema"`
	OutputSchema *JSONBlock  `json:"output_schema"`
	Notes        []Paragraph `json:"notes"`
	DocURL       string      `json:"doc_url"`
	DocURLPos    Pos         `json:"doc_url_pos"`
	Page         PageText    `json:"page"`
}

// PageText is the page-level text of a tool's own page, kept so that the
// page can be rendered back exactly.
type PageText struct {
	File     string      `json:"file"`
	Title    string      `json:"title"`
	TitlePos Pos         `json:"title_pos"`
	Preamble []Paragraph `json:"preamble"`
}

// Sentence is one normative sentence of a tool's description.
type Sentence struct {
	// ID is "<tool>#<8 hex digits>" derived from the sentence's own text, so
	// editing another sentence never changes it, and editing this one does.
	// A sentence repeated word for word in one tool gets "-2", "-3"...
	ID   string `json:"id"`
	Text string `json:"text"`
	Pos  Pos    `json:"pos"`
}

// Tool returns the tool named name, or nil.
func (s *Spec) Tool(name string) *Tool {
	for _, t := range s.Tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Build merges parsed pages into a spec. Pages with structural errors are
// still merged as far as they go; the findings tell what is wrong. Build's
// own findings cover what only shows across pages: duplicates, drift in
// shared text, undocumented catalog names.
func Build(pages []*Page) (*Spec, Diagnostics) {
	var ds Diagnostics
	pages = append([]*Page(nil), pages...)
	sort.SliceStable(pages, func(i, j int) bool {
		if pages[i].Tool != pages[j].Tool {
			return pages[i].Tool < pages[j].Tool
		}
		return pages[i].File < pages[j].File
	})
	s := &Spec{Format: FormatVersion, Catalog: []CatalogEntry{}, Tools: []*Tool{}, Preamble: []Paragraph{}, Notes: []Paragraph{}}
	seen := map[string]*Page{}
	var kept []*Page
	for _, p := range pages {
		if p.Tool == "" {
			continue
		}
		if first, dup := seen[p.Tool]; dup {
			msg := fmt.Sprintf("tool %q is documented twice (also at %s)", p.Tool, first.ToolPos)
			if first.File == p.File {
				msg = fmt.Sprintf("tool %q: page %s is given twice", p.Tool, p.File)
			}
			ds = append(ds, Diagnostic{Pos: p.ToolPos, Severity: Error, Rule: "tool-duplicate", Message: msg})
			continue
		}
		seen[p.Tool] = p
		kept = append(kept, p)
		s.Tools = append(s.Tools, toolOf(p))
	}
	ds = append(ds, shared(s, kept)...)
	ds = append(ds, catalog(s)...)
	return s, ds
}

func toolOf(p *Page) *Tool {
	t := &Tool{
		Name:         p.Tool,
		Pos:          p.ToolPos,
		Description:  nonNil(p.Description),
		Sentences:    splitSentences(p),
		ExampleInput: p.Sections[SectionExample],
		InputSchema:  p.Sections[SectionInput],
		OutputSchema: p.Sections[SectionOutput],
		Notes:        nonNil(p.Notes),
		DocURL:       p.DocURL,
		DocURLPos:    p.DocURLPos,
		Page:         PageText{File: p.File, Title: p.Title, TitlePos: p.TitlePos, Preamble: nonNil(p.Preamble)},
	}
	return t
}

func nonNil(ps []Paragraph) []Paragraph {
	if ps == nil {
		return []Paragraph{}
	}
	return ps
}

// shared picks the majority version of the text that all pages share and
// warns, naming both places, where a page disagrees with it.
func shared(s *Spec, pages []*Page) Diagnostics {
	if len(pages) == 0 {
		return nil
	}
	d := &drift{pages: pages}
	ref := d.warn("page title", func(p *Page) string { return p.Title }, func(p *Page) Pos { return p.TitlePos },
		func(p, ref *Page) (string, string) { return fmt.Sprintf("%q", p.Title), fmt.Sprintf("%q", ref.Title) })
	s.Title = ref.Title
	s.Preamble = append(s.Preamble, d.paragraphs("preamble", func(p *Page) []Paragraph { return p.Preamble })...)
	s.Notes = append(s.Notes, d.paragraphs("notes", func(p *Page) []Paragraph { return p.Notes })...)
	ref = d.warn("docs host", func(p *Page) string { return docsBase(p.DocURL) }, func(p *Page) Pos { return p.DocURLPos },
		func(p, ref *Page) (string, string) { return docsBase(p.DocURL), docsBase(ref.DocURL) })
	s.DocsBase = docsBase(ref.DocURL)
	return d.ds
}

// drift compares the pages on each text they share, and holds the
// warnings where a page disagrees with the majority.
type drift struct {
	pages []*Page
	ds    Diagnostics
}

// variant is one version of a shared text and the pages that have it.
type variant struct {
	key   string
	pages []*Page
}

// majority groups the pages by key and returns the winning group (most
// pages; ties go to the group whose first page sorts first) and all the
// groups.
func (d *drift) majority(key func(*Page) string) (*variant, []*variant) {
	var vs []*variant
	byKey := map[string]*variant{}
	for _, p := range d.pages {
		k := key(p)
		v := byKey[k]
		if v == nil {
			v = &variant{key: k}
			byKey[k] = v
			vs = append(vs, v)
		}
		v.pages = append(v.pages, p)
	}
	best := vs[0]
	for _, v := range vs[1:] {
		if len(v.pages) > len(best.pages) {
			best = v
		}
	}
	return best, vs
}

// warn compares the pages on what (its text by key, its place by pos),
// warns at each page outside the majority, in the words of show, and
// returns the majority's first page, the reference.
func (d *drift) warn(what string, key func(*Page) string, pos func(*Page) Pos, show func(p, ref *Page) (string, string)) *Page {
	best, vs := d.majority(key)
	ref := best.pages[0]
	for _, v := range vs {
		if v == best {
			continue
		}
		for _, p := range v.pages {
			mine, theirs := show(p, ref)
			d.ds = append(d.ds, Diagnostic{Pos: pos(p), Severity: Warning, Rule: "shared-drift",
				Message: fmt.Sprintf("%s differs from %s: %s, not %s", what, pos(ref), mine, theirs)})
		}
	}
	return ref
}

// paragraphs compares the pages' paragraphs of one part (preamble,
// notes) paragraph by paragraph, and returns the majority's.
func (d *drift) paragraphs(part string, get func(*Page) []Paragraph) []Paragraph {
	n := 0
	for _, p := range d.pages {
		n = max(n, len(get(p)))
	}
	var out []Paragraph
	for i := range n {
		at := func(p *Page) *Paragraph {
			if ps := get(p); i < len(ps) {
				return &ps[i]
			}
			return nil
		}
		ref := d.warn(fmt.Sprintf("%s paragraph %d", part, i+1),
			func(p *Page) string {
				if a := at(p); a != nil {
					return "+" + a.Text
				}
				return ""
			},
			func(p *Page) Pos {
				if a := at(p); a != nil {
					return a.Pos
				}
				if p.DocURLPos.Line != 0 {
					return p.DocURLPos
				}
				return p.endPos()
			},
			func(p, ref *Page) (string, string) {
				a, b := at(p), at(ref)
				switch {
				case a == nil:
					return "nothing", fmt.Sprintf("%q", shorten(b.Text))
				case b == nil:
					return fmt.Sprintf("%q", shorten(a.Text)), "nothing"
				}
				x, y := excerpts(a.Text, b.Text)
				return fmt.Sprintf("%q", x), fmt.Sprintf("%q", y)
			})
		if a := at(ref); a != nil {
			out = append(out, *a)
		}
	}
	return out
}

// docsBase is a doc URL without its query: scheme, host and path.
func docsBase(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return u
	}
	pu.RawQuery, pu.Fragment = "", ""
	return pu.String()
}

// excerpts shortens two different texts so that the difference shows: when
// they differ only past what shorten keeps, both start a little before the
// first difference, at a word boundary, with "…".
func excerpts(a, b string) (string, string) {
	ra, rb := []rune(a), []rune(b)
	d := 0
	for d < len(ra) && d < len(rb) && ra[d] == rb[d] {
		d++
	}
	const context = 24
	if d <= 48 {
		return shorten(a), shorten(b)
	}
	start := d - context
	for start < d && ra[start-1] != ' ' {
		start++
	}
	return "…" + shorten(string(ra[start:])), "…" + shorten(string(rb[start:]))
}

// shorten keeps a long quotation readable in a diagnostic.
func shorten(s string) string {
	const n = 72
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// catalog collects every tool name: documented tools, and every name in an
// allowed_tools enum. Undocumented names are reported as info.
func catalog(s *Spec) Diagnostics {
	entries := map[string]*CatalogEntry{}
	for _, t := range s.Tools {
		entries[t.Name] = &CatalogEntry{Name: t.Name, Documented: true, Pos: t.Pos}
	}
	for _, t := range s.Tools {
		for _, b := range []*JSONBlock{t.InputSchema, t.OutputSchema} {
			for _, n := range catalogNames(b) {
				if _, ok := entries[n.name]; !ok {
					entries[n.name] = &CatalogEntry{Name: n.name, Pos: n.pos()}
				}
			}
		}
	}
	var ds Diagnostics
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := entries[n]
		s.Catalog = append(s.Catalog, *e)
		if !e.Documented {
			ds = append(ds, Diagnostic{Pos: e.Pos, Severity: Info, Rule: "catalog-undocumented",
				Message: fmt.Sprintf("catalog tool %q has no page", n)})
		}
	}
	return ds
}

// catalogName is a name listed in an allowed_tools enum; pos finds where.
type catalogName struct {
	name string
	pos  func() Pos
}

// catalogNames finds the enum of every "allowed_tools" array property,
// without the schema's model where it can: the spec alone never needs it.
func catalogNames(b *JSONBlock) []catalogName {
	if b == nil || !b.Valid() || !bytes.Contains(b.JSON, []byte(`"allowed_tools"`)) {
		return nil
	}
	enums := jsonschema.PropertyItemsEnums(b.JSON, "allowed_tools", b.Schema)
	var out []catalogName
	for _, k := range enums {
		enum, ok := k.Strings()
		if !ok {
			continue
		}
		for i, n := range enum {
			ptr := jsonpointer.AppendIndex(k.Ptr, i)
			out = append(out, catalogName{name: n, pos: func() Pos { return b.PointerPos(ptr) }})
		}
	}
	return out
}

// splitSentences splits the description into sentences with stable IDs.
func splitSentences(p *Page) []Sentence {
	out := []Sentence{}
	count := map[string]int{}
	for _, para := range p.Description {
		base := offsetOf(p, para.Pos)
		for _, r := range sentenceRanges(para.Text) {
			txt := collapseSpace(para.Text[r[0]:r[1]])
			sum := sha256.Sum256([]byte(txt))
			id := p.Tool + "#" + hex.EncodeToString(sum[:4])
			count[id]++
			if n := count[id]; n > 1 {
				id += fmt.Sprintf("-%d", n)
			}
			out = append(out, Sentence{ID: id, Text: txt, Pos: p.Pos(base + r[0])})
		}
	}
	return out
}

// collapseSpace is strings.Join(strings.Fields(s), " "), without the
// slice of words, and without a copy when s is already so; ASCII takes the
// short way.
func collapseSpace(s string) string {
	collapsed := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			return strings.Join(strings.Fields(s), " ")
		case asciiSpace[c]:
			// One space between two words is already so.
			if c != ' ' || i == 0 || i+1 == len(s) || asciiSpace[s[i+1]] {
				collapsed = false
			}
		}
	}
	if collapsed {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		for i < len(s) && asciiSpace[s[i]] {
			i++
		}
		start := i
		for i < len(s) && !asciiSpace[s[i]] {
			i++
		}
		if start < i {
			if len(b) > 0 {
				b = append(b, ' ')
			}
			b = append(b, s[start:i]...)
		}
	}
	return string(b)
}

// asciiSpace is unicode.IsSpace for ASCII; it is false for other bytes.
var asciiSpace = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// offsetOf turns a position on page p back into a byte offset.
func offsetOf(p *Page, pos Pos) int {
	if pos.Line < 1 || pos.Line > len(p.lines) {
		return 0
	}
	return p.lines[pos.Line-1] + pos.Col - 1
}

// abbreviations do not end a sentence.
var abbreviations = []string{"e.g.", "i.e.", "etc.", "vs.", "cf."}

// hasSuffixFold reports whether strings.ToLower(s) ends with suffix, an
// ASCII string, without lowering all of s when its end is ASCII: ASCII
// lowers byte for byte, and other runes lower rune by rune.
func hasSuffixFold(s, suffix string) bool {
	if len(s) < len(suffix) {
		return false
	}
	tail := s[len(s)-len(suffix):]
	for i := 0; i < len(tail); i++ {
		c := tail[i]
		if c >= utf8.RuneSelf {
			return strings.HasSuffix(strings.ToLower(s), suffix)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != suffix[i] {
			return false
		}
	}
	return true
}

// sentenceRanges returns [start, end) byte ranges of the sentences in s: a
// sentence ends at '.', '!' or '?' followed by white space or the end.
func sentenceRanges(s string) [][2]int {
	var out [][2]int
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		if i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '\n' && s[i+1] != '\t' {
			continue
		}
		abbr := false
		for _, a := range abbreviations {
			if hasSuffixFold(s[:i+1], a) {
				abbr = true
			}
		}
		if abbr {
			continue
		}
		if seg := strings.TrimSpace(s[start : i+1]); seg != "" {
			lead := len(s[start:i+1]) - len(strings.TrimLeft(s[start:i+1], " \t\n"))
			out = append(out, [2]int{start + lead, i + 1})
		}
		start = i + 1
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		lead := len(s[start:]) - len(strings.TrimLeft(s[start:], " \t\n"))
		out = append(out, [2]int{start + lead, start + lead + len(rest)})
	}
	return out
}
