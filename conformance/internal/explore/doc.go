// Package explore is the conformance suite's stateful exploration: random
// worlds and random sequences of calls by many principals, run against the
// server under test and judged call by call against a model of the pages,
// to find the bugs that only several calls show (a cache keyed by the
// wrong thing, a check forgotten once state has built up, a replay of an
// old claim). A failing sequence shrinks to a minimal one and is written
// as a testscript with its fixture; a run is reproducible from its seed.
//
// It judges any server from the outside, through the suite's wire client
// (conformance/internal/wire) and script runner: it must not import the
// reference server, its store, the generated api or its runtime rt.
package explore
