"""A raw stdio MCP server (standard library only) that misbehaves on purpose.

    mcp_odd_server.py endless LOG   every tools/list page names a next page
    mcp_odd_server.py odd LOG       one tool, whose result has a content
                                    block of a type no revision defines

Each `initialize` appends a line to LOG, so a test can count the server's
starts.
"""

import json
import sys

mode, log = sys.argv[1], sys.argv[2]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


TOOL = {"name": "t", "description": "A tool.", "inputSchema": {"type": "object", "properties": {}}}

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
        cursor = (message.get("params") or {}).get("cursor") or "0"
        page = {"tools": [dict(TOOL, name="t" + cursor)] if mode == "endless" else [TOOL]}
        if mode == "endless":
            page["nextCursor"] = str(int(cursor) + 1)
        send({"jsonrpc": "2.0", "id": id_, "result": page})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "hologram", "frames": 3}]}})
    else:
        send({"jsonrpc": "2.0", "id": id_, "result": {}})
