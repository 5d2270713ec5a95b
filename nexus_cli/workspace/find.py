"""`nexus find`: one full-text index (SQLite FTS5, `ws_fts`) over project docs, the strategy,
global docs, meeting and global chat (kept current by triggers), and the direct messages the
caller sent or received (brought current by `find` itself: indexing every message as it is sent
cost the send path a third of its time); ranked by BM25, with snippets. Stdlib only."""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING, Any

from ..core.context import Ctx
from ..core.errors import invalid
from ..core.listing import envelope
from . import projects
from .base import reading

if TYPE_CHECKING:
    from .models import FindArgs

TOTAL_CAP = 1000  # matches counted for `total`, at most
WORD = re.compile(r"\w+", re.UNICODE)


def _how(kind: str, ref: str, title: str) -> str:
    return {
        "project": f'get_project(projectId="{ref}") / nexus project get {ref}',
        "doc": f'get_global_doc(docId="{ref}") / nexus doc get {ref}',
        "strategy": "get_global_strategy / nexus doc strategy",
        "chat": "read_messages / nexus chat read",
        "meeting": f'read_messages(meetingId="{title}") / nexus chat read --meeting-id {title}',
        "message": f"nexus message show {ref}",
    }[kind]


def _query(conn: sqlite3.Connection, match: str, a: FindArgs, me: str,
           places: tuple[str, ...]) -> tuple[list[sqlite3.Row], int]:
    where = ["ws_fts MATCH :match",
             "(kind != 'message' OR EXISTS (SELECT 1 FROM messages m WHERE m.seq = ws_fts.rowid"
             " / 8 AND (m.sender = :me OR m.recipient = :me)))"]
    params: dict[str, Any] = {"match": match, "me": me, "limit": a.limit, "offset": a.offset,
                              "cap": TOTAL_CAP}
    if a.kind:
        where.append("kind = :kind")
        params["kind"] = a.kind
    if places:
        where.append(f"project IN ({', '.join(f':p{i}' for i in range(len(places)))})")
        params.update({f"p{i}": p for i, p in enumerate(places)})
    sql = " AND ".join(where)
    rows = conn.execute(f"SELECT kind, ref, title, rank, snippet(ws_fts, 1, '[', ']', '…', 16)"
                        f" AS snip FROM ws_fts WHERE {sql} ORDER BY rank LIMIT :limit"
                        " OFFSET :offset", params).fetchall()
    total = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM ws_fts WHERE {sql} LIMIT :cap)",
                         params).fetchone()[0]
    return rows, total


def catch_up(conn: sqlite3.Connection) -> int:
    """Index the direct messages, tasks and reports sent since the last `find` (inside its short
    write); returns how many. A store that cannot be written is searched as it was indexed."""
    done = conn.execute("SELECT seq FROM ws_indexed WHERE source = 'messages'").fetchone()[0]
    last = conn.execute("SELECT coalesce(max(seq), 0) FROM messages").fetchone()[0]
    if last <= done:
        return 0
    added = conn.execute(
        "INSERT INTO ws_fts (rowid, title, body, kind, ref, project)"
        " SELECT m.seq * 8 + 5, m.id, m.text, 'message', m.id, s.project"
        " FROM messages m LEFT JOIN sessions s ON s.id = m.sender"
        " WHERE m.seq > ? AND m.seq <= ? AND m.kind IN ('message', 'task', 'report')",
        (done, last)).rowcount
    conn.execute("UPDATE ws_indexed SET seq = ? WHERE source = 'messages'", (last,))
    return added


def find(ctx: Ctx, a: FindArgs) -> dict:
    with reading(ctx, catch_up) as (conn, me):
        places: tuple[str, ...] = ()
        if a.projectId:
            projects.need(conn, a.projectId)
            path = projects.local_path(conn, a.projectId)
            places = (a.projectId, path) if path else (a.projectId,)
        try:
            rows, total = _query(conn, a.query, a, me.id, places)
        except sqlite3.OperationalError:  # not FTS5 query syntax: take the words as words
            words = WORD.findall(a.query)
            if not words:
                raise invalid("query", "has no word to look for", "give a word or two") from None
            try:
                rows, total = _query(conn, " ".join(f'"{w}"' for w in words), a, me.id, places)
            except sqlite3.OperationalError as exc:
                raise invalid("query", f"cannot be searched ({exc})", "give plain words") from None
    hits = [{"kind": r["kind"], "ref": str(r["ref"]), "title": r["title"] or "",
             "snippet": r["snip"] or "", "score": round(r["rank"], 4),
             "how": _how(r["kind"], str(r["ref"]), r["title"] or "")} for r in rows]
    return envelope(hits, total, a.offset, a.limit, key="hits", query=a.query)
