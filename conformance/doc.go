// Package conformance is the Prickle conformance suite: it certifies any
// Prickle server against the tool reference pages (the canonical spec of
// package spec). cmd/prickle-conformance runs it against a server;
// README.md tells a third party how. A Go program embeds it with [Run]:
// the scripts of the [Suite] ([Script]), a [Target] that starts the
// server under test ([CmdTarget], [HandlerTarget], [URLTarget]), and
// [Options]; the [Report] has the run's [Verdict], each tool's
// ([ToolVerdict]) and what it says of each script, requirement and
// exploration, whose types are package conformance/report's. Package
// conformance/call makes one tool call, its answer checked as a run
// checks every answer.
//
// # What a run does
//
// A run has two phases. First the scripts, testscript scripts (txtar
// archives) that [Suite] gathers:
//
//   - hand-written scripts (scripts/*.txtar, embedded so that the binary
//     carries them), one or more for every normative sentence of the pages;
//     a script names the sentences it tests on "# covers: TOOL#HASH ..."
//     lines, and untestable.md gives the reason for each sentence that
//     cannot be tested from outside. [Trace] builds the matrix, and a test
//     fails when a sentence is untracked.
//   - spec-derived cases, produced from the spec when the suite runs:
//     tools/list serves the documented schemas, each example input is
//     accepted as to shape, and every constraint of every input schema,
//     broken alone, is refused naming the field.
//   - a third party's own, or sequences exploration saved ([LoadScripts]).
//
// Then stateful exploration (the script "explore" among the results,
// report.ExploreScript): random sequences of calls against generated
// worlds, every answer compared with an executable model of the documented
// rules; a failing sequence shrinks to a minimal script with its fixture
// (report.Exploration).
//
// A script that carries a fixture.json runs against that world; any other
// script runs against the standard seed world (package seed). Every world is
// described in the fixture format of spec/world/FIXTURE.md. Each run of a
// script gets the world with fresh random tokens for every agent and
// runner, and with its relative times ("claimed_at": "now-3h") resolved.
//
// A script names the sentences it tests ("# covers: TOOL#HASH ...") and the
// server/README.md decisions its reference checks rely on ("# decisions:
// TITLE; TITLE").
//
// Run judges a run: certified only when nothing failed and the coverage is
// complete (every documented tool served and answering, every example
// succeeding or explained in examples.md, every sentence tested or
// explained, the whole suite run, exploration included, and every race
// class with its K groups whose calls overlapped on the wire:
// report.RaceEvidence); otherwise failed or incomplete.
//
// The engines live below the package, in internal/: wire (the MCP client
// and the checks every answer gets), script (the commands below, and the
// runner of one script), derive (the spec-derived cases), explore (the
// generators and the model, one file per tool) and suite (what they
// share, which this package exports as aliases: [Script], [Profile],
// [Target], [Instance]).
//
// # Commands
//
// Besides testscript's own (stdout, stderr, skip, ...), scripts use:
//
//	call -as PRINCIPAL [-replica N] TOOL [JSON]
//	    Calls TOOL with the JSON arguments as PRINCIPAL: agent:OWNER/NAME,
//	    runner:OWNER/NAME (the runner paired to that agent) or
//	    runner:RUNNER-ID, none (no Authorization header), or a token
//	    (a credential saved earlier: -as $EXEC). Every answer is checked on
//	    the wire: a JSON-RPC result with a content array; a success carries
//	    structuredContent valid against the documented output schema; a
//	    refusal is an isError result (a JSON-RPC error fails the script),
//	    and any structuredContent it carries must match the output schema
//	    too (reference profile: it carries none, and has its code in
//	    _meta.code and as the "CODE: " prefix of its text). The text content
//	    goes to stdout (for testscript's stdout command), with every
//	    credential token redacted. "! call" expects a protocol error (a
//	    JSON-RPC error or an HTTP error status such as 401) instead; its
//	    description goes to stdout.
//	deny -as PRINCIPAL [-replica N] TOOL [JSON]
//	    Calls TOOL as someone who must get no answer (none, or a token
//	    nobody issued): the call must fail, as a protocol error (HTTP 401)
//	    or as a refusal (checked like any other).
//	ok
//	    The last call succeeded.
//	refused [CODE]
//	    The last call was refused (isError: true); in the reference profile
//	    with CODE, or one of CODE|CODE... "! refused CODE": not refused
//	    with CODE (reference only).
//	accepted [POINTER...]
//	    The last call's arguments were accepted as to shape: it succeeded,
//	    or its refusal is not invalid_arguments (reference) and names none
//	    of the POINTERs.
//	json PATH OP [VALUE]
//	    Asserts on the last structuredContent. PATH is "." (the whole
//	    value), a JSON pointer (/attempt/task_id), or a dotted path whose
//	    segments are keys, indexes, or selectors
//	    (agents[agent_id=maya/builder].model). OP is == != (VALUE is JSON,
//	    or a bare string), exists, absent, null, len N, contains V (array
//	    element or substring), within ARRAY (every element is in ARRAY),
//	    matches REGEXP, type T (null boolean integer number string array
//	    object). "! json" negates.
//	save PATH NAME | save -text [-redact STRING] NAME
//	    Sets $NAME to the value at PATH (strings bare, others as JSON), or
//	    to the last call's text with STRING replaced by <redacted>.
//	eq A B
//	    A and B are equal ("! eq": they differ).
//	time PATH ~ DURATION [TOLERANCE] | time PATH > DURATION |
//	time PATH < DURATION | time PATH == TIME
//	    PATH holds an RFC 3339 time: about DURATION after the last call
//	    (default tolerance 30s), more or less than DURATION after it, or
//	    the same instant as TIME (RFC 3339, or relative to the moment the
//	    fixture was loaded: now-3h).
//	tools [-as PRINCIPAL] [-replica N]
//	    tools/list serves every documented tool with input and output
//	    schemas semantically equal to the documented ones (decoded JSON,
//	    key order ignored); in the reference profile, nothing else. Prints
//	    the served names, one a line.
//	race -as PRINCIPAL [-replica N] TOOL [JSON]
//	    Queues a call for the next concurrently; nothing is sent yet.
//	concurrently [-tries N]
//	    Sends the queued calls at once, each from an MCP session and a
//	    connection of its own, N times (default 1): each answer is checked
//	    on the wire, and some order of each try's calls consistent with
//	    real time must explain the script's answers so far by exploration's
//	    model (the profile's rules); a check that cannot decide fails.
//	    ${TRY} in the calls' JSON is the try, 1 to N, so that each try can
//	    race on a task or a turn of its own. A race may need many tries to
//	    show: saved races make 50. Fewer than half of the tries overlapping
//	    on the wire is short race evidence: the script is skipped, never
//	    passed.
//
// Against a deployment of replicas (Options with a CmdTarget's Replicas,
// say), a call, deny or tools goes to the next replica in turn, so that
// a script's calls alternate between replicas, and a race line to the
// replica of its place in its group (round robin); -replica N sends it to
// replica N instead (N modulo the replicas: a script saved against more
// replicas still runs), and takes no turn. Against one server -replica
// changes nothing.
//
// Conditions [reference] and [core] select lines by profile.
//
// # Profiles
//
// Core checks only what the pages say; any conforming server passes it.
// Reference also checks the choices the reference server documents
// (server/README.md): refusal codes, no structuredContent on refusals,
// the 15-minute default launch timeout, revocation of replayed
// credentials, harness 2's roles beyond draft and review, HTTP 401
// without a known token, the exact tool list and allowed_tools sets.
package conformance
