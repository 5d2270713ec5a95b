"""A Streamable HTTP face for `nexus mcp`, for the tests only: the official conformance suite
speaks HTTP, nexus speaks stdio. Each POST is forwarded, as one line, to a `nexus mcp` child and
its answer returned as JSON. The transport's own rules live here, because here is the transport:

- 2026-07-28 (stateless): every request goes to one shared child; the standard headers must
  match the body (MCP-Protocol-Version, Mcp-Method, Mcp-Name: else 400 and -32020); an error's
  HTTP status follows its code (-32601: 404; -32602, -32020..-32022: 400).
- legacy: `initialize` starts a child of its own and a session (Mcp-Session-Id); the session's
  requests go to it; DELETE ends it; an unknown session is 404.
- a Host or Origin that is not this machine is refused (403): DNS rebinding.

Binds 127.0.0.1 only. Usage: python tests/mcp_http.py PORT [nexus mcp arguments...]"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

META_VERSION = "io.modelcontextprotocol/protocolVersion"
HEADER_MISMATCH = -32020
STATUS = {-32601: 404, -32602: 400, -32020: 400, -32021: 400, -32022: 400}
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
LOCAL = {"127.0.0.1", "localhost", "[::1]"}
WAIT = 120.0


class Child:
    """One `nexus mcp` process; requests are renumbered so that concurrent callers' ids never
    meet, and each answer goes back to the request that is waiting for it."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=sys.stderr)
        self.ids = itertools.count(1)
        self.waiting: dict[int, tuple[threading.Event, list]] = {}
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            slot = self.waiting.pop(message.get("id"), None) if "id" in message else None
            if slot is not None:
                slot[1].append(message)
                slot[0].set()
        for event, _ in list(self.waiting.values()):  # the child is gone: nothing will come
            event.set()

    def ask(self, message: dict) -> dict | None:
        """The answer to a request (None for a notification, or when the child died)."""
        with self.lock:
            own = next(self.ids)
            slot: tuple[threading.Event, list] = (threading.Event(), [])
            is_request = "id" in message
            if is_request:
                self.waiting[own] = slot
            line = {**message, "id": own} if is_request else message
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(line).encode() + b"\n")
            self.proc.stdin.flush()
        if not is_request:
            return None
        slot[0].wait(WAIT)
        return {**slot[1][0], "id": message["id"]} if slot[1] else None

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(30)


def error(mid: Any, code: int, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": text}}


class Bridge(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, argv: list[str]) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.argv = argv
        self.shared = Child(argv)
        self.sessions: dict[str, Child] = {}


class Handler(BaseHTTPRequestHandler):
    server: Bridge

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def reply(self, status: int, body: dict | None = None, headers: dict | None = None) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def local(self) -> bool:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        origin = self.headers.get("Origin")
        return host in LOCAL and (origin is None or urlsplit(origin).hostname in (
            "127.0.0.1", "localhost", "::1"))

    def do_GET(self) -> None:
        self.reply(403 if not self.local() else 405, headers={"Allow": "POST, DELETE"})

    def do_DELETE(self) -> None:
        child = self.server.sessions.pop(self.headers.get("Mcp-Session-Id", ""), None)
        if child is not None:
            child.close()
        self.reply(200 if child is not None else 404)

    def do_POST(self) -> None:
        if not self.local():
            self.reply(403, error(None, -32600, "Forbidden: Host or Origin is not this machine"))
            return
        try:
            message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        except ValueError as exc:
            self.reply(400, error(None, -32700, f"Parse error: {exc}"))
            return
        if not isinstance(message, dict):
            self.reply(400, error(None, -32600, "Invalid Request: one JSON-RPC object per POST"))
            return
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        if META_VERSION in meta or message.get("method") == "server/discover" or \
                self.headers.get("MCP-Protocol-Version", "") >= "2026":
            self.stateless(message, params, meta)
        else:
            self.legacy(message)

    def stateless(self, message: dict, params: dict, meta: dict) -> None:
        mid, method = message.get("id"), message.get("method")
        wrong = []
        if META_VERSION in meta and self.headers.get("MCP-Protocol-Version") != meta[META_VERSION]:
            wrong.append("MCP-Protocol-Version")
        if self.headers.get("Mcp-Method") != method:
            wrong.append("Mcp-Method")
        named = params.get(NAMED.get(str(method), ""))
        if isinstance(named, str) and (self.headers.get("Mcp-Name") or "").strip() != named:
            wrong.append("Mcp-Name")
        if wrong:
            self.reply(400, error(mid, HEADER_MISMATCH, f"Header mismatch: {', '.join(wrong)} "
                                  "does not match the request body"))
            return
        self.forward(self.server.shared, message, stateless=True)

    def legacy(self, message: dict) -> None:
        session = self.headers.get("Mcp-Session-Id")
        if message.get("method") == "initialize":
            child, session = Child(self.server.argv), uuid.uuid4().hex
            self.server.sessions[session] = child
            self.forward(child, message, headers={"Mcp-Session-Id": session})
        elif session is None:
            self.reply(400, error(message.get("id"), -32600, "Bad Request: no Mcp-Session-Id "
                                  "(send initialize first, or the 2026-07-28 _meta fields)"))
        elif session not in self.server.sessions:
            self.reply(404, error(message.get("id"), -32600, "Session not found"))
        else:
            self.forward(self.server.sessions[session], message)

    def forward(self, child: Child, message: dict, stateless: bool = False,
                headers: dict | None = None) -> None:
        answer = child.ask(message)
        if answer is None:
            self.reply(202 if "id" not in message else 502, headers=headers)
            return
        code = answer.get("error", {}).get("code")
        self.reply(STATUS.get(code, 200) if stateless else 200, answer, headers)


def main(argv: list[str]) -> int:
    port, rest = int(argv[0]), argv[1:]  # port 0: any free one (the line below names it)
    bridge = Bridge(port, [sys.executable, "-m", "nexus_cli", "mcp", *rest])
    print(f"listening on http://127.0.0.1:{bridge.server_address[1]}/mcp", flush=True)
    try:
        bridge.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        for child in [bridge.shared, *bridge.sessions.values()]:
            child.close()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main(sys.argv[1:]))
