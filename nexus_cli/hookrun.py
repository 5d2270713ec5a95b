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

from . import delivery, identity, mailbox, sessions, waiting
from .errors import NexusError
from .store import wake
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


LISTEN_WAIT = 590.0  # a listening Stop hook waits this long (its timeout is 600 s)
IDLE_WAIT = 3600.0  # the background idle wait


def context(event: str, text: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


Reply = tuple  # (stdout JSON or None, exit code, stderr text or None)
QUIET: Reply = (None, 0, None)


def handle(client: str, data: dict, store: Store, env: dict | os._Environ, now: float,
           wait: bool = False) -> Reply:
    """Apply one event and decide what the client gets back."""
    event = data["hook_event_name"]
    if event not in sessions.EVENT_STATUS:
        return QUIET  # an event nexus does not track: no write at all
    if wait:
        return idle_wait(client, data, store, env) if event == "Stop" else QUIET
    to_wake: list[str] = []
    reply, listen = None, False
    with store.write() as conn:
        sid = sessions.record_event(conn, client, data, now, identity.hook_client_pid(env))
        if sid is None:
            return QUIET
        me = sessions.get(conn, sid)
        if event == "SessionStart":
            to_wake += delivery.maintain(conn, now)
            text = delivery.greeting(conn, me, now)
            rows, total = delivery.unread(conn, sid, only_new=False)
            if total:
                text += "\n" + delivery.announce(conn, me, rows, total, now, "session-start")
            work = delivery.open_work(conn, sid)
            reply = context(event, text + ("\n" + work if work else ""))
        elif event == "UserPromptSubmit":
            delivery.user_prompt(conn, me, now)
            rows, total = delivery.unread(conn, sid, only_new=False)
            parts = [delivery.announce(conn, me, rows, total, now, "prompt")] if rows else []
            work = delivery.open_work(conn, sid)
            if parts or work:
                reply = context(event, "\n".join(parts + ([work] if work else [])))
        elif event == "PostToolUse":
            rows, total = delivery.unread(conn, sid, only_new=True)
            if rows:
                reply = context(event, delivery.announce(conn, me, rows, total, now, "tool"))
        elif event == "Stop":
            to_wake += delivery.notify_idle(conn, sid, now, "ended its turn")
            rows, total = delivery.unread(conn, sid, only_new=False)
            turn = delivery.auto_turn_allowed(me, store.root)
            if total and turn and not data.get("stop_hook_active"):
                delivery.count_auto_turn(conn, sid, now, wake=False)
                reply = {"decision": "block",
                         "reason": delivery.announce(conn, me, rows, total, now, "stop", turn)}
            listen = bool(me["listening"] and turn and not total)
        elif event == "SessionEnd":
            to_wake += delivery.notify_idle(conn, sid, now, "went offline")
    if event != "Stop":
        to_wake.append(sid)  # new activity ends any wait of this session
    wake.poke(store.root, to_wake)
    if listen:
        return listen_wait(store, sid)
    return reply, 0, None


def _wake_text(store: Store, sid: str, via: str | None) -> tuple[str, list[str]] | None:
    """After news arrived: the announcement for one automatic turn, or None at the limit."""
    now = time.time()
    with store.write() as conn:
        me = sessions.get(conn, sid)
        turn = delivery.auto_turn_allowed(me, store.root)
        rows, total = delivery.unread(conn, sid, only_new=False)
        if not turn or not total:
            return None
        text = delivery.announce(conn, me, rows, total, now, via, turn)
        if via:
            delivery.count_auto_turn(conn, sid, now, wake=True)
        return text, [r["id"] for r in rows]


def listen_wait(store: Store, sid: str) -> Reply:
    """Listen mode: hold the Stop open until something arrives, then continue the conversation."""
    if waiting.wait_for_news(store, sid, LISTEN_WAIT) != "news":
        return QUIET
    woke = _wake_text(store, sid, "listen")
    return ({"decision": "block", "reason": woke[0]}, 0, None) if woke else QUIET


def idle_wait(client: str, data: dict, store: Store, env: dict | os._Environ) -> Reply:
    """The background wait after a turn ends: wake the conversation when something arrives."""
    if client == "claude" and env.get("CLAUDE_CODE_SESSION_ATTENDED") == "0":
        return QUIET  # `claude -p` waits for async hooks before exiting: never hold it
    with store.write() as conn:  # the synchronous Stop hook may not have run yet: record it too
        sid = sessions.record_event(conn, client, data, time.time(), identity.hook_client_pid(env))
        row = sessions.get(conn, sid)
    if row["listening"]:
        return QUIET  # listen mode: the synchronous Stop hook does the waiting
    if waiting.wait_for_news(store, sid, IDLE_WAIT) != "news":
        return QUIET
    if client == "claude":  # asyncRewake: exit 2 injects stderr and starts a turn
        woke = _wake_text(store, sid, "wake")
        return (None, 2, woke[0]) if woke else QUIET
    woke = _wake_text(store, sid, None)
    if not woke:
        return QUIET
    error = codex_queue(row, data["session_id"], woke[0], env)
    now = time.time()
    with store.write() as conn:
        if error:
            conn.execute("UPDATE sessions SET last_wake_error = ? WHERE id = ?", (error, sid))
            marks = ",".join("?" * len(woke[1]))
            conn.execute(f"UPDATE tasks SET status = CASE status WHEN 'dispatched' THEN"
                         f" 'delivery_uncertain' ELSE status END, error = ? WHERE message_id IN"
                         f" ({marks})", (f"wake failed: {error}; the task is stored in its inbox"
                                         " and announced at its next prompt: check the target"
                                         " (`nexus status`) before re-dispatching", *woke[1]))
        else:
            mailbox.mark_delivered(conn, woke[1], now, "wake")
            delivery.count_auto_turn(conn, sid, now, wake=True)
    return (None, 1, f"nexus hook: wake failed: {error}") if error else QUIET


def codex_binary(row) -> str:
    """`codex` from PATH, else the very binary of the running client (hooks may not see PATH)."""
    import shutil

    found = shutil.which("codex")
    if found:
        return found
    try:
        return os.readlink(f"/proc/{row['client_pid']}/exe")
    except (OSError, TypeError):
        return "codex"


def codex_queue(row, thread: str, text: str, env: dict | os._Environ) -> str | None:
    """Queue the announcement as the thread's next turn; the reason when that cannot be done."""
    if row["client_pid"] and not identity.pid_alive(row["client_pid"]):
        return "no running Codex client for this thread (its process has exited)"
    import shlex
    import subprocess

    command = shlex.split(env.get("NEXUS_CODEX_COMMAND") or "") or [codex_binary(row)]
    try:
        done = subprocess.run([*command, "queue", "--thread", thread, "--message", text],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`{command[0]} queue` could not run: {exc}"
    if done.returncode:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return f"`{command[0]} queue` refused (exit {done.returncode}): {tail[0]}"
    return None


def main(argv: list[str], linger: bool = False) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        from .cli import main as cli_main

        return cli_main(["hook", "--help"])
    if not argv or argv[0] not in identity.CLIENTS or any(a not in ("--wait",) for a in argv[1:]):
        print(f"nexus hook: {USAGE}", file=sys.stderr)
        return 1
    client = argv[0]
    try:
        data = parse(sys.stdin.read())
        reply, code, err = handle(client, data, Store(linger=linger), os.environ, time.time(),
                                  wait="--wait" in argv)
    except NexusError as exc:
        print(f"nexus hook: {exc.message}", file=sys.stderr)
        return 1
    except Exception as exc:  # never a traceback on the client's screen
        print(f"nexus hook: internal_error: {type(exc).__name__} ({exc}; please report it)",
              file=sys.stderr)
        return 1
    if reply is not None:
        sys.stdout.write(json.dumps(reply))
    if err:
        sys.stderr.write(err + "\n")
    return code
