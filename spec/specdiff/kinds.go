package specdiff

// The kinds of change. Each is graded on the input and on the output side
// as Kinds says; the package documentation explains the grading.
const (
	KindToolAdded       = "tool-added"
	KindToolRemoved     = "tool-removed"
	KindCatalogAdded    = "catalog-name-added"
	KindCatalogRemoved  = "catalog-name-removed"
	KindSentenceAdded   = "doc-sentence-added"
	KindSentenceRemoved = "doc-sentence-removed"
	KindExampleChanged  = "doc-example-changed"

	KindFieldAdded         = "field-added"
	KindFieldRequiredAdded = "field-required-added"
	KindFieldRemoved       = "field-removed"
	KindFieldRequired      = "field-became-required"
	KindFieldOptional      = "field-became-optional"

	KindTypeChanged  = "type-changed"
	KindTypeNarrowed = "type-narrowed"
	KindTypeWidened  = "type-widened"
	KindNullAdded    = "nullable-added"
	KindNullRemoved  = "nullable-removed"

	KindEnumAdded        = "enum-added"
	KindEnumRemoved      = "enum-removed"
	KindEnumValueAdded   = "enum-value-added"
	KindEnumValueRemoved = "enum-value-removed"
	KindConstAdded       = "const-added"
	KindConstRemoved     = "const-removed"
	KindConstChanged     = "const-changed"

	KindFormatAdded    = "format-added"
	KindFormatRemoved  = "format-removed"
	KindFormatChanged  = "format-changed"
	KindPatternAdded   = "pattern-added"
	KindPatternRemoved = "pattern-removed"
	KindPatternChanged = "pattern-changed"

	KindPatternWidened   = "pattern-widened"
	KindPatternNarrowed  = "pattern-narrowed"
	KindPatternRewritten = "pattern-rewritten"
	KindPatternUnknown   = "pattern-unknown"

	KindConstraintNarrowed = "constraint-narrowed"
	KindConstraintWidened  = "constraint-widened"
	KindConstraintChanged  = "constraint-changed"

	KindClosed         = "additional-properties-closed"
	KindOpened         = "additional-properties-opened"
	KindVariantAdded   = "variant-added"
	KindVariantRemoved = "variant-removed"
	KindSchemaNarrowed = "schema-narrowed"
	KindSchemaWidened  = "schema-widened"

	KindDefinitionAdded   = "definition-added"
	KindDefinitionRemoved = "definition-removed"
	KindDefaultAdded      = "default-added"
	KindDefaultChanged    = "default-changed"
	KindAnnotationChanged = "annotation-changed"
	KindSchemaChanged     = "schema-changed"
)

// Grade says whether a kind of change breaks clients on one side.
type Grade uint8

// The grades.
const (
	NonBreaking Grade = iota
	Breaking
	// BreakingIfClosed: breaking only when the object rejects unknown
	// properties (additionalProperties or unevaluatedProperties false) or
	// holds them to a schema.
	BreakingIfClosed
)

func (g Grade) String() string {
	switch g {
	case Breaking:
		return "breaking"
	case BreakingIfClosed:
		return "breaking if additionalProperties is false"
	default:
		return "non-breaking"
	}
}

// KindInfo grades one kind of change. Tool, doc and catalog kinds have the
// same grade on both sides.
type KindInfo struct {
	Kind          string
	Input, Output Grade
	Doc           string
}

const (
	nb = NonBreaking
	br = Breaking
)

