"""A raw stdio MCP server (standard library only) that misbehaves on purpose.

    mcp_odd_server.py endless LOG   every tools/list page names a next page
    mcp_odd_server.py odd LOG       one tool, whose result has a content
                                    block of a type no revision defines
    mcp_odd_server.py shapes LOG    tools whose schemas providers refuse as
                                    written (a root union, free-form
                                    objects); each call answers with its
                                    arguments as JSON text
    mcp_odd_server.py many LOG      a tool with a 300 KiB description, then
                                    1,200 small tools
    mcp_odd_server.py flood LOG     one tool, whose call announces 5,000
                                    tools/list_changed before its answer;
                                    every tools/list after the first takes
                                    3 s

Each `initialize` appends a line to LOG, so a test can count the server's
starts.
"""

import json
import sys
import time

mode, log = sys.argv[1], sys.argv[2]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


TOOL = {"name": "t", "description": "A tool.", "inputSchema": {"type": "object", "properties": {}}}

SHAPES = [
    {"name": "pick", "description": "Pick a resource.", "inputSchema": {
        "type": "object",
        "oneOf": [
            {"type": "object", "properties": {"id": {"type": "integer"}, "depth": {"type": "integer"}},
             "required": ["id", "depth"], "additionalProperties": False},
            {"type": "object", "properties": {"path": {"type": "string"}, "depth": {"type": "integer"}},
             "required": ["path", "depth"], "additionalProperties": False},
        ],
    }},
    {"name": "store", "description": "Store a record.", "inputSchema": {
        "type": "object",
        "properties": {
            "record": {"type": "object", "additionalProperties": True},
            "meta": {"type": "object"},
        },
        "required": ["record"],
    }},
]

for line in sys.stdin:
    message = json.loads(line)
    method, id_ = message.get("method"), message.get("id")
    if id_ is None:
        continue
    if method == "initialize":
        with open(log, "a") as f:
            f.write("initialize\n")
        send({"jsonrpc": "2.0", "id": id_, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "odd", "version": "0"},
        }})
    elif method == "tools/list":
        if mode == "flood":
            lists = globals().setdefault("lists", [])
            lists.append(1)
            if len(lists) > 1:
                time.sleep(3)
        cursor = (message.get("params") or {}).get("cursor") or "0"
        many = [dict(TOOL, name="big", description="x" * (300 << 10))] + [
            dict(TOOL, name="t%d" % i) for i in range(1200)
        ]
        tools = {"endless": [dict(TOOL, name="t" + cursor)], "shapes": SHAPES, "many": many}.get(mode, [TOOL])
        page = {"tools": tools}
        if mode == "endless":
            page["nextCursor"] = str(int(cursor) + 1)
        send({"jsonrpc": "2.0", "id": id_, "result": page})
    elif method == "tools/call" and mode == "flood":
        for _ in range(5000):
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}) + "\n")
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": "flooded"}]}})
    elif method == "tools/call" and mode == "shapes":
        arguments = json.dumps(message["params"].get("arguments"), sort_keys=True)
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": arguments}]}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "hologram", "frames": 3}]}})
    else:
        send({"jsonrpc": "2.0", "id": id_, "result": {}})
