"""Ids you can shorten: where a tool argument names a message, task, run or permission request
(its schema says which: `"x-refers": "task"`), a unique prefix of the id is accepted as the
whole one (`t-820b` for `t-820b50a89a1c`), looked up among the ids the caller may see; a prefix
that fits several is `id_ambiguous`, listing them. (Sessions: `discovery.resolve_target` takes
a unique prefix of a handle.) Stdlib only."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import NexusError

if TYPE_CHECKING:
    from .context import Ctx
    from .sessions import Caller

LISTED = 5  # candidates an ambiguous prefix names
DIGITS = 12  # hex digits of a whole id


def _runs(me: Caller, alias: str = "") -> str:
    """The runs the caller may see, as `nexus run list` shows them: an agent's own, the
    person's in this project."""
    return f"{alias}dispatcher = :me" if me.is_agent else f"{alias}project = :project"


# kind -> (prefix, the listing that shows them, the ids the caller may see (SQL: :me, :project))
KINDS: dict[str, tuple[str, str, Callable[[Caller], str]]] = {
    "message": ("m-", "nexus inbox",
                lambda me: "SELECT id FROM messages WHERE (sender = :me OR recipient = :me)"),
    "task": ("t-", "nexus tasks",
             lambda me: "SELECT id FROM tasks WHERE (sender = :me OR target = :me)"),
    "run": ("r-", "nexus run list", lambda me: f"SELECT id FROM runs WHERE {_runs(me)}"),
    "approval": ("a-", "nexus approvals",
                 lambda me: "SELECT a.id AS id FROM approvals a JOIN approval_routes r ON "
                 f"r.run_id = a.run_id WHERE a.status = 'pending' AND {_runs(me, 'r.')}"),
}


def short(kind: str, value: object) -> bool:
    """Whether `value` is a proper prefix of an id of this kind (a whole id is taken as it is,
    without a look at the store)."""
    prefix = KINDS[kind][0]
    return isinstance(value, str) and re.fullmatch(
        re.escape(prefix) + f"[0-9a-f]{{1,{DIGITS - 1}}}", value) is not None


def matching(conn: Any, me: Caller, kind: str, value: str) -> list[str]:
    """The ids of this kind the caller may see that begin with `value` (LISTED + 1 at most)."""
    visible = KINDS[kind][2](me)
    rows = conn.execute(f"SELECT id FROM ({visible}) AS visible WHERE lower(id) LIKE :prefix "
                        f"ORDER BY id LIMIT {LISTED + 1}",
                        {"me": me.id, "project": me.project,
                         "prefix": value.lower() + "%"}).fetchall()
    return [r[0] for r in rows]


def expand(schema: dict[str, Any], args: Any, ctx: Ctx) -> None:
    """Replace each shortened id among `args` by the one whole id it is a prefix of; leave one
    that fits none as it is (the tool says it is not found)."""
    wanted = [(name, prop["x-refers"]) for name, prop in schema.get("properties", {}).items()
              if "x-refers" in prop and short(prop["x-refers"], getattr(args, name, None))]
    if not wanted:
        return
    with ctx.store.snapshot() as conn:
        if conn is None:  # no store yet: nothing to expand to
            return
        me = ctx.me(conn)
        for name, kind in wanted:
            value = getattr(args, name)
            found = matching(conn, me, kind, value)
            if len(found) == 1:
                setattr(args, name, found[0])
            elif found:
                shown = ", ".join(found[:LISTED]) + (" and more" if len(found) > LISTED else "")
                raise NexusError("id_ambiguous", value, f"it begins {shown}",
                                 f"give more of the id (`{KINDS[kind][1]}` lists them)",
                                 candidates=found[:LISTED])
