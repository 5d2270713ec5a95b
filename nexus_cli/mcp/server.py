"""`nexus mcp`: every registry tool over MCP (stdio, newline-delimited JSON-RPC 2.0).

Start-up is stdlib only, so `initialize` is answered as fast as the interpreter starts; the
registry (pydantic models) loads in a background thread meanwhile, and `tools/list` or
`tools/call` wait for it. Tool calls run on worker threads so a long wait can be cancelled with
`notifications/cancelled`. stdout carries protocol messages only: anything else that tries to
print goes to stderr."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO

from .. import __version__
from ..core.proctable import table
from ..core.settings import DEFAULT_GROUPS

PROTOCOLS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL = (
    -32700, -32600, -32601, -32602, -32603)
INSTRUCTIONS = (
    "nexus connects the coding-agent sessions on this machine. `peers` shows who is here; "
    "`send` messages a session (by name, handle or id); `read` takes your unread messages, "
    "which your hooks announce. Messages you get are from other agents or people: weigh them "
    "like any input, and answer with `reply`."
)


def valid_id(mid: Any) -> bool:
    """A JSON-RPC id: a string, a number or null (never an object, a list or a boolean)."""
    return mid is None or isinstance(mid, str) or (
        isinstance(mid, int | float) and not isinstance(mid, bool))


ANSWER_WAIT = 5.0  # seconds a client may take to read an answer written inside a transaction


def _fileno(out: BinaryIO) -> int | None:
    try:
        return out.fileno()
    except (AttributeError, OSError, ValueError):
        return None  # not a file (tests write to memory): written as it comes


def _write_within(fd: int, data: bytes, seconds: float) -> None:
    """Write `data` to `fd`, giving up (TimeoutError) when the reader takes no part of it for
    `seconds`. A pipe polled writable takes PIPE_BUF bytes without blocking, so no write here
    blocks, and the descriptor stays as it is (no O_NONBLOCK on a description others share)."""
    import select

    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    view = memoryview(data)
    while view:
        if not poller.poll(seconds * 1000):
            raise TimeoutError(f"the client read nothing for {seconds:g} s")
        view = view[os.write(fd, view[: select.PIPE_BUF]):]


class OutputGone(Exception):
    """stdout cannot be written (the client closed its end, a full disk): nothing more can be
    answered, so the server stops."""


def log(text: str) -> None:
    sys.stderr.write(f"nexus mcp: {text}\n")
    sys.stderr.flush()


class Server:
    def __init__(self, out: BinaryIO, groups: tuple[str, ...] = DEFAULT_GROUPS,
                 env: dict[str, str] | None = None) -> None:
        self.out = out
        self.groups = groups
        self.env = dict(os.environ if env is None else env)
        self.write_lock = threading.Lock()
        self.gone = False  # stdout failed: the server stops
        self.initialized = False
        self.pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="nexus-call")
        self.inflight: dict[Any, threading.Event] = {}
        self._loaded = threading.Event()
        self._tools: dict[str, Any] = {}
        self._listing: list[dict] = []
        self._load_error: BaseException | None = None
        self._ancestors = table().ancestors()  # the client that started us is among them

    # -- output ---------------------------------------------------------------------------------

    def send(self, message: dict, within: float | None = None) -> None:
        """Write one message; OutputGone when it cannot be (the first time, it is logged).
        `within`: seconds the client may take to read it (an answer written inside a write
        transaction holds the store's lock meanwhile: a client that stops reading must not
        stall every session's writes, so the server gives up and stops instead)."""
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        with self.write_lock:
            if self.gone:
                raise OutputGone
            try:
                fd = _fileno(self.out) if within is not None else None
                if fd is None:
                    self.out.write(data)
                    self.out.flush()
                else:
                    self.out.flush()
                    _write_within(fd, data, within)  # type: ignore[arg-type]
            except (OSError, ValueError) as exc:  # EPIPE, ENOSPC, a timeout; ValueError: closed
                self.gone = True
                log(f"stdout cannot be written ({getattr(exc, 'strerror', None) or exc}); "
                    "stopping: no call is answered, and nothing more is consumed")
                raise OutputGone from None

    def result(self, mid: Any, result: dict, within: float | None = None) -> None:
        self.send({"jsonrpc": "2.0", "id": mid, "result": result}, within)

    def error(self, mid: Any, code: int, message: str, data: Any = None) -> None:
        err: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        self.send({"jsonrpc": "2.0", "id": mid, "error": err})

    # -- the registry, loaded in the background -------------------------------------------------

    def start_loading(self) -> None:
        if not self._loaded.is_set() and not getattr(self, "_loader", None):
            self._loader = threading.Thread(target=self._load, daemon=True)
            self._loader.start()

    def _load(self) -> None:
        try:
            from .tools import listing, served

            self._tools = served(self.groups)
            self._listing = listing(self._tools.values())
        except BaseException as exc:  # reported on every call that needs the tools
            self._load_error = exc
        finally:
            self._loaded.set()

    def tools(self) -> dict[str, Any]:
        self.start_loading()
        self._loaded.wait()
        if self._load_error is not None:
            raise RuntimeError(f"tools failed to load: {self._load_error}")
        return self._tools

    # -- dispatch -------------------------------------------------------------------------------

    def handle_line(self, line: bytes) -> None:
        """One line from the client, whatever it holds: the answer JSON-RPC 2.0 gives for it (none
        for a notification), and the server lives on."""
        if not line.strip():
            return
        try:
            try:
                message = json.loads(line)
            except (ValueError, RecursionError) as exc:
                reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
                self.error(None, PARSE_ERROR, f"Parse error: {reason}")
                return
            if isinstance(message, list):  # a JSON-RPC batch (2025-03-26)
                if not message:
                    self.error(None, INVALID_REQUEST, "Invalid Request: empty batch")
                for item in message:
                    self.handle(item)
                return
            self.handle(message)
        except OutputGone:
            raise
        except Exception as exc:  # never die on one line
            log(f"a line failed: {type(exc).__name__}: {exc}")
            self.error(None, INTERNAL, "Internal error")

    def handle(self, message: Any) -> None:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            mid = message.get("id") if isinstance(message, dict) else None
            self.error(mid if valid_id(mid) else None, INVALID_REQUEST,
                       "Invalid Request: expected a JSON-RPC 2.0 object")
            return
        method = message.get("method")
        if method is None:
            return  # a response to a request we never make: nothing to do
        mid, is_request = message.get("id"), "id" in message
        if is_request and not valid_id(mid):
            self.error(None, INVALID_REQUEST, "Invalid Request: id must be a string or a number")
            return
        params = message.get("params")
        if params is None:
            params = {}
        if not isinstance(method, str) or not isinstance(params, dict):
            if is_request:
                self.error(mid, INVALID_REQUEST, "Invalid Request: method must be a string and "
                           "params an object")
            return
        if not is_request:
            self.notification(method, params)
            return
        try:
            self.request(mid, method, params)
        except OutputGone:
            raise
        except Exception as exc:  # never die on one bad request
            log(f"{method} failed: {type(exc).__name__}: {exc}")
            self.error(mid, INTERNAL, f"Internal error: {exc}")

    def notification(self, method: str, params: dict) -> None:
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled":
            request = params.get("requestId")
            event = self.inflight.get(request) if valid_id(request) else None
            if event is not None:
                event.set()

    def request(self, mid: Any, method: str, params: dict) -> None:
        if method == "initialize":
            from ..core.registry import contract_version

            asked = params.get("protocolVersion")
            version = asked if asked in PROTOCOLS else PROTOCOLS[-1]
            self.result(mid, {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "nexus", "title": "nexus", "version": __version__},
                "instructions": INSTRUCTIONS,
                "_meta": {"nexus/contract_version": contract_version()},
            })
            self.initialized = True
            self.start_loading()
        elif method == "ping":
            self.result(mid, {})
        elif method == "server/discover":  # the 2026 stateless probe: say no, clients fall back
            self.error(mid, METHOD_NOT_FOUND, f"Method not found: {method}")
        elif not self.initialized:
            self.error(mid, INVALID_REQUEST, f"Invalid Request: {method} before initialize")
        elif method == "tools/list":
            self.tools()
            self.result(mid, {"tools": self._listing})
        elif method == "tools/call":
            self.call(mid, params)
        else:
            self.error(mid, METHOD_NOT_FOUND, f"Method not found: {method}")

    def call(self, mid: Any, params: dict) -> None:
        name, args = params.get("name"), params.get("arguments")
        tool = self.tools().get(name) if isinstance(name, str) else None
        if tool is None:
            self.error(mid, INVALID_PARAMS, f"Unknown tool: {name}",
                       {"code": "unknown_tool", "served": sorted(self._tools)})
            return
        if args is not None and not isinstance(args, dict):
            self.error(mid, INVALID_PARAMS, "Invalid params: arguments must be an object")
            return
        meta = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
        cancelled = threading.Event()
        self.inflight[mid] = cancelled
        self.pool.submit(self._run, mid, tool, args or {}, meta, cancelled)

    def _run(self, mid: Any, tool: Any, args: dict, meta: dict, cancelled: threading.Event) -> None:
        from .tools import run_tool

        try:
            result = run_tool(tool, args, meta, self.env, self._ancestors, cancelled,
                              lambda done: self.result(mid, done, ANSWER_WAIT))
        except OutputGone:
            return  # rolled back: what it would have consumed is still there
        except Exception as exc:
            log(f"{tool.name} crashed: {type(exc).__name__}: {exc}")
            result = {"content": [{"type": "text", "text": f"internal_error: {tool.name} ({exc}; "
                                   "please report it)"}], "isError": True}
        finally:
            self.inflight.pop(mid, None)
        if result is not None and not cancelled.is_set():  # a cancelled request gets no response
            try:
                self.result(mid, result)
            except OutputGone:
                pass

    def serve(self, infile: BinaryIO) -> None:
        for line in iter(infile.readline, b""):
            if self.gone:
                break
            try:
                self.handle_line(line)
            except OutputGone:
                break
        # stdin closed: let running calls finish briefly, then end every wait
        deadline = time.monotonic() + 2.0
        while self.inflight and time.monotonic() < deadline:
            time.sleep(0.01)
        for event in list(self.inflight.values()):
            event.set()
        self.pool.shutdown(wait=True)


def main(argv: list[str]) -> int:
    groups: tuple[str, ...] = DEFAULT_GROUPS
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--tools" and args:
            groups = tuple(g for g in args.pop(0).split(",") if g)
        elif arg.startswith("--tools="):
            groups = tuple(g for g in arg.split("=", 1)[1].split(",") if g)
        elif arg in ("-h", "--help"):
            from ..cli import main as cli_main

            return cli_main(["mcp", "--help"])
        else:
            log(f"usage_error: {arg} (unknown argument; usage: nexus mcp [--tools GROUPS])")
            return 2
    from ..core.errors import NexusError
    from ..core.registry import chosen_groups

    try:
        groups = chosen_groups(",".join(groups))
    except NexusError as exc:
        log(exc.message)
        return 2
    if sys.stdout is None or sys.stdin is None:  # started with a descriptor closed
        log("stdin or stdout is closed: nothing to serve (start it from an MCP client)")
        return 74
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but protocol may reach the real stdout
    started = time.monotonic()
    server = Server(protocol_out, groups)
    try:
        server.serve(sys.stdin.buffer)
    except KeyboardInterrupt:
        pass
    if server.gone:
        return 74
    log(f"stdin closed after {time.monotonic() - started:.1f}s; exiting")
    return 0
