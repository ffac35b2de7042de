package jsonschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prickle-dev/prickle/internal/jsonpointer"
)

func parse(t *testing.T, src string) *Document {
	t.Helper()
	d, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse(%s): %v", src, err)
	}
	return d
}

func names(kws []*Keyword) []string {
	var out []string
	for _, k := range kws {
		out = append(out, k.Name)
	}
	return out
}

func TestParseOrderPointersAndForms(t *testing.T) {
	d := parse(t, `{
		"type": "object",
		"properties": {"b/c": {"type": "string", "pattern": "^x$"}, "a": true},
		"required": ["a"],
		"anyOf": [{"required": ["a"]}, false],
		"x-unknown": {"type": "integer"},
		"$defs": {"d~": {"enum": [1, "2", null]}}
	}`)
	root := d.Root()
	if got, want := names(root.Keywords()), []string{"type", "properties", "required", "anyOf", "x-unknown", "$defs"}; !slices.Equal(got, want) {
		t.Errorf("keywords %v, want the order written %v", got, want)
	}
	props := root.Properties()
	if len(props) != 2 || props[0].Name != "b/c" || props[1].Name != "a" {
		t.Fatalf("properties %+v, want b/c then a", props)
	}
	if p := props[0].Schema.Pointer(); p != "/properties/b~1c" {
		t.Errorf("pointer of b/c = %q", p)
	}
	if k := props[0].Schema.Get("pattern"); k == nil || k.Ptr != "/properties/b~1c/pattern" || string(k.Value) != `"^x$"` {
		t.Errorf("pattern keyword = %+v", k)
	}
	if v, ok := props[1].Schema.Bool(); !ok || !v {
		t.Error("property a is not the schema true")
	}
	alts := root.List("anyOf")
	if len(alts) != 2 || alts[1].Pointer() != "/anyOf/1" || !alts[1].IsFalse() {
		t.Errorf("anyOf = %+v", alts)
	}
	if root.Sub("x-unknown") != nil {
		t.Error("an unknown keyword's value was read as a schema")
	}
	def := root.Members("$defs")
	if len(def) != 1 || def[0].Schema.Pointer() != "/$defs/d~0" {
		t.Fatalf("$defs = %+v", def)
	}
	if vals, ok := def[0].Schema.Get("enum").Elements(); !ok || len(vals) != 3 || string(vals[2]) != "null" {
		t.Errorf("enum elements = %s", vals)
	}
	// Every schema the table says is one is walked, parents first.
	var walked []string
	d.Walk(func(s *Schema) { walked = append(walked, s.Pointer()) })
	want := []string{"", "/properties/b~1c", "/properties/a", "/anyOf/0", "/anyOf/1", "/$defs/d~0"}
	if !slices.Equal(walked, want) {
		t.Errorf("Walk visited %q, want %q", walked, want)
	}
}

func TestParseOddValues(t *testing.T) {
	if _, err := Parse([]byte(`{"type": }`)); err == nil {
		t.Error("Parse of malformed JSON succeeded")
	}
	d := parse(t, `{"items": 5, "properties": [1], "required": "a", "type": ["string", 3]}`)
	root := d.Root()
	if items := root.Sub("items"); items == nil || !items.Invalid() {
		t.Errorf("items 5 = %+v, want an invalid schema", items)
	}
	if root.Properties() != nil || root.Required() != nil {
		t.Error("malformed properties or required read as valid")
	}
	if ts, ok := root.TypeSet(); ok || ts != nil {
		t.Errorf("TypeSet of a malformed type = %v, %v", ts, ok)
	}
	// A name written twice: first place, last value.
	d = parse(t, `{"type": "string", "minLength": 1, "type": "integer"}`)
	if got := names(d.Root().Keywords()); !slices.Equal(got, []string{"type", "minLength"}) {
		t.Errorf("keywords %v", got)
	}
	if ts := d.Root().Types(); !slices.Equal(ts, []string{"integer"}) {
		t.Errorf("types %v, want the last value", ts)
	}
}

