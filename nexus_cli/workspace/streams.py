"""Owner of `ws_meetings`, `ws_participants`, `ws_chat` and `ws_cursors`: meetings and the
messages of meetings and of global chat, with a read cursor per reader and stream (a stream is
a meeting id, or '' for global chat). Stdlib only."""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any

from ..core import discovery
from ..core.errors import NexusError
from ..core.store import policy

GLOBAL = ""  # the global chat's stream
REMAINING_CAP = 10_000  # `remaining` is counted up to this many

# team mode (core/store/policy.py): meetings and chat are the team's; one joins and speaks as
# one of one's own sessions; a read cursor is its reader's alone
TEAM_TABLES = {
    "ws_meetings": policy.Table(read=policy.TEAM, insert=policy.own("initiator"),
                                update=policy.own("initiator"), delete=policy.FUNCTIONS),
    "ws_participants": policy.Table(read=policy.TEAM, insert=policy.own("session"),
                                    update=policy.FUNCTIONS, delete=policy.FUNCTIONS),
    "ws_chat": policy.Table(read=policy.TEAM, insert=policy.own("sender"),
                            update=policy.FUNCTIONS, delete=policy.ADMIN),
    "ws_cursors": policy.Table(read=policy.own("reader"), insert=policy.own("reader"),
                               update=policy.own("reader"), delete=policy.own("reader")),
}


def new_id() -> str:
    return "mtg-" + os.urandom(4).hex()


def meeting(conn: sqlite3.Connection, mid: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM ws_meetings WHERE id = ?", (mid,)).fetchone()


def need(conn: sqlite3.Connection, mid: str) -> sqlite3.Row:
    row = meeting(conn, mid)
    if row is None:
        raise NexusError("meeting_not_found", mid, f"Meeting '{mid}' not found",
                         "list meetings with `nexus meeting list` (list_meetings)")
    return row


def active(conn: sqlite3.Connection) -> sqlite3.Row | None:
    """The active meeting: of those active, the one most recently started or reopened."""
    return conn.execute("SELECT * FROM ws_meetings WHERE status = 'active'"
                        " ORDER BY updated_at DESC, seq DESC LIMIT 1").fetchone()


def join(conn: sqlite3.Connection, mid: str, sid: str, now: float) -> None:
    conn.execute(policy.write(
        "INSERT INTO ws_participants (meeting, session, joined_at) VALUES (?, ?, ?)"
        " ON CONFLICT DO NOTHING"), (mid, sid, now))


def participants(conn: sqlite3.Connection, mid: str) -> list[str]:
    return [r[0] for r in conn.execute("SELECT session FROM ws_participants WHERE meeting = ?"
                                       " ORDER BY joined_at, session", (mid,))]


def post(conn: sqlite3.Connection, mid: str | None, sender: str, project: str, category: str,
         text: str, now: float) -> int:
    if mid is not None:
        join(conn, mid, sender, now)
    return conn.execute(policy.write(
        "INSERT INTO ws_chat (meeting, sender, project, category, text,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq"),
                        (mid, sender, project, category, text, now)).fetchone()[0]


def decisions(conn: sqlite3.Connection, mid: str) -> list[dict[str, Any]]:
    return [{"messageId": r[0], "from": r[1], "text": r[2], "timestamp_epoch": r[3]}
            for r in conn.execute("SELECT seq, sender, text, created_at FROM ws_chat WHERE"
                                  " meeting = ? AND category = 'DECISION' ORDER BY seq", (mid,))]


def record(conn: sqlite3.Connection, row: sqlite3.Row) -> dict[str, Any]:
    """A meeting as list_meetings shows it; an ended meeting shows the decisions collected when
    it ended, an active one those made so far."""
    collected = json.loads(row["decisions"]) if row["decisions"] else None
    made = collected if collected is not None else decisions(conn, row["id"])
    count = conn.execute("SELECT count(*) FROM ws_chat WHERE meeting = ?",
                         (row["id"],)).fetchone()[0]
    return {"id": row["id"], "topic": row["topic"], "status": row["status"],
            "initiator": row["initiator"], "startTime_epoch": row["started_at"],
            "endTime_epoch": row["ended_at"], "participants": participants(conn, row["id"]),
            "messageCount": count, "decisionCount": len(made), "summary": row["summary"],
            "decisions": made}


def cursor(conn: sqlite3.Connection, reader: str, stream: str) -> int:
    row = conn.execute("SELECT seq FROM ws_cursors WHERE reader = ? AND stream = ?",
                       (reader, stream)).fetchone()
    return row[0] if row else 0


def advance(conn: sqlite3.Connection, reader: str, stream: str, seq: int) -> None:
    conn.execute(policy.write("INSERT INTO ws_cursors (reader, stream, seq) VALUES (?, ?, ?)"
                 " ON CONFLICT (reader, stream) DO UPDATE SET seq = excluded.seq"),
                 (reader, stream, seq))


def rewind(conn: sqlite3.Connection, reader: str, stream: str, at: int, to: int) -> None:
    """Undo `advance(..., at)` from `to` (its result could not be handed over), unless another
    read of the same reader has moved the cursor since."""
    conn.execute(policy.write(
        "UPDATE ws_cursors SET seq = ? WHERE reader = ? AND stream = ? AND seq = ?"),
                 (to, reader, stream, at))


def unread(conn: sqlite3.Connection, reader: str, mid: str | None,
           count: int) -> tuple[list[sqlite3.Row], int]:
    """The next `count` messages of a stream not yet returned to `reader`, oldest first, and how
    many are left after them (counted up to REMAINING_CAP)."""
    after = cursor(conn, reader, mid or GLOBAL)
    rows = conn.execute("SELECT * FROM ws_chat WHERE meeting IS NOT DISTINCT FROM ? AND seq > ?"
                        " ORDER BY seq LIMIT ?", (mid, after, count)).fetchall()
    last = rows[-1]["seq"] if rows else after
    left = conn.execute("SELECT count(*) FROM (SELECT 1 FROM ws_chat WHERE meeting IS NOT"
                        " DISTINCT FROM ? AND seq > ? ORDER BY seq LIMIT ?) AS later",
                        (mid, last, REMAINING_CAP)).fetchone()[0]
    return rows, left


def names(conn: sqlite3.Connection, ids: set[str]) -> dict[str, str]:
    return {sid: discovery.ref(conn, sid)["name"] for sid in ids}


def prune(conn: sqlite3.Connection, count: int | None) -> tuple[int, int]:
    """Remove the oldest `count` global chat messages (all with None); (removed, remaining)."""
    if count is None:
        removed = conn.execute(policy.write("DELETE FROM ws_chat WHERE meeting IS NULL")).rowcount
    else:
        removed = conn.execute(policy.write(
            "DELETE FROM ws_chat WHERE seq IN (SELECT seq FROM ws_chat WHERE"
            " meeting IS NULL ORDER BY seq LIMIT ?)"), (count,)).rowcount
    remaining = conn.execute("SELECT count(*) FROM ws_chat WHERE meeting IS NULL").fetchone()[0]
    return removed, remaining
