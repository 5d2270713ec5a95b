"""What the person can do on the page: answer a permission request, send a message, release a
reservation. Each is the registry's tool, run through `registry.invoke` exactly as the CLI runs
it, by the same caller (the person at the terminal that started the board) under the same rules:
`approve` as the person, `send` from the person, and a reservation another session holds
released the way docs/insight.md tells the person to (`nexus release --as HOLDER PATTERN`, which
the activity log records as the person acting for it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import events, registry
from ..core.context import Ctx, Resolver
from ..core.errors import NexusError
from ..core.store.db import Store

# the page's action -> (the tool it runs, the fields its request carries)
FIELDS = {"approve": ("approve", {"approval_id", "session", "outcome"}),
          "send": ("send", {"target", "text"}),
          "release": ("release", {"reservation_id"})}


def tool(name: str) -> registry.Tool:
    from ..catalog import tool as find

    spec = registry.specs()[name]
    return find(name, spec["module"])


def run(action: str, body: object, resolver: Callable[[str | None], Resolver],
        all_workspaces: bool) -> dict[str, Any]:
    """The tool's result for one POST, or the NexusError it raised (`invalid_argument` for a
    request the page would not send)."""
    if action not in FIELDS:
        raise NexusError("unknown_tool", action, "the board has no such action",
                         "use the buttons of the page")
    name, fields = FIELDS[action]
    if not isinstance(body, dict) or set(body) != fields:
        raise NexusError("invalid_argument", action,
                         f"the request must carry exactly {', '.join(sorted(fields))}",
                         "use the buttons of the page")
    store = Store()
    as_ = None
    raw = dict(body)
    if action == "send":
        raw["all_workspaces"] = all_workspaces
    elif action == "release":
        as_, raw = _release(store, resolver, str(body["reservation_id"]), all_workspaces)
    from ..maintenance import expiry

    ctx = Ctx(store, resolver(as_), face="web", upkeep=expiry.LAZY)
    try:
        return registry.invoke(tool(name), ctx, raw)
    except NexusError as exc:
        events.refused(store, exc, "web", command=name)
        raise


def _release(store: Store, resolver: Callable[[str | None], Resolver], rid: str,
             all_workspaces: bool) -> tuple[str | None, dict[str, Any]]:
    """Who holds reservation `rid` (None: the person) and the path naming it exactly, from the
    list the board shows (`reservations`)."""
    from ..reservations import patterns

    ctx = Ctx(store, resolver(None), face="web")
    listed = registry.invoke(tool("reservations"), ctx,
                             {"all_workspaces": all_workspaces, "limit": 500})
    row = next((r for r in listed["items"] if r["id"] == rid), None)
    if row is None:
        raise NexusError("invalid_argument", rid, "no live reservation in view has that id "
                         "(released or expired meanwhile)", "the page shows what is held now")
    path = patterns.escape(row["root"].rstrip("/")) + "/" + row["pattern"]
    return (None if row["self"] else row["holder"]["id"]), {"paths": [path]}

