"""The board's web server: the standard library's ThreadingHTTPServer on a thread (one person,
a handful of requests; no framework earns its weight here), on loopback only, for as long as
`nexus board --web` runs.

Every request must carry the secret token of this run (`?token=` in the address, which the page
repeats in every address it asks for; compared in constant time) and a Host header naming this
very server (`127.0.0.1:PORT` or `localhost:PORT`): a page elsewhere that rebinds its own name to
127.0.0.1 is refused. Every POST also carries the nonce of the page that sends it (a new one at
each load of the page) and, when the browser says where it comes from, this server's own
origin. Every response forbids other origins (CSP), framing, caching, sniffing and referrers.
The page, its script and its style ship in the package (`page/`); nothing is fetched from
anywhere else."""

from __future__ import annotations

import errno
import hmac
import json
import os
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..core import caller
from ..core.context import Ctx, Resolver, cli_resolver
from ..core.errors import Exit, NexusError
from ..core.sessions import Caller
from ..core.store.db import Store
from . import actions, feed, state

HOST = "127.0.0.1"
PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "page")
FILES = {"/board.js": ("board.js", "text/javascript; charset=utf-8"),
         "/board.css": ("board.css", "text/css; charset=utf-8"),
         "/icon.svg": ("icon.svg", "image/svg+xml")}
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "img-src 'self'; connect-src 'self'; base-uri 'none'; "
                               "form-action 'none'; frame-ancestors 'none'",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
PAGES_KEPT = 32  # the nonces of the newest page loads; an older tab is told to reload
BODY_MAX = 256 * 1024  # bytes of a POST (a message's text is capped well below)
KEEPALIVE = 15.0  # seconds between comments on an idle event stream
AGENT = "the web board holds the person's powers (answering permission requests); an agent " \
    "may not serve it"
STATUS = {Exit.USAGE: 400, Exit.NOT_FOUND: 404, Exit.CONFLICT: 409, Exit.FORBIDDEN: 403,
          Exit.TIMEOUT: 504, Exit.STORE: 503}


def person(store: Store, resolver: Resolver) -> Caller:
    """The caller, who must be the person at an interactive terminal: the page holds the
    person's powers (answering permission requests), which no agent may hand itself."""
    ctx = Ctx(store, resolver)
    with ctx.read() as conn:
        me = ctx.me(conn)
    if me.is_agent:
        raise NexusError("people_only", "board --web", AGENT, "ask the person to run "
                         "`nexus board --web` in their terminal")
    caller.person_here("board --web", "serving the web board", AGENT,
                       "ask the person to run `nexus board --web` in their terminal",
                       "run it yourself at a terminal")
    return me


class Board:
    """One run of the web board: its server, its secret, its page nonces, its feed."""

    def __init__(self, port: int = 0, all_workspaces: bool = False,
                 include_offline: bool = False,
                 resolver: Callable[[str | None], Resolver] = cli_resolver) -> None:
        from ..insight import board as data

        self.resolver = resolver
        self.all_workspaces = all_workspaces
        self.token = secrets.token_urlsafe(32)
        self.handed = ""  # the file `browse` handed the browser
        self.nonces: OrderedDict[str, None] = OrderedDict()
        self.lock = threading.Lock()
        store = Store()
        me = person(store, resolver(None))
        cache = data.Transcripts()

        def fetch() -> dict:
            ctx = Ctx(store, lambda conn, now: me, face="web")
            return state.state(ctx, all_workspaces, include_offline, cache)

        try:
            self.httpd = ThreadingHTTPServer((HOST, port), Handler)
        except OSError as exc:
            why = "is in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
            raise NexusError("invalid_argument", "--port", f"port {port} {why}",
                             "choose another port, or --port 0 for a free one") from None
        self.httpd.daemon_threads = True
        self.httpd.board = self  # type: ignore[attr-defined]
        self.port = self.httpd.server_address[1]
        self.hosts = {f"{HOST}:{self.port}", f"localhost:{self.port}"}
        self.origins = {f"http://{h}" for h in self.hosts}
        self.feed = feed.Feed(store, fetch)
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="nexus-board-web",
                                       daemon=True)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def start(self) -> Board:
        self.feed.start()
        self.thread.start()
        return self

    def browse(self) -> str:
        """Open the page in the person's browser without putting its secret on a command line,
        which `ps` shows every user of the machine: the browser is handed a file only the person
        can read (0600, a new name), which sends it on to the address. Returns that file
        (removed when the board stops)."""
        import tempfile
        import webbrowser
        from html import escape
        from urllib.parse import quote

        fd, path = tempfile.mkstemp(prefix="nexus-board-", suffix=".html")  # 0600, O_EXCL
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;'
                     f' url={escape(self.url)}"><title>nexus board</title>\n')
        self.handed = path
        webbrowser.open("file://" + quote(path))
        return path

    def stop(self) -> None:
        self.httpd.shutdown()
        self.feed.stop()
        self.httpd.server_close()
        self.thread.join(10)
        if self.handed:
            try:
                os.unlink(self.handed)
            except OSError:
                pass

    def __enter__(self) -> Board:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the secrets ----------------------------------------------------------------------------

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def new_nonce(self) -> str:
        nonce = secrets.token_urlsafe(24)
        with self.lock:
            self.nonces[nonce] = None
            while len(self.nonces) > PAGES_KEPT:
                self.nonces.popitem(last=False)
        return nonce

    def nonce_ok(self, given: str | None) -> bool:
        if not given:
            return False
        with self.lock:
            kept = list(self.nonces)
        found = False
        for nonce in kept:  # every one compared, in constant time
            found |= hmac.compare_digest(given.encode(), nonce.encode())
        return found


