"""Waiting for news without a daemon: register a wake channel, mark the session listening, then
sleep until poked (or the slow safety poll sees the store change). Stdlib only."""

from __future__ import annotations

import os
import time

from . import identity
from .store import wake
from .store.db import Store

SAFETY_POLL = 2.0  # seconds between `PRAGMA data_version` looks when no poke arrives


def _state(conn, sid: str, me: int) -> str | None:
    """'news' when an unannounced message waits, 'activity' when the wait is no longer ours,
    'gone' when the client process has exited."""
    row = conn.execute("SELECT status, waiter_pid, last_event, client_pid FROM sessions"
                       " WHERE id = ?", (sid,)).fetchone()
    if row is None or row["waiter_pid"] != me or row["status"] == "offline":
        return "activity"
    if row["client_pid"] and not identity.pid_alive(row["client_pid"]):
        return "gone"
    if row["last_event"] not in ("Stop", None):
        return "activity"
    news = conn.execute(
        "SELECT 1 FROM messages WHERE recipient = ? AND delivered_at IS NULL AND read_at IS NULL"
        " AND expired_at IS NULL LIMIT 1", (sid,)).fetchone()
    return "news" if news else None


def wait_for_news(store: Store, sid: str, timeout: float) -> str:
    """Block up to `timeout` seconds. Returns 'news', 'activity' or 'timeout'. The session shows
    as `listening` meanwhile."""
    me = os.getpid()
    with wake.Channel(store.root, sid) as channel:  # before the first look: no poke is missed
        with store.write() as conn:
            conn.execute("UPDATE sessions SET status = 'listening', waiter_pid = ? WHERE id = ?",
                         (me, sid))
        conn = store.open_read()
        try:
            deadline = time.monotonic() + timeout
            seen, woken = None, True
            while True:
                version = conn.execute("PRAGMA data_version").fetchone()[0]
                if version != seen or not woken:  # a safety-poll timeout: look again anyway
                    seen = version
                    state = _state(conn, sid, me)
                    if state:
                        return state
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return "timeout"
                woken = channel.wait(min(remaining, SAFETY_POLL))
        finally:
            conn.close()
            with store.write() as w:
                w.execute("UPDATE sessions SET status = CASE WHEN status = 'listening' THEN 'idle'"
                          " ELSE status END, waiter_pid = NULL WHERE id = ? AND waiter_pid = ?",
                          (sid, me))



