"""What a session did last, from the end of its transcript: its last answer, its last tool call
and whether that call is still running. Used where the hooks saw nothing (a session started
before nexus was installed; tool calls that had no news to announce). Reads at most the last
few megabytes, never the whole file. Stdlib only."""

from __future__ import annotations

import os
import sqlite3

from ..clients import transcript as common
from ..core import identity, sessions
from . import locate

WINDOWS = (1 << 18, 1 << 20, 4 << 20)


def activity(client: str, path: str) -> dict:
    """{last_assistant, last_assistant_epoch, last_tool, last_tool_epoch, tool_running,
    last_epoch} from the end of the transcript (empty when it cannot be read)."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return {}
    out: dict = {}
    for window in WINDOWS:
        reader = locate.READERS[client].reader()
        out = {"last_assistant": None, "last_assistant_epoch": None, "last_tool": None,
               "last_tool_epoch": None, "tool_running": False, "last_epoch": None}
        pending: dict[str, str] = {}
        try:
            with common.open_regular(path) as fh:
                start = common.line_start_after(fh, size - window) if window < size else 0
                for offset, line in common.lines(fh, start):
                    for ev in reader.feed(line, offset):
                        _note(ev, out, pending)
                for ev in reader.finish():
                    _note(ev, out, pending)
        except OSError:
            return {}
        out["tool_running"] = bool(out["last_tool"]) and out.pop("_call", None) in pending
        if (out["last_assistant"] and out["last_tool"]) or start == 0:
            break
    out.pop("_call", None)
    return out


def _note(ev: dict, out: dict, pending: dict[str, str]) -> None:
    t = ev["type"]
    at = ev.get("time_epoch")
    if at is not None:
        out["last_epoch"] = max(at, out["last_epoch"] or at)
    if t == "assistant/message" and (ev.get("text") or "").strip():
        out["last_assistant"], out["last_assistant_epoch"] = ev["text"], at
    elif t == "tool/call":
        out["last_tool"], out["last_tool_epoch"] = ev.get("tool"), at
        out["_call"] = ev.get("call_id")
        if ev.get("call_id"):
            pending[ev["call_id"]] = ev.get("tool") or ""
    elif t == "tool/result" and ev.get("call_id"):
        pending.pop(ev["call_id"], None)
    elif t == "turn/end":
        pending.clear()


def transcript_of(row: sqlite3.Row) -> tuple[str, str] | None:
    """(client, path) of a nexus session's transcript, if one can be found."""
    client, raw = identity.split_id(row["id"])
    if client not in locate.READERS:
        return None
    path, _ = locate.transcript_for(client, raw, row, row["cwd"])
    return (client, path) if path else None


def fill_status(row: sqlite3.Row) -> dict:
    """For `nexus status`: the last answer and the last tool from the transcript, where the hooks
    recorded none. Returns only the fields it could fill (and the transcript's path)."""
    if row["last_assistant"] and row["last_tool"]:
        return {}
    found = transcript_of(row)
    if found is None:
        return {}
    act = activity(*found)
    out: dict = {}
    if not row["last_assistant"] and act.get("last_assistant"):
        out["last_assistant_text"] = sessions.tail(act["last_assistant"], sessions.ASSISTANT_TAIL)
    if not row["last_tool"] and act.get("last_tool"):
        out["last_tool"] = act["last_tool"]
    if out and not row["transcript_path"]:
        out["transcript_path"] = found[1]
    return out
