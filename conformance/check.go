package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/prickle-dev/prickle/conformance/internal/suite"
	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/jsonpointer"
	"github.com/prickle-dev/prickle/internal/schemax"
	"github.com/prickle-dev/prickle/spec"
)

// Profile selects which rules the suite checks: Core or Reference.
type Profile = suite.Profile

// The profiles.
const (
	Core      = suite.Core
	Reference = suite.Reference
)

// ParseProfile parses "core" or "reference".
func ParseProfile(s string) (Profile, error) { return suite.ParseProfile(s) }

// specIndex holds what the checks need from the spec, compiled once.
type specIndex struct {
	spec    *spec.Spec
	tools   map[string]*spec.Tool
	once    sync.Map // tool name -> *compiled
	catalog map[string]bool
}

type compiled struct {
	once sync.Once
	out  *jsonschema.Schema
	err  error
}

func newSpecIndex(sp *spec.Spec) *specIndex {
	ix := &specIndex{spec: sp, tools: map[string]*spec.Tool{}, catalog: map[string]bool{}}
	for _, t := range sp.Tools {
		ix.tools[t.Name] = t
	}
	for _, c := range sp.Catalog {
		ix.catalog[c.Name] = true
	}
	return ix
}

// outputSchema returns the compiled documented output schema of tool, nil
// for an undocumented tool.
func (ix *specIndex) outputSchema(tool string) (*jsonschema.Schema, error) {
	t := ix.tools[tool]
	if t == nil || t.OutputSchema == nil {
		return nil, nil
	}
	v, _ := ix.once.LoadOrStore(tool, &compiled{})
	c := v.(*compiled)
	c.once.Do(func() {
		c.out, c.err = schemax.Compile("prickle:"+tool+"/output.json", t.OutputSchema.JSON)
	})
	return c.out, c.err
}

// callResult is one tools/call as seen on the wire.
type callResult struct {
	tool     string
	args     string
	protoErr error           // *RPCError, *HTTPError or a transport error
	raw      json.RawMessage // the JSON-RPC response
	result   json.RawMessage // its result
	isError  bool
	// structured is the structuredContent as sent; nil when absent.
	structured json.RawMessage
	text       string // the text content items, joined by newlines
	code       string // _meta.code, if any
}

// check is one wire check's outcome.
type check struct {
	ok   bool
	what string // what was checked, or what is wrong when !ok
	// internal: the runner could not decide the check (a pattern match
	// did not finish in time); a failure of the run, not of the server.
	internal bool
}

// checkCallResult applies the wire checks every tools/call answer gets and
// fills r from res (a CallToolResult).
func checkCallResult(ix *specIndex, profile Profile, r *callResult, res json.RawMessage) []check {
	var out []check
	add := func(ok bool, format string, args ...any) bool {
		out = append(out, check{ok: ok, what: fmt.Sprintf(format, args...)})
		return ok
	}
	// validated adds the check that err, from schemax.Validate, is nil.
	validated := func(err error, format string, args ...any) {
		if err != nil && ecmaregex.IsTimeout(err) {
			out = append(out, check{internal: true, what: fmt.Sprintf("could not check that "+format+": %v", append(args, err)...)})
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
	add(contentOK, "the result has a content array (got %s)", short(m["content"]))
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
	r.text = strings.Join(texts, "\n")
	if raw, ok := m["isError"]; ok {
		add(json.Unmarshal(raw, &r.isError) == nil, "isError is a boolean (got %s)", short(raw))
	}
	if raw, ok := m["structuredContent"]; ok && string(raw) != "null" {
		r.structured = raw
	}
	if meta, ok := m["_meta"]; ok {
		var mm map[string]json.RawMessage
		if json.Unmarshal(meta, &mm) == nil {
			_ = json.Unmarshal(mm["code"], &r.code)
		}
	}
	sch, err := ix.outputSchema(r.tool)
	if err != nil {
		add(false, "the documented output schema of %s compiles: %v", r.tool, err)
		return out
	}
	switch {
	case !r.isError:
		if add(r.structured != nil, "a successful %s result carries structuredContent", r.tool) && sch != nil {
			validated(schemax.Validate(sch, r.structured), "structuredContent matches the documented output schema of %s", r.tool)
		}
	case r.structured != nil && profile == Reference:
		add(false, "a refusal carries no structuredContent (got %s)", short(r.structured))
	case r.structured != nil && sch != nil:
		// Clients such as the TypeScript SDK validate any structuredContent
		// against the output schema, error results included.
		validated(schemax.Validate(sch, r.structured), "a refusal's structuredContent matches the documented output schema of %s (clients validate it)", r.tool)
	}
	if r.isError && profile == Reference {
		if add(r.code != "", "a refusal carries its code in _meta.code") {
			add(strings.HasPrefix(r.text, r.code+": "), "a refusal's text starts with %q (got %q)", r.code+": ", r.text)
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

func short(b []byte) string {
	s := string(bytes.TrimSpace(b))
	if s == "" {
		return "nothing"
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// decode decodes JSON for comparison (numbers as float64: the values the
// suite compares are small).
func decode(b []byte) (any, error) {
	var v any
	err := json.Unmarshal(b, &v)
	return v, err
}

// semanticDiff compares two JSON documents as decoded values (key order and
// white space ignored) and describes the first difference, "" if equal.
func semanticDiff(want, got []byte) string {
	w, err := decode(want)
	if err != nil {
		return "documented schema is not JSON: " + err.Error()
	}
	g, err := decode(got)
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
			return fmt.Sprintf("at %s: documented an object, served %s", at, compact(g))
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
				return fmt.Sprintf("at %s: documented %s, served nothing", p, compact(wc))
			case !inW:
				return fmt.Sprintf("at %s: served %s, which the docs do not have", p, compact(gc))
			}
			if d := diffValues(p, wc, gc); d != "" {
				return d
			}
		}
		return ""
	case []any:
		gv, ok := g.([]any)
		if !ok {
			return fmt.Sprintf("at %s: documented an array, served %s", at, compact(g))
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
			return fmt.Sprintf("at %s: documented %s, served %s", at, compact(w), compact(g))
		}
		return ""
	}
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return short(b)
}
