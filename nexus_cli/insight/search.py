"""`nexus search`: sessions whose title or conversation holds a text (case-insensitive) or a
regular expression, newest first (seed 001's session_search), answered from the full-text index
where it can and from the transcripts where the index does not reach. Stdlib only."""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..clients import transcript as common
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.human import plural
from ..core.settings import ASK_MCP_MAX, INDEX_BUDGET
from ..core.store import fulltext, inlist
from . import catalogue, index, locate, regexwork

if TYPE_CHECKING:
    from .models import SearchArgs

SNIPPETS = 3  # snippets kept per session
AROUND = 60  # characters shown either side of a hit
CHECK_EVERY = 64  # events between looks at the clock
Item = tuple[int, str, float | None, str]  # seq, type, time, searchable text


class Plain:
    """A case-insensitive substring, matched here (a bounded amount of work per text)."""

    def __init__(self, query: str) -> None:
        self.needle = query.lower()

    def one(self, text: str) -> tuple[int, int] | None:
        i = text.lower().find(self.needle)
        return (i, i + len(self.needle)) if i >= 0 else None

    def title(self, text: str, deadline: float) -> bool | None:
        return self.one(text) is not None

    def scan(self, items: Iterable[Item | None], hits: Hits, deadline: float) -> None:
        for n, item in enumerate(items, 1):
            if item is not None:
                span = self.one(item[3])
                if span:
                    hits.add(*item, span)
            if n % CHECK_EVERY == 0 and time.monotonic() > deadline:
                hits.timed_out = True
                return

    def close(self) -> None:
        pass


class Regex:
    """A regular expression, matched in a child process (`regexwork`): one search of a
    catastrophic pattern (`(a+)+$`) can run for hours and cannot be interrupted inside the
    process that runs it, so the child is killed when a session's time is up."""

    def __init__(self, query: str, overall: float) -> None:
        self.worker = regexwork.Worker(query, overall)

    def title(self, text: str, deadline: float) -> bool | None:
        if time.monotonic() > deadline:
            return None
        spans = self.worker.match([text], deadline)
        return None if spans is None else spans[0] is not None

    def scan(self, items: Iterable[Item | None], hits: Hits, deadline: float) -> None:
        batch: list[Item] = []
        size = 0
        for item in items:
            if item is not None:
                batch.append(item)
                size += len(item[3])
            if len(batch) >= regexwork.BATCH or size >= regexwork.BATCH_CHARS or (
                    time.monotonic() > deadline):
                if not self._send(batch, hits, deadline):
                    return
                batch, size = [], 0
        if batch:
            self._send(batch, hits, deadline)

    def _send(self, batch: list[Item], hits: Hits, deadline: float) -> bool:
        spans = self.worker.match([item[3] for item in batch], deadline) \
            if time.monotonic() <= deadline else None
        if spans is None:
            hits.timed_out = True
            return False
        for item, span in zip(batch, spans, strict=True):
            if span is not None:
                hits.add(*item, (span[0], span[1]))
        return True

    def close(self) -> None:
        self.worker.close()


def matcher(a: SearchArgs, face: str, overall: float) -> Plain | Regex:
    """What finds the query in a text: `Plain`, or `Regex` (its pattern checked here first)."""
    if not a.query.strip():
        raise NexusError("invalid_argument", "QUERY" if face == "cli" else "session_search.query",
                         "the query is blank", "pass the text to find")
    if a.regex:
        try:
            re.compile(a.query, re.IGNORECASE)
        except (re.error, RecursionError, OverflowError) as exc:
            raise NexusError("invalid_argument", "QUERY" if face == "cli" else
                             "session_search.query", f"not a valid regular expression: {exc}",
                             "fix the pattern, or search for the text without --regex") from None
        return Regex(a.query, overall)
    return Plain(a.query)


def snippet(text: str, span: tuple[int, int]) -> str:
    start, end = span
    lo, hi = max(0, start - AROUND), min(len(text), end + AROUND)
    cut = " ".join(text[lo:hi].split())
    return ("…" if lo else "") + cut + ("…" if hi < len(text) else "")


class Hits:
    def __init__(self) -> None:
        self.count = 0
        self.snippets: list[dict] = []
        self.timed_out = False
        self.spent = 0.0  # seconds its indexed part took

    def add(self, seq: int, type_: str, at: float | None, text: str,
            span: tuple[int, int]) -> None:
        self.count += 1
        if len(self.snippets) < SNIPPETS:
            self.snippets.append({"seq": seq, "type": type_, "time_epoch": at,
                                  "snippet": snippet(text, span)})


