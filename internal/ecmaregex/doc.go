// Package ecmaregex compiles and matches the ECMA-262 regular expressions
// of JSON Schema (pattern, patternProperties, format "regex"). It is the
// one place the toolchain reads a pattern: the validators, lint, the
// conformance suite and the diff's pattern grading all go through it.
//
// It imports nothing of this module: the generated code's runtime links it,
// and every schema package builds on it.
//
// # Dialect
//
// JSON Schema patterns carry no flags, and 2020-12 (core, "Regular
// Expressions") recommends the u flag's reading. A pattern is read with
// the grammar of the u flag; one that grammar refuses is read with the
// grammar of a pattern without flags, Annex B (web compatibility)
// included, which accepts what many schemas contain: identity escapes
// such as \a or \-, lone braces and brackets, legacy octal escapes, \c
// without a letter. Only a pattern both grammars refuse is an error
// (*SyntaxError).
//
// Either way matching is on code points, as Go strings and JSON text hold
// them, with the meaning ECMA-262 gives a pattern without the i, m and s
// flags:
//
//   - \d and \w are ASCII ([0-9], [A-Za-z0-9_]); \b and \B test \w.
//   - \s is WhiteSpace and LineTerminator: TAB, VT, FF, U+FEFF, the space
//     separators (Zs: space, U+00A0, U+1680, U+2000-U+200A, U+202F,
//     U+205F, U+3000), LF, CR, U+2028 and U+2029; not U+0085.
//   - . is any code point but LF, CR, U+2028 and U+2029; [^] is any, []
//     none.
//   - ^ and $ are the start and the end of the input only: $ never matches
//     before a final newline.
//   - Case is significant.
//   - \u{...} is a code point with the u flag; without it, \u{2} is "u"
//     twice. With the u flag \uD83D\uDE00 is one code point.
//   - \p{...} and \P{...} (u flag): General_Category values (short or long
//     names, with or without gc=), Script values by their long names (sc=,
//     Script=), the binary properties Go's unicode package holds, and Any,
//     ASCII, Assigned, in the Unicode version of Go's tables. Other
//     properties ECMA-262 defines (Script_Extensions, Alphabetic, the emoji
//     properties...) are refused as unsupported rather than read as
//     something else.
//   - Without the u flag ECMA-262 reads a pattern as UTF-16 code units: a
//     character beyond U+FFFF is then two atoms (in a class, two members),
//     which cannot be matched on code points. Such a pattern, and one with
//     a surrogate escape, is refused as unsupported.
//   - A string never holds a lone surrogate: invalid UTF-8 is matched as
//     U+FFFD.
//
// # Engines
//
// A pattern RE2 can express runs on Go's regexp, in linear time: it is
// translated to RE2 syntax (Translate) with every class spelt out as code
// point ranges, ^ and $ as \A and \z. A pattern with a lookaround or a
// backreference, or a repeat count or size beyond RE2's limits, runs on
// github.com/dlclark/regexp2, given the pattern as this package read it
// (classes spelt out, \b as ASCII lookarounds, groups numbered as ECMA-262
// numbers them), not the pattern as written: regexp2's own ECMAScript mode
// departs from ECMA-262. Seen against V8: . matches U+2028 and U+2029; \b
// tests Unicode letters; \a, \e are BEL and ESC and \A, \Z, \z, \G
// anchors; \u{...} is read as a repeated u, and \uD83D\uDE00 never matches
// the character it encodes; [\c1] and [a-\d] are not read as Annex B reads
// them; (?i), (?#...), (?'name'...) and [[:alpha:]] are accepted with
// .NET's meanings. One departure stays on the patterns it runs: a
// backreference into a quantified group keeps the previous iteration's
// capture, where ECMA-262 resets it.
//
// regexp2 backtracks, so a match is bounded by MatchTimeout. Its timeout
// runs on a shared clock goroutine that, starved on a loaded machine, can
// fire on a match that has just begun; and a match's goroutine starved of
// CPU can see its wall-clock budget pass. A timed-out match is tried
// again, up to three attempts; a match that never finishes is a
// *TimeoutError, never a mismatch.
package ecmaregex
