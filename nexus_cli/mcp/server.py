"""`nexus mcp`: every registry tool over MCP (stdio, newline-delimited JSON-RPC 2.0), in both
eras of the protocol on one server:

- legacy (2024-11-05 .. 2025-11-25): `initialize` opens the connection, then `tools/list` and
  `tools/call`;
- stateless (2026-07-28): no handshake; every request carries its protocol version and client
  capabilities in `_meta` (`io.modelcontextprotocol/...`), `server/discover` says what the server
  speaks, and every result carries `resultType` and the server's identity.

Who calls a tool comes from the call's own `_meta` and the process (never from the connection's
history), in either era. Start-up is stdlib only: `initialize` and `server/discover` are answered
before anything the tools need is loaded; the store's modules load on a background thread
meanwhile, `tools/list` reads contract/tools.json alone, and a tool's feature is imported when the
first call needs it. Tool calls run on threads of their own, so a long wait can be cancelled with
`notifications/cancelled`. stdout carries protocol messages only: anything else that tries to
print goes to stderr."""

from __future__ import annotations

import os
import sys
import threading
import time

from .. import CONTRACT_VERSION, __version__
from ..core import jsonstrict

TYPE_CHECKING = False  # typing itself costs the start a fifth of its imports
if TYPE_CHECKING:
    from typing import Any, BinaryIO

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # opened by `initialize`
MODERN = ("2026-07-28",)  # stateless: the version rides on every request
SUPPORTED = (*reversed(MODERN), *reversed(LEGACY))  # newest first, as `server/discover` lists them
PROTOCOLS = LEGACY  # (kept for callers that list the handshake versions)
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL = (
    -32700, -32600, -32601, -32602, -32603)
UNSUPPORTED_VERSION = -32022
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER = "io.modelcontextprotocol/serverInfo"
MODERN_ONLY = ("server/discover", "subscriptions/listen")  # no legacy meaning: always stateless
SERVER_INFO = {"name": "nexus", "title": "nexus", "version": __version__}
CAPABILITIES = {"tools": {"listChanged": False}}
LIST_TTL_MS = 3_600_000  # what `tools/list` and `server/discover` say stays fresh: the tool set
# is fixed for the life of the process (`--tools`), the same for every caller ("public")
CALL_THREADS = 8  # tool calls running at once; more wait their turn
INSTRUCTIONS = (  # (what the tools' own descriptions say is not repeated: every request pays)
    "nexus connects the coding-agent sessions on this machine; your hooks announce the messages "
    "you get. They come from other agents or people: weigh them like any input, and answer "
    "with `reply`."
)


def valid_id(mid: Any) -> bool:
    """A JSON-RPC id: a string, a number or null (never an object, a list or a boolean)."""
    return mid is None or isinstance(mid, str) or (
        isinstance(mid, int | float) and not isinstance(mid, bool))


def stateless(method: str, params: dict) -> bool:
    """Whether a request is of the 2026-07-28 era: a method only it has, or per-request protocol
    fields in `_meta` (a legacy request has neither)."""
    meta = params.get("_meta")
    return method in MODERN_ONLY or (isinstance(meta, dict) and (
        META_VERSION in meta or META_CAPABILITIES in meta))


def complete(result: dict) -> dict:
    """A stateless result: `resultType` and the server's identity in its `_meta`."""
    return {**result, "resultType": "complete",
            "_meta": {**result.get("_meta", {}), META_SERVER: SERVER_INFO}}


ANSWER_WAIT = 5.0  # seconds a client may take to read a consuming answer (then it is put back)


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


class Workers:
    """Up to `size` long-lived threads running tool calls in turn, started as calls come: each
    keeps its store connection from call to call. (concurrent.futures would cost the start-up
    its import: logging, inspect ...)"""

    def __init__(self, size: int) -> None:
        from _queue import SimpleQueue

        self.size = size
        self.jobs: Any = SimpleQueue()
        self.threads: list[threading.Thread] = []
        self.pending = 0
        self.lock = threading.Lock()

    def submit(self, fn: Any, *args: Any) -> None:
        with self.lock:
            self.pending += 1
            if self.pending > len(self.threads) < self.size:
                worker = threading.Thread(target=self._work, name="nexus-call", daemon=True)
                self.threads.append(worker)
                worker.start()
        self.jobs.put((fn, args))

    def _work(self) -> None:
        while (job := self.jobs.get()) is not None:
            try:
                job[0](*job[1])
            finally:
                with self.lock:
                    self.pending -= 1

    def shutdown(self) -> None:
        for _ in self.threads:
            self.jobs.put(None)
        for worker in self.threads:
            worker.join()