def items_of(events: Iterator[dict]) -> Iterator[Item | None]:
    """What search looks at in each event (None for an event it does not look at)."""
    for ev in events:
        text = index.searchable(ev)
        yield None if text is None else (ev["seq"], ev["type"], ev.get("time_epoch"), text)


def search(ctx: Ctx, a: SearchArgs) -> dict:
    # over MCP the whole answer must come within the client's tool-call window
    overall = time.monotonic() + ASK_MCP_MAX if ctx.face == "mcp" else float("inf")
    m = matcher(a, ctx.face, overall)
    try:
        return _search(ctx, a, m, overall)
    except regexwork.WorkerFailed as exc:
        raise NexusError("internal_error", "QUERY" if ctx.face == "cli" else
                         "session_search.query", f"{exc}: the pattern could not be matched",
                         "retry, or search for the text without --regex") from None
    finally:
        m.close()


def _search(ctx: Ctx, a: SearchArgs, m: Plain | Regex, overall: float) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        listing = catalogue.entries(ctx, me, a.all_workspaces, a.cwd, conn)
    catalogue.remember(ctx, listing)
    found = listing.items
    chosen = found if a.all_sessions else found[: a.limit]
    use_index = not a.no_index and catalogue.store_ready(ctx)
    usage: dict[str, Any] = {
        "used": use_index, "was_current": True if use_index else None,
        "current": True if use_index else None, "updated_sessions": 0, "indexed_bytes": 0,
        "scanned_bytes": 0, "reason": None if use_index else (
            "--no-index" if a.no_index else "no store yet (a search creates none)")}
    rows: dict[str, Any] = {}
    indexed: dict[int, Hits] = {}
    if use_index:
        refresh = index.refresh(ctx, [e for e in chosen if e.path], INDEX_BUDGET)
        usage.update(was_current=refresh.was_current, updated_sessions=refresh.updated,
                     indexed_bytes=refresh.bytes, reason=refresh.reason)
        with ctx.read() as conn:
            rows = index.files(conn, [e.path for e in chosen if e.path], light=True)
            indexed = _indexed_hits(conn, a, m, rows) if isinstance(m, Plain) else \
                _indexed_regex(conn, a, m, rows, overall)
    titled: list[dict] = []
    by_content: list[dict] = []
    cut_short: list[str] = []
    total_hits = 0
    for e in chosen:
        row = rows.get(e.path) if e.path else None
        hits = (indexed.get(row["id"]) if row is not None else None) or Hits()
        # a regex's session time counts what its indexed part took (plain: see _indexed_hits)
        budget = a.session_time_limit - (hits.spent if isinstance(m, Regex) else 0.0)
        deadline = min(overall, time.monotonic() + max(0.0, budget))
        got = m.title(e.title, deadline) if e.title else False
        title_hit = bool(got)
        if got is None or time.monotonic() > overall:
            hits.timed_out = True
        if e.path and not hits.timed_out:
            start, state, fid = 0, None, None
            if row is not None and row["started"]:
                fid, start = row["id"], row["indexed_to"]
            if use_index and not index.current(row, e.size, e.mtime):
                usage["current"] = False  # what the index lacks is read below
            if start < e.size or not start:  # the rest, or a last line still being written
                if fid is not None:
                    with ctx.read() as conn:
                        state = index.state_of(conn, fid)
                    if state is None:  # re-read meanwhile from the start: scan it all
                        start, hits = 0, Hits()
                if isinstance(m, Plain):  # the indexed part had its own time
                    deadline = min(overall, time.monotonic() + a.session_time_limit)
                try:
                    usage["scanned_bytes"] += _scan_rest(e, start, state, m, hits, deadline)
                except OSError:
                    pass
        if hits.timed_out:
            cut_short.append(e.session_id)
        if not (title_hit or hits.count):
            continue
        total_hits += hits.count
        item = {"session_id": e.session_id, "client": e.client, "title": e.title,
                "name": e.row["name"] if e.row is not None else None,
                "handle": e.row["handle"] if e.row is not None else None, "cwd": e.cwd,
                "updated_at_epoch": e.updated or None,
                "matched": "title" if title_hit else "content", "hits": hits.count,
                "timed_out": hits.timed_out, "snippets": hits.snippets}
        (titled if title_hit else by_content).append(item)
    results = titled + by_content
    page = results[a.offset : a.offset + a.page_size]
    truncated = a.offset + len(page) < len(results)
    left = len(found) - len(chosen)
    hint = ("open one with `nexus log <session_id>`" if results else "nothing matched") + \
        (f"; {plural(left, 'older session')} {'was' if left == 1 else 'were'} not searched: "
         f"--limit {min(200, a.limit * 2)} or --all-sessions" if left else "") + \
        (f"; {len(cut_short)} of the sessions searched hit the time limit before their end "
         "(`timed_out_sessions`): their hits are partial; raise --session-time-limit"
         + (", or narrow the pattern" if a.regex else "") if cut_short else "")
    return {"query": a.query, "regex": a.regex, "total": len(chosen), "scanned": len(chosen),
            "matched": len(results), "hits": total_hits, "count": len(page),
            "offset": a.offset, "limit": a.limit, "page_size": a.page_size,
            "truncated": truncated,
            "next": f"--offset {a.offset + len(page)}" if truncated else None,
            "content_search": True, "timed_out": len(cut_short),
            "timed_out_sessions": cut_short, "index": usage, "hint": hint, "results": page}


