"""Waiting for news without a daemon: register a wake channel, mark the session listening, then
sleep until poked (or the slow safety poll sees the store change). Stdlib only."""

from __future__ import annotations

import os
import time

from ..core import sessions
from ..core.store.db import Store
from ..messages import mailbox

SAFETY_POLL = 2.0  # seconds between `PRAGMA data_version` looks when no poke arrives


def _state(conn, sid: str, me: int) -> str | None:
    """'news' when an unannounced message waits, 'activity' when the wait is no longer ours,
    'gone' when the client process has exited."""
    row = sessions.get(conn, sid)
    if row is None or row["waiter_pid"] != me or row["status"] == "offline":
        return "activity"
    if row["client_pid"] and not sessions.client_alive(row):
        return "gone"
    if row["last_event"] not in ("Stop", None):
        return "activity"
    return "news" if mailbox.has_news(conn, sid) else None


def wait_for_news(store: Store, sid: str, timeout: float) -> str:
    """Block up to `timeout` seconds. Returns 'news', 'activity' or 'timeout'. The session shows
    as `listening` meanwhile."""
    me = os.getpid()
    with store.channel(sid) as channel:  # before the first look: no poke is missed
        with store.write() as conn:
            sessions.start_waiting(conn, sid, me)
        conn = store.open_read()
        try:
            deadline = time.monotonic() + timeout
            seen, woken = None, True
            while True:
                version = store.data_version(conn)
                # a change, no change counter (team store), or a safety-poll timeout: look again
                if version != seen or version is None or not woken:
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
                sessions.end_waiting(w, sid, me)
