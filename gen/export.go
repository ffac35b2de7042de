package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prickle-dev/prickle/rt"
	"github.com/prickle-dev/prickle/spec"
)

// The files an export holds (see Export), relative to its folder.
const (
	// ExportTools is the tools array a conforming server answers to
	// tools/list.
	ExportTools = "tools.json"
	// ExportHash holds the spec hash of the pages exported, and a newline.
	ExportHash = "SPEC_HASH"
	// ExportSchemas is the folder of the per-tool schema files,
	// TOOL.input.json and TOOL.output.json.
	ExportSchemas = "schemas"
)

// schemaDraft is the dialect of an exported schema file.
const schemaDraft = "https://json-schema.org/draft/2020-12/schema"

// ServedTool is a documented tool as a generated package serves it on
// tools/list: the page's name, its description paragraphs joined, and its
// schemas byte for byte. Generated code (schemasFile) and Export both read
// it, so that an export is what the server serves.
func ServedTool(t *spec.Tool) *rt.Tool {
	return &rt.Tool{Name: t.Name, Description: description(t),
		InputSchema: t.InputSchema.Body(), OutputSchema: t.OutputSchema.Body()}
}

// ServedTools is the tools array of a tools/list answer for s, byte for
// byte: each ServedTool as the MCP SDK marshals it (rt.Tool.MCP), in the
// SDK's order, sorted by name.
func ServedTools(s *spec.Spec) ([]byte, error) {
	tools := make([]*mcp.Tool, 0, len(s.Tools))
	for _, t := range s.Tools {
		if t.InputSchema == nil || t.OutputSchema == nil {
			return nil, fmt.Errorf("export: tool %s lacks a schema", t.Name)
		}
		tools = append(tools, ServedTool(t).MCP())
	}
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	return json.Marshal(tools)
}

// Export returns the files that describe s to a third party writing a
// server or a client in another language, in path order:
//
//   - tools.json: ServedTools, what a conforming server answers to
//     tools/list, to load and serve verbatim;
//   - schemas/TOOL.input.json and schemas/TOOL.output.json: each
//     documented schema as a standalone draft 2020-12 document, indented,
//     with "$id" (urn:prickle:tool:TOOL:input) and "title" (the Go API's
//     type name, TOOLInput in camel case) set first so that type generators
//     name their types as the Go API does; the rest of the schema as
//     documented, its key order and number literals kept;
//   - SPEC_HASH: the pages' spec hash, so that a copy can be checked for
//     staleness (prickle-gen export --check).
func Export(s *spec.Spec) ([]File, error) {
	tools, err := ServedTools(s)
	if err != nil {
		return nil, err
	}
	files := []File{{ExportHash, []byte(s.Hash() + "\n")}, {ExportTools, tools}}
	for _, t := range s.Tools {
		for _, sec := range []struct {
			kind string
			blk  *spec.JSONBlock
		}{{"input", t.InputSchema}, {"output", t.OutputSchema}} {
			title := camel(t.Name) + camel(sec.kind)
			b, err := standalone(sec.blk.Body(), "urn:prickle:tool:"+t.Name+":"+sec.kind, title)
			if err != nil {
				return nil, fmt.Errorf("export: the %s schema of %s (%s:%d): %w", sec.kind, t.Name, sec.blk.Pos.File, sec.blk.Pos.Line, err)
			}
			files = append(files, File{ExportSchemas + "/" + t.Name + "." + sec.kind + ".json", b})
		}
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// standalone is the schema object body with "$schema", "$id" and "title"
// first (set, replacing the documented "$id" and "title"; a documented
// "$schema" must name draft 2020-12), then its other members in their
// order, their values as written; indented by two spaces.
func standalone(body []byte, id, title string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	member := func(key string, value []byte) {
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(value)
	}
	for _, kv := range [][2]string{{"$schema", schemaDraft}, {"$id", id}, {"title", title}} {
		v, _ := json.Marshal(kv[1])
		member(kv[0], v)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		switch key := tok.(string); key {
		case "$schema":
			// The page's dialect is kept as it is, never changed.
			var d string
			if json.Unmarshal(raw, &d) != nil || strings.TrimSuffix(d, "#") != schemaDraft {
				return nil, fmt.Errorf("$schema is %s: an export holds draft 2020-12 schemas (%s)", raw, schemaDraft)
			}
		case "$id", "title":
		default:
			member(key, raw)
		}
	}
	out.WriteByte('}')
	var ind bytes.Buffer
	if err := json.Indent(&ind, out.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	ind.WriteByte('\n')
	return ind.Bytes(), nil
}
