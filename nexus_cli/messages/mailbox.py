"""Owner of the `messages` table: every message, notice, task and report message is stored,
announced, read, retired and expired through these functions. Stdlib only (the hooks use it)."""

from __future__ import annotations

import os
import sqlite3

from ..core import identity, sessions
from ..core.settings import ANNOUNCE_LISTED
from ..core.store import news
from ..core.store.db import later, present
from . import ANNOUNCEABLE, UNREAD

# a message still waiting in its recipient's inbox


def new_id() -> str:
    return "m-" + os.urandom(6).hex()


def get(conn: sqlite3.Connection, mid: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM messages WHERE id = ?", (mid,)).fetchone()


def known(conn: sqlite3.Connection, mid: str) -> sqlite3.Row:
    """A message written or found in this transaction."""
    return present(get(conn, mid), f"message {mid}")


def state(row: sqlite3.Row) -> str:
    """Where a message stands: stored, delivered (announced), read or expired."""
    return ("read" if row["read_at"] else "expired" if row["expired_at"]
            else "delivered" if row["delivered_at"] else "stored")


def history(conn: sqlite3.Connection, me: str, peer: str | None, sent: bool, received: bool,
            unread: bool, limit: int, offset: int) -> tuple[list[sqlite3.Row], int]:
    """Messages to and from `me`, newest first, and how many match in all."""
    where = ["(" + " OR ".join((["recipient = :me"] if received or not sent else [])
                               + (["sender = :me"] if sent or not received else [])) + ")"]
    if peer:
        where.append("(sender = :peer OR recipient = :peer)")
    if unread:
        where.append(UNREAD)
    sql = " AND ".join(where)
    params = {"me": me, "peer": peer, "limit": limit, "offset": offset}
    total = conn.execute(f"SELECT count(*) FROM messages WHERE {sql}", params).fetchone()[0]
    rows = conn.execute(f"SELECT * FROM messages WHERE {sql} ORDER BY seq DESC"
                        " LIMIT :limit OFFSET :offset", params).fetchall()
    return rows, total


def insert(conn: sqlite3.Connection, *, sender: str, recipient: str, text: str, now: float,
           kind: str = "message", target: str | None = None, reply_to: str | None = None,
           request_id: str | None = None, notify_when_idle: bool | int = False,
           task_id: str | None = None, defer: bool = False,
           known: sqlite3.Row | None = None, wake: bool = True) -> str:
    """A message stored (and its recipient's news marker raised); `known`: the recipient's
    session row when the caller has just read it in this transaction (no look at all).
    `notify_when_idle`: 1, or 2 for a recipient that was offline when it was sent (the notice
    waits for it to come back); `wake`: False when it may not wake its recipient."""
    mid = new_id()
    # one look at the recipient serves routing and the news marker (a round trip on PostgreSQL)
    row = known if known is not None and known["id"] == recipient else \
        sessions.mail_row(conn, recipient)
    if row is not None:
        routed = sessions.route(conn, recipient, row)  # a handed-over conversation's mail follows
        if routed != recipient:
            recipient, row = routed, sessions.mail_row(conn, routed)
    later(
        conn,
        "INSERT INTO messages (id, kind, sender, recipient, target, text, reply_to, request_id,"
        " created_at, notify_when_idle, task_id, defer, wake)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (mid, kind, sender, recipient, target, text, reply_to, request_id, now,
         int(notify_when_idle), task_id, int(defer), int(wake)),
    )
    if not defer and row is not None:  # (no session, no client to tell)
        news.mark(conn, recipient, row)
    return mid


def notice(conn: sqlite3.Connection, recipient: str, text: str, now: float,
           reply_to: str | None = None) -> str:
    """A message from nexus itself (expiry, idle notifications, late replies)."""
    return insert(conn, sender=identity.SYSTEM_ID, recipient=recipient, text=text, now=now,
                  kind="notice", reply_to=reply_to)


def mark_delivered(conn: sqlite3.Connection, ids: list[str], now: float, via: str) -> None:
    conn.executemany(
        "UPDATE messages SET delivered_at = ?, delivered_via = ? WHERE id = ?"
        " AND delivered_at IS NULL",
        [(now, via, mid) for mid in ids],
    )


def mark_read(conn: sqlite3.Connection, ids: list[str], now: float, via: str = "read") -> None:
    mark_delivered(conn, ids, now, via)
    conn.executemany("UPDATE messages SET read_at = ? WHERE id = ?", [(now, mid) for mid in ids])


def by_request(conn: sqlite3.Connection, sender: str, request_id: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM messages WHERE sender = ? AND request_id = ?",
                        (sender, request_id)).fetchone()


def take(conn: sqlite3.Connection, recipient: str, count: int) -> list[sqlite3.Row]:
    """The oldest unread messages of `recipient` (not yet marked)."""
    return conn.execute(f"SELECT * FROM messages WHERE recipient = ? AND {UNREAD}"
                        " ORDER BY seq LIMIT ?", (recipient, count)).fetchall()