class Server:
    def __init__(self, out: BinaryIO, groups: tuple[str, ...] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.out = out
        self.groups = groups  # None: the default groups
        self.env = dict(os.environ if env is None else env)
        self.write_lock = threading.Lock()
        self.gone = False  # stdout failed: the server stops
        self.initialized = False  # a legacy client opened with `initialize`
        self.inflight: dict[Any, threading.Event] = {}
        self.workers = Workers(CALL_THREADS)
        self._ready = threading.Event()  # the listing is known
        self._loaded = threading.Event()  # ... and the modules every call needs are imported
        self._importing = threading.Lock()  # one feature's first import at a time
        self._tools: dict[str, dict] = {}  # served tool name -> its contract entry
        self._listing: list[dict] = []
        self._ancestors: list = []  # the client that started us is among them
        self._load_error: BaseException | None = None

    # -- output ---------------------------------------------------------------------------------

    def send(self, message: dict, within: float | None = None) -> None:
        """Write one message; OutputGone when it cannot be (the first time, it is logged).
        `within`: seconds the client may take to read it (a consuming answer: a client that stops
        reading must not keep what it consumed from everyone else, so the server gives up, puts
        it back and stops instead)."""
        data = jsonstrict.dumps(message, ensure_ascii=False,
                                separators=(",", ":")).encode() + b"\n"
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

    # -- what the tools need, prepared in the background ----------------------------------------

    def start_preparing(self) -> None:
        """After the first request is answered: the process ancestry (who started us), the
        served tools' entries, and the modules every call needs. A tool's own feature loads
        when a call needs it."""
        if not getattr(self, "_preparer", None):
            self._preparer = threading.Thread(target=self._prepare, daemon=True)
            self._preparer.start()

    def _prepare(self) -> None:
        try:
            from ..core import specs
            from ..core.proctable import table
            from .listing import entry

            self._ancestors = table().ancestors()
            note_client(self._ancestors)
            self._tools = specs.served(self.groups or specs.DEFAULT_GROUPS)
            self._listing = [entry(s) for s in self._tools.values()]
            self._ready.set()  # listing needs no more; calls also need what follows
            from . import tools  # noqa: F401 (the store, the caller rules, the registry)
        except BaseException as exc:  # reported on every request that needs the tools
            self._load_error = exc
        finally:
            self._ready.set()
            self._loaded.set()

    def tools(self) -> dict[str, dict]:
        self.start_preparing()
        self._ready.wait()
        if self._load_error is not None:
            raise RuntimeError(f"tools failed to load: {self._load_error}")
        return self._tools

    def feature(self, name: str, module: str) -> Any:
        """The registry's tool `name`, its feature imported by one thread at a time, after the
        preparation's own imports: Python's per-module import locks, taken in opposite orders by
        two threads, hand one of them a half-initialised module (CPython gh-83065 and its kin), and
        a call must never run on one."""
        self._loaded.wait()
        if self._load_error is not None:
            raise RuntimeError(f"tools failed to load: {self._load_error}")
        from ..catalog import TOOLS, tool

        if name in TOOLS:
            return TOOLS[name]
        with self._importing:
            return tool(name, module)

    # -- dispatch -------------------------------------------------------------------------------

    def handle_line(self, line: bytes) -> None:
        """One line from the client, whatever it holds: the answer JSON-RPC 2.0 gives for it (none
        for a notification), and the server lives on."""
        if not line.strip():
            return
        try:
            try:
                message = jsonstrict.loads(line)
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
            if stateless(method, params):
                self.modern(mid, method, params)
            else:
                self.legacy(mid, method, params)
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

    def legacy(self, mid: Any, method: str, params: dict) -> None:
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in LEGACY else LEGACY[-1]
            self.result(mid, {
                "protocolVersion": version,
                "capabilities": CAPABILITIES,
                "serverInfo": SERVER_INFO,
                "instructions": INSTRUCTIONS,
                "_meta": {"nexus/contract_version": CONTRACT_VERSION},
            })
            self.initialized = True
        elif method == "ping":
            self.result(mid, {})
        elif not self.initialized:
            self.error(mid, INVALID_REQUEST, f"Invalid Request: {method} before initialize (or "
                       f"send the 2026-07-28 fields in _meta: {META_VERSION}, "
                       f"{META_CAPABILITIES})")
        elif method == "tools/list":
            self.tools()
            self.result(mid, {"tools": self._listing})
        elif method == "tools/call":
            self.call(mid, params, lambda result: result)
        else:
            self.error(mid, METHOD_NOT_FOUND, f"Method not found: {method}")

    def modern(self, mid: Any, method: str, params: dict) -> None:
        """A 2026-07-28 request: served from what it carries, whatever came before it."""
        meta = params.get("_meta")
        if not isinstance(meta, dict) or not isinstance(meta.get(META_VERSION), str) or \
                not isinstance(meta.get(META_CAPABILITIES), dict):
            self.error(mid, INVALID_PARAMS, f"Invalid params: _meta must carry {META_VERSION} (a "
                       f"string) and {META_CAPABILITIES} (an object)")
            return
        version = meta[META_VERSION]
        if version not in MODERN:
            how = (f"; {version} is served after `initialize`, without these _meta fields"
                   if version in LEGACY else "")
            self.error(mid, UNSUPPORTED_VERSION, f"Unsupported protocol version{how}",
                       {"supported": list(SUPPORTED), "requested": version})
            return
        if method == "server/discover":
            self.result(mid, complete({
                "supportedVersions": list(SUPPORTED), "capabilities": CAPABILITIES,
                "instructions": INSTRUCTIONS, "ttlMs": LIST_TTL_MS, "cacheScope": "public"}))
        elif method == "tools/list":
            self.tools()
            self.result(mid, complete({"tools": self._listing, "ttlMs": LIST_TTL_MS,
                                       "cacheScope": "public"}))
        elif method == "tools/call":
            self.call(mid, params, complete)
        else:  # initialize, ping, logging/setLevel ... do not exist in this revision
            self.error(mid, METHOD_NOT_FOUND, f"Method not found: {method}")

    def call(self, mid: Any, params: dict, shape: Any) -> None:
        name, args = params.get("name"), params.get("arguments")
        found = self.tools().get(name) if isinstance(name, str) else None
        if found is None:
            self.error(mid, INVALID_PARAMS, f"Unknown tool: {name}",
                       {"code": "unknown_tool", "served": sorted(self._tools)})
            return
        if args is not None and not isinstance(args, dict):
            self.error(mid, INVALID_PARAMS, "Invalid params: arguments must be an object")
            return
        meta = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
        cancelled = threading.Event()
        self.inflight[mid] = cancelled
        self.workers.submit(self._run, mid, found, args or {}, meta, cancelled, shape)

    def _run(self, mid: Any, found: dict, args: dict, meta: dict, cancelled: threading.Event,
             shape: Any) -> None:
        name = found["name"]
        try:
            tool = self.feature(name, found["module"])
            from .tools import run_tool

            result = run_tool(tool, args, meta, self.env, self._ancestors,
                              cancelled, lambda done: self.result(mid, shape(done), ANSWER_WAIT))
        except OutputGone:
            return  # rolled back: what it would have consumed is still there
        except Exception as exc:
            log(f"{name} crashed: {type(exc).__name__}: {exc}")
            result = {"content": [{"type": "text", "text": f"internal_error: {name} ({exc}; "
                                   "please report it)"}], "isError": True}
        finally:
            self.inflight.pop(mid, None)
        if result is not None and not cancelled.is_set():  # a cancelled request gets no response
            try:
                self.result(mid, shape(result))
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
            self.start_preparing()  # once the first answer is out
        # stdin closed: let running calls finish briefly, then end every wait
        deadline = time.monotonic() + 2.0
        while self.inflight and time.monotonic() < deadline:
            time.sleep(0.01)
        for event in list(self.inflight.values()):
            event.set()
        self.workers.shutdown()

def note_client(chain: list) -> None:
    """Note the client process that started this server, so that `peers` shows it before its
    first hook (a Codex TUI's first hook runs at its first prompt): core/unseen.py."""
    try:
        from ..core import unseen
        from ..core.store import paths

        unseen.record(paths.home(), chain, os.getcwd())
    except Exception as exc:  # a note for listings: never in the way of serving
        log(f"could not note the client process: {type(exc).__name__} ({exc})")


def main(argv: list[str]) -> int:
    groups: tuple[str, ...] | None = None
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
    if groups is not None:  # checked before anything is served (the default needs no check)
        from ..core.errors import NexusError
        from ..core.specs import chosen_groups

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
