"""The data of the live board (`nexus board`, on a terminal or as a web page): every session in
scope with what it is doing now, its inbox, the tasks it owns and waits on, its last answer, its
machine; the wait graph; and beside them (`extras`) the permission requests the viewer may
answer, the file reservations in scope and the recent activity. The faces draw it. Stdlib
only."""

from __future__ import annotations

import os

from ..core import availability, discovery, sessions
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
        rows = discovery.scoped_rows(conn, me, ctx.now, all_workspaces, include_offline)
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
        team = sessions.in_team(conn)
    out = []
    for item in items:
        r = item["row"]
        seen = availability.presence(r, ctx.now)
        status = seen.status
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
            "status": status, "status_reason": seen.reason, "waiting_for": seen.waiting_for,
            "wakeable": seen.wakeable, "self": r["id"] == me.id,
            "title": title["title"] if title else None,
            "tool": tool, "tool_running": bool(act.get("tool_running")),
            "tool_since_epoch": since, "last_active_epoch": r["last_active"],
            "transcript_epoch": act.get("last_epoch"),
            "unread": item["unread"], "owns": item["owns"], "waits_on": item["waits_on"],
            "answer": answer, "listening": bool(r["listening"]),
            "transcript": found[1] if found else None, "machine": r["machine"],
        })
    graph.pop("adj", None)
    return {"me": me.id, "project": me.project, "all_workspaces": all_workspaces, "team": team,
            "sessions": out, "waits": graph, "now_epoch": ctx.now}


def extras(ctx: Ctx, all_workspaces: bool, ids: list[str], most: int = 20) -> dict:
    """What the board shows beside the sessions: the permission requests the viewer may answer
    (oldest first), the live file reservations in scope (oldest first) and the recent activity
    (newest first) of the sessions `ids` and of the activity log."""
    from ..approvals import answer
    from ..reservations import leases, reserve

    with ctx.read() as conn:
        me = ctx.me(conn)
        asks, asked = answer.pending(conn, me, ctx.now, all_workspaces, most, 0)
        root = None if all_workspaces else os.path.realpath(me.project or me.cwd or "/")
        rows = leases.listed(conn, root, ctx.now)
        if root is not None:  # and those anchored above it covering it, as `reservations` lists
            rows = leases.covering_project(conn, root, rows, ctx.now)
        held = [reserve.item(conn, r, me.id) for r in rows]
        done = activity(conn, set(ids), most)
    return {"approvals": asks, "approvals_total": asked, "reservations": held, "activity": done}


def activity(conn, ids: set[str], most: int) -> list[dict]:
    """The newest messages and delegations among `ids` and entries of the activity log, newest
    first: when, who, to whom, what (one line, escaped)."""
    import json

    from ..core.text import one_line

    names: dict[str, str] = {}

    def name(sid: str | None) -> str | None:
        if sid is None:
            return None
        if sid not in names:
            row = sessions.get(conn, sid)
            names[sid] = row["name"] if row is not None and row["name"] else sid
        return names[sid]

    out = []
    for r in conn.execute("SELECT * FROM messages ORDER BY seq DESC LIMIT ?", (most * 4,)):
        if (r["sender"] in ids or r["recipient"] in ids) and r["kind"] not in ("task", "report"):
            kind = "reply" if r["reply_to"] else r["kind"]  # tasks: from their ledger, below
            out.append({"at_epoch": r["created_at"], "kind": kind, "id": r["id"],
                        "who": name(r["sender"]), "whom": name(r["recipient"]),
                        "what": one_line(r["text"], 140)})
    for r in conn.execute("SELECT * FROM tasks WHERE mode != 'self' ORDER BY seq DESC LIMIT ?",
                          (most * 2,)):
        if r["sender"] in ids or r["target"] in ids:
            out.append({"at_epoch": r["created_at"], "kind": "delegation", "id": r["id"],
                        "who": name(r["sender"]), "whom": name(r["target"]),
                        "what": one_line(r["task"], 140)})
            if r["closed_at"]:
                out.append({"at_epoch": r["closed_at"], "kind": f"task {r['status']}",
                            "id": r["id"], "who": name(r["target"]), "whom": name(r["sender"]),
                            "what": one_line(r["result"] or r["error"] or r["task"], 140)})
    for r in conn.execute("SELECT * FROM events ORDER BY seq DESC LIMIT ?", (most,)):
        detail = json.loads(r["detail"]) if r["detail"] else {}
        said = ", ".join(_said(k, v) for k, v in detail.items() if v not in (None, False, [], ""))
        out.append({"at_epoch": r["at"], "kind": r["action"], "id": str(r["seq"]),
                    "who": name(r["actor"]), "whom": name(r["target"]) if r["target"] and
                    ":" in r["target"] else r["target"], "what": one_line(said, 140)})
    out.sort(key=lambda e: e["at_epoch"], reverse=True)
    return out[:most]


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


def _said(key: str, value: object) -> str:
    """One detail of an activity log entry in words: `exclusive`, `ttl 3600`, `patterns a, b`."""
    if value is True:
        return key
    if isinstance(value, list):
        return f"{key} {', '.join(map(str, value))}"
    return f"{key} {value}"
