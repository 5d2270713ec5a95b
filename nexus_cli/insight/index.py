"""Owner of the insight tables: what nexus remembers of every transcript it read (where it
stopped, the reader's state there, the session's metadata and running totals), the full-text
index of the conversation (SQLite FTS5, trigram: case-insensitive substrings), and the titles
people and sessions gave.

The index is a cache of the transcripts, built incrementally and lazily: a search (or a listing)
reads only the bytes a transcript gained since it was last read, in its own short write
transactions, never on a hook's path. A transcript that shrank or whose first bytes changed is
read again from the start. Whatever is not indexed yet is scanned directly, so an answer never
depends on how current the index is, and says how current it was. Stdlib only."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from typing import TYPE_CHECKING, Any

from ..clients import transcript as common
from ..core.errors import NexusError
from ..core.store import inlist, policy
from .locate import READERS

if TYPE_CHECKING:
    from ..core.context import Ctx
    from ..core.store.db import Store

CHUNK_BYTES = 4 << 20  # transcript bytes read per write transaction (the lock is held briefly)
DIALOG_CAP = 16_000  # characters of a message indexed and searched
TOOL_CAP = 4_000  # characters of a tool call's arguments or a tool's output
HEAD_BYTES = 4096  # the first bytes, hashed: a rewritten file starts over
SEARCHED = ("user/message", "assistant/message", "tool/call", "tool/result")

# team mode (core/store/policy.py): what nexus read of a member's transcripts is that member's
# alone (their conversations' text), titles included
TEAM_TABLES = {
    "insight_files": policy.Table(read=policy.OWNER, insert=policy.TEAM, update=policy.OWNER,
                                  delete=policy.OWNER, owner=True),
    "insight_chunks": policy.Table(*(["file_id IN (SELECT id FROM insight_files)"] * 4)),
    "insight_titles": policy.Table(read=policy.OWNER, insert=policy.TEAM, update=policy.OWNER,
                                   delete=policy.OWNER, owner=True),
}


def searchable(ev: dict) -> str | None:
    """The text of an event that search looks at (the index stores exactly this)."""
    t = ev["type"]
    if t in ("user/message", "assistant/message"):
        text = ev.get("text") or ""
        cap = DIALOG_CAP
    elif t == "tool/call":
        try:
            args = json.dumps(ev.get("args"), ensure_ascii=False, default=str)
        except (ValueError, RecursionError):
            args = ""
        text = f"{ev.get('tool') or ''} {args}"
        cap = TOOL_CAP
    elif t == "tool/result":
        text = ev.get("text") or ""
        cap = TOOL_CAP
    else:
        return None
    return text[:cap] if text.strip() else None


def head_hash(path: str, size: int) -> str:
    with common.open_regular(path) as fh:
        return hashlib.sha1(fh.read(min(size, HEAD_BYTES))).hexdigest()


LIGHT = ("id, path, session_id, client, cwd, project, first_prompt, started_at, indexed_to,"
         " file_size, file_mtime, state IS NOT NULL AS started")


def files(conn: sqlite3.Connection, paths: list[str] | None = None,
          light: bool = False) -> dict[str, sqlite3.Row]:
    """What is remembered of these transcripts (all when None), by path; `light` leaves out the
    reader's state and the totals (`started` says whether a state exists)."""
    cols = LIGHT if light else "*, state IS NOT NULL AS started"
    if paths is None:
        rows = conn.execute(f"SELECT {cols} FROM insight_files").fetchall()
    else:
        rows = []
        for part in inlist.chunked(paths):
            rows += conn.execute(f"SELECT {cols} FROM insight_files WHERE path IN "
                                 f"({inlist.marks(part)})", part).fetchall()
    return {r["path"]: r for r in rows}


def state_of(conn: sqlite3.Connection, file_id: int) -> dict | None:
    row = conn.execute("SELECT state FROM insight_files WHERE id = ?", (file_id,)).fetchone()
    return json.loads(row[0]) if row and row[0] else None


def remember(conn: sqlite3.Connection, found: list[tuple[str, str, str, dict]], now: float) -> None:
    """Metadata of transcripts seen for the first time ((path, session id, client, meta))."""
    conn.executemany(
        policy.write(
            "INSERT INTO insight_files (path, session_id, client, cwd, project, first_prompt,"
            " started_at, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"),
        [(path, sid, client, meta.get("cwd") or "", meta.get("project") or "",
          meta.get("first_prompt"), meta.get("started_epoch"), now)
         for path, sid, client, meta in found])


def forget(conn: sqlite3.Connection, paths: list[str]) -> None:
    """Transcripts that are gone: what was remembered of them goes too."""
    for path in paths:
        row = conn.execute("SELECT id FROM insight_files WHERE path = ?", (path,)).fetchone()
        if row is not None and not os.path.exists(path):
            conn.execute(policy.write("DELETE FROM insight_chunks WHERE file_id = ?"), (row[0],))
            conn.execute(policy.write("DELETE FROM insight_files WHERE id = ?"), (row[0],))


