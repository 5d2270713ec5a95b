"""`nexus find`: one full-text index (SQLite FTS5, `ws_fts`) over project docs, the strategy,
global docs, meeting and global chat (kept current by triggers), and the direct messages the
caller sent or received (brought current by `find` itself: indexing every message as it is sent
cost the send path a third of its time); ranked by BM25, with snippets. In team mode the same
query runs on PostgreSQL's full-text search (`_dialect`: the one place the two differ; the
folding, the query syntax and the snippets are core/store/fulltext.py's). Stdlib only."""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING, Any

from ..core.context import Ctx
from ..core.errors import invalid
from ..core.listing import envelope
from ..core.store import fulltext, policy
from . import projects
from .base import reading

if TYPE_CHECKING:
    from .models import FindArgs

TOTAL_CAP = 1000  # matches counted for `total`, at most
WORD = re.compile(r"\w+", re.UNICODE)

# team mode (core/store/policy.py): how far SQLite's index read the mail (team mode reads the
# messages themselves)
TEAM_TABLES = {"ws_indexed": policy.Table(read=policy.TEAM, insert=policy.FUNCTIONS,
                                          update=policy.FUNCTIONS, delete=policy.FUNCTIONS)}


def _how(kind: str, ref: str, title: str) -> str:
    return {
        "project": f'get_project(projectId="{ref}") / nexus project get {ref}',
        "doc": f'get_global_doc(docId="{ref}") / nexus doc get {ref}',
        "strategy": "get_global_strategy / nexus doc strategy",
        "chat": "read_messages / nexus chat read",
        "meeting": f'read_messages(meetingId="{title}") / nexus chat read --meeting-id {title}',
        "message": f"nexus message show {ref}",
    }[kind]


# The searched rows on PostgreSQL: ws_words (what SQLite's ws_fts holds, kept by triggers), and
# the caller's direct messages read from their own table, so that row-level security decides
# what can be found (they have no stored words: a send would pay for them).
_PG_ROWS = (
    "(SELECT kind, ref, title, body, project, 0 AS seq, words FROM ws_words"
    " UNION ALL SELECT 'message', m.id, m.id, m.text, s.project, m.seq,"
    f" {fulltext.WORDS}(m.id || ' ' || m.text) FROM messages m"
    " LEFT JOIN sessions s ON s.id = m.sender"
    " WHERE m.kind IN ('message', 'task', 'report') AND (m.sender = :me OR m.recipient = :me)"
    ") AS f")


def _dialect(conn: Any, query: str) -> tuple[dict[str, str], str]:
    """Where the two backends differ, and only that: the searched rows, the match, the rank
    (lower is better), the message's seq, the snippet; and the query as the match takes it
    (PostgreSQL: the FTS5 query as a tsquery; `fulltext.BadQuery` where FTS5 refuses it)."""
    if isinstance(conn, sqlite3.Connection):
        return {"rows": "ws_fts", "match": "ws_fts MATCH :match", "rank": "rank",
                "seq": "ws_fts.rowid / 8", "order": "rank",
                "snip": "snippet(ws_fts, 1, '[', ']', '…', 16)"}, query
    words = "CAST(:match AS tsquery)"
    return {"rows": _PG_ROWS, "match": f"words @@ {words}",
            "rank": f"-ts_rank(words, {words}, 1)", "seq": "f.seq",
            "order": "rank, kind, ref", "snip": "body"}, fulltext.tsquery(query)


def _query(conn: sqlite3.Connection, query: str, a: FindArgs, me: str,
           places: tuple[str, ...]) -> tuple[list[dict], int]:
    d, match = _dialect(conn, query)
    where = [d["match"],
             "(kind != 'message' OR EXISTS (SELECT 1 FROM messages m WHERE m.seq = "
             f"{d['seq']} AND (m.sender = :me OR m.recipient = :me)))"]
    params: dict[str, Any] = {"match": match, "me": me, "limit": a.limit, "offset": a.offset,
                              "cap": TOTAL_CAP}
    if a.kind:
        where.append("kind = :kind")
        params["kind"] = a.kind
    if places:
        where.append(f"project IN ({', '.join(f':p{i}' for i in range(len(places)))})")
        params.update({f"p{i}": p for i, p in enumerate(places)})
    sql = " AND ".join(where)
    rows = conn.execute(f"SELECT kind, ref, title, {d['rank']} AS rank, {d['snip']} AS snip"
                        f" FROM {d['rows']} WHERE {sql} ORDER BY {d['order']} LIMIT :limit"
                        " OFFSET :offset", params).fetchall()
    total = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM {d['rows']} WHERE {sql}"
                         " LIMIT :cap) AS hits", params).fetchone()[0]
    out = [{k: r[k] for k in ("kind", "ref", "title", "rank", "snip")} for r in rows]
    if d["snip"] == "body":  # PostgreSQL: the snippet is cut here, from the matched text
        for r in out:
            r["snip"] = fulltext.snippet(r["snip"] or "", query)
    return out, total


def search(conn: sqlite3.Connection, a: FindArgs, me: str,
           places: tuple[str, ...] = ()) -> tuple[list[dict], int]:
    """The page of hits and the total: the query as FTS5 reads it, or else its words."""
    try:
        return _query(conn, a.query, a, me, places)
    except (sqlite3.OperationalError, fulltext.BadQuery):  # not FTS5 query syntax: take the
        # words as words
        words = WORD.findall(a.query)
        if not words:
            raise invalid("query", "has no word to look for", "give a word or two") from None
        try:
            return _query(conn, " ".join(f'"{w}"' for w in words), a, me, places)
        except (sqlite3.OperationalError, fulltext.BadQuery) as exc:
            raise invalid("query", f"cannot be searched ({exc})", "give plain words") from None


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
    # SQLite: the direct messages sent since the last `find` join the index first
    with reading(ctx, catch_up if ctx.store.backend == "sqlite" else None) as (conn, me):
        places: tuple[str, ...] = ()
        if a.projectId:
            projects.need(conn, a.projectId)
            path = projects.local_path(conn, a.projectId)
            places = (a.projectId, path) if path else (a.projectId,)
        rows, total = search(conn, a, me.id, places)
    hits = [{"kind": r["kind"], "ref": str(r["ref"]), "title": r["title"] or "",
             "snippet": r["snip"] or "", "score": round(r["rank"], 4),
             "how": _how(r["kind"], str(r["ref"]), r["title"] or "")} for r in rows]
    return envelope(hits, total, a.offset, a.limit, key="hits", query=a.query)
