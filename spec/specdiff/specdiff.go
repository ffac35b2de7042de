package specdiff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/prickle-dev/prickle/internal/jsonschema"
	"github.com/prickle-dev/prickle/spec"
)

// The sides of a change.
const (
	SideTool    = "tool"    // a tool as a whole: added, removed, its description
	SideInput   = "input"   // the input schema: clients send, the server validates
	SideOutput  = "output"  // the output schema: the server sends, clients parse
	SideCatalog = "catalog" // a catalog name (allowed_tools) without a page
	// SideGo is the generated Go API (prickle-gen generate): a change that
	// Go code written against the old package may no longer compile
	// against. It is a category of its own, apart from wire compatibility.
	SideGo = "go"
)

// Change is one difference between two versions of the spec.
type Change struct {
	// Tool is the tool's name; for a catalog change, the catalog name.
	Tool string `json:"tool"`
	// Side is SideTool, SideInput, SideOutput, SideCatalog or SideGo.
	Side string `json:"side"`
	// Pointer is the JSON pointer (RFC 6901) of the change inside the
	// schema: in the new schema, or in the old one for something removed.
	// It is empty for tool and catalog changes. For a Go API change it is
	// the Go identifier (Type or Type.Field).
	Pointer string `json:"pointer"`
	// Kind is the stable identifier of the change (see Kinds).
	Kind string `json:"kind"`
	// Breaking reports whether clients written against the old version can
	// break against the new one on the wire (see the package
	// documentation); it is false for Go API changes, which GoAPI counts.
	Breaking bool   `json:"breaking"`
	Message  string `json:"message"`
	// OldPos and NewPos are where the change sits in each version: the
	// nearest position that exists on that side (the parent of something
	// added or removed), zero when the side has no such tool or name.
	OldPos spec.Pos `json:"old_pos,omitzero"`
	NewPos spec.Pos `json:"new_pos,omitzero"`
}

// Grade is who the change breaks, as the text form shows it: "BREAKING"
// (clients on the wire), "GO-API" (Go code that imports the generated
// API) or "non-breaking".
func (c Change) Grade() string {
	switch {
	case c.Side == SideGo:
		return "GO-API"
	case c.Breaking:
		return "BREAKING"
	default:
		return "non-breaking"
	}
}

// Pos is the position to show: the new side's when known, else the old's.
func (c Change) Pos() spec.Pos {
	if c.NewPos != (spec.Pos{}) {
		return c.NewPos
	}
	return c.OldPos
}

// String renders the change as one line:
//
//	file:line:col: BREAKING tool side /pointer: message [kind]
//
// with "non-breaking" for a compatible change, "GO-API" and the Go
// identifier for a change to the generated Go API, no position when none
// is known and no pointer for tool and catalog changes ("/" is the root).
func (c Change) String() string {
	var b strings.Builder
	if p := c.Pos(); p != (spec.Pos{}) {
		b.WriteString(p.String())
		b.WriteString(": ")
	}
	b.WriteString(c.Grade())
	b.WriteString(" ")
	b.WriteString(c.Tool)
	b.WriteString(" ")
	b.WriteString(c.Side)
	if c.Side == SideGo {
		b.WriteString(" ")
		b.WriteString(c.Pointer)
	}
	if c.Side == SideInput || c.Side == SideOutput {
		b.WriteString(" ")
		if c.Pointer == "" {
			b.WriteString("/")
		} else {
			b.WriteString(c.Pointer)
		}
	}
	fmt.Fprintf(&b, ": %s [%s]", c.Message, c.Kind)
	return b.String()
}

// Report is the result of Compare.
type Report struct {
	// Changes are sorted by tool, side (tool, input, output, catalog, go),
	// pointer, kind, new position, old position and message.
	Changes []Change `json:"changes"`
	// Breaking counts the changes that break clients on the wire.
	Breaking int `json:"breaking"`
	// GoAPI counts the changes to the generated Go API (see Add).
	GoAPI int `json:"go_api,omitempty"`
}

