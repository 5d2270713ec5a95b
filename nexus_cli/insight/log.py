"""`nexus log`: what a session did, from its transcript, within budgets (seed 001's session_log
and seed 002's read_session). Stdlib only."""

from __future__ import annotations

import json
import os
from collections import deque
from typing import TYPE_CHECKING, Any

from ..clients import transcript as common
from ..core.context import Ctx
from ..core.errors import NexusError
from . import index, locate

if TYPE_CHECKING:
    from .models import LogArgs

MESSAGE_CAP = 8_000  # characters of a message shown
FIELD_CAP = 2_000  # characters of a tool's output, a system text, an argument value
LOG_FULL_MAX = 16 << 20  # a larger transcript is read from its end unless --full
PRESETS = {"dialog": common.DIALOG, "tools": common.TOOLS, "all": common.TYPES}


def effective_types(a: LogArgs, face: str) -> tuple[str, ...]:
    if a.types:
        wanted = a.types.split(",") if isinstance(a.types, str) else list(a.types)
        wanted = [t.strip() for t in wanted if t.strip()]
        bad = [t for t in wanted if t not in common.TYPES]
        if bad or not wanted:
            raise NexusError("invalid_argument", "--types" if face == "cli" else
                             "session_log.types", f"no event type {', '.join(bad) or '(none)'}",
                             f"choose from {', '.join(common.TYPES)}")
        return tuple(dict.fromkeys(wanted))
    if a.preset:
        return PRESETS[a.preset]
    return common.DEFAULT_TYPES


def _cut(value: Any, cap: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= cap else value[:cap] + f"…[{len(value):,} chars]"
    if isinstance(value, dict):
        return {k: _cut(v, cap) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v, cap) for v in value[:50]] + (
            [f"…[{len(value) - 50} more]"] if len(value) > 50 else [])
    return value


def shown(ev: dict, timestamps: bool) -> dict:
    """An event as an answer carries it: long fields cut (the whole record is at `offset`)."""
    out = dict(ev)
    if not timestamps:
        out.pop("time_epoch", None)
    text = out.get("text")
    if isinstance(text, str):
        cap = MESSAGE_CAP if ev["type"] in common.DIALOG else FIELD_CAP
        if len(text) > cap:
            out["text"] = text[:cap] + "…"
            out["text_chars"] = len(text)
    if "args" in out:
        out["args"] = _cut(out["args"], FIELD_CAP)
    return out


def provenance(loc: locate.Located, path: str, now: float) -> dict:
    st = os.stat(path)
    return {"session_id": loc.session_id, "resolved_by": loc.resolved_by,
            "transcript_path": path, "path_source": loc.path_source or "found",
            "transcript_mtime_epoch": st.st_mtime,
            "transcript_age_seconds": round(max(0.0, now - st.st_mtime), 3),
            "transcript_bytes": st.st_size, "warning": locate.WARNING}


def session_info(conn: Any, loc: locate.Located, meta: dict) -> dict:
    row = loc.row
    set_title = index.titles(conn, [loc.session_id]).get(loc.session_id)
    prompt = meta.get("first_prompt")
    return {"id": loc.session_id, "client": loc.client,
            "handle": row["handle"] if row else None, "name": row["name"] if row else None,
            "title": set_title["title"] if set_title else first_line(prompt),
            "cwd": meta.get("cwd") or loc.cwd or None, "version": meta.get("version"),
            "model": meta.get("model")}


def first_line(text: str | None, limit: int = 80) -> str | None:
    if not text or not text.strip():
        return None
    line = text.strip().splitlines()[0].strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


def log(ctx: Ctx, a: LogArgs) -> dict:
    types = effective_types(a, ctx.face)
    if a.tail_scan and a.full:
        raise NexusError("invalid_argument", "--full" if ctx.face == "cli" else
                         "session_log.full", "--full and --tail-scan exclude each other",
                         "choose one: --full reads the whole file, --tail-scan only its end")
    with ctx.read() as conn:
        me = ctx.me(conn)
        loc = locate.resolve(conn, me, a.target, ctx.now, a.all_workspaces)
        path = loc.require(a.target)
        mod = locate.READERS[loc.client]
        want = set(types)

        def keep(ev: dict) -> bool:
            return ev["type"] in want

        try:
            prov = provenance(loc, path, ctx.now)
            if a.tail_scan or (not a.full and prov["transcript_bytes"] > LOG_FULL_MAX):
                picked = _tail_scan(path, mod, keep, a, prov["transcript_bytes"])
            else:
                picked = _full(path, mod, keep, a)
        except OSError as exc:
            raise NexusError("transcript_not_found", a.target, f"{path}: {exc.strerror or exc}",
                             "check the file (its permissions; only a regular file is read); "
                             "nothing was changed") from None
        info = session_info(conn, loc, picked["meta"])
    return _budget(a, types, info, prov, picked)


