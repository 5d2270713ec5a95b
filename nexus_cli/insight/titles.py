"""`nexus rename`: a session's title, shown in listings and searched first (seed 001's
rename_session). Stdlib only.

Rights: the session itself, or the person at the shell; one agent never retitles another
agent's session (a person acting for a session with `--as` is that session). A title is not a
name: names address live sessions and stay unique; a title says what a conversation is about,
needs not be unique, and also fits sessions nexus never saw (kept by their id)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import events
from ..core.context import Ctx
from ..core.errors import NexusError
from . import index, locate

if TYPE_CHECKING:
    from .models import RenameArgs


def rename(ctx: Ctx, a: RenameArgs) -> dict:
    title = " ".join(a.title.split())
    if not title:
        raise NexusError("invalid_argument", "TITLE" if ctx.face == "cli" else
                         "session_rename.title", "the title is blank", "give the new title")
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        loc = locate.resolve(conn, me, a.target, ctx.now, a.all_workspaces)
        if me.is_agent and loc.session_id != me.id:
            raise NexusError("not_your_session", a.target,
                             f"{loc.session_id} is another agent's session: a session may "
                             "retitle itself, and the person at the shell any session",
                             "ask its owner (`nexus send`), or have the person run the rename")
        before = index.titles(conn, [loc.session_id]).get(loc.session_id)
        index.set_title(conn, loc.session_id, title, me.id, ctx.now)
        events.record(conn, ctx.now, me.id, "session.rename", loc.session_id, title=title,
                      previous=before["title"] if before else None)
    return {"session_id": loc.session_id, "title": title,
            "previous": before["title"] if before else None, "set_by": me.id,
            "note": "shown by `nexus sessions`, `nexus log` and the board, and searched first; "
                    "the session's name (how it is addressed) is unchanged"}
