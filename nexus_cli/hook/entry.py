"""`nexus hook claude|codex [--wait]`: the entry point the clients call on every event.

Stdlib only (json, sqlite3, os): this runs on the agent's critical path. It reads one JSON object
from stdin, keeps the session current in the store, and prints nothing but the client's JSON on
stdout. Every failure is non-blocking for the client: one line on stderr and exit 1, never a
traceback, never a partial write."""

from __future__ import annotations

import gc
import json
import os
import sys
import time

from .. import clients
from ..core import identity, jsonstrict, sessions
from ..core.errors import NexusError
from ..core.proctable import table
from ..core.store import news
from ..core.store.db import Store
from ..messages import announceable

Reply = tuple  # (stdout JSON or None, exit code, stderr text or None), as in waits
QUIET: Reply = (None, 0, None)

USAGE = "usage: nexus hook claude|codex [--wait]"


def bad(key: str, reason: str) -> NexusError:
    return NexusError("invalid_input", key, reason, "hooks expect the client's JSON event object")


def parse(raw: bytes) -> dict:
    """The hook's stdin, checked for the fields every event carries."""
    try:
        data = jsonstrict.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise bad("stdin", f"not UTF-8 (byte {exc.start})") from None
    except RecursionError:
        raise bad("stdin", "nested too deeply") from None
    except ValueError as exc:
        raise bad("stdin", f"not JSON ({getattr(exc, 'msg', exc)})") from None
    if not isinstance(data, dict):
        raise bad("stdin", "not a JSON object")
    event = data.get("hook_event_name")
    if not isinstance(event, str) or not event:
        raise bad("hook_event_name", "missing or not a string")
    for key in ("session_id", "cwd", "transcript_path", "prompt", "last_assistant_message",
                "tool_name", "tool_use_id", "source", "reason"):
        value = data.get(key)
        if value is not None and not isinstance(value, str | bool):
            raise bad(key, "not a string")
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise bad(key, "holds an unpaired surrogate (not valid Unicode)") from None
    cwd = data.get("cwd")
    if cwd is not None and not os.path.isabs(cwd):
        raise bad("cwd", "not an absolute path")
    return data


def checked_id(client: str, data: dict) -> str:
    raw = data.get("session_id")
    try:
        return identity.session_id(client, raw if isinstance(raw, str) else "")
    except NexusError as exc:
        raise bad("session_id", exc.reason) from None


def waiting() -> None:
    """The hook waits from here (listen mode, an approval, Codex's idle wait), for up to an hour:
    the cyclic garbage collector its start went without (`__main__`) is back on."""
    gc.enable()


def handle(client: str, data: dict, store: Store, env: dict | os._Environ, now: float,
           wait: bool = False) -> Reply:
    """Apply one event and decide what the client gets back."""
    event = data["hook_event_name"]
    edit = event == "PreToolUse" and not str(data.get("tool_name")).startswith("mcp__")
    if edit and not wait:  # a file edit: the reservation check alone, before the event table
        from ..reservations import edits

        if data.get("tool_name") in edits.TOOLS:
            return edits.pre_edit(client, checked_id(client, data), data, store, env, now)
    from . import handlers  # waits: only a waiting hook imports it

    run = handlers.handler(event, client)
    if run is None:
        return QUIET  # an event nexus does not track: no write at all
    sid = checked_id(client, data)
    if wait and event != "Stop":
        return QUIET
    proc = clients.ADAPTERS[client].hook_client(table().climb(), env)
    with store.write() as conn:
        known = sessions.get(conn, sid)
        if event == "SessionEnd" and known is None:
            return QUIET  # the end of a conversation nexus never saw (`claude mcp list` sends one)
        parent = sessions.admit_hook(conn, sid, event, client, proc, now, known)
        assert proc is not None
        if event == "SessionStart" and known is None:  # a new conversation in this process:
            from ..core.availability import not_mid_turn  # only between its turns

            not_mid_turn(conn, sid, client, proc, now)
        attended = event != "PermissionRequest" or not clients.ADAPTERS[client].unattended(env)
        row = sessions.record_event(conn, sid, data, now, proc, parent, known, attended)
        if row is None:
            return QUIET
        if wait:  # the idle wait records the Stop too (the synchronous one may not have run yet)
            outcome = handlers.Outcome()
        else:
            to_wake = handlers.maintain(conn, event, now)
            outcome = run(conn, handlers.Event(client, sid, data, row, now, store.root, proc,
                                                  env))
            to_wake += outcome.wake
            if outcome.told or not announceable(conn, sid):
                news.clear(conn, proc.pid)  # nothing left to announce: tool calls skip Python
    if wait:
        from . import waits

        waiting()
        return waits.idle(client, sid, row, store, env, data)
    if event != "Stop" and sessions.subagent(data) is None:
        to_wake.append(sid)  # new activity ends any wait of this session (a subagent's: none)
    store.poke(to_wake)
    if outcome.listen:
        from . import waits

        waiting()
        return waits.listen(client, store, sid)
    if outcome.then is not None:
        waiting()
        return outcome.then(store), 0, None
    return outcome.reply, 0, None


OFFLINE_LOG = "team-offline.log"
TEAM_DOWN = ("team_unreachable", "team_auth_failed", "team_server_invalid")


def offline(root: str, client: str, exc: NexusError) -> None:
    """The team database could not be reached: the hook lets its client go on and writes one
    line to the local log (`nexus team status` and doctor show it)."""
    try:
        os.makedirs(root, 0o700, exist_ok=True)
        fd = os.open(os.path.join(root, OFFLINE_LOG),
                     os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, (f"{time.time():.3f} {client} hook: {exc.message}\n").encode())
        finally:
            os.close(fd)
    except OSError:
        pass


def main(argv: list[str], linger: bool = False, raw: bytes | None = None) -> int:
    if "-h" in argv or "--help" in argv:  # `nexus hook --help`, `nexus hook claude --help`
        from ..cli import main as cli_main

        return cli_main(["hook", "--help"])
    if not argv or argv[0] not in identity.CLIENTS or any(a not in ("--wait",) for a in argv[1:]):
        print(f"nexus hook: {USAGE}", file=sys.stderr)
        return 1
    client = argv[0]
    store = Store(linger=linger)
    try:
        data = parse(sys.stdin.buffer.read() if raw is None else raw)
        reply, code, err = handle(client, data, store, os.environ, time.time(),
                                  wait="--wait" in argv)
    except NexusError as exc:
        if exc.code in TEAM_DOWN or (exc.code == "store_busy" and store.backend != "sqlite"):
            offline(store.root, client, exc)  # never hold a client up for a server that is
            return 0  # down, refuses the login, breaks the protocol or does not answer in time
        from ..core import events  # an error path: the activity log loads only here

        events.refused(store, exc, f"{client} hook", pid=os.getpid())
        print(f"nexus hook: {exc.shown}", file=sys.stderr)
        return 1
    except Exception as exc:  # never a traceback on the client's screen (unless asked for)
        if os.environ.get("NEXUS_DEBUG"):
            import traceback

            traceback.print_exc()
        print(f"nexus hook: internal_error: {type(exc).__name__} ({exc}; please report it)",
              file=sys.stderr)
        return 1
    if reply is not None:
        sys.stdout.write(json.dumps(reply))
    if err:
        sys.stderr.write(err + "\n")
    return code