def current(row: sqlite3.Row | None, size: int, mtime: float) -> bool:
    return row is not None and row["file_size"] == size and row["file_mtime"] == mtime \
        and bool(row["started"])


class Refresh:
    """The outcome of bringing some transcripts' index up to date."""

    def __init__(self) -> None:
        self.was_current = True  # nothing needed reading
        self.updated = 0  # transcripts that gained index entries
        self.bytes = 0  # bytes read into the index
        self.partial = 0  # transcripts left partly unindexed (time ran out, lock busy)
        self.reason: str | None = None  # why the index could not be written at all


def refresh(ctx: Ctx, entries: list[Any], budget: float) -> Refresh:
    """Index what these transcripts (locate.Found-like: session_id, client, path) gained, within
    `budget` seconds; the rest is left for the next time (and scanned meanwhile). One connection
    serves the whole refresh: opening and closing one per transcript would checkpoint the WAL
    each time."""
    from ..core.store.db import Store

    out = Refresh()
    deadline = time.monotonic() + budget
    store = Store(ctx.store.root, reuse=True)
    with store.read() as conn:
        known = files(conn, [e.path for e in entries], light=True)
    for e in entries:
        try:
            st = os.stat(e.path)
        except OSError:
            continue
        row = known.get(e.path)
        if current(row, st.st_size, st.st_mtime):
            continue
        out.was_current = False
        if time.monotonic() >= deadline:
            out.partial += 1
            continue
        try:
            done, read = _index_file(store, e, row, st, deadline)
        except NexusError as exc:  # read-only, busy, full: the search goes on without it
            out.reason = exc.message
            out.partial += 1
            break
        except OSError:
            continue
        out.bytes += read
        out.updated += 1 if read else 0
        if not done:
            out.partial += 1
    return out


def _index_file(store: Store, e: Any, row: sqlite3.Row | None, st: os.stat_result,
                deadline: float) -> tuple[bool, int]:
    """Read the new part of one transcript into the index. Returns (complete, bytes read)."""
    size, mtime = st.st_size, st.st_mtime
    start, state = 0, None
    if row is not None and row["started"]:
        with store.read() as conn:
            full = conn.execute("SELECT head, state FROM insight_files WHERE id = ?",
                                (row["id"],)).fetchone()
        start = row["indexed_to"]
        if full is None or size < start or full["head"] != head_hash(
                e.path, min(start, HEAD_BYTES)):
            start = 0  # rewritten or truncated: read it again from the start
        else:
            state = json.loads(full["state"])
    reader = READERS[e.client].reader()
    if state:
        reader.restore(state)
    expected: int | None = start if state else None  # where the stored row must stand
    read = 0
    with common.open_regular(e.path) as fh:
        end = common.complete_end(fh, size)
        pos = start
        while True:
            chunks: list[tuple[int, str, float | None, int, str]] = []
            delta = {"messages": 0, "tokens_in": 0, "tokens_out": 0, "llm_ms": 0, "events": 0}
            last = pos
            for offset, line in common.lines(fh, pos, end):
                for ev in reader.feed(line, offset):
                    _count(ev, delta)
                    text = searchable(ev)
                    if text is not None:
                        chunks.append((ev["seq"], ev["type"], ev.get("time_epoch"), offset, text))
                last = offset + len(line)
                if last - pos >= CHUNK_BYTES:
                    break
            done = last >= end
            if not _commit(store, e, expected, last, reader, delta, chunks,
                           (size, mtime) if done else None,
                           head_hash(e.path, min(last, HEAD_BYTES))):
                return False, read  # another process indexes it: leave it to that one
            read += last - pos
            expected = pos = last
            if done:
                return True, read
            if time.monotonic() >= deadline:
                return False, read


def _count(ev: dict, delta: dict) -> None:
    delta["events"] += 1
    t = ev["type"]
    if t in ("user/message", "assistant/message"):
        delta["messages"] += 1
    elif t == "usage":
        u = ev.get("usage") or {}
        delta["tokens_in"] += u.get("input", 0)
        delta["tokens_out"] += u.get("output", 0)
        delta["llm_ms"] += ev.get("llm_ms") or 0


