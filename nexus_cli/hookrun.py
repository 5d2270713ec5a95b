"""`nexus hook claude|codex [--wait]`: the entry point the clients call on every event.

Stdlib only (json, sqlite3, os): this runs on the agent's critical path. It reads one JSON object
from stdin, keeps the session current in the store, and prints nothing but the client's JSON on
stdout. Every failure is non-blocking for the client: one line on stderr and exit 1, never a
traceback, never a partial write."""

from __future__ import annotations

import json
import os
import re
import sys
import time

from . import identity, sessions
from .errors import NexusError
from .store.db import Store

USAGE = "usage: nexus hook claude|codex [--wait]"
_SESSION_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def parse(raw: str) -> dict:
    """The hook's stdin, checked for the fields every event carries."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise NexusError("invalid_input", "stdin", f"not JSON ({exc.msg} at char {exc.pos})",
                         "hooks expect the client's JSON event object") from None
    if not isinstance(data, dict):
        raise NexusError("invalid_input", "stdin", "not a JSON object",
                         "hooks expect the client's JSON event object")
    event, sid = data.get("hook_event_name"), data.get("session_id")
    if not isinstance(event, str) or not event:
        raise NexusError("invalid_input", "hook_event_name", "missing or not a string",
                         "hooks expect the client's JSON event object")
    if not isinstance(sid, str) or not _SESSION_ID.match(sid):
        raise NexusError("invalid_input", "session_id", "missing, or not 1-128 of A-Z a-z 0-9 . _ -",
                         "hooks expect the client's JSON event object")
    cwd = data.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not os.path.isabs(cwd)):
        raise NexusError("invalid_input", "cwd", "not an absolute path",
                         "hooks expect the client's JSON event object")
    return data


def handle(client: str, data: dict, store: Store, env: dict | os._Environ, now: float) -> dict | None:
    """Apply one event; returns the JSON reply for the client, or None for no output."""
    if data["hook_event_name"] not in sessions.EVENT_STATUS:
        return None  # an event nexus does not track: no write at all
    client_pid = identity.hook_client_pid(env)
    with store.write() as conn:
        sessions.record_event(conn, client, data, now, client_pid)
    return None


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in identity.CLIENTS or any(a not in ("--wait",) for a in argv[1:]):
        print(f"nexus hook: {USAGE}", file=sys.stderr)
        return 1
    client = argv[0]
    try:
        data = parse(sys.stdin.read())
        reply = handle(client, data, Store(), os.environ, time.time())
    except NexusError as exc:
        print(f"nexus hook: {exc.message}", file=sys.stderr)
        return 1
    except Exception as exc:  # never a traceback on the client's screen
        print(f"nexus hook: internal_error: {type(exc).__name__} ({exc}; please report it)",
              file=sys.stderr)
        return 1
    if reply is not None:
        sys.stdout.write(json.dumps(reply))
    return 0
