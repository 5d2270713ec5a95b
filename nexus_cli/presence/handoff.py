"""Handing a conversation over to its successor (after /clear or compaction, or on request): the
successor takes its name, note, listen mode, unread mail and open obligations, and what is
addressed to the old id from then on arrives at the successor. Stdlib only (the SessionStart hook
links successors)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ..core import sessions
from ..core.context import Ctx
from ..core.errors import NexusError
from ..messages import mailbox
from ..tasks import ledger

if TYPE_CHECKING:
    from .models import HandoffArgs


def transfer(conn: sqlite3.Connection, old_id: str, new_id: str, now: float) -> dict:
    old = sessions.get(conn, old_id)
    assert old is not None
    moved = mailbox.move_unread(conn, old_id, new_id)
    tasks = ledger.move_open(conn, old_id, new_id, now)
    sessions.hand_over(conn, old, new_id, now)
    return {"from": old_id, "to": new_id, "messages": moved, "tasks": tasks, "name": old["name"]}


def link_predecessor(conn: sqlite3.Connection, sid: str, client: str, client_pid: int,
                     now: float) -> str | None:
    """After /clear or compaction the client process starts a new conversation: the newest other
    live session of that process is its predecessor, which goes offline (and hands over, unless
    it turned handoff off)."""
    prev = sessions.newest_live_of_process(conn, client, client_pid, now, exclude=sid)
    if prev is None:
        return None
    sessions.update(conn, prev, status="offline", successor=sid)
    sessions.update(conn, sid, predecessor=prev)
    if sessions.get(conn, prev)["handoff"]:
        transfer(conn, prev, sid, now)
    return prev


def handoff(ctx: Ctx, a: HandoffArgs) -> dict:
    """Status of, switch for, or an explicit handoff of this conversation to a successor."""
    write = a.action != "status"
    with (ctx.write() if write else ctx.read()) as conn:
        me = ctx.me(conn, register=write)
        done = None
        if a.action in ("enable", "disable"):
            sessions.update(conn, me.id, handoff=int(a.action == "enable"))
        elif a.action == "now":
            if not a.to:
                raise NexusError("invalid_argument", "--to", "`now` needs --to SESSION",
                                 "name the live session that takes over")
            to = sessions.resolve_target(conn, me, a.to, ctx.now, a.all_workspaces)
            if sessions.effective_status(to, ctx.now) == "offline":
                raise NexusError("target_not_found", a.to, "that session is offline",
                                 "hand over to a live session (`nexus peers`)")
            done = transfer(conn, me.id, to["id"], ctx.now)
            ctx.wake_later(to["id"])
        row = sessions.get(conn, me.id)
        link = {k: (sessions.ref(conn, row[k]) if row and row[k] else None)
                for k in ("predecessor", "successor")}
        return {
            "session": me.id, **link,
            "enabled": bool(row["handoff"]) if row else True,
            "last_handoff_at_epoch": row["handoff_at"] if row else None,
            "moved": {k: done[k] for k in ("to", "messages", "tasks", "name")} if done else None,
        }
