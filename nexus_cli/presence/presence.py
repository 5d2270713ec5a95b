"""Who am I, who else is here, how I present myself, what a session is doing, listen mode.
Stdlib only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import availability, discovery, identity, sessions, unseen
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.listing import envelope
from ..core.settings import IDLE_WAIT, LISTEN_WAIT
from ..delivery import notify
from ..messages import mailbox
from ..reservations import leases
from ..reservations.reserve import item as reservation

if TYPE_CHECKING:
    from ..core.models import NoArgs
    from .models import ListenArgs, PeersArgs, ProfileArgs, StatusArgs


def whoami(ctx: Ctx, a: NoArgs) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        row = sessions.get(conn, me.id)
    return {
        "id": me.id,
        "handle": row["handle"] if row else identity.handle_base(me.id),
        "name": row["name"] if row else identity.base_name(me.id, me.cwd),
        "client": me.client,
        "source": me.source,
        "registered": row is not None,
        "status": availability.effective_status(row, ctx.now) if row else None,
        "cwd": me.cwd,
        "project": me.project,
        "scope": me.key,
        "note": row["note"] if row else "",
        "store": ctx.store.root,
        "subagent": me.agent or None,
    }


def peers(ctx: Ctx, a: PeersArgs) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        rows = discovery.scoped_rows(conn, me, ctx.now, a.all_workspaces, a.include_offline)
        if a.query:
            rows = [r for r in rows if discovery.matches(r, a.query)]
        page = [discovery.profile(r, ctx.now, me.id, conn)
                for r in rows[a.offset : a.offset + a.limit]]
        starting = [unseen.shown(n) for n in unseen.running(
            conn, ctx.store.root, None if a.all_workspaces else me.project)] \
            if not a.query else []
    return envelope(page, len(rows), a.offset, a.limit, self_id=me.id, unseen=starting)


def set_profile(ctx: Ctx, a: ProfileArgs) -> dict:
    if a.name is None and a.note is None and a.wake is None:
        raise NexusError("invalid_argument", "profile", "give a name, a note or --wake",
                         "e.g. `nexus profile --name reviewer --note 'reviewing auth'`")
    if a.name is not None:
        identity.check_name(a.name)
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        if a.name is not None:
            if me.is_agent:
                identity.check_agent_name(a.name, sessions.person_names(conn))
            holder = sessions.name_holder(conn, a.name, ctx.now, exclude=me.id)
            if holder:
                raise NexusError("name_taken", a.name, f"live session {holder} uses it",
                                 "choose another name")
            sessions.update(conn, me.id, name=a.name)
        if a.note is not None:
            sessions.update(conn, me.id, note=a.note)
        if a.wake is not None:
            sessions.update(conn, me.id, wake=int(a.wake == "on"))
        row = sessions.known(conn, me.id)
        return {"profile": discovery.profile(row, ctx.now, me.id)}


def listen(ctx: Ctx, a: ListenArgs) -> dict:
    """Listen mode: each time a turn ends, the Stop hook waits for news and continues the turn."""
    on = a.state == "on"
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        if on and not me.is_agent:
            raise NexusError("agents_only", "listen", "listen mode keeps an agent's turn open "
                             "through its Stop hook, and a shell has none",
                             "run `nexus watch` to follow your messages as they arrive")
        sessions.update(conn, me.id, listening=int(on))
        if on:
            for sender in notify.idle(conn, me.id, ctx.now, "started listening"):
                ctx.wake_later(sender)
        row = sessions.known(conn, me.id)
    return {"listening": on, "profile": discovery.profile(row, ctx.now, me.id),
            "note": f"each time your turn ends, nexus waits for a message (an unattended run's "
                    f"Stop hook up to {LISTEN_WAIT} s; a person's session in the background, up "
                    f"to {IDLE_WAIT // 60} minutes) and continues the conversation with it"
                    if on else
                    "turns end normally; messages are announced at the next prompt or tool call"}


STATUS_NOTE = ("A finished turn is not a finished task: only an explicit report (or a reply) says "
               "the work is done. Read-only: this probe never wakes the session.")


def named_by_id(target: str, row) -> bool:
    """Whether `target` named the session by its id or (a beginning of) its handle, which reach
    it offline too, rather than by its name, which does not."""
    target = target.strip()
    return target in (row["id"], row["handle"]) or (
        discovery.is_handle_prefix(target) and row["handle"].startswith(target))


def status(ctx: Ctx, a: StatusArgs) -> dict:
    """A read-only progress probe of one session, as its hooks last saw it (and, for what they
    did not see, as the end of its transcript shows it)."""
    from ..insight import recent

    with ctx.read() as conn:
        me = ctx.me(conn)
        row = discovery.resolve_target(conn, me, a.target, ctx.now, a.all_workspaces,
                                       allow_self=True, include_offline=True)
        unread, unannounced = mailbox.depth(conn, row["id"])
        shown = discovery.profile(row, ctx.now, me.id, conn)
        held = [reservation(conn, r, me.id) for r in leases.held_by(conn, row["id"], ctx.now)]
    from ..messages.direct import outlook

    state = availability.presence(row, ctx.now)
    seen = recent.fill_status(row)
    return {
        "session": shown,
        "state": state.status,
        "outlook": outlook(state, handle=None if named_by_id(a.target, row) else row["handle"]),
        "listen_mode": bool(row["listening"]),
        "last_assistant_text": row["last_assistant"] or seen.get("last_assistant_text"),
        "last_user_text": row["last_prompt"],
        "last_tool": row["last_tool"] or seen.get("last_tool"),
        "transcript_fields": sorted(k for k in seen if k != "transcript_path"),
        "last_event": row["last_event"],
        "last_turn_end_epoch": row["last_turn_end"],
        "last_prompt_epoch": row["last_prompt_at"],
        "pending": {"unread": unread, "unannounced": unannounced},
        "transcript_path": row["transcript_path"] or seen.get("transcript_path"),
        "successor": row["successor"],
        "reservations": held,
        "note": STATUS_NOTE,
    }
