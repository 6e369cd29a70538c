"""Drives an MCP server with the official MCP Python client, over stdio.

Usage: mcp_client.py COMMAND [ARG...]

Starts COMMAND as the server (with TOOL_RUNTIME_MCP_SERVE=1 in its
environment), runs the checks below through `mcp.ClientSession`, prints one
line per check and a closing "N passed, N failed" line, and exits non-zero
if any check failed.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
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


async def run(command):
    params = StdioServerParameters(
        command=command[0],
        args=command[1:],
        env={**os.environ, "TOOL_RUNTIME_MCP_SERVE": "1"},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check("initialize names the server", init.server_info.name == "tool-runtime-test", init)
            check("the server offers tools", init.capabilities.tools is not None, init.capabilities)

            listed = await session.list_tools()
            names = sorted(tool.name for tool in listed.tools)
            check("tools/list lists every tool", names == ["disk_usage", "nap", "probe", "render_chart"], names)
            probe = next(tool for tool in listed.tools if tool.name == "probe")
            check("the probe's schema reaches the client", probe.input_schema["required"] == ["pattern"], probe.input_schema)
            disk = next(tool for tool in listed.tools if tool.name == "disk_usage")
            check("a structured tool has an output schema", disk.output_schema is not None, disk)
            check("annotations arrive", disk.annotations is not None and disk.annotations.read_only_hint is True, disk.annotations)

            result = await session.call_tool("probe", {"pattern": "*.rs", "maxResults": "5"})
            check("a lenient call succeeds", not result.is_error, text_of(result))
            check(
                "its arguments were bound by the schema",
                result.structured_content is not None and result.structured_content["max_results"] == 5,
                result.structured_content,
            )

            result = await session.call_tool("probe", {"max_results": 0, "mode": "delete"})
            text = text_of(result)
            check("bad arguments are a tool error the model can read", result.is_error, text)
            for code in ["missing_required:pattern", "out_of_range:max_results", "enum_out_of_range:mode"]:
                check(f"the error lists {code}", code in text, text)

            # The client checks structured content against the output schema;
            # an Option field sent as null must pass.
            result = await session.call_tool("disk_usage", {})
            check("structured content validates against the output schema", not result.is_error, text_of(result))
            check("structured content arrives", result.structured_content["mounts"][1]["label"] is None, result.structured_content)

            result = await session.call_tool("render_chart", {"values": [1, 2]})
            kinds = [block.type for block in result.content]
            check("image content arrives", kinds == ["text", "image"], kinds)

            try:
                await session.call_tool("no_such_tool", {})
                check("an unknown tool is a protocol error", False, "no error")
            except MCPError as e:
                check("an unknown tool is a protocol error", "no_such_tool" in str(e), e)

            # A slow call does not hold up a ping or another call: both are
            # answered while it is still running (order, not timing).
            slow = asyncio.create_task(session.call_tool("nap", {"millis": 3000}))
            await asyncio.sleep(0.1)
            await session.send_ping()
            check("a ping is answered while a tool runs", not slow.done(), "the slow call had already finished")
            quick = await session.call_tool("nap", {"millis": 1})
            check("a second call finishes before the first", not slow.done() and not quick.is_error, text_of(quick))
            napped = await slow
            check("the slow call still finishes", text_of(napped) == "slept 3000 ms", text_of(napped))

def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    asyncio.run(asyncio.wait_for(run(sys.argv[1:]), timeout=60))
    print(f"mcp client: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