// Kinds lists every kind of change Compare reports, in the order of the
// package documentation's table.
var Kinds = []KindInfo{
	{KindToolAdded, nb, nb, "a tool with a page appears"},
	{KindToolRemoved, br, br, "a tool's page disappears (even if its name stays in the catalog)"},
	{KindCatalogAdded, nb, nb, "a catalog name without a page appears"},
	{KindCatalogRemoved, br, br, "a catalog name without a page disappears"},
	{KindSentenceAdded, nb, nb, "a description sentence appears (an edit is one removed, one added)"},
	{KindSentenceRemoved, nb, nb, "a description sentence disappears"},
	{KindExampleChanged, nb, nb, "the example input changes"},

	{KindFieldAdded, nb, BreakingIfClosed, "a new optional property (output: breaks clients that validate with the old, closed schema, as the generated client and the TypeScript SDK do)"},
	{KindFieldRequiredAdded, br, nb, "a new required property"},
	{KindFieldRemoved, BreakingIfClosed, br, "a property disappears"},
	{KindFieldRequired, br, nb, "an existing property becomes required"},
	{KindFieldOptional, nb, br, "a required property becomes optional"},

	{KindTypeChanged, br, br, "the type changes to one neither wider nor narrower"},
	{KindTypeNarrowed, br, nb, "the type accepts less (a type dropped, type added where there was none)"},
	{KindTypeWidened, nb, br, "the type accepts more (a type added, integer to number, type removed)"},
	{KindNullAdded, nb, br, "null becomes valid (type gains null, a null variant)"},
	{KindNullRemoved, br, nb, "null stops being valid"},

	{KindEnumAdded, br, nb, "an enum where there was none"},
	{KindEnumRemoved, nb, br, "the enum disappears"},
	{KindEnumValueAdded, nb, br, "an enum value appears (clients switch on the values)"},
	{KindEnumValueRemoved, br, nb, "an enum value disappears"},
	{KindConstAdded, br, nb, "a const where there was none"},
	{KindConstRemoved, nb, br, "the const disappears"},
	{KindConstChanged, br, br, "the const value changes"},

	{KindFormatAdded, br, nb, "a format where there was none (formats are asserted)"},
	{KindFormatRemoved, nb, br, "the format disappears"},
	{KindFormatChanged, br, br, "the format changes"},
	{KindPatternAdded, br, nb, "a pattern where there was none"},
	{KindPatternRemoved, nb, br, "the pattern disappears"},
	{KindPatternChanged, br, br, "the pattern changes to one neither wider nor narrower: some strings start matching, others stop"},
	{KindPatternWidened, nb, br, "the pattern changes to one that matches every string it matched, and more"},
	{KindPatternNarrowed, br, nb, "the pattern changes to one that matches only strings it matched, not all of them"},
	{KindPatternRewritten, nb, nb, "the pattern is written another way and matches the same strings"},
	{KindPatternUnknown, nb, nb, "the pattern changes, compatibility unknown: lookaround or backreferences, or too large to decide"},

	{KindConstraintNarrowed, br, nb, "a bound tightens or appears: max* lowered, min* raised, multipleOf a multiple, uniqueItems true"},
	{KindConstraintWidened, nb, br, "a bound loosens or disappears: max* raised, min* lowered"},
	{KindConstraintChanged, br, br, "multipleOf changes to a value neither a multiple nor a divisor"},

	{KindClosed, br, nb, "additionalProperties (or unevaluatedProperties) becomes false"},
	{KindOpened, nb, br, "additionalProperties (or unevaluatedProperties) stops being false"},
	{KindVariantAdded, nb, br, "an anyOf/oneOf variant appears"},
	{KindVariantRemoved, br, nb, "an anyOf/oneOf variant disappears"},
	{KindSchemaNarrowed, br, nb, "a subschema becomes false, or an allOf entry appears"},
	{KindSchemaWidened, nb, br, "a subschema stops being false, or an allOf entry disappears"},

	{KindDefinitionAdded, nb, nb, "a $defs entry appears (its uses are compared where they are)"},
	{KindDefinitionRemoved, nb, nb, "a $defs entry disappears (its uses are compared where they are)"},
	{KindDefaultAdded, nb, nb, "a default where there was none"},
	{KindDefaultChanged, br, nb, "the default changes or disappears: a client that omits the field gets other behaviour"},
	{KindAnnotationChanged, nb, nb, "an annotation changes: title, description, $comment, examples, deprecated, readOnly, writeOnly, contentEncoding, contentMediaType or contentSchema"},
	{KindSchemaChanged, br, br, "any other keyword changes (not, if/then/else, a remote $ref...): not understood, so conservatively breaking"},
}

// The kinds of change to the generated Go API (side go). Additions are not
// reported: they break no code written against the old package.
const (
	KindGoTypeRemoved   = "go-type-removed"
	KindGoTypeChanged   = "go-type-changed"
	KindGoFieldRemoved  = "go-field-removed"
	KindGoFieldRetyped  = "go-field-retyped"
	KindGoConstRemoved  = "go-const-removed"
	KindGoMethodAdded   = "go-method-added"
	KindGoMethodRemoved = "go-method-removed"
)

// GoKinds describes every kind of Go API change.
var GoKinds = []struct{ Kind, Doc string }{
	{KindGoTypeRemoved, "a named type is gone (its object renamed or moved, its tool removed)"},
	{KindGoTypeChanged, "a named type keeps its name but is another kind of type (a struct becomes json.RawMessage, an enum becomes ToolName)"},
	{KindGoFieldRemoved, "a struct field is gone (its property removed or renamed)"},
	{KindGoFieldRetyped, "a struct field keeps its name but changes type (a value becomes a pointer when it turns optional or nullable)"},
	{KindGoConstRemoved, "an enum constant or a tool-name constant is gone"},
	{KindGoMethodAdded, "Handler gains a method (a new tool): a handler that does not embed UnimplementedHandler stops compiling"},
	{KindGoMethodRemoved, "Handler and Client lose a method (a tool removed)"},
}

var kindIndex = func() map[string]KindInfo {
	m := map[string]KindInfo{}
	for _, k := range Kinds {
		m[k.Kind] = k
	}
	return m
}()

// grade reports whether a change of kind on side breaks clients.
// BreakingIfClosed counts as breaking here; the walker decides it itself.
func grade(kind, side string) bool {
	if side == SideGo {
		return false // Report.GoAPI counts these
	}
	k, ok := kindIndex[kind]
	if !ok {
		return true // unknown to the table: conservatively breaking
	}
	g := k.Input
	if side == SideOutput {
		g = k.Output
	}
	return g != NonBreaking
}