def _full(path: str, mod: Any, keep: Any, a: LogArgs) -> dict:
    reader = mod.reader()
    first: list[dict] = []
    last: deque[dict] = deque(maxlen=a.tail)
    total = 0
    for ev in common.read_all(path, reader):
        if keep(ev):
            total += 1
            if len(first) < a.head:
                first.append(ev)
            last.append(ev)
    return {"meta": reader.meta, "counts": reader.counts, "head": first, "tail": list(last),
            "total": total, "exact": True, "scan": "full"}


def _tail_scan(path: str, mod: Any, keep: Any, a: LogArgs, size: int) -> dict:
    events, matched, start, reader = common.tail(path, mod.reader, keep, a.tail, size)
    exact = start == 0
    if not exact:  # numbered from the end: -1 is the newest event
        for ev in events:
            ev["seq"] -= reader.seq
    # the window reached the start and holds every match: its first events are the first
    first = events[: a.head] if exact and matched <= len(events) else \
        common.head(path, mod.reader, keep, a.head)
    meta = dict(reader.meta)
    if not exact:
        start_meta = locate.meta_of(mod.reader().client, path) or {}
        meta.update({k: v for k, v in start_meta.items()
                     if k in ("cwd", "first_prompt", "started_epoch") and v})
    return {"meta": meta, "counts": reader.counts, "head": first, "tail": events,
            "total": matched, "exact": exact, "scan": "tail"}


def _budget(a: LogArgs, types: tuple[str, ...], info: dict, prov: dict, picked: dict) -> dict:
    tail, head, total = picked["tail"], picked["head"], picked["total"]
    count_cut = False
    # the message budget: the newest --messages user and assistant messages and what lies between
    kept: list[dict] = []
    messages = 0
    for ev in reversed(tail):
        if ev["type"] in common.DIALOG:
            messages += 1
            if messages > a.messages:
                count_cut = True
                break
        kept.append(ev)
    kept.reverse()
    everything = not count_cut and len(tail) >= total and picked["exact"]
    if everything:
        ordered, order = kept, "all"
    else:
        count_cut = True
        oldest = kept[0]["seq"] if kept else None
        early = [e for e in head if oldest is None or _before(e, oldest, picked)]
        ordered = early + kept
        order = "head+tail" if early else "tail"
    out = [shown(e, a.timestamps) for e in ordered]
    n_head = len(ordered) - len(kept)
    # the byte budget over the events as JSON: the oldest go first
    budget = a.max_bytes
    out = [_squeeze(e, budget) for e in out]
    sizes = [_size(e) for e in out]
    drop = 0
    while sum(sizes[drop:]) > budget and drop < len(out) - 1:
        drop += 1
    bytes_cut = drop > 0
    if bytes_cut:
        out = out[drop:]
        n_head = max(0, n_head - drop)
        if not n_head:
            order = "tail"
    omitted = max(0, total - len(out))
    hints = []
    if count_cut or bytes_cut or not picked["exact"]:
        if len(tail) >= a.tail and a.tail < 500:
            hints.append(f"--tail {min(500, a.tail * 2)}")
        if count_cut and messages > a.messages and a.messages < 500:
            hints.append(f"--messages {min(500, a.messages * 2)}")
        if bytes_cut and a.max_bytes < 61_440:
            hints.append("--max-bytes 61440")
        if a.head == 0 and omitted:
            hints.append("--head 5 for the oldest")
        hints.append("--preset dialog or --types to narrow")
        if not picked["exact"]:
            hints.append("--full for an exact total" if not a.tail_scan else
                         "drop --tail-scan for an exact total")
    nxt = ("more: " + "; ".join(hints)) if (count_cut or bytes_cut or omitted) else None
    return {"session": info, "provenance": prov,
            "preset": a.preset if not a.types else None, "types": list(types),
            "scan": picked["scan"], "total": total, "total_exact": picked["exact"],
            "shown": len(out), "head_shown": n_head, "order": order,
            "truncated": bool(count_cut or bytes_cut),
            "count_truncated": count_cut, "bytes_truncated": bytes_cut, "omitted": omitted,
            "next": nxt, "counts": picked["counts"], "events": out}


def _size(ev: dict) -> int:
    return len(json.dumps(ev, ensure_ascii=False, default=str).encode()) + 1


def _squeeze(ev: dict, budget: int) -> dict:
    """One event never exceeds the byte budget on its own: its arguments and text are cut
    harder (the whole record stays at `offset`)."""
    if _size(ev) <= budget:
        return ev
    ev = dict(ev)
    if "args" in ev:
        ev["args"] = _cut(ev["args"], 200)
        if _size(ev) > budget:
            ev["args"] = {"_cut": f"{len(json.dumps(ev['args'], default=str)):,} bytes of "
                                  "arguments: the whole record is at `offset`"}
    text = ev.get("text")
    if isinstance(text, str):
        ev.setdefault("text_chars", len(text))
        while _size(ev) > budget and len(ev["text"]) > 1:
            ev["text"] = ev["text"][: len(ev["text"]) // 2] + "…"
    return ev


def _before(ev: dict, oldest_seq: int, picked: dict) -> bool:
    """Whether a head event comes before the oldest tail event (seqs from the end are < 0)."""
    if oldest_seq < 0:
        return True
    return ev["seq"] < oldest_seq
