// Package spec reads Prickle's tool-reference pages (markdown, one tool a
// page, in reference/) into one canonical spec: the source of truth that
// the generator, the breaking-change diff, the reference server and the
// conformance suite all read. FORMAT.md describes the pages and the spec.
//
// It imports its subpackages world and seed and the ground floor of
// internal/; it must not import the generator, rt, api, the server or the
// conformance suite, which all read it.
//
// Reading pages goes in three steps, each reporting what it finds as
// [Diagnostics] at a file, line and column:
//
//   - [ParsePage] reads one page's structure ([ParseAll] several, each a
//     [Source]): its title, tool heading, description, the Example input,
//     Input schema and Output schema blocks ([JSONBlock]), and the link
//     that ends it.
//   - [Build] merges pages into a [Spec]: a [Tool] per page, its
//     description split into normative sentences ([Sentence]) with
//     stable IDs; the text the pages share; the tool catalog.
//   - [Lint] also runs every rule of [Rules]: the schemas are valid JSON
//     Schema 2020-12 with ECMA-262 patterns, each example input is valid
//     against its input schema and names only ids of the seed world, and
//     the pages agree on what they share.
//
// [LoadLinted] does all of it ([LoadUnlinted] all but Lint) and fails with
// a [*PagesError] on an error; [LoadBundled] returns the linted spec of the
// pages built into this package ([Bundled]), and [ReadPaths] reads pages
// from disk. [Spec.Marshal] writes the canonical JSON (its Hash identifies the
// content; [ShortHash] is how reports show it) and [Unmarshal] reads it
// back. [Render] and [Format] write a page in canonical form.
//
// Below spec: [github.com/prickle-dev/prickle/spec/specdiff] grades the
// changes between two specs; [github.com/prickle-dev/prickle/spec/world]
// is the format of the world a server loads, whose schema refers
// to the pages' schemas by [SchemaURL]; and
// [github.com/prickle-dev/prickle/spec/seed] is the world the pages'
// examples refer to.
package spec
