#!/usr/bin/env node
// ts-client.mjs: the official MCP TypeScript SDK client against prickled.
//
//   node ts-client.mjs http  --url http://127.0.0.1:PORT/mcp --runner-token T --agent-token T
//   node ts-client.mjs stdio --prickled PATH --fixture FILE --runner-token T --agent-token T
//
// http: connects over streamable HTTP with the bearer header. stdio: starts
// `prickled --stdio --db :memory: --fixture FILE` twice (once per identity,
// PRICKLE_TOKEN) through StdioClientTransport.
//
// For each identity it lists the tools (which makes the SDK compile each
// tool's outputSchema) and calls every tool. The SDK's callTool validates
// structuredContent against the outputSchema and throws when it is missing
// or does not match, so a successful call proves the output schema-valid.
// Each structuredContent is validated a second time with Ajv in the JSON
// Schema 2020-12 dialect the schemas declare, with formats asserted (the
// SDK's own Ajv is draft-07). Refusals must be isError results without
// structuredContent, and must not throw.
//
// Prints one JSON summary on stdout ({ok, transport, protocolVersion,
// checks: [{name, ok, detail}]}); exits 0 when every check passed, 1
// otherwise, 2 on bad usage.

import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const TOOLS = ['claim_discussion', 'claim_task', 'discover_team_agents'];
const CALL_TIMEOUT_MS = 20_000;

const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string' },
    prickled: { type: 'string' },
    fixture: { type: 'string' },
    'runner-token': { type: 'string' },
    'agent-token': { type: 'string' },
  },
});
const mode = positionals[0];
function usage(msg) {
  process.stderr.write(`ts-client: ${msg}\n`);
  process.exit(2);
}
if (mode !== 'http' && mode !== 'stdio') usage('first argument must be http or stdio');
if (!opt['runner-token'] || !opt['agent-token']) usage('--runner-token and --agent-token are required');
if (mode === 'http' && !opt.url) usage('http needs --url');
if (mode === 'stdio' && (!opt.prickled || !opt.fixture)) usage('stdio needs --prickled and --fixture');

const checks = [];
const summary = { ok: false, transport: mode, sdk: 'typescript', protocolVersion: null, server: null, checks };

function check(name, ok, detail) {
  checks.push({ name, ok: !!ok, ...(detail === undefined ? {} : { detail }) });
  return !!ok;
}

// A second, independent validator: Ajv in the 2020-12 dialect, formats on.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
const strictValidators = new Map();

function newClient() {
  return new Client({ name: 'prickle-e2e-ts-client', version: '1.0.0' });
}

