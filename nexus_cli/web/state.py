"""What the page shows, as one JSON document: the terminal board's data (`insight.board`) with
what each session does now in words (`insight.render.doing`, as the terminal says it). Every
string in it has passed `core.text.visible`: no control character of a peer's text reaches the
page, and the page sets text only as text (textContent), never as markup."""

from __future__ import annotations

from typing import Any

from ..core.context import Ctx
from ..core.human import home_short
from ..core.text import one_line, visible
from ..insight import board, render


def state(ctx: Ctx, all_workspaces: bool, include_offline: bool,
          cache: board.Transcripts) -> dict[str, Any]:
    snap = board.snapshot(ctx, all_workspaces, include_offline, cache)
    ids = [s["id"] for s in snap["sessions"]]
    ids += [n["id"] for n in snap["waits"]["nodes"] if n["id"] not in ids]
    more = board.extras(ctx, all_workspaces, ids)
    for s in snap["sessions"]:
        s["doing"] = render.doing(s, ctx.now)
        s["answer"] = one_line(s["answer"], 300) if s["answer"] else None
        s.pop("transcript", None)  # a local path the page has no use for
    where = "all projects" if all_workspaces else home_short(snap["project"] or "")
    return inert({**snap, **more, "where": where})


def inert(value: Any) -> Any:
    """`value` with every string's control characters shown as escapes (see core.text)."""
    if isinstance(value, str):
        return visible(value, keep_lines=False)
    if isinstance(value, dict):
        return {k: inert(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [inert(v) for v in value]
    return value
