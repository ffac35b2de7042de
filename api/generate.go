// Package api is the typed Go API of the Prickle MCP tools, generated from
// the tool-reference pages in spec/reference by prickle-gen: one Go type per
// tool input and output (and per nested object, enum and union), the
// documented JSON Schemas byte for byte and their validators as Go code, a
// Handler interface with Register to serve the tools on an *mcp.Server, a
// typed Client over an *mcp.ClientSession, and the tool catalog.
//
// Do not edit the generated files: change the pages and run
// `go generate ./...` (or `go run ./cmd/prickle-gen generate`);
// `prickle-gen check` fails in CI when they are out of date. The package
// gen documents how schemas map to Go types.
//
// Generated code imports only package rt, the MCP Go SDK and the standard
// library: never gen, spec, server or a package of internal/, so that it
// compiles in any module that requires this one.
package api

//go:generate go run ../cmd/prickle-gen generate