async function connect(token, label) {
  const client = newClient();
  let transport;
  if (mode === 'http') {
    transport = new StreamableHTTPClientTransport(new URL(opt.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
  } else {
    transport = new StdioClientTransport({
      command: opt.prickled,
      args: ['--stdio', '--db', ':memory:', '--fixture', opt.fixture],
      env: { ...process.env, PRICKLE_TOKEN: token },
      stderr: 'pipe', // the server's log and its token list; kept off our stdout
    });
    const chunks = [];
    transport.stderr?.on('data', (c) => chunks.push(c));
    transport.serverStderr = () => Buffer.concat(chunks).toString('utf8');
  }
  // Record the negotiated protocol version (the client hands it to the
  // transport right after initialize).
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    summary.protocolVersion ??= v;
    setVersion?.(v);
  };
  await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
  summary.server ??= client.getServerVersion() ?? null;
  check(`${label}: connect`, true, { server: client.getServerVersion()?.name });
  return { client, transport };
}

async function listTools(client, label) {
  const { tools } = await client.listTools(undefined, { timeout: CALL_TIMEOUT_MS });
  const names = tools.map((t) => t.name).sort();
  check(`${label}: tools/list has the three tools`, JSON.stringify(names) === JSON.stringify(TOOLS), { names });
  for (const t of tools) {
    check(`${label}: ${t.name} has inputSchema and outputSchema`,
      t.inputSchema?.type === 'object' && t.outputSchema?.type === 'object');
    if (!strictValidators.has(t.name) && t.outputSchema) {
      try {
        strictValidators.set(t.name, ajv.compile(t.outputSchema));
      } catch (e) {
        check(`${label}: ${t.name} outputSchema compiles as JSON Schema 2020-12`, false, String(e?.message ?? e));
      }
    }
  }
}

function textOf(result) {
  return (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// call expects a success: the SDK has validated structuredContent already.
async function callOK(client, label, name, args) {
  const what = `${label}: ${name} succeeds (SDK validated structuredContent)`;
  let result;
  try {
    result = await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
  } catch (e) {
    check(what, false, String(e?.message ?? e));
    return null;
  }
  if (!check(what, !result.isError && result.structuredContent != null,
    result.isError ? { isError: true, text: textOf(result) } : undefined)) {
    return null;
  }
  const v = strictValidators.get(name);
  if (v) {
    const ok = v(result.structuredContent);
    check(`${label}: ${name} structuredContent valid under 2020-12 with formats`, ok,
      ok ? undefined : ajv.errorsText(v.errors));
  }
  // The text fallback must carry the same JSON (for clients that ignore
  // structuredContent).
  let same = false;
  try {
    same = JSON.stringify(JSON.parse(textOf(result))) === JSON.stringify(result.structuredContent);
  } catch { /* not JSON */ }
  check(`${label}: ${name} text content mirrors structuredContent`, same);
  return result.structuredContent;
}

// callRefused expects an isError result (not a thrown error), without
// structuredContent, with a message; code is the stable refusal code.
async function callRefused(client, label, name, args, { code, textIncludes } = {}) {
  const what = `${label}: ${name} ${JSON.stringify(args)} is refused with isError`;
  let result;
  try {
    result = await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
  } catch (e) {
    check(what, false, `threw instead of isError: ${e?.message ?? e}`);
    return null;
  }
  const text = textOf(result);
  const gotCode = result._meta?.code ?? null;
  check(what, result.isError === true && result.structuredContent === undefined && text.length > 0,
    { isError: result.isError, code: gotCode, text });
  if (code) check(`${label}: ${name} refusal code is ${code}`, gotCode === code || text.startsWith(`${code}:`), { code: gotCode });
  if (textIncludes) check(`${label}: ${name} refusal says ${JSON.stringify(textIncludes)}`, text.includes(textIncludes));
  return result;
}

async function runnerSession() {
  const label = 'runner';
  const { client } = await connect(opt['runner-token'], label);
  try {
    await listTools(client, label);
    await client.ping({ timeout: CALL_TIMEOUT_MS });
    check(`${label}: ping`, true);

    // The documented example key: a task has one live attempt at a time, so
    // every client of the same server replays this one key.
    const task = { task_id: 'example-task-id', idempotency_key: 'runner-claim-example-1' };
    const first = await callOK(client, label, 'claim_task', task);
    const again = await callOK(client, label, 'claim_task', task);
    if (first && again) {
      check(`${label}: claim_task replay returns the same attempt`,
        first.attempt?.attempt_id === again.attempt?.attempt_id && first.attempt?.claimed_at === again.attempt?.claimed_at,
        { first: first.attempt, again: again.attempt });
      check(`${label}: claim_task replay returns a fresh credential`,
        first.execution_credential?.token !== again.execution_credential?.token);
    }

    const disc = await callOK(client, label, 'claim_discussion',
      { message_id: 'example-message-id', idempotency_key: `ts-client-${mode}-discussion-1`, harness: 2 });
    if (disc) check(`${label}: claim_discussion output`, disc && typeof disc === 'object', Object.keys(disc));

    await callOK(client, label, 'discover_team_agents', { project: 'website-v2' });

    // Refusals: isError results, never thrown, never structuredContent.
    await callRefused(client, label, 'claim_discussion',
      { message_id: 'example-message-id', idempotency_key: `ts-client-${mode}-discussion-2` },
      { code: 'harness_outdated', textIncludes: 'prickle-runner' });
    await callRefused(client, label, 'claim_task', { task_id: 'example-task-id' }); // schema-invalid: no key
  } finally {
    await client.close();
  }
}

async function agentSession() {
  const label = 'agent';
  const { client } = await connect(opt['agent-token'], label);
  try {
    await listTools(client, label);
    const out = await callOK(client, label, 'discover_team_agents', { project: 'website-v2' });
    if (out) {
      check(`${label}: discover_team_agents lists people and agents`,
        Array.isArray(out.people) && out.people.length > 0 && Array.isArray(out.agents) && out.agents.length > 0,
        { people: out.people?.length, agents: out.agents?.length });
    }
    // A project the caller cannot see, and one that does not exist: both
    // refused alike, without revealing which is which.
    const hidden = await callRefused(client, label, 'discover_team_agents', { project: 'billing-api' });
    const missing = await callRefused(client, label, 'discover_team_agents', { project: 'no-such-project' });
    if (hidden && missing) {
      check(`${label}: hidden and missing projects are refused alike`,
        (hidden._meta?.code ?? null) === (missing._meta?.code ?? null),
        { hidden: hidden._meta?.code, missing: missing._meta?.code });
    }
    // claim_task is for runners only.
    await callRefused(client, label, 'claim_task',
      { task_id: 'example-task-id', idempotency_key: `ts-client-${mode}-agent-claim` });
  } finally {
    await client.close();
  }
}

async function unauthenticated() {
  if (mode !== 'http') return;
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(opt.url), {
    requestInit: { headers: { Authorization: 'Bearer prk_not-a-real-token-000000' } },
  });
  try {
    await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
    check('unknown token: connect is refused', false, 'connected');
    await client.close();
  } catch (e) {
    check('unknown token: connect is refused', true, String(e?.message ?? e).slice(0, 200));
  }
}

async function main() {
  const stop = setTimeout(() => {
    check('finished in time', false, '120 s');
    finish(1);
  }, 120_000);
  try {
    await runnerSession();
    await agentSession();
    await unauthenticated();
  } catch (e) {
    check('unexpected error', false, String(e?.stack ?? e));
  }
  clearTimeout(stop);
  finish();
}

function finish(force) {
  summary.ok = force === undefined && checks.length > 0 && checks.every((c) => c.ok);
  summary.passed = checks.filter((c) => c.ok).length;
  summary.failed = checks.length - summary.passed;
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n', () => process.exit(summary.ok ? 0 : 1));
}

main();