class Handler(BaseHTTPRequestHandler):
    server_version = "nexus-board"
    sys_version = ""

    @property
    def board(self) -> Board:
        return self.server.board  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the terminal shows the address and nothing else

    # -- answers --------------------------------------------------------------------------------

    def send(self, status: int, body: bytes, kind: str, extra: dict | None = None) -> None:
        self.send_response(status)
        for key, value in {**HEADERS, "Content-Type": kind, "Content-Length": str(len(body)),
                           **(extra or {})}.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def text(self, status: int, message: str) -> None:
        self.send(status, (message + "\n").encode(), "text/plain; charset=utf-8")

    def json(self, status: int, value: dict) -> None:
        self.send(status, json.dumps(value, ensure_ascii=False, default=str).encode(),
                  "application/json; charset=utf-8")

    # -- the checks -----------------------------------------------------------------------------

    def admitted(self) -> str | None:
        """The path of a request from this server's own page, or None once refused."""
        if self.headers.get("Host", "") not in self.board.hosts:
            self.text(403, "refused: this board answers only at the address it printed "
                      f"(Host {HOST}:{self.board.port})")
            return None
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        given = self.headers.get("X-Nexus-Token") or next(iter(query.get("token", [])), None)
        if not self.board.token_ok(given):
            self.text(403, "refused: open the address `nexus board --web` printed, with its "
                      "token")
            return None
        return parts.path

    # -- the routes -----------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.admitted()
        if path is None:
            return
        if path == "/":
            with open(os.path.join(PAGE, "board.html"), encoding="utf-8") as fh:
                page = fh.read()
            page = page.replace("{{token}}", self.board.token).replace(
                "{{nonce}}", self.board.new_nonce())
            self.send(200, page.encode(), "text/html; charset=utf-8")
        elif path in FILES:
            name, kind = FILES[path]
            with open(os.path.join(PAGE, name), "rb") as fh:
                self.send(200, fh.read(), kind)
        elif path == "/state":
            self.send(200, self.board.feed.latest()[1], "application/json; charset=utf-8")
        elif path == "/events":
            self.events(self.headers.get("Last-Event-ID", ""))
        else:
            self.text(404, "not found")

    def do_POST(self) -> None:
        path = self.admitted()
        if path is None:
            return
        origin = self.headers.get("Origin")
        if origin is not None and origin not in self.board.origins:
            self.json(403, {"ok": False, "error": {"shown": "refused: another origin"}})
            return
        if not self.board.nonce_ok(self.headers.get("X-Nexus-Nonce")):
            self.json(403, {"ok": False, "error": {
                "shown": "refused: this page is too old or the request did not come from it; "
                         "reload the page"}})
            return
        if not path.startswith("/action/"):
            self.json(404, {"ok": False, "error": {"shown": "not found"}})
            return
        if self.headers.get_content_type() != "application/json":
            self.json(415, {"ok": False, "error": {"shown": "send JSON"}})
            return
        try:
            size = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            size = -1
        if not 0 < size <= BODY_MAX:
            self.json(413 if size > BODY_MAX else 400,
                      {"ok": False, "error": {"shown": "a request body of JSON is needed"}})
            return
        try:
            body = json.loads(self.rfile.read(size))
        except (ValueError, UnicodeDecodeError):
            self.json(400, {"ok": False, "error": {"shown": "the body is not JSON"}})
            return
        try:
            result = actions.run(path.removeprefix("/action/"), body, self.board.resolver,
                                 self.board.all_workspaces)
        except NexusError as exc:
            self.json(STATUS.get(exc.exit_code, 500),
                      {"ok": False, "error": state.inert({**exc.to_dict(), "shown": exc.shown})})
            return
        except Exception as exc:  # a bug: the page says so, the connection is not just dropped
            bug = NexusError("internal_error", path, f"{type(exc).__name__}: {exc}",
                             "please report it")
            self.json(500, {"ok": False, "error": state.inert({**bug.to_dict(),
                                                                "shown": bug.shown})})
            return
        finally:
            self.board.feed.poke()
        self.json(200, {"ok": True, "result": state.inert(result)})

    def events(self, last: str) -> None:
        """Server-sent events: the state now, then each new one as the feed publishes it."""
        self.send_response(200)
        for key, value in {**HEADERS, "Content-Type": "text/event-stream; charset=utf-8",
                           "Connection": "close"}.items():
            self.send_header(key, value)
        self.end_headers()
        after = int(last) if last.isdigit() else 0
        try:
            self.wfile.write(b"retry: 1000\n\n")
            self.wfile.flush()
            while not self.board.feed.stopped:
                got = self.board.feed.next(after, KEEPALIVE)
                if got is None:
                    self.wfile.write(b": still here\n\n")
                else:
                    after, body = got
                    self.wfile.write(b"id: %d\ndata: %s\n\n" % (after, body))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the page went away
