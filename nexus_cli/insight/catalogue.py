"""Every session in scope: the ones nexus knows and the ones only their client's transcript
directory knows, merged by id, newest first (seed 001's session_list). Stdlib only."""

from __future__ import annotations

import os
import sqlite3
import time
from typing import TYPE_CHECKING

from ..core import availability, identity
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.listing import envelope
from ..core.sessions import Caller
from ..core.settings import INDEX_BUDGET
from ..core.timefmt import human_duration
from . import index, locate
from .log import first_line

if TYPE_CHECKING:
    from .models import SessionsArgs


class Entry:
    __slots__ = (
        "cached",
        "client",
        "cwd",
        "first_prompt",
        "mtime",
        "path",
        "project",
        "raw",
        "row",
        "session_id",
        "size",
        "started",
        "title",
        "title_source",
        "updated",
    )

    def __init__(self, session_id: str, client: str) -> None:
        self.session_id, self.client = session_id, client
        self.raw = identity.split_id(session_id)[1]
        self.path: str | None = None
        self.size, self.mtime = 0, 0.0
        self.row: sqlite3.Row | None = None
        self.cwd = self.project = ""
        self.first_prompt: str | None = None
        self.started: float | None = None
        self.title: str | None = None
        self.title_source: str | None = None
        self.updated = 0.0
        self.cached: sqlite3.Row | None = None


def store_ready(ctx: Ctx) -> bool:
    """Whether the store exists (a listing or a search never creates it)."""
    try:
        return ctx.store.check_dir() and ctx.store.check_file()
    except NexusError:
        return False


class Found:
    """What `entries` found: the sessions in scope (newest first), how many transcripts could
    not be read, those read for the first time just now, and remembered ones that are gone."""

    def __init__(self, items: list[Entry], skipped: int, sniffed: list[Entry],
                 gone: list[str]) -> None:
        self.items, self.skipped, self.sniffed, self.gone = items, skipped, sniffed, gone


def entries(ctx: Ctx, me: Caller, all_workspaces: bool, cwd: str | None,
            conn: sqlite3.Connection) -> Found:
    found, skipped = locate.discover()
    by_id: dict[str, Entry] = {}
    for f in found:
        e = by_id.get(f.session_id)
        if e is None:
            e = by_id[f.session_id] = Entry(f.session_id, f.client)
        if e.path is None or f.mtime > e.mtime:
            e.path, e.size, e.mtime = f.path, f.size, f.mtime
    for row in conn.execute("SELECT * FROM sessions WHERE client IN ('claude', 'codex')"):
        e = by_id.get(row["id"])
        if e is None:
            e = by_id[row["id"]] = Entry(row["id"], row["client"])
        e.row = row
        hooked = row["transcript_path"]
        if hooked and hooked != e.path:
            st = locate.reported(row, identity.split_id(row["id"])[1])
            if st is not None:
                e.path, e.size, e.mtime = hooked, st.st_size, st.st_mtime
    cached = index.files(conn, light=True)
    set_titles = index.titles(conn)
    sniffed: list[Entry] = []
    want_cwd = os.path.realpath(cwd) if cwd else None
    out = []
    for e in by_id.values():
        e.cached = cached.get(e.path) if e.path else None
        if e.cached is not None and e.cached["cwd"]:
            e.cwd, e.project = e.cached["cwd"], e.cached["project"]
            e.first_prompt, e.started = e.cached["first_prompt"], e.cached["started_at"]
        elif e.path:  # read its first lines once; remembered below
            meta = locate.meta_of(e.client, e.path)
            if meta is None:
                skipped += 1
                if e.row is None:
                    continue
            else:
                e.cwd = meta.get("cwd") or ""
                e.project = locate.project_of(e.cwd)
                e.first_prompt, e.started = meta.get("first_prompt"), meta.get("started_epoch")
                sniffed.append(e)
        if e.row is not None:  # nexus's own record of where it runs wins
            e.cwd, e.project = e.row["cwd"], e.row["project"]
        if not all_workspaces and e.project != me.project:
            continue
        if want_cwd is not None and os.path.realpath(e.cwd or "/nonexistent") != want_cwd:
            continue
        given = set_titles.get(e.session_id)
        if given is not None:
            e.title, e.title_source = given["title"], "set"
        elif e.first_prompt:
            e.title, e.title_source = first_line(e.first_prompt), "prompt"
        e.updated = max(e.mtime, e.row["last_active"] if e.row is not None else 0.0)
        out.append(e)
    out.sort(key=lambda x: (-x.updated, x.session_id))
    present = {f.path for f in found}
    gone = [p for p in cached if p not in present and not os.path.exists(p)]
    return Found(out, skipped, sniffed, gone)


