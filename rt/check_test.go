package rt

import (
	"errors"
	"testing"

	"github.com/prickle-dev/prickle/internal/ecmaregex"
	"github.com/prickle-dev/prickle/internal/validation"
)

// labelsSchema puts a propertyNames inside a property; labelsCheck is the
// check prickle-gen writes for it.
const labelsSchema = `{"type":"object","properties":{"labels":{"type":"object","propertyNames":{"maxLength":3}}}}`

func labelsCheck(c *Checker) {
	v := c.Read()
	if !c.Type(v, "/type", TypeObject) {
		return
	}
	for c.Member() {
		switch string(c.Name()) {
		case "labels":
			labelsLabels(c)
		default:
			c.Skip()
		}
	}
}

func labelsLabels(c *Checker) {
	v := c.Read()
	if !c.Type(v, "/properties/labels/type", TypeObject) {
		return
	}
	for c.Member() {
		c.PropertyName(labelsName)
		c.Skip()
	}
}

func labelsName(c *Checker) {
	v := c.Read()
	if v.Kind == KindString {
		c.MaxLength(v, "/properties/labels/propertyNames/maxLength", 3)
	}
}

// A property name that fails propertyNames is reported at its object. The
// library (the oracle) validates the name as a document of its own and
// reports it at the root, "/" for a name inside /labels: the one place
// where the generated validators and the oracle disagree, and the
// generated one is right.
func TestPropertyNamesPointer(t *testing.T) {
	doc := []byte(`{"labels":{"abcd":1}}`)
	var ve *ValidationError
	if err := Validate(doc, labelsCheck); !errors.As(err, &ve) || len(ve.Violations) != 1 || ve.Violations[0].Pointer != "/labels" {
		t.Fatalf("generated: %v, want one violation at /labels", err)
	}
	got := ve.Violations[0]
	if err := schemaValidator("labels", labelsSchema).Validate(doc); !errors.As(err, &ve) || len(ve.Violations) != 1 {
		t.Fatalf("oracle: %v", err)
	}
	want := ve.Violations[0]
	if want.Pointer != "" {
		t.Errorf("the oracle now reports %q: the disagreement is gone (validatordiff need no longer leave this pointer out)", want.Pointer)
	}
	got.Pointer = ""
	if got != want {
		t.Errorf("generated %+v, oracle %+v", got, want)
	}
}

// A document that is not one I-JSON value is one violation, keyword
// "json", worded as validation words it (what the decoder stopped at does
// not matter): invalid JSON at the root, a name twice or invalid text at
// its pointer.
func TestDocumentViolations(t *testing.T) {
	for _, doc := range []string{`{"labels":`, `{"labels":{}} {}`, `{"labels":{"a":1,"a":2}}`, "{\"labels\":{\"\xff\":1}}",
		`{"labels":{"\ud800":1}}`, ``, `[1,]`} {
		want := validation.DocumentViolation([]byte(doc))
		if want == nil {
			t.Fatalf("%q: validation finds nothing wrong", doc)
		}
		err := Validate([]byte(doc), labelsCheck)
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Violations) != 1 || ve.Violations[0] != *want {
			t.Errorf("%q: %v, want %+v", doc, err, want)
		}
	}
}

// A pattern match that does not finish (regexp2's clock starved) makes the
// validation an error, neither valid nor invalid, wherever the pattern is:
// even inside an alternative that another one makes valid.
func TestPatternTimeoutIsNoVerdict(t *testing.T) {
	slug := NewPattern(`^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}$`)
	str := func(c *Checker) {
		v := c.Read()
		if c.Type(v, "/anyOf/0/type", TypeString) {
			c.Pattern(v, "/anyOf/0/pattern", slug)
		}
	}
	any := func(c *Checker) { c.Skip() }
	check := func(c *Checker) { c.AnyOf(c.Raw(), str, any) }
	if err := Validate([]byte(`"website-v2"`), check); err != nil {
		t.Fatal(err)
	}
	restore := ecmaregex.StarveClock(-1)
	err := Validate([]byte(`"website-v3"`), check) // a value the match cache has not seen
	restore()
	var ve *ValidationError
	if err == nil || errors.As(err, &ve) || !ecmaregex.IsTimeout(err) {
		t.Errorf("starved clock: %v, want a timeout error", err)
	}
}

// readAll reads every string of a flat object and records them.
func readAll(got *[]string) func(c *Checker) {
	return func(c *Checker) {
		*got = (*got)[:0]
		if v := c.Read(); v.Kind != KindObject {
			return
		}
		for c.Member() {
			*got = append(*got, string(c.Name())+"="+string(c.Read().Text()))
		}
	}
}

// A string with escapes, unquoted after a checker of the pool read one
// without, went into the bytes the decoder was reading: the next member
// was read from overwritten input ("invalid character after object
// name"), or read as something the document does not say.
func TestUnquoteKeepsTheDocument(t *testing.T) {
	var got []string
	check := readAll(&got)
	for _, doc := range []string{
		`{"lang":"Aa","bb":"claim"}`,
		`{"lang":"aa\n","bb":"claim"}`,
		`{"a\u0062":"\u00e9t\u00e9","bb":"y"}`,
		`{"lang":"plain","bb":"z"}`,
	} {
		if err := Validate([]byte(doc), check); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if want := 2; len(got) != want || got[1][:3] != "bb=" {
			t.Fatalf("%s: read %q", doc, got)
		}
	}
	if got[0] != "lang=plain" || got[1] != "bb=z" {
		t.Fatalf("read %q", got)
	}
}
