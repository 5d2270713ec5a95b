"""Who am I, who else is here, and how I present myself. Stdlib only."""

from __future__ import annotations

from typing import Any

from . import identity, sessions
from .context import Ctx
from .errors import NexusError
from .mailbox import peer_ref


def whoami(ctx: Ctx, a: Any) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        row = sessions.get(conn, me.id)
    return {
        "id": me.id,
        "handle": row["handle"] if row else identity.handle_for(me.id),
        "name": row["name"] if row else identity.base_name(me.id, me.cwd),
        "client": me.client,
        "source": me.source,
        "registered": row is not None,
        "status": sessions.effective_status(row, ctx.now) if row else None,
        "cwd": me.cwd,
        "project": me.project,
        "note": row["note"] if row else "",
        "store": ctx.store.root,
    }


def peers(ctx: Ctx, a: Any) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        rows = sessions.scoped_rows(conn, me, ctx.now, a.all_workspaces, a.include_offline)
    if a.query:
        rows = [r for r in rows if sessions.matches(r, a.query)]
    page = rows[a.offset : a.offset + a.limit]
    truncated = a.offset + len(page) < len(rows)
    return {
        "total": len(rows),
        "count": len(page),
        "offset": a.offset,
        "limit": a.limit,
        "truncated": truncated,
        "next": f"offset={a.offset + len(page)}" if truncated else None,
        "self_id": me.id,
        "items": [sessions.profile(r, ctx.now, me.id) for r in page],
    }


def set_profile(ctx: Ctx, a: Any) -> dict:
    if a.name is None and a.note is None:
        raise NexusError("invalid_argument", "profile", "give a name, a note, or both",
                         "e.g. `nexus profile --name reviewer --note 'reviewing auth'`")
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        if a.name is not None:
            holder = conn.execute(
                f"SELECT id FROM sessions WHERE name = :n AND id != :me AND {sessions.LIVE_SQL}",
                {"n": a.name, "me": me.id, "stale": ctx.now - sessions.STALE_AFTER},
            ).fetchone()
            if holder:
                raise NexusError("name_taken", a.name, f"live session {holder['id']} uses it",
                                 "choose another name")
            conn.execute("UPDATE sessions SET name = ? WHERE id = ?", (a.name, me.id))
        if a.note is not None:
            conn.execute("UPDATE sessions SET note = ? WHERE id = ?", (a.note, me.id))
        row = sessions.get(conn, me.id)
        return {"profile": sessions.profile(row, ctx.now, me.id)}


def store_path(ctx: Ctx, a: Any) -> dict:
    return ctx.store.info()


def listen(ctx: Ctx, a: Any) -> dict:
    """Listen mode: each time a turn ends, the Stop hook waits for news and continues the turn."""
    from . import delivery

    on = a.state == "on"
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        conn.execute("UPDATE sessions SET listening = ? WHERE id = ?", (int(on), me.id))
        if on:
            for sender in delivery.notify_idle(conn, me.id, ctx.now, "started listening"):
                ctx.wake_later(sender)
        row = sessions.get(conn, me.id)
    return {"listening": on, "profile": sessions.profile(row, ctx.now, me.id),
            "note": "each time your turn ends, the Stop hook waits up to 590 s for a message and "
                    "continues the conversation with it" if on else
                    "turns end normally; messages are announced at the next prompt or tool call"}


def maintenance(ctx: Ctx, a: Any) -> dict:
    from . import delivery

    with ctx.write() as conn:
        expired = delivery.expire(conn, ctx.now, limit=100_000)
        failed = delivery.expire_tasks(conn, ctx.now)
        for sender in expired:
            ctx.wake_later(sender)
        stuck = [r["id"] for r in conn.execute(
            "SELECT id, waiter_pid FROM sessions WHERE waiter_pid IS NOT NULL")
            if not identity.pid_alive(r["waiter_pid"])]
        conn.executemany("UPDATE sessions SET waiter_pid = NULL, status = CASE WHEN status ="
                         " 'listening' THEN 'idle' ELSE status END WHERE id = ?",
                         [(s,) for s in stuck])
        purged = delivery.purge_bindings(conn, ctx.now)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('maintained_at', ?)", (repr(ctx.now),))
    from .store import wake

    return {"expired": len(expired), "tasks_expired": len(failed), "waiters_cleared": len(stuck),
            "bindings_purged": purged, "channels_swept": wake.sweep(ctx.store.root)}


STATUS_NOTE = ("A finished turn is not a finished task: only an explicit report (or a reply) says "
               "the work is done. Read-only: this probe never wakes the session.")


def status(ctx: Ctx, a: Any) -> dict:
    """A read-only progress probe of one session, as its hooks last saw it."""
    with ctx.read() as conn:
        me = ctx.me(conn)
        row = sessions.resolve_target(conn, me, a.target, ctx.now, a.all_workspaces, allow_self=True)
        unread, unannounced = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE delivered_at IS NULL) FROM messages"
            " WHERE recipient = ? AND read_at IS NULL AND expired_at IS NULL", (row["id"],)).fetchone()
    state = sessions.effective_status(row, ctx.now)
    return {
        "session": sessions.profile(row, ctx.now, me.id),
        "state": state,
        "listen_mode": bool(row["listening"]),
        "last_assistant_text": row["last_assistant"],
        "last_user_text": row["last_prompt"],
        "last_tool": row["last_tool"],
        "last_event": row["last_event"],
        "last_turn_end_epoch": row["last_turn_end"],
        "last_prompt_epoch": row["last_prompt_at"],
        "pending": {"unread": unread, "unannounced": unannounced},
        "transcript_path": row["transcript_path"],
        "successor": row["successor"],
        "note": STATUS_NOTE,
    }


def handoff(ctx: Ctx, a: Any) -> dict:
    """Status of, switch for, or an explicit handoff of this conversation to a successor."""
    write = a.action != "status"
    with (ctx.write() if write else ctx.read()) as conn:
        me = ctx.me(conn, register=write)
        done = None
        if a.action in ("enable", "disable"):
            conn.execute("UPDATE sessions SET handoff = ? WHERE id = ?",
                         (int(a.action == "enable"), me.id))
        elif a.action == "now":
            if not a.to:
                raise NexusError("invalid_argument", "handoff.to", "`now` needs --to SESSION",
                                 "name the live session that takes over")
            to = sessions.resolve_target(conn, me, a.to, ctx.now, a.all_workspaces)
            if sessions.effective_status(to, ctx.now) == "offline":
                raise NexusError("target_not_found", a.to, "that session is offline",
                                 "hand over to a live session (`nexus peers`)")
            done = sessions.transfer(conn, me.id, to["id"], ctx.now)
            ctx.wake_later(to["id"])
        row = sessions.get(conn, me.id)
        link = {k: (peer_ref(sessions.get(conn, row[k]), row[k]) if row and row[k] else None)
                for k in ("predecessor", "successor")}
        return {
            "session": me.id, **link,
            "enabled": bool(row["handoff"]) if row else True,
            "last_handoff_at_epoch": row["handoff_at"] if row else None,
            "moved": {k: done[k] for k in ("to", "messages", "tasks", "name")} if done else None,
        }
