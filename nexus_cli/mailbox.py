"""The message table's primitives, shared by the tools and the hooks. Stdlib only (hot path)."""

from __future__ import annotations

import os
import sqlite3

from . import identity, sessions


def new_id() -> str:
    return "m-" + os.urandom(6).hex()


def peer_ref(row: sqlite3.Row | None, sid: str) -> dict:
    if row is None:
        return {"id": sid, "handle": identity.handle_for(sid), "name": sid}
    return {"id": row["id"], "handle": row["handle"], "name": row["name"]}


def insert(conn: sqlite3.Connection, *, sender: str, recipient: str, text: str, now: float,
           kind: str = "message", target: str | None = None, reply_to: str | None = None,
           request_id: str | None = None, notify_when_idle: bool = False) -> str:
    mid = new_id()
    recipient = sessions.route(conn, recipient)  # a handed-over conversation's mail follows it
    conn.execute(
        "INSERT INTO messages (id, kind, sender, recipient, target, text, reply_to, request_id,"
        " created_at, notify_when_idle) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (mid, kind, sender, recipient, target, text, reply_to, request_id, now,
         int(notify_when_idle)),
    )
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