// Summary is the closing line of the text form: "N changes, M breaking",
// and ", K to the Go API" when there are such changes.
func (r Report) Summary() string {
	s := "s"
	if len(r.Changes) == 1 {
		s = ""
	}
	out := fmt.Sprintf("%d change%s, %d breaking", len(r.Changes), s, r.Breaking)
	if r.GoAPI > 0 {
		out += fmt.Sprintf(", %d to the Go API", r.GoAPI)
	}
	return out
}

// Add adds changes found elsewhere (the Go API changes that package gen
// finds) to the report, in order, and counts them.
func (r *Report) Add(cs ...Change) {
	r.Changes = append(r.Changes, cs...)
	slices.SortStableFunc(r.Changes, compareChanges)
	r.Breaking, r.GoAPI = 0, 0
	for _, c := range r.Changes {
		switch {
		case c.Side == SideGo:
			r.GoAPI++
		case c.Breaking:
			r.Breaking++
		}
	}
}

// Compare returns the changes from old to new. Neither spec is modified.
func Compare(old, new *spec.Spec) Report {
	d := &differ{}
	d.tools(old, new)
	d.catalog(old, new)
	slices.SortStableFunc(d.changes, compareChanges)
	r := Report{Changes: d.changes}
	if r.Changes == nil {
		r.Changes = []Change{}
	}
	for _, c := range r.Changes {
		if c.Breaking {
			r.Breaking++
		}
	}
	return r
}

var sideRank = map[string]int{SideTool: 0, SideInput: 1, SideOutput: 2, SideCatalog: 3, SideGo: 4}

func compareChanges(a, b Change) int {
	switch {
	case a.Tool != b.Tool:
		return strings.Compare(a.Tool, b.Tool)
	case a.Side != b.Side:
		return sideRank[a.Side] - sideRank[b.Side]
	case a.Pointer != b.Pointer:
		return strings.Compare(a.Pointer, b.Pointer)
	case a.Kind != b.Kind:
		return strings.Compare(a.Kind, b.Kind)
	}
	if c := comparePos(a.NewPos, b.NewPos); c != 0 {
		return c
	}
	if c := comparePos(a.OldPos, b.OldPos); c != 0 {
		return c
	}
	return strings.Compare(a.Message, b.Message)
}

func comparePos(a, b spec.Pos) int {
	switch {
	case a.File != b.File:
		return strings.Compare(a.File, b.File)
	case a.Line != b.Line:
		return a.Line - b.Line
	}
	return a.Col - b.Col
}

type differ struct {
	changes []Change
}

func (d *differ) add(c Change) {
	c.Breaking = grade(c.Kind, c.Side)
	d.changes = append(d.changes, c)
}

func (d *differ) tools(old, new *spec.Spec) {
	for _, ot := range old.Tools {
		nt := new.Tool(ot.Name)
		if nt == nil {
			d.add(Change{Tool: ot.Name, Side: SideTool, Kind: KindToolRemoved, OldPos: ot.Pos,
				Message: "tool removed"})
			continue
		}
		d.doc(ot, nt)
		d.schema(ot.Name, SideInput, ot.InputSchema, nt.InputSchema)
		d.schema(ot.Name, SideOutput, ot.OutputSchema, nt.OutputSchema)
	}
	for _, nt := range new.Tools {
		if old.Tool(nt.Name) == nil {
			d.add(Change{Tool: nt.Name, Side: SideTool, Kind: KindToolAdded, NewPos: nt.Pos,
				Message: "new tool"})
		}
	}
}

