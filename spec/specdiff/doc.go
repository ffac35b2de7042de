// Package specdiff compares two versions of the canonical spec and grades
// every change by who it breaks. It backs `prickle-gen diff OLD NEW`.
//
// It imports the spec and the ground floor of internal/; it must not import
// the generator (which imports it to grade the Go API's changes too), the
// generated api or the server.
//
// # Direction
//
// A change is graded by the side it is on:
//
//   - input: clients send, the server validates. A change breaks clients
//     when it narrows what the server accepts: a request that was valid
//     may now be refused.
//   - output: the server sends, clients parse. A change breaks clients
//     when it widens what the server may send: a client may meet a value
//     it was not written for (null, a new enum value, a missing field).
//   - tool and catalog: a tool or a catalog name that disappears breaks
//     the clients that call it; description and example changes never
//     break.
//
// So most schema kinds are breaking on exactly one side. A few break on
// both (a changed type, const, format or pattern, whose old and new sets of
// valid values are not nested), and some on neither (annotations).
//
// # Grading table
//
//	kind                           input          output
//	tool-added                     non-breaking   non-breaking
//	tool-removed                   BREAKING       BREAKING
//	catalog-name-added             non-breaking   non-breaking
//	catalog-name-removed           BREAKING       BREAKING
//	doc-sentence-added             non-breaking   non-breaking
//	doc-sentence-removed           non-breaking   non-breaking
//	doc-example-changed            non-breaking   non-breaking
//	field-added                    non-breaking   BREAKING (1)
//	field-required-added           BREAKING       non-breaking
//	field-removed                  BREAKING (1)   BREAKING
//	field-became-required          BREAKING       non-breaking
//	field-became-optional          non-breaking   BREAKING
//	type-changed                   BREAKING       BREAKING
//	type-narrowed                  BREAKING       non-breaking
//	type-widened                   non-breaking   BREAKING
//	nullable-added                 non-breaking   BREAKING
//	nullable-removed               BREAKING       non-breaking
//	enum-added                     BREAKING       non-breaking
//	enum-removed                   non-breaking   BREAKING
//	enum-value-added               non-breaking   BREAKING
//	enum-value-removed             BREAKING       non-breaking
//	const-added                    BREAKING       non-breaking
//	const-removed                  non-breaking   BREAKING
//	const-changed                  BREAKING       BREAKING
//	format-added                   BREAKING       non-breaking
//	format-removed                 non-breaking   BREAKING
//	format-changed                 BREAKING       BREAKING
//	pattern-added                  BREAKING       non-breaking
//	pattern-removed                non-breaking   BREAKING
//	pattern-changed                BREAKING       BREAKING
//	pattern-widened                non-breaking   BREAKING
//	pattern-narrowed               BREAKING       non-breaking
//	pattern-rewritten              non-breaking   non-breaking
//	pattern-unknown                non-breaking   non-breaking
//	constraint-narrowed            BREAKING       non-breaking
//	constraint-widened             non-breaking   BREAKING
//	constraint-changed             BREAKING       BREAKING
//	additional-properties-closed   BREAKING       non-breaking
//	additional-properties-opened   non-breaking   BREAKING
//	variant-added                  non-breaking   BREAKING
//	variant-removed                BREAKING       non-breaking
//	schema-narrowed                BREAKING       non-breaking
//	schema-widened                 non-breaking   BREAKING
//	definition-added               non-breaking   non-breaking
//	definition-removed             non-breaking   non-breaking
//	default-added                  non-breaking   non-breaking
//	default-changed                BREAKING       non-breaking
//	annotation-changed             non-breaking   non-breaking
//	schema-changed                 BREAKING       BREAKING
//
// (1) On the input side a removed property breaks only when the object
// rejects unknown properties (additionalProperties or unevaluatedProperties
// false) or holds them to a schema: a client that still sends it may be
// refused. In an open object the property is still accepted (and ignored),
// so the removal does not break. On the output side a new property breaks
// only when the old object rejected unknown properties: clients validate
// outputs against the schema they were built with (the generated client
// and the TypeScript SDK do), so they would reject the new field.
//
// Kinds, in Go, is this table with a sentence on each kind.
//
// # Decisions
//
//   - A new output property breaks when the old object was closed
//     (additionalProperties false): the generated typed client and the
//     TypeScript SDK validate responses against the schema they were built
//     with, so they reject it. In an open object it breaks nobody.
//   - Constraints: maxLength, maxItems, maxProperties, maximum,
//     exclusiveMaximum and maxContains are upper bounds (lowered or added:
//     narrowed; raised or removed: widened); their min counterparts are
//     lower bounds. multipleOf narrows when the new value is a multiple of
//     the old one and widens when it is a divisor. uniqueItems true narrows.
//     Numbers compare exactly (1.0 equals 1).
//   - Types: integer is contained in number. Null is not compared as a
//     type but as nullability, once per schema, however it is written
//     (type ["string", "null"], anyOf with a {"type": "null"} variant, an
//     enum or const with null); so rewriting ["string", "null"] as an anyOf
//     reports nothing.
//   - A changed pattern is compared as a regular language (the strings it
//     matches somewhere, JSON Schema patterns being unanchored), by
//     internal/regexlang: the same language is pattern-rewritten, a wider
//     one pattern-widened, a narrower one pattern-narrowed, neither
//     pattern-changed; the message quotes a shortest string that gains or
//     loses a match. Where that cannot be decided (lookaround or
//     backreferences, which RE2 cannot express, or an automaton beyond the
//     state budget) the change is pattern-unknown: reported for a human to
//     judge, not graded breaking. The pattern is compared alone, as bounds
//     are: minLength, format and the other keywords are not taken into
//     account.
//   - Format changes are never compared for inclusion: a changed format
//     breaks both sides.
//   - Nested schemas are walked recursively, each change carrying its JSON
//     pointer: properties, additionalProperties, unevaluatedProperties,
//     items, unevaluatedItems, propertyNames, allOf and prefixItems (by
//     position), patternProperties and $defs/definitions (by name).
//   - anyOf/oneOf: the variants are paired when identical, then by their
//     discriminator (the properties with a const, or an enum of one value),
//     then by type, then by position when as many remain on both sides;
//     what remains is a variant added or removed. A schema without a union
//     compares with one that has a union as a union of one variant, so
//     {"type": "string"} becoming anyOf [{"type": "string"}, {"type":
//     "null"}] is exactly nullable-added. A new variant of a oneOf is
//     graded as for anyOf (overlapping variants are not detected); anyOf
//     becoming oneOf is a schema-changed.
//   - $ref: local references (#/$defs/X, any #/pointer) are resolved. The
//     same $ref on both sides compares only the siblings: the definition
//     itself is compared once, under /$defs, where a change to it is
//     reported. A $ref that changes target, or appears in place of an
//     inline schema, compares the resolved schemas; recursive definitions
//     are compared once. A $ref that cannot be resolved (remote) compares
//     as a string: schema-changed.
//   - A keyword the walker does not interpret (not, if/then/else,
//     dependentRequired, dependentSchemas, contains, $schema, $id, unknown
//     keywords...) is compared as canonical JSON and reported as
//     schema-changed, breaking on both sides: never silently ignored.
//     Annotations (the keywords internal/jsonschema classes as such:
//     title, description, $comment, examples, deprecated, readOnly,
//     writeOnly, contentEncoding, contentMediaType, contentSchema) are
//     reported as non-breaking annotation-changed; default has kinds of
//     its own.
//   - Description sentences are compared by their IDs (spec.Sentence.ID
//     hashes the text): an edited sentence is reported as one removed and
//     one added. The example input is compared as canonical JSON. The rest
//     of the page's prose is not compared.
//   - A catalog name that belongs to a tool added or removed is reported
//     once, as the tool.
//
// # Pointers and positions
//
// Change.Pointer is the change's JSON pointer in the new schema, or in the
// old one for something removed (a property, an enum value, a variant, a
// keyword). Change.OldPos and Change.NewPos place it in each version: the
// nearest value that exists on that side, so the new position of a removed
// property is its parent's "properties". A spec read from a spec file
// (prickle-gen spec) does not keep the page layout, so its positions inside
// a schema are the schema fence's first line.
//
// Changes are sorted by tool, side (tool, input, output, catalog, go),
// pointer, kind, new position, old position and message (so sentences come
// in reading order), and a report is deterministic.
//
// # The Go API
//
// Compare grades the wire. A page change can also change the Go package
// that prickle-gen generate makes of the pages, which Go code imports;
// gen.APIChanges finds those changes and Report.Add adds them, on side go,
// with the Go identifier in Pointer, counted in Report.GoAPI and not in
// Report.Breaking (GoKinds lists their kinds). prickle-gen diff reports
// both.
package specdiff
