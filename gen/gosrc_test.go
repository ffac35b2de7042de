package gen

import (
	"bytes"
	"go/format"
	"strconv"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/spec"
)

// The validators are written as gofmt prints them, whatever the names the
// schemas give: names that read as a doc comment's list, heading or code
// when a comment's line starts with them, quotes, backquotes, comment
// ends, tabs and non-ASCII letters go into comments, case labels and
// patterns. (The corpora's files are checked by TestGofmtAndHeader.)
func TestValidatorsAreGofmtClean(t *testing.T) {
	names := []string{"- a", "# b", "1. c", "2) d", "* e", "+ f", "a */ b /* c", "q`uo\"te", "tab\there", "ünï cödé", "  lead", "x"}
	var props, required []string
	for _, n := range names {
		q := jsonString(n)
		props = append(props, q+`: {"type": "object", "properties": {`+q+`: {"type": "string", "minLength": 1, "pattern": "^a`+"`"+`b$"}}, "required": [`+q+`], "additionalProperties": false}`)
		required = append(required, q)
	}
	// Long names wrap the comments at every point.
	for i := range 40 {
		n := strings.Repeat("- ", i%7) + strings.Repeat("w", i)
		props = append(props, jsonString(n)+`: {"type": ["string", "null"], "enum": ["a", null]}`)
	}
	schema := `{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {` +
		strings.Join(props, ", ") + `}, "required": [` + strings.Join(required, ", ") + `]}`
	page := "# T\n\nPages. Identity comes from the token.\n\n## odd_names\n\nOdd names.\n\n### Example input\n\n```json\n{}\n```\n\n### Input schema\n\n```json\n" + schema +
		"\n```\n\n### Output schema\n\n```json\n" + `{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}` +
		"\n```\n\n[Read online](https://example.com/docs?tool=odd_names)\n"
	s, _, err := spec.LoadUnlinted([]spec.Source{{File: "odd - names.md", Src: []byte(page)}})
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := Generate(s, Options{Package: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var src []byte
	for _, f := range files {
		if f.Path == "validate.go" {
			src = f.Data
		}
	}
	if !bytes.Contains(src, []byte(`case "ünï cödé":`)) {
		t.Fatalf("the names are not in validate.go:\n%s", src)
	}
	f, err := format.Source(src)
	if err != nil {
		t.Fatalf("validate.go: %v\n%s", err, src)
	}
	if !bytes.Equal(f, src) {
		t.Errorf("validate.go is not as gofmt prints it; gofmt changes:\n%s", firstLineDiff(src, f))
	}
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

// firstLineDiff shows the first line where a and b differ.
func firstLineDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n-" + al[i] + "\n+" + bl[i]
		}
	}
	return "in length"
}
