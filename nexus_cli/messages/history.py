"""Looking back: `inbox` (recent messages in both directions, read or not, with receipts) and
`message show`. Read-only: neither marks anything read. Stdlib only."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from ..core import discovery
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.listing import envelope
from . import mailbox
from .direct import message

if TYPE_CHECKING:
    from .models import InboxArgs, MessageShowArgs


def entry(conn: sqlite3.Connection, row: sqlite3.Row, me: str) -> dict[str, Any]:
    """A message as the history shows it: who it was to, which way it went, where it stands."""
    return {**message(conn, row), "to": discovery.ref(conn, row["recipient"]),
            "direction": "out" if row["sender"] == me else "in", "state": mailbox.state(row),
            "delivered_at_epoch": row["delivered_at"], "read_at_epoch": row["read_at"],
            "expired_at_epoch": row["expired_at"]}


def inbox(ctx: Ctx, a: InboxArgs) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        peer = None
        if a.peer:
            peer = discovery.resolve_target(conn, me, a.peer, ctx.now, a.all_workspaces,
                                           include_offline=True)["id"]
        rows, total = mailbox.history(conn, me.id, peer, a.sent, a.received, a.unread, a.limit,
                                      a.offset)
        return envelope([entry(conn, r, me.id) for r in rows], total, a.offset, a.limit)


def show(ctx: Ctx, a: MessageShowArgs) -> dict:
    with ctx.read() as conn:
        me = ctx.me(conn)
        row = mailbox.get(conn, a.message_id)
        if row is None or me.id not in (row["sender"], row["recipient"]):
            raise NexusError("message_not_found", a.message_id,
                             "no message with that id was sent by you or to you",
                             "find it with `nexus inbox`")
        return entry(conn, row, me.id)
