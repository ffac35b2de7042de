// Package wire is the conformance suite's view of a server: a small MCP
// client over streamable HTTP that keeps every response byte for byte,
// and the checks every tools/call answer gets on the wire.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	schemalib "github.com/prickle-dev/prickle/internal/schemacompile"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/jsonpointer"
	schemax "github.com/prickle-dev/prickle/internal/validation"
	"github.com/prickle-dev/prickle/spec"
)

// Index holds what the checks need from the spec, compiled once.
type Index struct {
	// Spec is the spec the checks follow; Catalog names the tools of the
	// Prickle catalog (allowed_tools), documented or not.
	Spec    *spec.Spec
	Catalog map[string]bool
	tools   map[string]*spec.Tool
	once    sync.Map // tool name -> *compiled
}

type compiled struct {
	once sync.Once
	out  *jsonschema.Schema
	err  error
}

// NewIndex indexes sp for the checks.
func NewIndex(sp *spec.Spec) *Index {
	ix := &Index{Spec: sp, tools: map[string]*spec.Tool{}, Catalog: map[string]bool{}}
	for _, t := range sp.Tools {
		ix.tools[t.Name] = t
	}
	for _, c := range sp.Catalog {
		ix.Catalog[c.Name] = true
	}
	return ix
}

// OutputSchema returns the compiled documented output schema of tool, nil
// for an undocumented tool.
func (ix *Index) OutputSchema(tool string) (*jsonschema.Schema, error) {
	t := ix.tools[tool]
	if t == nil || t.OutputSchema == nil {
		return nil, nil
	}
	v, _ := ix.once.LoadOrStore(tool, &compiled{})
	c := v.(*compiled)
	c.once.Do(func() {
		c.out, c.err = schemalib.Compile("prickle:"+tool+"/output.json", t.OutputSchema.JSON)
	})
	return c.out, c.err
}

// Call is one tools/call as seen on the wire.
type Call struct {
	Tool     string
	Args     string
	ProtoErr error           // *RPCError, *HTTPError or a transport error
	Raw      json.RawMessage // the JSON-RPC response
	Result   json.RawMessage // its result
	IsError  bool
	// Structured is the structuredContent as sent; nil when absent.
	Structured json.RawMessage
	Text       string // the text content items, joined by newlines
	Code       string // _meta.code, if any
}

// Check is one wire check's outcome.
type Check struct {
	OK   bool
	What string // what was checked, or what is wrong when !OK
	// Internal: the runner could not decide the check (a pattern match
	// did not finish in time); a failure of the run, not of the server.
	Internal bool
}

// CheckResult applies the wire checks every tools/call answer gets and
// fills r from res (a CallToolResult).
func CheckResult(ix *Index, profile suite.Profile, r *Call, res json.RawMessage) []Check {
	var out []Check
	add := func(ok bool, format string, args ...any) bool {
		out = append(out, Check{OK: ok, What: fmt.Sprintf(format, args...)})
		return ok
	}
	// validated adds the check that err, from schemalib.Validate, is nil.
	validated := func(err error, format string, args ...any) {
		if err != nil && ecmaregex.IsTimeout(err) {
			out = append(out, Check{Internal: true, What: fmt.Sprintf("could not check that "+format+": %v", append(args, err)...)})
			return
		}
		add(err == nil, format+"%s", append(args, violations(err))...)
	}
	var m map[string]json.RawMessage
	if !add(json.Unmarshal(res, &m) == nil && m != nil, "the result is a JSON object") {
		return out
	}
	var content []map[string]json.RawMessage
	contentOK := json.Unmarshal(m["content"], &content) == nil && m["content"] != nil && string(m["content"]) != "null"
	add(contentOK, "the result has a content array (got %s)", Short(m["content"]))
	var texts []string
	for i, c := range content {
		var typ, text string
		_ = json.Unmarshal(c["type"], &typ)
		if !add(typ != "", "content[%d] has a type", i) {
			continue
		}
		if typ == "text" {
			if add(json.Unmarshal(c["text"], &text) == nil, "content[%d] (text) has a string text", i) {
				texts = append(texts, text)
			}
		}
	}
	r.Text = strings.Join(texts, "\n")
	if raw, ok := m["isError"]; ok {
		add(json.Unmarshal(raw, &r.IsError) == nil, "isError is a boolean (got %s)", Short(raw))
	}
	if raw, ok := m["structuredContent"]; ok && string(raw) != "null" {
		r.Structured = raw
	}
	if meta, ok := m["_meta"]; ok {
		var mm map[string]json.RawMessage
		if json.Unmarshal(meta, &mm) == nil {
			_ = json.Unmarshal(mm["code"], &r.Code)
		}
	}
	sch, err := ix.OutputSchema(r.Tool)
	if err != nil {
		add(false, "the documented output schema of %s compiles: %v", r.Tool, err)
		return out
	}
	switch {
	case !r.IsError:
		if add(r.Structured != nil, "a successful %s result carries structuredContent", r.Tool) && sch != nil {
			validated(schemalib.Validate(sch, r.Structured), "structuredContent matches the documented output schema of %s", r.Tool)
		}
	case r.Structured != nil && profile == suite.Reference:
		add(false, "a refusal carries no structuredContent (got %s)", Short(r.Structured))
	case r.Structured != nil && sch != nil:
		// Clients such as the TypeScript SDK validate any structuredContent
		// against the output schema, error results included.
		validated(schemalib.Validate(sch, r.Structured), "a refusal's structuredContent matches the documented output schema of %s (clients validate it)", r.Tool)
	}
	if r.IsError && profile == suite.Reference {
		if add(r.Code != "", "a refusal carries its code in _meta.code") {
			add(strings.HasPrefix(r.Text, r.Code+": "), "a refusal's text starts with %q (got %q)", r.Code+": ", r.Text)
		}
	}
	return out
}

