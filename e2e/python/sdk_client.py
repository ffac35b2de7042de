"""The official MCP Python SDK's client against a Prickle server.

    python sdk_client.py http  --url URL --cases CASES_JSON --models DIR
    python sdk_client.py stdio --prickled PATH --fixture FILE --cases CASES_JSON --models DIR
    python sdk_client.py bad-args --url URL --cases CASES_JSON

The tokens come from the environment, never the command line:
PRICKLE_RUNNER_TOKEN and PRICKLE_AGENT_TOKEN (bad-args: the runner's).

http and stdio connect as the runner and as the agent (stdio starts
`prickled --stdio` with PRICKLE_TOKEN, once per identity), list the tools
and call every tool with its page's example (CASES_JSON, which
e2e/python_test.go writes from the pages: {"tools": [...as tools.json],
"calls": [{"tool", "arguments", "output_module", "output_class"}],
"bad_args": [{"tool", "arguments"}]}). A success's structuredContent is
parsed with the pydantic model of the tool's output (DIR, made by
datamodel-codegen from the export); a refusal is read as the documented
isError result. bad-args makes the calls of "bad_args" and reports how each
was answered. Prints one JSON summary on stdout; e2e/python_test.go judges it.
"""

import argparse
import asyncio
import importlib
import json
import os
import sys
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

TIMEOUT = 20


def transport(opt, token, errlog):
    """The server as the SDK's Client takes it, the caller named by token."""
    if opt.mode == "stdio":
        # The server's log (its stderr) goes to errlog: it is not ours to print.
        params = StdioServerParameters(
            command=opt.prickled,
            args=["--stdio", "--db", ":memory:", "--fixture", opt.fixture],
            env={"PRICKLE_TOKEN": token},
        )
        return stdio_client(params, errlog=errlog)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT)
    return streamable_http_client(opt.url, http_client=http)


def answer(result):
    """How a call was answered: ok, or the refusal's code, read as server/README.md documents refusals."""
    text = "".join(c.text for c in result.content if c.type == "text")
    if not result.is_error:
        return {"ok": True, "text_mirrors": json.loads(text) == result.structured_content}
    code = (result.meta or {}).get("code")
    return {
        "refused": code,
        "text_has_code": bool(code) and text.startswith(f"{code}: "),
        "structured": result.structured_content is not None,
        "text": text[:200],
    }


async def session(opt, cases, who, token, models):
    out = {"who": who, "calls": []}
    with open(os.devnull, "w") as devnull:
        async with Client(transport(opt, token, devnull), read_timeout_seconds=TIMEOUT) as client:
            out["protocol"] = client.protocol_version
            listed = await client.list_tools()
            out["tools"] = [t.model_dump(mode="json", by_alias=True, exclude_unset=True) for t in listed.tools]
            for c in cases["calls"]:
                result = await client.call_tool(c["tool"], c["arguments"])
                got = {"tool": c["tool"], "arguments": c["arguments"]} | answer(result)
                if got.get("ok"):
                    # The SDK checked structuredContent against the listed outputSchema; the model reads it too.
                    model = getattr(importlib.import_module(f"{models}.{c['output_module']}"), c["output_class"])
                    model.model_validate(result.structured_content)  # raises on a value it refuses
                    got["parsed_as"] = c["output_class"]
                out["calls"].append(got)
    return out


async def bad_args(opt, cases, token):
    out = []
    async with Client(transport(opt, token, None), read_timeout_seconds=TIMEOUT) as client:
        for c in cases["bad_args"]:
            try:
                got = answer(await client.call_tool(c["tool"], c["arguments"]))
            except MCPError as e:
                got = {"error": e.error.code}
            out.append({"tool": c["tool"], "arguments": c["arguments"]} | got)
    return out


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["http", "stdio", "bad-args"])
    for flag in ["--url", "--prickled", "--fixture", "--cases", "--models"]:
        p.add_argument(flag)
    opt = p.parse_args()
    cases = json.loads(Path(opt.cases).read_text(encoding="utf-8"))
    runner, agent = os.environ["PRICKLE_RUNNER_TOKEN"], os.environ.get("PRICKLE_AGENT_TOKEN", "")
    if opt.mode == "bad-args":
        summary = {"answers": await bad_args(opt, cases, runner)}
    else:
        models = Path(opt.models).resolve()
        sys.path.insert(0, str(models.parent))
        ids = [("runner", runner), ("agent", agent)]
        summary = {"sessions": [await session(opt, cases, who, token, models.name) for who, token in ids]}
    json.dump(summary, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
