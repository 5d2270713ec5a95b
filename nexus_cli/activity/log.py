"""`nexus events`: the activity log, newest first, by exact action or prefix. Stdlib only."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..core.context import Ctx
from ..core.listing import envelope

if TYPE_CHECKING:
    from .models import EventsArgs


def events(ctx: Ctx, a: EventsArgs) -> dict:
    with ctx.read() as conn:
        ctx.me(conn)
        where, params = "", []
        if a.action:  # an exact action, or a prefix ending at a dot
            prefix = a.action.rstrip(".") + "."
            where = " WHERE action = ? OR substr(action, 1, ?) = ?"
            params = [a.action, len(prefix), prefix]
        total = conn.execute(f"SELECT count(*) FROM events{where}", params).fetchone()[0]
        rows = conn.execute(f"SELECT * FROM events{where} ORDER BY seq DESC LIMIT ? OFFSET ?",
                            (*params, a.limit, a.offset)).fetchall()
    items = [{"seq": r["seq"], "timestamp_epoch": r["at"], "actor": r["actor"],
              "action": r["action"], "target": r["target"],
              "detail": json.loads(r["detail"]) if r["detail"] else None} for r in rows]
    return envelope(items, total, a.offset, a.limit, key="events")