// doc compares the description sentences (by ID: an edited sentence is one
// removed and one added) and the example input.
func (d *differ) doc(ot, nt *spec.Tool) {
	oldIDs := map[string]bool{}
	for _, s := range ot.Sentences {
		oldIDs[s.ID] = true
	}
	newIDs := map[string]bool{}
	for _, s := range nt.Sentences {
		newIDs[s.ID] = true
		if !oldIDs[s.ID] {
			d.add(Change{Tool: nt.Name, Side: SideTool, Kind: KindSentenceAdded, OldPos: ot.Pos, NewPos: s.Pos,
				Message: fmt.Sprintf("description sentence added: %q (%s)", shorten(s.Text), s.ID)})
		}
	}
	for _, s := range ot.Sentences {
		if !newIDs[s.ID] {
			d.add(Change{Tool: nt.Name, Side: SideTool, Kind: KindSentenceRemoved, OldPos: s.Pos, NewPos: nt.Pos,
				Message: fmt.Sprintf("description sentence removed: %q (%s)", shorten(s.Text), s.ID)})
		}
	}
	oe, ne := blockJSON(ot.ExampleInput), blockJSON(nt.ExampleInput)
	if canon(oe) != canon(ne) {
		c := Change{Tool: nt.Name, Side: SideTool, Kind: KindExampleChanged, Message: "example input changed"}
		if ot.ExampleInput != nil {
			c.OldPos = ot.ExampleInput.Pos
		}
		if nt.ExampleInput != nil {
			c.NewPos = nt.ExampleInput.Pos
		}
		d.add(c)
	}
}

// catalog reports catalog names added or removed, except the names of
// tools added or removed (reported as such).
func (d *differ) catalog(old, new *spec.Spec) {
	find := func(s *spec.Spec, name string) *spec.CatalogEntry {
		for i := range s.Catalog {
			if s.Catalog[i].Name == name {
				return &s.Catalog[i]
			}
		}
		return nil
	}
	for _, oe := range old.Catalog {
		if find(new, oe.Name) == nil && old.Tool(oe.Name) == nil {
			d.add(Change{Tool: oe.Name, Side: SideCatalog, Kind: KindCatalogRemoved, OldPos: oe.Pos,
				Message: "catalog name removed"})
		}
	}
	for _, ne := range new.Catalog {
		if find(old, ne.Name) == nil && new.Tool(ne.Name) == nil {
			d.add(Change{Tool: ne.Name, Side: SideCatalog, Kind: KindCatalogAdded, NewPos: ne.Pos,
				Message: "catalog name added (no page)"})
		}
	}
}

func blockJSON(b *spec.JSONBlock) json.RawMessage {
	if b == nil {
		return nil
	}
	return b.JSON
}

// schema compares one side of a tool.
func (d *differ) schema(tool, side string, ob, nb *spec.JSONBlock) {
	oraw, nraw := blockJSON(ob), blockJSON(nb)
	switch {
	case len(oraw) == 0 && len(nraw) == 0:
		return
	case len(oraw) == 0 || len(nraw) == 0:
		c := Change{Tool: tool, Side: side, Kind: KindSchemaChanged}
		if len(oraw) == 0 {
			c.Message = side + " schema added"
		} else {
			c.Message = side + " schema removed"
		}
		if ob != nil {
			c.OldPos = ob.Pos
		}
		if nb != nil {
			c.NewPos = nb.Pos
		}
		d.add(c)
		return
	}
	od, oerr := jsonschema.Parse(oraw)
	nd, nerr := jsonschema.Parse(nraw)
	if oerr != nil || nerr != nil {
		return // blocks hold valid JSON: the pages were parsed
	}
	w := &walker{d: d, tool: tool, side: side,
		old: &version{block: ob, doc: od}, new: &version{block: nb, doc: nd},
		seen: map[string]bool{}}
	w.compare(od.Root(), nd.Root(), false)
}

// canon renders JSON canonically (jsonschema.Canonical): two values JSON
// Schema calls equal render the same.
func canon(raw json.RawMessage) string { return jsonschema.Canonical(raw) }

// shorten keeps long text readable in a message.
func shorten(s string) string {
	const n = 60
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
