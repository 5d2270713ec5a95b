"""`nexus search`: sessions whose title or conversation holds a text (case-insensitive) or a
regular expression, newest first (seed 001's session_search), answered from the full-text index
where it can and from the transcripts where the index does not reach. Stdlib only."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..clients import transcript as common
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.settings import ASK_MCP_MAX, INDEX_BUDGET
from . import catalogue, index, locate

if TYPE_CHECKING:
    from .models import SearchArgs

SNIPPETS = 3  # snippets kept per session
AROUND = 60  # characters shown either side of a hit
CHECK_EVERY = 64  # events between looks at the clock


def matcher(a: SearchArgs, face: str) -> Callable[[str], re.Match | tuple[int, int] | None]:
    """A function giving the (start, end) of the first hit in a text, or None."""
    if not a.query.strip():
        raise NexusError("invalid_argument", "QUERY" if face == "cli" else "session_search.query",
                         "the query is blank", "pass the text to find")
    if a.regex:
        try:
            pattern = re.compile(a.query, re.IGNORECASE)
        except re.error as exc:
            raise NexusError("invalid_argument", "QUERY" if face == "cli" else
                             "session_search.query", f"not a valid regular expression: {exc}",
                             "fix the pattern, or search for the text without --regex") from None

        def find_re(text: str) -> tuple[int, int] | None:
            m = pattern.search(text)
            return (m.start(), m.end()) if m else None

        return find_re
    needle = a.query.lower()

    def find(text: str) -> tuple[int, int] | None:
        i = text.lower().find(needle)
        return (i, i + len(needle)) if i >= 0 else None

    return find


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

    def add(self, seq: int, type_: str, at: float | None, text: str,
            span: tuple[int, int]) -> None:
        self.count += 1
        if len(self.snippets) < SNIPPETS:
            self.snippets.append({"seq": seq, "type": type_, "time_epoch": at,
                                  "snippet": snippet(text, span)})


def scan_events(events: Iterator[dict], find: Callable, hits: Hits, deadline: float) -> None:
    for n, ev in enumerate(events, 1):
        text = index.searchable(ev)
        if text is not None:
            span = find(text)
            if span:
                hits.add(ev["seq"], ev["type"], ev.get("time_epoch"), text, span)
        if n % CHECK_EVERY == 0 and time.monotonic() > deadline:
            hits.timed_out = True
            return


def search(ctx: Ctx, a: SearchArgs) -> dict:
    find = matcher(a, ctx.face)
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
            indexed = _indexed_hits(conn, a, find, rows)
    titled: list[dict] = []
    by_content: list[dict] = []
    total_hits = timed_out = 0
    # over MCP the whole answer must come within the client's tool-call window
    overall = time.monotonic() + ASK_MCP_MAX if ctx.face == "mcp" else float("inf")
    for e in chosen:
        title_hit = bool(e.title and find(e.title))
        hits = Hits()
        if time.monotonic() > overall:
            hits.timed_out = True
        if e.path:
            row = rows.get(e.path)
            start, state, fid = 0, None, None
            if row is not None and row["started"]:
                fid, start = row["id"], row["indexed_to"]
                hits = indexed.get(fid) or hits
            if use_index and not index.current(row, e.size, e.mtime):
                usage["current"] = False  # what the index lacks is read below
            if start < e.size or not start:  # the rest, or a last line still being written
                if fid is not None:
                    with ctx.read() as conn:
                        state = index.state_of(conn, fid)
                    if state is None:  # re-read meanwhile from the start: scan it all
                        start, hits = 0, Hits()
                try:
                    usage["scanned_bytes"] += _scan_rest(
                        e, start, state, find, hits,
                        min(overall, time.monotonic() + a.session_time_limit))
                except OSError:
                    pass
        timed_out += hits.timed_out
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
        (f"; {left} older sessions were not searched: --limit {min(200, a.limit * 2)} or "
         "--all-sessions" if left else "") + \
        ("; some sessions hit --session-time-limit: raise it for all their hits"
         if timed_out else "")
    return {"query": a.query, "regex": a.regex, "total": len(chosen), "scanned": len(chosen),
            "matched": len(results), "hits": total_hits, "count": len(page),
            "offset": a.offset, "limit": a.limit, "page_size": a.page_size,
            "truncated": truncated,
            "next": f"--offset {a.offset + len(page)}" if truncated else None,
            "content_search": True, "timed_out": timed_out, "index": usage, "hint": hint,
            "results": page}


def _scan_rest(e: catalogue.Entry, start: int, state: dict | None, find: Callable, hits: Hits,
               deadline: float) -> int:
    """Search what the index does not hold (from `start`, resuming the reader's `state`); returns
    the bytes read."""
    if hits.timed_out or e.path is None:
        return 0
    reader = locate.READERS[e.client].reader()
    scan_events(common.read_all(e.path, reader, start, None, state), find, hits, deadline)
    return max(0, e.size - start)


def _indexed_hits(conn: Any, a: SearchArgs, find: Callable, rows: dict) -> dict[int, Hits]:
    """Hits in the indexed part of these transcripts, by file id. A text of three characters or
    more goes through FTS5 (its trigrams); every candidate is confirmed with the same matcher a
    scan uses, so both answer the same."""
    ids = [r["id"] for r in rows.values() if r["started"]]
    out: dict[int, Hits] = {}
    if not ids:
        return out
    wanted = set(ids)
    deadlines: dict[int, float] = {}
    limit = a.session_time_limit
    if not a.regex and len(a.query) >= 3:
        phrase = '"' + a.query.replace('"', '""') + '"'
        cursor = conn.execute(
            "SELECT c.file_id, c.seq, c.type, c.at, c.text FROM insight_fts"
            " JOIN insight_chunks c ON c.id = insight_fts.rowid WHERE insight_fts MATCH ?"
            " ORDER BY c.file_id, c.seq", (phrase,))
    else:
        marks = ",".join("?" * len(ids))
        cursor = conn.execute(f"SELECT file_id, seq, type, at, text FROM insight_chunks WHERE"
                              f" file_id IN ({marks}) ORDER BY file_id, seq", ids)
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
        span = find(text)
        if span:
            hits.add(seq, type_, at, text, span)
        n += 1
        if n % CHECK_EVERY == 0 and time.monotonic() > deadlines[fid]:
            hits.timed_out = True
    return out