func TestResolve(t *testing.T) {
	d := parse(t, `{"$defs": {"a b": {"type": "string"}, "loop": {"$ref": "#/$defs/loop"}},
		"properties": {"p": {"$ref": "#/$defs/a%20b", "description": "mine", "type": "integer"}},
		"x-place": {"const": 1}}`)
	for ref, want := range map[string]string{"#": "", "#/$defs/a%20b": "/$defs/a b", "#/x-place": "/x-place"} {
		s, err := d.Resolve(ref)
		if err != nil || s.Pointer() != jsonpointer.Join(mustSplit(t, want)) {
			t.Errorf("Resolve(%q) = %v, %v; want the schema at %q", ref, s, err, want)
		}
	}
	var re *RefError
	if _, err := d.Resolve("other.json#/a"); !errors.As(err, &re) || !re.Remote {
		t.Errorf("remote reference: %v", err)
	}
	if _, err := d.Resolve("#/$defs/none"); !errors.As(err, &re) || re.Remote || !errors.Is(err, jsonpointer.ErrNotFound) {
		t.Errorf("dangling reference: %v", err)
	}
	p := d.Root().Property("p")
	r := p.Resolved()
	if r == p || r.Via() != "#/$defs/a%20b" || r.Pointer() != "/properties/p" {
		t.Fatalf("Resolved = %+v", r)
	}
	// The target's keywords, the siblings laid over them, each where written.
	if k := r.Get("type"); k.Ptr != "/properties/p/type" || string(k.Value) != `"integer"` {
		t.Errorf("type of the resolved view: %+v", k)
	}
	if k := r.Get("description"); k.Ptr != "/properties/p/description" {
		t.Errorf("description of the resolved view: %+v", k)
	}
	if r.Has("$ref") {
		t.Error("the resolved view keeps $ref")
	}
	loop := d.Root().Members("$defs")[1].Schema
	if loop.Resolved() != loop {
		t.Error("a reference cycle resolved to something")
	}
}

