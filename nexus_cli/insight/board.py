"""The data of the live board (`nexus board`): every session in scope with what it is doing
now, its inbox, the tasks it owns and waits on, its last answer; and the wait graph. The board
itself (a face) draws it. Stdlib only."""

from __future__ import annotations

import os

from ..core import sessions
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.sessions import Caller
from . import index, locate, recent, waits

OPEN = waits.OPEN_TASKS


class Transcripts:
    """What the board last read from each transcript, read again only when the file changed."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[int, float, dict]] = {}

    def activity(self, client: str, path: str) -> dict:
        try:
            st = os.stat(path)
        except OSError:
            return {}
        got = self.seen.get(path)
        if got and got[:2] == (st.st_size, st.st_mtime):
            return got[2]
        act = recent.activity(client, path)
        self.seen[path] = (st.st_size, st.st_mtime, act)
        return act


def snapshot(ctx: Ctx, all_workspaces: bool, include_offline: bool,
             cache: Transcripts | None = None) -> dict:
    cache = cache or Transcripts()
    with ctx.read() as conn:
        me: Caller = ctx.me(conn)
        rows = sessions.scoped_rows(conn, me, ctx.now, all_workspaces, include_offline)
        marks = ",".join("?" * len(OPEN))
        items = []
        for r in rows:
            unread, _ = conn.execute(
                "SELECT count(*), 0 FROM messages WHERE recipient = ? AND read_at IS NULL AND"
                " expired_at IS NULL", (r["id"],)).fetchone()
            owns = conn.execute(f"SELECT count(*) FROM tasks WHERE target = ? AND status IN"
                                f" ({marks}) AND mode != 'self'", (r["id"], *OPEN)).fetchone()[0]
            waits_on = conn.execute(f"SELECT count(*) FROM tasks WHERE sender = ? AND status IN"
                                    f" ({marks}) AND mode != 'self' AND target != sender",
                                    (r["id"], *OPEN)).fetchone()[0]
            items.append({"row": r, "unread": unread, "owns": owns, "waits_on": waits_on})
        graph = waits.graph(conn, me, ctx.now, all_workspaces)
        titles = index.titles(conn, [r["id"] for r in rows])
    out = []
    for item in items:
        r = item["row"]
        status = sessions.effective_status(r, ctx.now)
        act: dict = {}
        found = recent.transcript_of(r)
        if found is not None and (status != "offline" or not r["last_assistant"]):
            act = cache.activity(*found)
        tool = act.get("last_tool") or r["last_tool"]
        since = act.get("last_tool_epoch") if act.get("last_tool") else None
        answer = r["last_assistant"] or act.get("last_assistant")
        title = titles.get(r["id"])
        out.append({
            "id": r["id"], "handle": r["handle"], "name": r["name"], "client": r["client"],
            "status": status, "self": r["id"] == me.id,
            "title": title["title"] if title else None,
            "tool": tool, "tool_running": bool(act.get("tool_running")),
            "tool_since_epoch": since, "last_active_epoch": r["last_active"],
            "transcript_epoch": act.get("last_epoch"),
            "unread": item["unread"], "owns": item["owns"], "waits_on": item["waits_on"],
            "answer": answer, "listening": bool(r["listening"]),
            "transcript": found[1] if found else None,
        })
    graph.pop("adj", None)
    return {"me": me.id, "project": me.project, "all_workspaces": all_workspaces,
            "sessions": out, "waits": graph, "now_epoch": ctx.now}


def focus_log(ctx: Ctx, target: str, all_workspaces: bool, n: int = 8) -> dict:
    """The newest few dialog and tool events of one session, for the board's focus pane."""
    from ..clients import transcript as common

    with ctx.read() as conn:
        me = ctx.me(conn)
        loc = locate.resolve(conn, me, target, ctx.now, all_workspaces)
    path = loc.require(target)
    mod = locate.READERS[loc.client]
    try:
        events, _, _, _ = common.tail(path, mod.reader,
                                      lambda e: e["type"] in common.DEFAULT_TYPES, n)
    except OSError as exc:
        raise NexusError("transcript_not_found", target, f"{path}: {exc.strerror or exc}",
                         "check the file; nothing was changed") from None
    return {"session_id": loc.session_id, "name": loc.row["name"] if loc.row else None,
            "path": path, "events": events}
