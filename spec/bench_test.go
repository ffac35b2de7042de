package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/internal/testkit"
)

// The benchmarks run on a generated corpus of distinct, valid pages of the
// bundled pages' size (150 to 300 lines): the targets are 1,000 pages to a
// spec in under 0.5 s and linted in under 3 s, growing linearly.
//
//	go test -run='^$' -bench=. -benchmem -count=3 ./spec/

var benchSizes = []int{100, 1000}

// benchPages runs op once per iteration on generated corpora of each of
// benchSizes, reporting bytes, allocations and µs per page.
func benchPages(b *testing.B, op func(b *testing.B, srcs []Source)) {
	for _, n := range benchSizes {
		srcs := genCorpus(n)
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			b.SetBytes(corpusBytes(srcs))
			b.ReportAllocs()
			for b.Loop() {
				op(b, srcs)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/page")
		})
	}
}

// BenchmarkSpec: parse the pages, merge them and write the canonical JSON,
// which is what "prickle-gen spec" does.
func BenchmarkSpec(b *testing.B) {
	benchPages(b, func(b *testing.B, srcs []Source) {
		pages, _ := ParseAll(srcs)
		s, _ := Build(pages)
		if _, err := s.Marshal(); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkLint: parse the pages and run every rule (schemas compiled,
// patterns checked, examples validated).
func BenchmarkLint(b *testing.B) {
	benchPages(b, func(b *testing.B, srcs []Source) {
		pages, pd := ParseAll(srcs)
		if _, ds := Lint(pages, pd); ds.HasErrors() {
			b.Fatalf("generated corpus has errors: %v", ds.Errors()[0])
		}
	})
}

// BenchmarkSpecChecked: the spec of pages checked as lint checks them:
// LoadLinted (parse, build, lint) and Marshal, as generate does.
func BenchmarkSpecChecked(b *testing.B) {
	benchPages(b, func(b *testing.B, srcs []Source) {
		s, _, err := LoadLinted(srcs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Marshal(); err != nil {
			b.Fatal(err)
		}
	})
}

func corpusBytes(srcs []Source) int64 {
	var n int64
	for _, s := range srcs {
		n += int64(len(s.Src))
	}
	return n
}

// The generated corpus is what the benchmarks claim: distinct, valid pages
// of a realistic size, with the shared text of the bundled pages.
func TestGeneratedCorpus(t *testing.T) {
	srcs := genCorpus(60)
	if again := genCorpus(60); !bytes.Equal(again[17].Src, srcs[17].Src) {
		t.Fatal("the generator is not deterministic")
	}
	pages, pd := ParseAll(srcs)
	s, ds := Lint(pages, pd)
	if ds.HasErrors() {
		t.Fatalf("generated pages have errors:\n%s\n%s", diagText(ds.Errors()), srcs[0].Src)
	}
	for _, d := range ds {
		// Its ids are its own, not the seed world's.
		if d.Rule != "catalog-undocumented" && d.Rule != "example-seed" {
			t.Errorf("unexpected finding: %s", d)
		}
	}
	if len(s.Tools) != len(srcs) {
		t.Fatalf("%d tools from %d pages", len(s.Tools), len(srcs))
	}
	minLines, maxLines := 1<<30, 0
	for _, src := range srcs {
		n := bytes.Count(src.Src, []byte("\n"))
		minLines, maxLines = min(minLines, n), max(maxLines, n)
		// Generated pages are canonical: fmt leaves them alone.
		out, err := Format(src.File, src.Src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, src.Src) {
			t.Fatalf("%s is not canonical:\n%s", src.File, testkit.FirstDiff(out, src.Src))
		}
	}
	if minLines < 100 || maxLines > 400 {
		t.Errorf("page sizes %d to %d lines; want about the bundled pages' 150 to 220", minLines, maxLines)
	}
	t.Logf("%d pages, %d to %d lines, %d bytes", len(srcs), minLines, maxLines, corpusBytes(srcs))
}

// genCorpus returns n distinct valid pages, the same for the same n.
func genCorpus(n int) []Source {
	rng := rand.New(rand.NewSource(int64(n)))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s_%s_%d", verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)], i)
	}
	out := make([]Source, n)
	for i := range out {
		out[i] = Source{File: fmt.Sprintf("gen/%s.md", names[i]), Src: genPage(rng, i, names)}
	}
	return out
}

var (
	verbs = []string{"claim", "list", "read", "post", "accept", "reject", "update", "wait_for", "request", "check", "discover", "archive"}
	nouns = []string{"task", "room", "message", "result", "agent", "project", "pulse", "step", "inbox", "credential", "discussion", "capability"}
	// Patterns and values that match them; several use lookahead, as the
	// bundled pages do.
	patterns = []struct{ re, value string }{
		{`^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$`, "website-v2"},
		{`^[A-Za-z0-9_-]+$`, "example-task-id"},
		{`^[a-z0-9]+(?:-[a-z0-9]+)*$`, "proj-7"},
		{`^#[0-9a-f]{6}$`, "#a1b2c3"},
		{`^(?!-)[a-z0-9-]{1,63}(?<!-)$`, "edge-host"},
		{`^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}\/[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$`, "alice/builder"},
	}
	dateTimePattern = `^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$`
	sentences       = []string{
		"Runner devices only: %s a task routed to your agent before launching a run for it.",
		"Returns the attempt and an execution credential for that one run, shown once.",
		"Retrying with the same idempotency key replays the call with a fresh credential.",
		"A mention is never a run's cause, e.g. when %s is called from a room.",
		"Use it before mentioning or handing work to someone.",
		"The answer lists who is online, each agent's owner, model, role and capabilities.",
		"Refused once the turn no longer waits on your agent: ended, stopped, or out of time.",
		"Only a paired runner can call %s, and only in your own room.",
		"Runner client integration is still being built.",
		"The credential expires after %d minutes and may only read that room.",
	}
	undocumented = []string{"get_project_context", "wait_for_mention", "handoff", "return_result", "update_pulse", "request_step"}
)

const (
	genPreamble = "Read the room, hand off a task, and return a result with evidence. These are the tools Prickle exposes to connected agents.\n\n" +
		"Identity comes from the agent’s token, never from a tool argument. Examples use the seeded website-v2 project and example task IDs."
	genNotes = "Server validation also enforces rules that JSON Schema cannot express, including evidence requirements.\n\n" +
		"Packet preview and clarification tools are planned. They are not part of the available catalog."
)

// jsonObj is a JSON object with its keys in the order given.
type jsonObj []any // key, value, key, value...

func (o jsonObj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(o); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(o[i])
		v, err := json.Marshal(o[i+1])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func indentJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		panic(err)
	}
	return b.String()
}

const schemaURI = "https://json-schema.org/draft/2020-12/schema"

// genProperty returns a property schema and an example value valid for it.
func genProperty(rng *rand.Rand, i, k int) (schema jsonObj, example any) {
	switch rng.Intn(7) {
	case 0, 1:
		p := patterns[rng.Intn(len(patterns))]
		return jsonObj{"type", "string", "minLength", 1, "maxLength", 64 + k, "pattern", p.re}, p.value
	case 2:
		// A pattern of its own on each page.
		re := fmt.Sprintf("^p%d-[a-z]{1,%d}(?=[a-z]*$)[a-z]*$", i, 8+k)
		return jsonObj{"type", "string", "pattern", re}, fmt.Sprintf("p%d-abc", i)
	case 3:
		lo := rng.Intn(10)
		return jsonObj{"type", "integer", "minimum", lo, "maximum", lo + 100 + i}, json.Number(strconv.Itoa(lo + 1))
	case 4:
		kinds := []any{"mcp", "repo", "deploy", "data", "other"}
		return jsonObj{"type", "string", "enum", kinds}, kinds[rng.Intn(len(kinds))]
	case 5:
		return jsonObj{"type", "string", "format", "date-time", "pattern", dateTimePattern}, "2025-01-02T03:04:05Z"
	default:
		return jsonObj{"type", "object", "properties", jsonObj{
			"message_id", jsonObj{"type", "string", "minLength", 1, "maxLength", 64, "pattern", `^[A-Za-z0-9_-]+$`},
			"flag", jsonObj{"type", "boolean"},
		}, "required", []string{"message_id"}}, jsonObj{"message_id", fmt.Sprintf("m-%d-%d", i, k), "flag", true}
	}
}

// genPage returns the page of tool names[i].
func genPage(rng *rand.Rand, i int, names []string) []byte {
	tool := names[i]
	var b strings.Builder
	b.WriteString("# MCP tool reference\n\n" + genPreamble + "\n\n## " + tool + "\n\n")
	for p := 0; p < 1+rng.Intn(2); p++ {
		if p > 0 {
			b.WriteString("\n\n")
		}
		for s := 0; s < 2+rng.Intn(4); s++ {
			if s > 0 {
				b.WriteByte(' ')
			}
			st := sentences[rng.Intn(len(sentences))]
			switch strings.Count(st, "%") {
			case 1:
				if strings.Contains(st, "%d") {
					st = fmt.Sprintf(st, 5+i%50)
				} else {
					st = fmt.Sprintf(st, tool)
				}
			}
			b.WriteString(st)
		}
		fmt.Fprintf(&b, " Page %d of the generated corpus.", i)
	}

	// Input schema: 2 to 6 properties; the example sets each of them.
	var props, example jsonObj
	var required []string
	for k := 0; k < 2+rng.Intn(5); k++ {
		name := fmt.Sprintf("%s_%d", nouns[(i+k)%len(nouns)], k)
		sch, val := genProperty(rng, i, k)
		props = append(props, name, sch)
		example = append(example, name, val)
		if k < 2 {
			required = append(required, name)
		}
	}
	input := jsonObj{"$schema", schemaURI, "type", "object", "properties", props, "required", required}

	// Output schema: a list of records, like the bundled pages', and a
	// credential whose allowed_tools name other tools (a catalog).
	var recProps jsonObj
	var recRequired []string
	for k := 0; k < 4+rng.Intn(5); k++ {
		name := fmt.Sprintf("field_%d", k)
		sch, _ := genProperty(rng, i, k)
		recProps = append(recProps, name, sch)
		recRequired = append(recRequired, name)
	}
	var allowed []string
	for k := 0; k < 3; k++ {
		allowed = append(allowed, names[rng.Intn(len(names))])
	}
	allowed = append(allowed, undocumented[rng.Intn(len(undocumented))], tool)
	allowed = dedupe(allowed)
	output := jsonObj{"$schema", schemaURI, "type", "object", "properties", jsonObj{
		"items", jsonObj{"type", "array", "maxItems", 50 + i, "items", jsonObj{
			"type", "object", "properties", recProps, "required", recRequired, "additionalProperties", false}},
		"credential", jsonObj{"type", "object", "properties", jsonObj{
			"token", jsonObj{"type", "string", "minLength", 1},
			"expires_at", jsonObj{"type", "string", "format", "date-time", "pattern", dateTimePattern},
			"allowed_tools", jsonObj{"type", "array", "items", jsonObj{"type", "string", "enum", allowed}},
		}, "required", []string{"token", "expires_at", "allowed_tools"}, "additionalProperties", false},
	}, "required", []string{"items", "credential"}, "additionalProperties", false}

	for _, sec := range []struct {
		name string
		v    any
	}{{SectionExample, example}, {SectionInput, input}, {SectionOutput, output}} {
		b.WriteString("\n\n### " + sec.name + "\n\n```json\n" + indentJSON(sec.v) + "\n```")
	}
	b.WriteString("\n\n" + genNotes + "\n\n[Read online](https://app.useprickle.dev/docs/reference/mcp-tools?tool=" + tool + ")\n")
	return []byte(b.String())
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Lint checks the tools in parallel: the findings are those of checking
// them one by one, in the same order (run with -race).
func TestLintParallel(t *testing.T) {
	srcs := genCorpus(40)
	// Break some pages: an invalid example, schema and pattern, a missing
	// required property; the same defects on several pages at once.
	breaks := []struct{ from, to string }{
		{`"$schema": "https://json-schema.org/draft/2020-12/schema",` + "\n  \"type\": \"object\"", `"$schema": "https://json-schema.org/draft/2020-12/schema",` + "\n  \"type\": \"objec\""},
		{`"minLength": 1,`, `"minLength": -1,`},
		{`"pattern": "^[A-Za-z0-9_-]+$"`, `"pattern": "^[z-a]+$"`},
		{`"required": [` + "\n    \"", `"required": [` + "\n    \"nope\",\n    \""},
	}
	broken := 0
	for i := range srcs {
		br := breaks[i%len(breaks)]
		if i%3 == 0 && bytes.Contains(srcs[i].Src, []byte(br.from)) {
			srcs[i].Src = bytes.Replace(srcs[i].Src, []byte(br.from), []byte(br.to), 1)
			broken++
		}
	}
	if broken < 8 {
		t.Fatalf("only %d pages broken", broken)
	}
	pages, pd := ParseAll(srcs)
	_, got := Lint(pages, pd)
	if len(got.Errors()) < broken {
		t.Fatalf("%d errors for %d broken pages:\n%s", len(got.Errors()), broken, diagText(got))
	}
	s, want := Build(pages)
	want = append(want, pd...)
	for _, tool := range s.Tools {
		want = append(want, lintTool(tool)...)
	}
	want.Sort()
	if a, b := diagText(got), diagText(want); a != b {
		t.Errorf("parallel lint:\n%s\nsequential:\n%s", a, b)
	}
}