def remember(ctx: Ctx, found: Found) -> None:
    """Keep what was read of new transcripts (cwd, first prompt), so the next listing need not
    read them again, and forget those that are gone. Best effort: a store that cannot be
    written is left alone."""
    if not (found.sniffed or found.gone) or not store_ready(ctx):
        return
    try:
        with ctx.write() as conn:
            index.remember(conn, [(e.path, e.session_id, e.client,
                                   {"cwd": e.cwd, "project": e.project,
                                    "first_prompt": e.first_prompt,
                                    "started_epoch": e.started})
                                  for e in found.sniffed if e.path], time.time())
            index.forget(conn, found.gone)
    except NexusError:
        pass


def row_of(e: Entry, totals: dict | None, now: float) -> dict:
    row = e.row
    llm = totals["llm_ms"] if totals else None
    if e.first_prompt is None and totals and totals.get("first_prompt"):
        e.first_prompt = totals["first_prompt"]
        if e.title_source is None:
            e.title, e.title_source = first_line(e.first_prompt), "prompt"
    return {
        "id": e.session_id, "client": e.client, "title": e.title, "title_source": e.title_source,
        "handle": row["handle"] if row is not None else None,
        "name": row["name"] if row is not None else None, "known": row is not None,
        "status": availability.effective_status(row, now) if row is not None else None,
        "cwd": e.cwd, "project": e.project, "transcript_path": e.path,
        "created_at_epoch": e.started or (row["created_at"] if row is not None else None),
        "updated_at_epoch": e.updated or None,
        "message_count": totals["messages"] if totals else None,
        "input_tokens": totals["tokens_in"] if totals else None,
        "output_tokens": totals["tokens_out"] if totals else None,
        "llm_time_ms": int(llm) if llm is not None else None,
        "llm_time_human": human_duration(llm / 1000) if llm is not None else None,
    }


def totals_of(ctx: Ctx, page: list[Entry], use_index: bool) -> tuple[dict[str, dict], int]:
    """Message and token totals of these sessions: from the index, brought up to date first
    (when the store exists), else read from the transcripts. Also how many could not be read."""
    out: dict[str, dict] = {}
    skipped = 0
    with_files = [e for e in page if e.path]
    if use_index and with_files:
        refresh = index.refresh(ctx, with_files, INDEX_BUDGET)
        if refresh.reason is None:
            with ctx.read() as conn:
                rows = index.files(conn, [e.path for e in with_files if e.path])
            for e in with_files:
                r = rows.get(e.path or "")
                if r is not None and index.current(r, e.size, e.mtime):
                    out[e.session_id] = index.summary(r)
    for e in with_files:
        if e.session_id in out or e.path is None:
            continue
        try:
            out[e.session_id] = index.totals(e.path, e.client)
        except OSError:
            skipped += 1
    return out, skipped


def list_sessions(ctx: Ctx, a: SessionsArgs) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        found = entries(ctx, me, a.all_workspaces, a.cwd, conn)
    remember(ctx, found)
    page = found.items[a.offset : a.offset + a.limit]
    totals, unreadable = totals_of(ctx, page, store_ready(ctx))
    items = [row_of(e, totals.get(e.session_id), ctx.now) for e in page]
    return envelope(items, len(found.items), a.offset, a.limit,
                    skipped=found.skipped + unreadable)