def _scan_rest(e: catalogue.Entry, start: int, state: dict | None, m: Plain | Regex,
               hits: Hits, deadline: float) -> int:
    """Search what the index does not hold (from `start`, resuming the reader's `state`); returns
    the bytes read."""
    if hits.timed_out or e.path is None:
        return 0
    reader = locate.READERS[e.client].reader()
    m.scan(items_of(common.read_all(e.path, reader, start, None, state)), hits, deadline)
    return max(0, e.size - start)


def _indexed_regex(conn: Any, a: SearchArgs, m: Regex, rows: dict,
                   overall: float) -> dict[int, Hits]:
    """A regex's hits in the indexed part of these transcripts, by file id, each within its
    session's time (on one connection: the chunks are read file by file)."""
    out: dict[int, Hits] = {}
    for r in rows.values():
        if not r["started"]:
            continue
        hits = out[r["id"]] = Hits()
        started = time.monotonic()
        m.scan(conn.execute("SELECT seq, type, at, text FROM insight_chunks WHERE file_id = ?"
                            " ORDER BY seq", (r["id"],)),
               hits, min(overall, started + a.session_time_limit))
        hits.spent = time.monotonic() - started
    return out


def _candidates(conn: Any, query: str, ids: list[int]) -> Iterable[tuple]:
    """The indexed chunks that may hold the text (a superset: `_indexed_hits` confirms each),
    by file and seq. SQLite: FTS5's trigrams, for three characters or more. PostgreSQL: ILIKE
    (its case folding is ASCII's in a C locale: only an ASCII text is left to it), in the
    chunks of these files. Otherwise every chunk of these files."""
    chunks = "SELECT c.file_id, c.seq, c.type, c.at, c.text FROM insight_chunks c"
    order = " ORDER BY c.file_id, c.seq"
    if isinstance(conn, sqlite3.Connection):
        if len(query) >= 3:
            return conn.execute(f"{chunks} JOIN insight_fts ON c.id = insight_fts.rowid WHERE"
                                f" insight_fts MATCH ?{order}",
                                ('"' + query.replace('"', '""') + '"',))
        match, args = "", []
    elif query.isascii():
        match, args = " AND lower(c.text) LIKE ? ESCAPE '\\'", [fulltext.like(query)]
    else:
        match, args = "", []
    out: list[tuple] = []
    ids = sorted(ids)
    for part in inlist.chunked(ids):
        out += conn.execute(f"{chunks} WHERE c.file_id IN ({inlist.marks(part)}){match}{order}",
                            [*part, *args]).fetchall()
    return out


def _indexed_hits(conn: Any, a: SearchArgs, m: Plain, rows: dict) -> dict[int, Hits]:
    """Hits in the indexed part of these transcripts, by file id. A text of three characters or
    more goes through FTS5 (its trigrams); every candidate is confirmed with the same matcher a
    scan uses, so both answer the same. (A regex is matched per session, in `_search`.)"""
    ids = [r["id"] for r in rows.values() if r["started"]]
    out: dict[int, Hits] = {}
    if not ids:
        return out
    wanted = set(ids)
    deadlines: dict[int, float] = {}
    limit = a.session_time_limit
    cursor = _candidates(conn, a.query, ids)
    n = 0
    for fid, seq, type_, at, text in cursor:
        if fid not in wanted:
            continue
        hits = out.get(fid)
        if hits is None:
            hits = out[fid] = Hits()
            deadlines[fid] = time.monotonic() + limit
        if hits.timed_out:
            continue
        span = m.one(text)
        if span:
            hits.add(seq, type_, at, text, span)
        n += 1
        if n % CHECK_EVERY == 0 and time.monotonic() > deadlines[fid]:
            hits.timed_out = True
    return out