func violations(err error) string {
	if err == nil {
		return ""
	}
	if ve, ok := err.(*schemax.ValidationError); ok {
		var b strings.Builder
		for _, v := range ve.Violations {
			b.WriteString("\n\t")
			b.WriteString(v.String())
		}
		return ":" + b.String()
	}
	return ": " + err.Error()
}

// Short is JSON shown in a message: trimmed, at most 200 bytes.
func Short(b []byte) string {
	s := string(bytes.TrimSpace(b))
	if s == "" {
		return "nothing"
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// Decode decodes JSON for comparison (numbers as float64: the values the
// suite compares are small).
func Decode(b []byte) (any, error) {
	var v any
	err := json.Unmarshal(b, &v)
	return v, err
}

// SemanticDiff compares two JSON documents as decoded values (key order and
// white space ignored) and describes the first difference, "" if equal.
func SemanticDiff(want, got []byte) string {
	w, err := Decode(want)
	if err != nil {
		return "documented schema is not JSON: " + err.Error()
	}
	g, err := Decode(got)
	if err != nil {
		return "served schema is not JSON: " + err.Error()
	}
	return diffValues("", w, g)
}

func diffValues(ptr string, w, g any) string {
	at := ptr
	if at == "" {
		at = "/"
	}
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			return fmt.Sprintf("at %s: documented an object, served %s", at, Compact(g))
		}
		keys := make([]string, 0, len(wv)+len(gv))
		for k := range wv {
			keys = append(keys, k)
		}
		for k := range gv {
			if _, ok := wv[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := jsonpointer.Append(ptr, k)
			wc, inW := wv[k]
			gc, inG := gv[k]
			switch {
			case !inG:
				return fmt.Sprintf("at %s: documented %s, served nothing", p, Compact(wc))
			case !inW:
				return fmt.Sprintf("at %s: served %s, which the docs do not have", p, Compact(gc))
			}
			if d := diffValues(p, wc, gc); d != "" {
				return d
			}
		}
		return ""
	case []any:
		gv, ok := g.([]any)
		if !ok {
			return fmt.Sprintf("at %s: documented an array, served %s", at, Compact(g))
		}
		for i := 0; i < len(wv) && i < len(gv); i++ {
			if d := diffValues(fmt.Sprintf("%s/%d", ptr, i), wv[i], gv[i]); d != "" {
				return d
			}
		}
		if len(wv) != len(gv) {
			return fmt.Sprintf("at %s: documented %d items, served %d", at, len(wv), len(gv))
		}
		return ""
	default:
		if !reflect.DeepEqual(w, g) {
			return fmt.Sprintf("at %s: documented %s, served %s", at, Compact(w), Compact(g))
		}
		return ""
	}
}

// Compact is a decoded JSON value shown in a message, as Short shows it.
func Compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return Short(b)
}
