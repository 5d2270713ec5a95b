"""The `handoff` tool: status of, switch for, or an explicit handoff of a conversation (the
succession itself, which the SessionStart hook runs, is in succession.py)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ..core import events, sessions, settings
from ..core.context import Ctx
from ..core.errors import NexusError
from .succession import transfer

if TYPE_CHECKING:
    from .models import HandoffArgs


TRIGGER = ("a new conversation in the same client process: Claude Code /clear, Codex /new or "
           "/clear (compaction keeps the conversation and its id; a resumed conversation is its "
           "own)")


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
                raise NexusError(
                    "invalid_argument", "--to", "nexus never starts a conversation itself (no "
                    "daemon, no model calls): `now` hands over to a live session you name",
                    "pass --to SESSION, or start the successor in your client (Claude Code "
                    "/clear, Codex /new): it inherits on its own")
            to = sessions.resolve_target(conn, me, a.to, ctx.now, a.all_workspaces)
            if sessions.effective_status(to, ctx.now) == "offline":
                raise NexusError("target_not_found", a.to, "that session is offline",
                                 "hand over to a live session (`nexus peers`)")
            done = transfer(conn, me.id, to["id"], ctx.now)
            events.record(conn, ctx.now, me.id, "session.handoff", me.id, trigger="now",
                          to=to["id"], messages=done["messages"], tasks=done["tasks"],
                          name=done["name"])
            ctx.wake_later(to["id"])
        row = sessions.get(conn, me.id)
        link = {k: (sessions.ref(conn, row[k]) if row and row[k] else None)
                for k in ("predecessor", "successor")}
        switch = bool(settings.load(ctx.store.root)["handoff"])
        enabled = bool(row["handoff"]) if row else True
        deferred = [why for why, applies in (
            ("handoff is off for everyone (`nexus config set handoff 1` turns it on)", not switch),
            ("this conversation turned it off (`nexus handoff enable`)", not enabled),
            ("this conversation was already handed over", bool(row and row["successor"])),
        ) if applies]
        last = conn.execute(
            "SELECT at, actor, target, detail FROM events WHERE action = 'session.handoff'"
            " AND (actor = :me OR target = :me) ORDER BY seq DESC LIMIT 1", {"me": me.id},
        ).fetchone()
        return {
            "session": me.id, **link,
            "switch": switch, "enabled": enabled, "trigger": TRIGGER, "deferred": deferred,
            "last_handoff_at_epoch": last["at"] if last else None,
            "last": record(conn, last) if last else None,
            "moved": {k: done[k] for k in ("to", "messages", "tasks", "name")} if done else None,
        }


def record(conn: sqlite3.Connection, row: sqlite3.Row) -> dict:
    import json

    detail = json.loads(row["detail"] or "{}")
    old, new = row["target"], detail.get("to", row["actor"])
    return {"from": sessions.ref(conn, old), "to": sessions.ref(conn, new),
            "trigger": detail.get("trigger", ""), "messages": detail.get("messages", 0),
            "tasks": detail.get("tasks", 0)}
