"""Handing a conversation over to its successor (after /clear or compaction, or on request): the
successor takes its name, note, listen mode, unread mail and open obligations, and what is
addressed to the old id from then on arrives at the successor. Stdlib only (the SessionStart hook
links successors)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ..core import events, sessions, settings
from ..core.context import Ctx
from ..core.errors import NexusError
from ..messages import mailbox
from ..tasks import ledger

if TYPE_CHECKING:
    from ..core.proctable import Proc
    from .models import HandoffArgs


def transfer(conn: sqlite3.Connection, old_id: str, new_id: str, now: float) -> dict:
    old = sessions.get(conn, old_id)
    assert old is not None
    moved = mailbox.move_unread(conn, old_id, new_id)
    tasks = ledger.move_open(conn, old_id, new_id, now)
    sessions.hand_over(conn, old, new_id, now)
    return {"from": old_id, "to": new_id, "messages": moved, "tasks": tasks, "name": old["name"]}


# A Claude Code /clear ends the old conversation (SessionEnd, reason `clear`) and starts the new
# one (SessionStart, source `clear`) from the same process within ~0.1 s; an end this recent
# still pairs with the next start (generous: the SessionEnd hook itself may be slow).
CLEAR_PAIRING = 60.0
# sources of a SessionStart that begin a new conversation in a running client: Claude Code
# /clear; Codex /clear (`clear`) and /new (`startup`, from a process that already ran one)
SUCCEEDS = ("clear", "startup")


def on_session_start(conn: sqlite3.Connection, sid: str, source: object, proc: Proc,
                     now: float, root: str) -> str | None:
    """A client process runs one conversation at a time: a SessionStart for another id replaces
    the one it ran before. That one goes offline; when this conversation begins afresh in the
    same process (not a resumed one, not compaction, which keeps the id), it is the
    predecessor and hands over, unless handoff is off. Returns the predecessor's id.

    Observed (contract/hook.json): Claude Code /clear sends SessionEnd(clear) for the old id,
    then SessionStart(clear); Codex /new and /clear send nothing until the next prompt, then
    SessionStart(startup|clear) while the old thread is still idle; /resume in either switches
    to an existing id. Another process's sessions are never touched."""
    if source == "compact":
        return None
    prev = None
    for row in sessions.of_process(conn, proc):
        if row["id"] == sid or row["successor"]:
            continue
        state = sessions.effective_status(row, now)
        if source == "startup" and state == "working":
            continue  # a thread still at work beside this one (an app server): not replaced
        just_cleared = row["end_reason"] == "clear" and now - row["last_active"] <= CLEAR_PAIRING
        if state != "offline":
            sessions.update(conn, row["id"], status="offline")
        elif not just_cleared:
            continue
        prev = prev or row
    if prev is None or source not in SUCCEEDS:
        return None
    sessions.update(conn, prev["id"], successor=sid)
    sessions.update(conn, sid, predecessor=prev["id"])
    if prev["handoff"] and settings.load(root)["handoff"]:
        moved = transfer(conn, prev["id"], sid, now)
        events.record(conn, now, sid, "session.handoff", prev["id"], trigger=str(source),
                      messages=moved["messages"], tasks=moved["tasks"], name=moved["name"])
    return prev["id"]


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
