"""What every workspace tool does first: establish the caller (a session is seed 004's
instance; so is the person at the shell) and spend one call of its rate limit. Stdlib only."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..core import events
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.sessions import Caller
from . import ratelimit


@contextmanager
def writing(ctx: Ctx) -> Iterator[tuple[sqlite3.Connection, Caller]]:
    """One write transaction: the call's token and its change commit (or roll back) together."""
    with ctx.write() as conn:
        me = ctx.me(conn, register=True)
        ratelimit.take(conn, me.id, ctx.now, ctx.store.root)
        yield conn, me


@contextmanager
def reading(ctx: Ctx, before: Callable[[sqlite3.Connection], object] | None = None,
            ) -> Iterator[tuple[sqlite3.Connection, Caller]]:
    """A read: its token is spent in a short write of its own (with `before`, what the read
    needs brought current first), but only where a current store exists (a read-only command
    never creates or migrates one: an older store was refused by the read already) and can be
    written (on read-only media, or a full disk, reading goes on). The read itself starts after
    that write, so it sees what `before` brought current."""
    with ctx.read() as conn:
        me = ctx.me(conn)
    if ctx.store.check_dir() and ctx.store.check_file():
        try:
            with ctx.store.write() as wconn:
                ratelimit.take(wconn, me.id, ctx.now, ctx.store.root)
                if before is not None:
                    before(wconn)
        except NexusError as exc:
            if exc.code not in ("store_readonly", "store_full"):
                raise
    with ctx.read() as conn:
        yield conn, me


def record(conn: sqlite3.Connection, ctx: Ctx, me: Caller, action: str, target: str | None,
           **detail: object) -> None:
    """The activity log entry of a workspace change (seed 004's list_events)."""
    events.record(conn, ctx.now, me.id, action, target, **detail)


def person(me: Caller) -> bool:
    """The person at the shell (not an agent, and not the person acting for a session)."""
    return not me.is_agent and me.source == "user"


def confirmed(me: Caller, confirm: bool, tool: str, what: str) -> None:
    """A destructive, irreversible tool: the person at the shell, or an explicit `confirm`."""
    if person(me) or confirm:
        return
    raise NexusError("confirmation_required", tool, f"{what} cannot be undone, and an agent must "
                     "confirm it", "ask the person, then call it again with confirm: true "
                     "(CLI: --confirm)")
