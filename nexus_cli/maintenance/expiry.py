"""Time-driven upkeep: unread messages expire after 24 h (their senders are told), open tasks
past their TTL fail, old tool-use bindings go. No daemon runs it: `due` work is done lazily
inside normal commands and hooks, at most once a minute, and all of it by `nexus maintenance`.
Stdlib only (the hooks run it)."""

from __future__ import annotations

import sqlite3

from ..core import identity, sessions
from ..core.settings import EXPIRE_AFTER, MAINTAIN_EVERY
from ..core.text import one_line
from ..messages import mailbox
from ..tasks import ledger


def expire_messages(conn: sqlite3.Connection, now: float, limit: int = 500) -> list[str]:
    """Unread messages older than 24 h expire; each sender gets a notice. Returns whom to wake."""
    woken = []
    for r in mailbox.expirable(conn, now - EXPIRE_AFTER, limit):
        mailbox.expire(conn, r["id"], now)
        if r["kind"] == "message" and r["sender"] != identity.SYSTEM_ID:
            to = sessions.get(conn, r["recipient"])
            mailbox.notice(conn, r["sender"],
                           f"your message {r['id']} to {one_line(to['name']) if to else r['recipient']}"
                           " expired unread after 24 h", now, reply_to=r["id"])
            woken.append(r["sender"])
    return woken


def expire_tasks(conn: sqlite3.Connection, now: float) -> list[str]:
    return [r["sender"] for r in ledger.expire_ttl(conn, now)]


def due(conn: sqlite3.Connection, now: float) -> bool:
    row = conn.execute("SELECT value FROM meta WHERE key = 'maintained_at'").fetchone()
    return row is None or now - float(row[0]) >= MAINTAIN_EVERY


def maintain(conn: sqlite3.Connection, now: float, limit: int = 500) -> dict:
    """One round of upkeep inside the caller's write transaction: what it did (counts), and
    `wake`, the sessions whose waiters should look again."""
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('maintained_at', ?)", (repr(now),))
    expired, failed = expire_messages(conn, now, limit), expire_tasks(conn, now)
    return {"expired": len(expired), "tasks_expired": len(failed),
            "bindings_purged": sessions.purge_bindings(conn, now), "wake": expired + failed}


def lazily(conn: sqlite3.Connection, now: float) -> list[str]:
    """Lazy maintenance: at most once per MAINTAIN_EVERY seconds. Returns whom to wake."""
    return maintain(conn, now)["wake"] if due(conn, now) else []
