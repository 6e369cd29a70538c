"""Drives an MCP server with the official MCP Python client.

Usage: mcp_client.py stdio|http COMMAND [ARG...]

Starts COMMAND as the server, with TOOL_RUNTIME_MCP_SERVE=stdio|http in its
environment. Over stdio the client talks on the process's stdin and stdout;
over http the server prints `listening on URL` as its first stdout line and
the client connects there with streamable HTTP. Each transport is checked
twice: with the session handshake (`initialize`, protocol 2025-11-25) and
with protocol 2026-07-28 (`server/discover`, no session). Prints one line per
check and a closing "N passed, N failed" line; exits non-zero if any failed.
"""

import asyncio
import contextlib
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

passed = 0
failed = 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def ping(session, handshake):
    """A ping; protocol 2026-07-28 has none, so a quick call stands in."""
    if handshake == "initialize":
        await session.send_ping()
    else:
        await session.call_tool("cancelled_naps", {})


async def checks(session, handshake):
    label = f"[{handshake}] "
    if handshake == "initialize":
        init = await session.initialize()
        check(label + "initialize names the server", init.server_info.name == "tool-runtime-test", init)
        check(label + "the server offers tools", init.capabilities.tools is not None, init.capabilities)
    else:
        found = await session.discover()
        check(label + "discover agrees on 2026-07-28", session.protocol_version == "2026-07-28", found)

    listed = await session.list_tools()
    names = [tool.name for tool in listed.tools]
    expected = ["busy", "cancelled_naps", "disk_usage", "nap", "probe", "render_chart"]
    check(label + "tools/list lists every tool", sorted(names) == expected, names)
    again = await session.list_tools()
    check(label + "tools/list keeps a stable order", [t.name for t in again.tools] == names, again)
    probe = next(tool for tool in listed.tools if tool.name == "probe")
    check(label + "the probe's schema reaches the client", probe.input_schema["required"] == ["pattern"], probe.input_schema)
    order = ["pattern", "case_sensitive", "max_results", "offset", "threshold", "files", "mode", "window", "labels"]
    check(label + "parameters arrive in declaration order", list(probe.input_schema["properties"]) == order, probe.input_schema)
    disk = next(tool for tool in listed.tools if tool.name == "disk_usage")
    check(label + "a structured tool has an output schema", disk.output_schema is not None, disk)
    check(label + "annotations arrive", disk.annotations is not None and disk.annotations.read_only_hint is True, disk.annotations)

    result = await session.call_tool("probe", {"pattern": "*.rs"})
    check(label + "a valid call succeeds", not result.is_error and result.structured_content["max_results"] == 100, text_of(result))

    result = await session.call_tool("probe", {"pattern": "*.rs", "maxResults": "5"})
    check(label + "a call needing coercion succeeds", not result.is_error, text_of(result))
    check(
        label + "its arguments were bound by the schema",
        result.structured_content is not None and result.structured_content["max_results"] == 5,
        result.structured_content,
    )

    result = await session.call_tool("probe", {"max_results": 0, "mode": "delete"})
    text = text_of(result)
    check(label + "bad arguments are a tool error the model can read", result.is_error, text)
    for code in ["missing_required:pattern", "out_of_range:max_results", "enum_out_of_range:mode"]:
        check(label + f"the error lists {code}", code in text, text)

    result = await session.call_tool("disk_usage", {})
    check(label + "structured content validates against the output schema", not result.is_error, text_of(result))
    check(label + "structured content arrives", result.structured_content["mounts"][1]["label"] is None, result.structured_content)

    result = await session.call_tool("render_chart", {"values": [1, 2]})
    kinds = [block.type for block in result.content]
    check(label + "image content arrives", kinds == ["text", "image"], kinds)

    try:
        await session.call_tool("no_such_tool", {})
        check(label + "an unknown tool is a protocol error", False, "no error")
    except MCPError as e:
        check(label + "an unknown tool is a protocol error", "no_such_tool" in str(e) and e.code == -32602, e)

    # A slow call does not hold up a ping or another call, and its
    # cancellation reaches the tool (order, not timing).
    before = int(text_of(await session.call_tool("cancelled_naps", {})))
    slow = asyncio.create_task(session.call_tool("nap", {"millis": 20000}))
    await asyncio.sleep(0.2)
    await ping(session, handshake)
    check(label + "a ping is answered while a tool runs", not slow.done(), "the slow call had already finished")
    quick = await session.call_tool("nap", {"millis": 1})
    check(label + "a second call finishes before the first", not slow.done() and text_of(quick) == "slept 1 ms", text_of(quick))
    slow.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await slow
    seen = before
    for _ in range(100):
        seen = int(text_of(await session.call_tool("cancelled_naps", {})))
        if seen > before:
            break
        await asyncio.sleep(0.1)
    check(label + "the cancellation reached the tool", seen == before + 1, (before, seen))

    # A tool that computes without yielding does not stop a ping.
    busy = asyncio.create_task(session.call_tool("busy", {"millis": 3000}))
    await asyncio.sleep(0.3)
    await ping(session, handshake)
    check(label + "a ping is answered while a tool computes", not busy.done(), "the busy call had already finished")
    done = await busy
    check(label + "the busy call still finishes", text_of(done).startswith("computed for 3000 ms"), text_of(done))


async def over_stdio(command, handshake):
    params = StdioServerParameters(
        command=command[0],
        args=command[1:],
        env={**os.environ, "TOOL_RUNTIME_MCP_SERVE": "stdio"},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await checks(session, handshake)


async def over_http(command, handshake):
    server = subprocess.Popen(
        command,
        env={**os.environ, "TOOL_RUNTIME_MCP_SERVE": "http"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = await asyncio.to_thread(server.stdout.readline)
        if not line.startswith("listening on "):
            check("the server names its endpoint", False, line)
            return
        url = line.split()[-1]
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                await checks(session, handshake)
    finally:
        server.kill()
        server.wait()


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("stdio", "http"):
        print(__doc__)
        sys.exit(2)
    run = over_stdio if sys.argv[1] == "stdio" else over_http
    for handshake in ["initialize", "discover"]:
        asyncio.run(asyncio.wait_for(run(sys.argv[2:], handshake), timeout=120))
    print(f"mcp client: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