def unread_count(conn: sqlite3.Connection, recipient: str) -> int:
    return conn.execute(f"SELECT count(*) FROM messages WHERE recipient = ? AND {UNREAD}",
                        (recipient,)).fetchone()[0]


def depth(conn: sqlite3.Connection, recipient: str) -> tuple[int, int]:
    """(unread, of those not yet announced) for a probe of the recipient."""
    return conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE delivered_at IS NULL) FROM messages"
        f" WHERE recipient = ? AND {UNREAD}", (recipient,)).fetchone()


def unread(conn: sqlite3.Connection, sid: str, only_new: bool) -> tuple[list[sqlite3.Row], int]:
    """Up to ANNOUNCE_LISTED unread messages (only those never announced, with `only_new`), oldest
    first, and how many there are in all."""
    extra = " AND delivered_at IS NULL AND defer = 0" if only_new else ""
    where = f"recipient = ? AND {UNREAD}{extra}"
    rows = conn.execute(f"SELECT * FROM messages WHERE {where} ORDER BY seq LIMIT ?",
                        (sid, ANNOUNCE_LISTED)).fetchall()
    if len(rows) < ANNOUNCE_LISTED:
        return rows, len(rows)
    return rows, conn.execute(f"SELECT count(*) FROM messages WHERE {where}", (sid,)).fetchone()[0]


def announceable(conn: sqlite3.Connection, sid: str) -> bool:
    """Whether a tool call's hook would announce something to `sid` (what its news marker means)."""
    return conn.execute(f"SELECT 1 FROM messages WHERE recipient = ? AND {ANNOUNCEABLE} LIMIT 1",
                        (sid,)).fetchone() is not None


def has_news(conn: sqlite3.Connection, sid: str) -> bool:
    """Whether something unannounced that may wake `sid` waits (what ends an idle or listening
    wait; `send --no-wake` waits for the next prompt)."""
    return conn.execute(f"SELECT 1 FROM messages WHERE recipient = ? AND delivered_at IS NULL"
                        f" AND wake = 1 AND {UNREAD} LIMIT 1", (sid,)).fetchone() is not None


def wakes(conn: sqlite3.Connection, sid: str) -> bool:
    """Whether something unread that may wake `sid` waits (what holds a Stop open)."""
    return conn.execute(f"SELECT 1 FROM messages WHERE recipient = ? AND wake = 1 AND {UNREAD}"
                        " LIMIT 1", (sid,)).fetchone() is not None


def first_reply(conn: sqlite3.Connection, mid: str, recipient: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM messages WHERE reply_to = ? AND recipient = ?"
                        " ORDER BY seq LIMIT 1", (mid, recipient)).fetchone()


def set_ask_state(conn: sqlite3.Connection, mid: str, state: str) -> None:
    conn.execute("UPDATE messages SET ask_state = ? WHERE id = ?", (state, mid))


def move_unread(conn: sqlite3.Connection, old_id: str, new_id: str) -> int:
    """Handoff: the unread mail of a replaced conversation goes to its successor."""
    return conn.execute(f"UPDATE messages SET recipient = ? WHERE recipient = ? AND {UNREAD}",
                        (new_id, old_id)).rowcount


def idle_watchers(conn: sqlite3.Connection, recipient: str,
                  back_since: float | None = None) -> list[sqlite3.Row]:
    """The `--notify-when-idle` messages to `recipient` not yet notified; with `back_since` (it
    went offline without a SessionEnd), not those sent while it was offline (2) unless it was
    active after they were sent (it came back: `back_since` is its last activity)."""
    extra = "" if back_since is None else " AND (notify_when_idle = 1 OR created_at < ?)"
    return conn.execute("SELECT * FROM messages WHERE recipient = ? AND notify_when_idle > 0"
                        f" AND notified_at IS NULL{extra}",
                        (recipient, *(() if back_since is None else (back_since,)))).fetchall()


def mark_notified(conn: sqlite3.Connection, mid: str, now: float) -> None:
    conn.execute("UPDATE messages SET notified_at = ? WHERE id = ?", (now, mid))


def expirable(conn: sqlite3.Connection, before: float, limit: int) -> list[sqlite3.Row]:
    return conn.execute(f"SELECT * FROM messages WHERE {UNREAD} AND created_at < ?"
                        " ORDER BY created_at LIMIT ?", (before, limit)).fetchall()


def expire(conn: sqlite3.Connection, mid: str, now: float, why: str) -> None:
    """Take a message out of its recipient's inbox unread (aged out, or its task closed)."""
    conn.execute("UPDATE messages SET expired_at = ?, expired_why = ? WHERE id = ? AND"
                 f" {UNREAD}", (now, why, mid))


def idle_watched(conn: sqlite3.Connection, since: float = 0.0) -> list[str]:
    """Recipients someone asked to hear about (`--notify-when-idle`) since `since`, not yet
    told."""
    return [r[0] for r in conn.execute("SELECT DISTINCT recipient FROM messages WHERE"
                                       " notify_when_idle > 0 AND notified_at IS NULL"
                                       " AND created_at >= ?", (since,))]
