"""The `handoff` tool: status of, switch for, or an explicit handoff of a conversation (the
succession itself, which the SessionStart hook runs, is in succession.py)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ..core import availability, discovery, events, sessions, settings, shellcmd
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.settings import HANDOFF_OFFER
from ..core.text import one_line
from ..messages import mailbox
from .succession import transfer

if TYPE_CHECKING:
    from .models import HandoffArgs


TRIGGER = ("a new conversation in the same client process: Claude Code /clear, Codex /new or "
           "/clear (compaction keeps the conversation and its id; a resumed conversation is its "
           "own)")


def handoff(ctx: Ctx, a: HandoffArgs) -> dict:
    """Status of, switch for, or an explicit handoff of this conversation to a successor: one
    its own client made takes over at once; any other live session takes over only when it
    accepts the offer."""
    write = a.action != "status"
    with (ctx.write() if write else ctx.read()) as conn:
        me = ctx.me(conn, register=write)
        done = None
        if a.action in ("enable", "disable"):
            sessions.update(conn, me.id, handoff=int(a.action == "enable"))
        elif a.action == "now":
            done = offer(ctx, conn, me, a)
        elif a.action == "accept":
            done = accept(ctx, conn, me, a)
        row = sessions.get(conn, me.id)
        link = {k: (discovery.ref(conn, row[k]) if row and row[k] else None)
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
        pending = row if open_offer(row, ctx.now) else None
        return {
            "session": me.id, **link,
            "switch": switch, "enabled": enabled, "trigger": TRIGGER, "deferred": deferred,
            "last_handoff_at_epoch": last["at"] if last else None,
            "last": record(conn, last) if last else None,
            "moved": {k: done[k] for k in ("to", "messages", "tasks", "name")} if done else None,
            "offered": {"to": discovery.ref(conn, pending["offered_to"]),
                        "expires_at_epoch": pending["offered_at"] + HANDOFF_OFFER}
            if pending else None,
            "offers": [discovery.peer_ref(r, r["id"]) for r in offers_to(conn, me.id, ctx.now)],
        }


def open_offer(row: sqlite3.Row | None, now: float) -> bool:
    """Whether the session `row` has a handoff on offer that has not lapsed or been taken."""
    return bool(row and row["offered_to"] and row["offered_at"] is not None
                and now - row["offered_at"] <= HANDOFF_OFFER and not row["successor"])


def offers_to(conn: sqlite3.Connection, sid: str, now: float) -> list[sqlite3.Row]:
    return [r for r in conn.execute("SELECT * FROM sessions WHERE offered_to = ?"
                                    " ORDER BY offered_at", (sid,)) if open_offer(r, now)]


def made_by_my_client(mine: sqlite3.Row | None, to: sqlite3.Row) -> bool:
    """Whether `to` runs in the very client process that runs the caller (a successor its own
    client made: a Codex app server's next thread)."""
    return bool(mine and mine["client_pid"] and (mine["client_pid"], mine["client_start"])
                == (to["client_pid"], to["client_start"]) and sessions.here(to))


def offer(ctx: Ctx, conn: sqlite3.Connection, me: sessions.Caller, a: HandoffArgs) -> dict | None:
    """`now --to`: a successor the caller's own client made takes over at once; any other live
    session is offered the handoff, and nothing moves until it accepts (a session never gets
    another's name, mail and obligations without asking for them)."""
    if not a.to:
        raise NexusError(
            "invalid_argument", "--to", "nexus never starts a conversation itself (no "
            "daemon, no model calls): `now` hands over to a live session you name",
            "pass --to SESSION, or start the successor in your client (Claude Code "
            "/clear, Codex /new): it inherits on its own")
    to = discovery.resolve_target(conn, me, a.to, ctx.now, a.all_workspaces)
    if availability.effective_status(to, ctx.now) == "offline":
        raise NexusError("target_not_found", a.to, "that session is offline",
                         "hand over to a live session (`nexus peers`)")
    mine = sessions.get(conn, me.id)
    if made_by_my_client(mine, to):
        return take(ctx, conn, me.id, to["id"], "now")
    sessions.update(conn, me.id, offered_to=to["id"], offered_at=ctx.now)
    events.record(conn, ctx.now, me.id, "session.handoff_offered", to["id"])
    name = one_line(mine["name"]) if mine else me.id
    handle = mine["handle"] if mine else me.id
    mailbox.notice(conn, to["id"], f"{name} ({handle}) offers you its work: its name, note, "
                   f"unread mail and open tasks. Take them with `{shellcmd.name(conn)} handoff "
                   f"accept --from-session {handle}` within {HANDOFF_OFFER // 60} minutes, or "
                   "leave it: nothing moves unless you accept.", ctx.now)
    ctx.wake_later(to["id"])
    return None


def accept(ctx: Ctx, conn: sqlite3.Connection, me: sessions.Caller,
           a: HandoffArgs) -> dict | None:
    """`accept --from-session S`: take over what S offered to this session."""
    if not a.from_session:
        raise NexusError("invalid_argument", "--from-session", "accept takes over from the "
                         "session that offered it its handoff", "pass --from-session SESSION "
                         "(`nexus handoff status` lists the offers)")
    giver = discovery.resolve_target(conn, me, a.from_session, ctx.now, True,
                                    include_offline=True)
    if giver["offered_to"] != me.id or not open_offer(giver, ctx.now):
        raise NexusError("handoff_not_offered", a.from_session,
                         f"{giver['id']} offers no handoff to you (never offered, already "
                         f"taken, or older than {HANDOFF_OFFER // 60} minutes)",
                         "ask it to offer again (`nexus handoff now --to` you)")
    return take(ctx, conn, giver["id"], me.id, "accept")


def take(ctx: Ctx, conn: sqlite3.Connection, old: str, new: str, trigger: str) -> dict:
    done = transfer(conn, old, new, ctx.now)
    sessions.update(conn, old, offered_to=None, offered_at=None)
    events.record(conn, ctx.now, old, "session.handoff", old, trigger=trigger, to=new,
                  messages=done["messages"], tasks=done["tasks"], name=done["name"])
    ctx.wake_later(new)
    return done


def record(conn: sqlite3.Connection, row: sqlite3.Row) -> dict:
    import json

    detail = json.loads(row["detail"] or "{}")
    old, new = row["target"], detail.get("to", row["actor"])
    return {"from": discovery.ref(conn, old), "to": discovery.ref(conn, new),
            "trigger": detail.get("trigger", ""), "messages": detail.get("messages", 0),
            "tasks": detail.get("tasks", 0)}