func mustSplit(t *testing.T, p string) []string {
	if p == "" {
		return nil
	}
	toks, err := jsonpointer.Split(p)
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

func TestNullAndUnions(t *testing.T) {
	for src, want := range map[string]bool{
		`{"type": "null"}`:                      true,
		`{"type": "null", "description": "x"}`:  true,
		`{"const": null}`:                       true,
		`{"enum": [null]}`:                      true,
		`{"enum": [null, 1]}`:                   false,
		`{"type": ["null", "string"]}`:          false,
		`{"type": "null", "not": {}}`:           false,
		`{"type": "null", "$ref": "#/$defs/x"}`: false,
		`true`:                                  false,
	} {
		if got := parse(t, src).Root().OnlyNull(); got != want {
			t.Errorf("OnlyNull(%s) = %v, want %v", src, got, want)
		}
	}
	for src, want := range map[string]bool{
		`{"type": ["string", "null"]}`:                              true,
		`{"type": "string"}`:                                        false,
		`{"anyOf": [{"type": "string"}, {"type": "null"}]}`:         true,
		`{"anyOf": [{"type": "string"}, {"type": "integer"}]}`:      false,
		`{"allOf": [{"type": ["null", "string"]}, true]}`:           true,
		`{"allOf": [{"type": ["null", "string"]}, {"minimum": 1}]}`: true,
		`{"enum": ["a", null]}`:                                     true,
		`{"enum": ["a"]}`:                                           false,
		`{"$ref": "#/$defs/n", "$defs": {"n": {"type": "null"}}}`:   true,
		`{}`:    true,
		`false`: false,
	} {
		if got := parse(t, src).Root().AcceptsNull(); got != want {
			t.Errorf("AcceptsNull(%s) = %v, want %v", src, got, want)
		}
	}
	for src, want := range map[string]string{
		`{"type": ["string", "null"]}`:                      "/type/1",
		`{"type": "null"}`:                                  "/type",
		`{"anyOf": [{"type": "string"}, {"type": "null"}]}`: "/anyOf/1",
		`{"enum": [null]}`:                                  "",
	} {
		if got := parse(t, src).Root().NullSite(); got != want {
			t.Errorf("NullSite(%s) = %q, want %q", src, got, want)
		}
	}
	u, ok := parse(t, `{"oneOf": [{"type": "null"}, {"required": ["a"]}, {"type": "object"}, {"$ref": "#"}]}`).Root().Union()
	if !ok || u.Keyword != "oneOf" || !u.Null || len(u.Narrowing) != 1 || len(u.Shaped) != 2 {
		t.Errorf("Union = %+v, %v", u, ok)
	}
	if _, ok := parse(t, `{"type": "string"}`).Root().Union(); ok {
		t.Error("a schema without anyOf/oneOf has a union")
	}
	for src, want := range map[string]string{`{"anyOf": [], "oneOf": []}`: "both", `{"oneOf": []}`: "oneOf", `{}`: ""} {
		if got := parse(t, src).Root().UnionKeyword(); got != want {
			t.Errorf("UnionKeyword(%s) = %q, want %q", src, got, want)
		}
	}
}

func TestLiftAppliedObjectWithout(t *testing.T) {
	s := parse(t, `{"$id": "x", "description": "d", "default": "a", "type": "string", "minLength": 1}`).Root()
	l := s.Lift("anyOf")
	if l.UnionKeyword() != "anyOf" || l.Has("anyOf") {
		t.Errorf("lifted view: union %q, has anyOf %v", l.UnionKeyword(), l.Has("anyOf"))
	}
	if got := names(l.Keywords()); !slices.Equal(got, []string{"$id", "description", "default"}) {
		t.Errorf("outer keywords %v", got)
	}
	vs := l.Variants("anyOf")
	if len(vs) != 1 || !slices.Equal(names(vs[0].Keywords()), []string{"type", "minLength"}) {
		t.Errorf("variant keywords %v", names(vs[0].Keywords()))
	}
	if names(s.Keywords())[0] != "$id" || len(s.Keywords()) != 5 {
		t.Error("Lift changed the schema it lifted")
	}
	if w := s.Without("type"); w.Has("type") || !s.Has("type") {
		t.Error("Without did not make a copy without the keyword")
	}

	o := parse(t, `{"items": {"type": "string"}}`).Root()
	if a := o.Applied("additionalProperties"); a == nil || a.Pointer() != "/additionalProperties" {
		t.Errorf("Applied(additionalProperties) = %+v, want true at /additionalProperties", a)
	} else if v, ok := a.Bool(); !ok || !v {
		t.Error("an absent additionalProperties does not apply as true")
	}
	if a := o.Applied("items"); a == nil || a.Pointer() != "/items" || !slices.Equal(a.Types(), []string{"string"}) {
		t.Errorf("Applied(items) = %+v", a)
	}
	if o.Applied("not") != nil {
		t.Error("an absent not applies as something")
	}
	tr := parse(t, `true`).Root()
	if ob := tr.Object(); !ob.IsObject() || len(ob.Keywords()) != 0 || !ob.AcceptsNull() {
		t.Error("true as an object is not the empty schema")
	}
}

func TestCanonical(t *testing.T) {
	for a, b := range map[string]string{
		`{"b": 1, "a": [1.0, "x<"]}`: `{"a":[1,"x<"],"b":1}`,
		`2e0`:                        `2`,
		`1.50`:                       `1.5`,
		`12345678901234567890`:       `12345678901234567890`,
		`null`:                       `null`,
		`not json`:                   `not json`,
	} {
		if got := Canonical([]byte(a)); got != b {
			t.Errorf("Canonical(%s) = %s, want %s", a, got, b)
		}
	}
	if !Equal([]byte(`{"a": 1}`), []byte(`{"a":1.0}`)) || Equal([]byte(`"1"`), []byte(`1`)) {
		t.Error("Equal compares JSON values wrongly")
	}
}

func TestTable(t *testing.T) {
	for _, k := range Table() {
		if k.Name == "" || Info(k.Name) != k {
			t.Errorf("table entry %+v is not found by its name", k)
		}
		if k.Class == Unknown {
			t.Errorf("%s is in the table with class Unknown", k.Name)
		}
		if k.Bound != 0 && !strings.HasPrefix(k.Name, "max") && !strings.HasPrefix(k.Name, "min") && !strings.HasPrefix(k.Name, "exclusive") {
			t.Errorf("%s has a bound but is no bound keyword", k.Name)
		}
		if k.AbsentIsTrue && k.Form != FormSchema {
			t.Errorf("%s: absent-is-true on a keyword that holds no single schema", k.Name)
		}
	}
	if i := Info("x-vendor"); i.Class != Unknown || i.Form != FormValue {
		t.Errorf("an unknown keyword: %+v", i)
	}
	for _, shape := range []string{"type", "properties", "$ref", "anyOf", "enum"} {
		if !Info(shape).Shape {
			t.Errorf("%s does not decide a shape", shape)
		}
	}
	for _, narrow := range []string{"minLength", "pattern", "format", "description", "required"} {
		if Info(narrow).Shape {
			t.Errorf("%s decides a shape", narrow)
		}
	}
}

// stringsDocs reach the edges of Strings' fast read.
var stringsDocs = []string{
	`[]`, `["a", "b"]`, ` [ "a" , "b" ] `, `["a", null]`, `[null]`, `["\u00e9\ud83d\ude00", "\"\\/"]`,
	`["\ud800"]`, "[\"\xff\"]", `["a", 1]`, `["a", ["b"]]`, `["a",]`, `["a"] x`, `["a"`, `{"a": "b"}`,
	`["a", "a"]`, `[true]`, `["` + strings.Repeat("x", 5000) + `"]`,
}

// Strings reads an array of strings as json.Unmarshal reads it.
func TestStringsAsUnmarshal(t *testing.T) {
	for _, src := range stringsDocs {
		checkStrings(t, src)
	}
}

func checkStrings(t *testing.T, src string) { checkAsUnmarshal(t, src, '[', (*Keyword).Strings) }

// checkAsUnmarshal holds read, for a value src starting with first, to
// json.Unmarshal: the same value, or both refuse.
func checkAsUnmarshal[T any](t *testing.T, src string, first byte, read func(*Keyword) (T, bool)) {
	t.Helper()
	if src == "" || src[0] != first {
		return
	}
	got, ok := read(&Keyword{Value: []byte(src)})
	var want T
	err := json.Unmarshal([]byte(src), &want)
	if ok != (err == nil) || ok && (fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want)) {
		t.Errorf("%.80q: %#v, %v; json.Unmarshal %#v, %v", src, got, ok, want, err)
	}
}

func FuzzStrings(f *testing.F) {
	for _, src := range stringsDocs {
		f.Add(src)
	}
	f.Fuzz(checkStrings)
}

// stringDocs reach the edges of String's fast read.
var stringDocs = []string{
	`""`, `"a"`, `"a b"`, `"é😀"`, `"a\"b"`, `"a\\b"`, `"\u0041"`, "\"a\tb\"", "\"\xff\"", "\"\xed\xa0\x80\"",
	`"a" `, `"a`, `"a"b"`, `"\ud800"`, `"` + strings.Repeat("x", 5000) + `"`,
}

// String reads a string as json.Unmarshal reads it.
func TestStringAsUnmarshal(t *testing.T) {
	for _, src := range stringDocs {
		checkString(t, src)
	}
}

func checkString(t *testing.T, src string) { checkAsUnmarshal(t, src, '"', (*Keyword).String) }

func FuzzString(f *testing.F) {
	for _, src := range stringDocs {
		f.Add(src)
	}
	f.Fuzz(checkString)
}
