"""An MCP server written with the official Python SDK (`MCPServer`, the
former FastMCP), for tests/mcp_mount.rs to mount.

Usage: mcp_remote_server.py stdio
       mcp_remote_server.py http PORT     (streamable HTTP at http://127.0.0.1:PORT/mcp)
       mcp_remote_server.py sse PORT      (legacy HTTP+SSE at http://127.0.0.1:PORT/sse)
"""

import os

import anyio
import sys
from enum import Enum
from typing import Literal

from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("remote-test")


@server.tool()
def add(a: int, b: int, tags: list[str]) -> str:
    """Add two integers and echo the tags, with the type each arrived as."""
    return f"{a + b} {type(a).__name__} tags={tags}"


@server.tool()
def fail(reason: str) -> str:
    """Always raise."""
    raise ToolError(f"failed on purpose: {reason}")


class Forecast(BaseModel):
    city: str
    celsius: float
    unit: str


@server.tool()
def forecast(city: str, unit: Literal["c", "f"] = "c", days: int | None = None) -> Forecast:
    """The weather in a city."""
    return Forecast(city=city, celsius=21.5, unit=unit)


class Mode(str, Enum):
    walk = "walk"
    train = "train"


class Stop(BaseModel):
    city: str = Field(min_length=1, max_length=80, description="Where to stop")
    nights: int = Field(default=1, ge=1, le=30)
    mode: Mode = Mode.train


class Budget(BaseModel):
    amount: float = Field(gt=0)
    currency: str = Field(pattern="^[A-Z]{3}$")


@server.tool()
def plan_trip(stops: list[Stop], budget: Budget | None = None, tags: set[str] | None = None) -> str:
    """Plan a trip through the stops, within the budget."""
    return f"{len(stops)} stops, first by {stops[0].mode.value}, budget {budget}"


STARTED = 0
CANCELLED = 0


@server.tool()
async def slow() -> str:
    """Sleep a minute, counting starts and cancellations."""
    global STARTED, CANCELLED
    STARTED += 1
    try:
        await anyio.sleep(60)
    except BaseException:
        CANCELLED += 1
        raise
    return "slept"


@server.tool()
def cancelled() -> dict[str, int]:
    """How many calls of `slow` started, and how many were cancelled."""
    return {"started": STARTED, "cancelled": CANCELLED}


@server.tool()
def doomed() -> str:
    """A tool `grow` removes."""
    return "still here"


@server.tool()
def reshape(n: int, m: int | None = None) -> str:
    """A tool whose parameters `grow` changes (`m` becomes required)."""
    return f"n={n} m={m}"


def extra(word: str) -> str:
    """A tool added while the server runs."""
    return word.upper()


def reshaped(n: int, m: int) -> str:
    """A tool whose parameters changed while the server runs."""
    return f"n={n} m={m}"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add `extra`, remove `doomed`, make `reshape`'s `m` required, and tell
    the client the list changed (the session's `send_tool_list_changed`)."""
    server.add_tool(extra)
    server.remove_tool("doomed")
    server.remove_tool("reshape")
    server.add_tool(reshaped, name="reshape")
    await ctx.request_context.session.send_tool_list_changed()
    return "grown"


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif sys.argv[1:2] == ["sse"]:
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
