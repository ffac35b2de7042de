"""A Prickle server to start from, on the official MCP Python SDK.

It serves tools.json (from `prickle-gen export -o export`) verbatim on
tools/list, validates every call's arguments against the tool's exported
input schema, implements discover_team_agents on an in-memory world loaded
from a file, and answers every other documented tool not_implemented.
Certify it: see README.md.

    PRICKLE_ADDR=127.0.0.1:8080 PRICKLE_WORLD=world.json python server.py
"""

import json
import os
from pathlib import Path

import regress
import uvicorn
from jsonschema import Draft202012Validator, ValidationError, validators
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, ListToolsResult, TextContent, Tool
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

# The served tools, as the pages document them.
TOOLS = json.loads((Path(__file__).parent / "export" / "tools.json").read_text(encoding="utf-8"))
LISTED = ListToolsResult(tools=[Tool.model_validate(t) for t in TOOLS])


def ecma_pattern(validator, pattern, instance, schema):
    """The pages' patterns are ECMA-262's (Python's re reads $, \\d, \\w otherwise)."""
    if validator.is_type(instance, "string") and regress.Regex(pattern, "u").find(instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


Validator = validators.extend(Draft202012Validator, {"pattern": ecma_pattern})
VALIDATORS = {
    t["name"]: Validator(t["inputSchema"], format_checker=Draft202012Validator.FORMAT_CHECKER) for t in TOOLS
}

# The world, as spec/world/FIXTURE.md describes it (the parts this server
# reads), from $PRICKLE_WORLD, or $PRICKLE_FIXTURE, its older name, which a
# suite older than PRICKLE_WORLD sets alone.
WORLD_FILE = os.environ.get("PRICKLE_WORLD") or os.environ["PRICKLE_FIXTURE"]
WORLD = json.loads(Path(WORLD_FILE).read_text(encoding="utf-8"))

# Identity comes only from the bearer token: the person whose agent calls.
OWNERS = {a["token"]: a["id"].split("/")[0] for a in WORLD.get("agents", []) if a.get("token")}
OWNERS |= {r["token"]: r["agent"].split("/")[0] for r in WORLD.get("runners", []) if r.get("token")}


class Refusal(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def refuse(r):
    """A refusal is a tool result: isError, the text "code: message", _meta.code, no structuredContent."""
    return CallToolResult(is_error=True, content=[TextContent(type="text", text=f"{r.code}: {r}")], _meta={"code": r.code})


def pointer(path):
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)


def discover_team_agents(owner, args):
    project = args["project"]
    members = {m["person"] for m in WORLD.get("memberships", []) if m["project"] == project}
    if not any(p["slug"] == project for p in WORLD.get("projects", [])) or owner not in members:
        raise Refusal("project_not_visible", f"project {project} does not exist or is not yours to see")
    people = [
        {
            "handle": p["handle"],
            "display_name": p["display_name"],
            "avatar_url": p.get("avatar_url"),
            "color": p.get("color", 0),
            "away": p.get("away", False),
        }
        for p in sorted(WORLD.get("people", []), key=lambda p: p["handle"])
        if p["handle"] in members
    ]
    agents = [
        {
            "agent_id": a["id"],
            "owner": a["id"].split("/")[0],
            "name": a["id"].split("/")[1],
            "avatar_url": a.get("avatar_url"),
            "model": a["model"],
            "client": a["client"],
            "role": a.get("role", ""),
            "capabilities": a.get("capabilities", []),
            "availability": a["availability"],
            "trust_level": a["trust_level"],
            "last_seen_at": a.get("last_seen_at"),
        }
        for a in sorted(WORLD.get("agents", []), key=lambda a: a["id"])
        if a["id"].split("/")[0] in members
    ]
    return {"people": people, "agents": agents}


def call(owner, name, args):
    validator = VALIDATORS.get(name)
    if validator is None:
        # As prickled: a tool that is not served is a JSON-RPC error, -32602.
        raise MCPError(INVALID_PARAMS, f"unknown tool {name}")
    errors = sorted(validator.iter_errors(args), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise Refusal("invalid_arguments", "; ".join(f"{pointer(e.absolute_path)}: {e.message}" for e in errors))
    if name != "discover_team_agents":
        raise Refusal("not_implemented", f"{name} is documented but this server does not implement it")
    out = discover_team_agents(owner, args)
    return CallToolResult(structured_content=out, content=[TextContent(type="text", text=json.dumps(out))])


async def list_tools(ctx, params):
    return LISTED


async def call_tool(ctx, params):
    try:
        return call(ctx.request.scope["prickle.owner"], params.name, params.arguments or {})
    except Refusal as r:
        return refuse(r)


server = Server("prickle-python-starter", version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def healthz(request):
    return PlainTextResponse("ok\n")


mcp_app = server.streamable_http_app(
    stateless_http=True, json_response=True, custom_starlette_routes=[Route("/healthz", healthz)]
)


async def app(scope, receive, send):
    """The bearer token names the caller; an unknown or missing one is HTTP 401."""
    if scope["type"] == "http" and scope["path"] == "/mcp":
        auth = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        owner = OWNERS.get(auth[len("Bearer ") :]) if auth.startswith("Bearer ") else None
        if owner is None:
            body = {"jsonrpc": "2.0", "error": {"code": -32001, "message": "invalid token"}, "id": None}
            return await JSONResponse(body, 401, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
        scope["prickle.owner"] = owner
    await mcp_app(scope, receive, send)


if __name__ == "__main__":
    host, _, port = os.environ.get("PRICKLE_ADDR", "127.0.0.1:8080").rpartition(":")
    uvicorn.run(app, host=host, port=int(port), log_level="warning")
