"""`nexus path`, `nexus version` and `nexus maintenance`. Stdlib only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import sessions
from ..core.context import Ctx
from ..core.store import news, wake
from ..reservations import marker
from . import expiry

if TYPE_CHECKING:
    from ..core.models import NoArgs


def store_path(ctx: Ctx, a: NoArgs) -> dict:
    return ctx.store.info()


def version(ctx: Ctx, a: NoArgs) -> dict:
    from .. import CONTRACT_VERSION, __version__

    return {"version": __version__, "contract_version": CONTRACT_VERSION}


def maintenance(ctx: Ctx, a: NoArgs) -> dict:
    with ctx.write() as conn:
        done = expiry.maintain(conn, ctx.now, limit=100_000)
        for sender in done.pop("wake"):
            ctx.wake_later(sender)
        stuck = sessions.clear_dead_waiters(conn)
    marker.settle(ctx.store, ctx.now)  # the edit check skips Python again if none is left
    return {**done, "waiters_cleared": len(stuck),
            "channels_swept": wake.sweep(ctx.store.root) + news.sweep(ctx.store.root)}
