// A Prickle server to start from, on the official MCP TypeScript SDK.
//
// It serves tools.json (from `prickle-gen export -o export`) verbatim on
// tools/list, validates every call's arguments against the tool's exported
// input schema, implements discover_team_agents on an in-memory world
// loaded from a file, and answers every other documented tool
// not_implemented. Certify it: see README.md.
//
//   PRICKLE_ADDR=127.0.0.1:8080 PRICKLE_WORLD=world.json node server.ts
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// The served tools, as the pages document them.
const tools: { name: string; inputSchema: object }[] = JSON.parse(
  readFileSync(new URL("./export/tools.json", import.meta.url), "utf8"),
);
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const validators = new Map(tools.map((t) => [t.name, ajv.compile(t.inputSchema)]));

// The world, as spec/world/FIXTURE.md describes it (the parts this server
// reads), from $PRICKLE_WORLD, or $PRICKLE_FIXTURE, its older name, which
// a suite older than PRICKLE_WORLD sets alone.
interface Person { handle: string; display_name: string; avatar_url?: string | null; color?: number; away?: boolean }
interface Agent {
  id: string; model: string; client: string; availability: string; trust_level: string; role?: string;
  avatar_url?: string | null; capabilities?: { kind: string; name: string }[]; last_seen_at?: string | null; token?: string;
}
interface World {
  projects?: { slug: string }[];
  people?: Person[];
  memberships?: { project: string; person: string }[];
  agents?: Agent[];
  runners?: { id: string; agent: string; token?: string }[];
}
const world: World = JSON.parse(readFileSync(process.env.PRICKLE_WORLD || process.env.PRICKLE_FIXTURE || "", "utf8"));

// Identity comes only from the bearer token: the person whose agent calls.
const owners = new Map<string, string>();
for (const a of world.agents ?? []) if (a.token) owners.set(a.token, a.id.split("/")[0]);
for (const r of world.runners ?? []) if (r.token) owners.set(r.token, r.agent.split("/")[0]);

class Refusal extends Error {
  code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

// A refusal is a tool result: isError, the text "code: message", _meta.code, no structuredContent.
function refuse(r: Refusal): CallToolResult {
  return { isError: true, content: [{ type: "text", text: `${r.code}: ${r.message}` }], _meta: { code: r.code } };
}

const byKey = <T>(key: (x: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

function discoverTeamAgents(owner: string, args: { project: string }) {
  const members = new Set((world.memberships ?? []).filter((m) => m.project === args.project).map((m) => m.person));
  if (!(world.projects ?? []).some((p) => p.slug === args.project) || !members.has(owner)) {
    throw new Refusal("project_not_visible", `project ${args.project} does not exist or is not yours to see`);
  }
  const people = (world.people ?? []).filter((p) => members.has(p.handle)).sort(byKey((p) => p.handle)).map((p) => ({
    handle: p.handle, display_name: p.display_name, avatar_url: p.avatar_url ?? null, color: p.color ?? 0, away: p.away ?? false,
  }));
  const agents = (world.agents ?? []).filter((a) => members.has(a.id.split("/")[0])).sort(byKey((a) => a.id)).map((a) => ({
    agent_id: a.id, owner: a.id.split("/")[0], name: a.id.split("/")[1], avatar_url: a.avatar_url ?? null,
    model: a.model, client: a.client, role: a.role ?? "", capabilities: a.capabilities ?? [],
    availability: a.availability, trust_level: a.trust_level, last_seen_at: a.last_seen_at ?? null,
  }));
  return { people, agents };
}

function call(owner: string, name: string, args: unknown): CallToolResult {
  const validate = validators.get(name);
  if (!validate) throw new Refusal("unknown_tool", `${name} is not a documented tool`);
  if (!validate(args ?? {})) {
    const errs = (validate.errors ?? []).map((e) => `${e.instancePath || "/"}: ${e.message}`);
    throw new Refusal("invalid_arguments", errs.join("; "));
  }
  if (name !== "discover_team_agents") {
    throw new Refusal("not_implemented", `${name} is documented but this server does not implement it`);
  }
  const out = discoverTeamAgents(owner, args as { project: string });
  return { structuredContent: out, content: [{ type: "text", text: JSON.stringify(out) }] };
}

// One MCP server per request (stateless), bound to the caller.
function mcpServer(owner: string): Server {
  const server = new Server({ name: "prickle-typescript-starter", version: "0.1.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }) as never);
  server.setRequestHandler(CallToolRequestSchema, (req) => {
    try {
      return call(owner, req.params.name, req.params.arguments);
    } catch (e) {
      if (e instanceof Refusal) return refuse(e);
      throw e;
    }
  });
  return server;
}

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? undefined : JSON.parse(text);
}

const http = createServer(async (req, res) => {
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (path === "/healthz") return void res.writeHead(200).end("ok\n");
  if (path !== "/mcp") return void res.writeHead(404).end();
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
  const owner = token === undefined ? undefined : owners.get(token);
  if (owner === undefined) {
    return void res.writeHead(401, { "WWW-Authenticate": "Bearer", "Content-Type": "application/json" })
      .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "invalid token" }, id: null }));
  }
  try {
    const parsed = req.method === "POST" ? await body(req) : undefined;
    const server = mcpServer(owner);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed);
  } catch {
    if (!res.headersSent) res.writeHead(400, { "Content-Type": "application/json" })
      .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "parse error" }, id: null }));
  }
});

const [host, port] = (process.env.PRICKLE_ADDR ?? "127.0.0.1:8080").split(/:(?=\d+$)/);
http.listen(Number(port), host);