def _commit(store: Store, e: Any, expected: int | None, last: int, reader: Any, delta: dict,
            chunks: list, stat: tuple[int, float] | None, head: str) -> bool:
    """One step of indexing, as one transaction: only if the row still stands where this reader
    started (`expected`; None: from the start, replacing whatever was there)."""
    from .locate import project_of

    now = time.time()
    meta = reader.meta
    with store.write() as conn:
        cur = conn.execute("SELECT * FROM insight_files WHERE path = ?", (e.path,)).fetchone()
        if expected is None:
            if cur is not None:
                conn.execute(policy.write(
                    "DELETE FROM insight_chunks WHERE file_id = ?"), (cur["id"],))
                conn.execute(policy.write("UPDATE insight_files SET messages = 0, tokens_in = 0,"
                             " tokens_out = 0, llm_ms = 0, events = 0 WHERE id = ?"), (cur["id"],))
        elif cur is None or cur["state"] is None or cur["indexed_to"] != expected:
            return False
        if cur is None:
            cwd = meta.get("cwd") or ""
            conn.execute(policy.write(
                "INSERT INTO insight_files (path, session_id, client, cwd, project,"
                " indexed_at) VALUES (?, ?, ?, ?, ?, ?)"),
                         (e.path, e.session_id, e.client, cwd, project_of(cwd), now))
            cur = conn.execute("SELECT * FROM insight_files WHERE path = ?", (e.path,)).fetchone()
        elif not cur["cwd"] and meta.get("cwd"):
            conn.execute(policy.write("UPDATE insight_files SET cwd = ?, project = ? WHERE id = ?"),
                         (meta["cwd"], project_of(meta["cwd"]), cur["id"]))
        conn.executemany(policy.write(
            "INSERT INTO insight_chunks (file_id, seq, type, at, \"offset\", text)"
            " VALUES (?, ?, ?, ?, ?, ?)"), [(cur["id"], *c) for c in chunks])
        conn.execute(
            policy.write(
                "UPDATE insight_files SET indexed_to = ?, state = ?, head = ?, file_size = ?,"
                " file_mtime = ?, first_prompt = coalesce(first_prompt, ?), started_at ="
                " coalesce(started_at, ?), updated_at = coalesce(?, updated_at), model ="
                " coalesce(?, model), messages = messages + ?, tokens_in = tokens_in + ?,"
                " tokens_out = tokens_out + ?, llm_ms = llm_ms + ?, events = events + ?,"
                " indexed_at = ? WHERE id = ?"),
            (last, json.dumps(reader.state(), ensure_ascii=False, default=str), head,
             stat[0] if stat else None, stat[1] if stat else None, meta.get("first_prompt"),
             meta.get("started_epoch"), meta.get("last_epoch"), meta.get("model"),
             delta["messages"], delta["tokens_in"], delta["tokens_out"], delta["llm_ms"],
             delta["events"], now, cur["id"]))
    return True


def summary(row: sqlite3.Row) -> dict:
    """Running totals of a remembered transcript (the message being read counts too)."""
    tokens_in, tokens_out, llm = row["tokens_in"], row["tokens_out"], row["llm_ms"]
    if row["state"]:
        own = (json.loads(row["state"]).get("own") or {})
        msg = own.get("msg")
        if isinstance(msg, dict) and isinstance(msg.get("usage"), dict):
            tokens_in += msg["usage"].get("input", 0)
            tokens_out += msg["usage"].get("output", 0)
    return {"messages": row["messages"], "tokens_in": tokens_in, "tokens_out": tokens_out,
            "llm_ms": llm, "first_prompt": row["first_prompt"], "cwd": row["cwd"],
            "started": row["started_at"], "updated": row["updated_at"], "model": row["model"]}


def totals(path: str, client: str) -> dict:
    """The same totals, read from the transcript itself (no index)."""
    reader = READERS[client].reader()
    delta = {"messages": 0, "tokens_in": 0, "tokens_out": 0, "llm_ms": 0, "events": 0}
    for ev in common.read_all(path, reader):
        _count(ev, delta)
    m = reader.meta
    return {"messages": delta["messages"], "tokens_in": delta["tokens_in"],
            "tokens_out": delta["tokens_out"], "llm_ms": delta["llm_ms"],
            "first_prompt": m["first_prompt"], "cwd": m["cwd"], "started": m["started_epoch"],
            "updated": m["last_epoch"], "model": m["model"]}


# -- titles -----------------------------------------------------------------------------------


def titles(conn: sqlite3.Connection, ids: list[str] | None = None) -> dict[str, sqlite3.Row]:
    if ids is None:
        rows = conn.execute("SELECT * FROM insight_titles").fetchall()
    else:
        rows = []
        for part in inlist.chunked(ids):
            rows += conn.execute(f"SELECT * FROM insight_titles WHERE session_id IN "
                                 f"({inlist.marks(part)})", part).fetchall()
    return {r["session_id"]: r for r in rows}


def set_title(conn: sqlite3.Connection, sid: str, title: str, by: str, now: float) -> None:
    conn.execute(policy.write(
        "INSERT INTO insight_titles (session_id, title, set_by, set_at) VALUES"
        " (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET title = excluded.title,"
        " set_by = excluded.set_by, set_at = excluded.set_at"), (sid, title, by, now))
