"""Waiting for news without a daemon: register a wake channel, mark the session listening, then
sleep until poked (or the slow safety poll sees the store change). Stdlib only.

From the poke to the answer the waiter works on the one connection it waited on (its schema
read already): a look at the session, then one write that ends the wait and does what the news
calls for (`then`: the announcement, the turn it counts).  A new connection there would read
the schema again, the better part of a millisecond."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable

from ..core import sessions
from ..core.store.db import Store
from ..messages import mailbox

SAFETY_POLL = 2.0  # seconds between `PRAGMA data_version` looks when no poke arrives


def _state(conn, sid: str, me: int, resumed: bool) -> str | None:
    """'news' when an unannounced message waits, 'activity' when the wait is no longer ours,
    'gone' when the client process has exited. A wait `resumed` after a turn that ended without
    its Stop hook goes by its registration alone (any new event clears it)."""
    row = sessions.get(conn, sid)
    if row is None or row["waiter_pid"] != me or row["status"] == "offline":
        return "activity"
    if row["client_pid"] and not sessions.client_alive(row):
        return "gone"
    if row["last_event"] not in ("Stop", None) and not resumed:
        return "activity"
    return "news" if mailbox.has_news(conn, sid) else None


Then = Callable[[sqlite3.Connection], object]


def wait_for_news(store: Store, sid: str, timeout: float, then: Then | None = None,
                  ready: Then | None = None, resumed: bool = False) -> tuple[str, object]:
    """Block up to `timeout` seconds: ('news', what `then` returned), or ('activity' | 'gone' |
    'timeout', None). `then` runs inside the write that ends the wait, on news only; `ready`
    once before the first sleep, on the same connection: reads that prepare what `then` will
    ask (SQLite keeps a connection's prepared statements). The session shows as `listening`
    meanwhile."""
    me = os.getpid()
    state, done = "timeout", None
    store.keep()  # one connection: the one it waits on is the one its writes use
    with store.channel(sid) as channel:  # before the first look: no poke is missed
        with store.write() as conn:
            sessions.start_waiting(conn, sid, me)
        try:
            deadline = time.monotonic() + timeout
            seen, woken = None, True
            while True:
                version = store.data_version(conn)
                # a change, no change counter (team store), or a safety-poll timeout: look again
                if version != seen or version is None or not woken:
                    seen = version
                    found = _state(conn, sid, me, resumed)
                    if found:
                        state = found
                        break
                    if ready is not None:
                        ready(conn)
                        ready = None
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                woken = channel.wait(min(remaining, SAFETY_POLL))
        finally:
            with store.write() as ended:
                sessions.end_waiting(ended, sid, me)
                if state == "news" and then is not None:
                    done = then(ended)
    return state, done
