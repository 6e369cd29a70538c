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
    mcp_odd_server.py stubborn LOG  one tool, whose call answers with the
                                    server's process id; the server ignores
                                    SIGTERM and outlives the end of its input
    mcp_odd_server.py flaky LOG PORT
                                    streamable HTTP at
                                    http://127.0.0.1:PORT/mcp, with tools
                                    `nap` (answers after 3 s), `unavailable`
                                    (HTTP 503, as a proxy sends) and `broken`
                                    (HTTP 500 with an HTML page); each
                                    request appends its method and session
                                    id to LOG

Each `initialize` appends a line to LOG, so a test can count the server's
starts.
"""

import json
import os
import signal
import sys
import threading
import time
import uuid

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


def serve_flaky(port):
    """The `flaky` mode's streamable HTTP server (JSON answers, no event
    streams), one thread a request."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    sessions = set()
    lock = threading.Lock()

    def note(line):
        with lock, open(log, "a") as f:
            f.write(line + "\n")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body=b"", content_type="application/json", headers=()):
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            if body:
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.answer(405)

        def do_DELETE(self):
            self.answer(200)

        def do_POST(self):
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            method, id_ = message.get("method"), message.get("id")
            params = message.get("params") or {}
            session = self.headers.get("Mcp-Session-Id")
            if method == "tools/call":
                method = "tools/call " + params.get("name", "")
            note("%s %s" % (method, session or "-"))
            if method == "initialize":
                session = uuid.uuid4().hex
                with lock:
                    sessions.add(session)
                result = {
                    "protocolVersion": params["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "flaky", "version": "0"},
                }
                body = json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}).encode()
                self.answer(200, body, headers=[("Mcp-Session-Id", session)])
                return
            with lock:
                known = session in sessions
            if not known:
                self.answer(404)
            elif id_ is None:
                self.answer(202)
            elif method == "tools/call unavailable":
                self.answer(503, b"no upstream", "text/plain", [("Retry-After", "1")])
            elif method == "tools/call broken":
                self.answer(500, b"<!DOCTYPE html><html><body><h1>Oops</h1></body></html>", "text/html")
            else:
                if method == "tools/list":
                    names = ["nap", "unavailable", "broken"]
                    result = {"tools": [dict(TOOL, name=name) for name in names]}
                elif method == "tools/call nap":
                    time.sleep(3)
                    result = {"content": [{"type": "text", "text": "rested"}]}
                else:
                    result = {}
                self.answer(200, json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}).encode())

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if mode == "flaky":
    serve_flaky(int(sys.argv[3]))
    sys.exit(0)
if mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

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
    elif method == "tools/call" and mode == "stubborn":
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": str(os.getpid())}]}})
    elif method == "tools/call" and mode == "shapes":
        arguments = json.dumps(message["params"].get("arguments"), sort_keys=True)
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": arguments}]}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "hologram", "frames": 3}]}})
    else:
        send({"jsonrpc": "2.0", "id": id_, "result": {}})

# Only a kill ends it.
while mode == "stubborn":
    time.sleep(60)
