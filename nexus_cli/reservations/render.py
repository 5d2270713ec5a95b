"""Human output of the reservation tools. Patterns, names and reasons come from peers: shown
through core.text (controls and line breaks escaped, never cut at a line)."""

from __future__ import annotations

import time
from typing import Any

from ..core.human import Part, Table, ago, page_footer, who
from ..core.text import visible
from ..core.timefmt import human_duration
from .leases import said, shown, until


def _left(r: dict[str, Any]) -> str:
    return human_duration(r["expires_at_epoch"] - time.time()) + " left"


def _on(r: dict[str, Any]) -> str:
    """The holder's machine, when it is not this one (team mode)."""
    from ..core.proctable import machine

    there = r.get("machine")
    return f" on {visible(there, keep_lines=False)}" if there and there != machine() else ""


def _one(r: dict[str, Any]) -> str:
    kind = "exclusive" if r["exclusive"] else "shared"
    why = f", {said(r['reason'], 80)}" if r["reason"] else ""
    ends = until(r["expires_at_epoch"], time.time())
    return f"{shown(r['pattern'])} ({kind}, until {ends}, {_left(r)}{why})"


def reserve(r: dict[str, Any]) -> str:
    lines = [("renewed " if x["id"] in r["renewed"] else "reserved ") + _one(x)
             for x in r["reserved"]]
    if r["waited_seconds"] >= 0.5:
        lines.append(f"(waited {human_duration(r['waited_seconds'])})")
    return "\n".join(lines)


def release(r: dict[str, Any]) -> str:
    lines = [f"released {shown(x['pattern'])}" for x in r["released"]]
    for p in r["not_held"]:
        said_of = [o["message"] for o in r["held_by_others"] if o["path"] == p]
        lines += [f"not held: {m}" for m in said_of] or [f"not held: {shown(p)}"]
    if r["held"]:
        lines.append("you still hold: " + ", ".join(shown(x["pattern"]) for x in r["held"]))
    return "\n".join(lines) or "nothing to release"


def reservations(r: dict[str, Any]) -> list[Part] | str:
    if not r["items"]:
        return "no reservations" + ("" if r["total"] == 0 else f" on this page ({page_footer(r)})")
    roots = {x["root"] for x in r["items"]}
    rows = []
    for x in r["items"]:
        row = [shown(x["pattern"]), "exclusive" if x["exclusive"] else "shared",
               who(x["holder"]) + (" (you)" if x["self"] else "") + _on(x), _left(x),
               ago(x["created_at_epoch"]), (x["reason"] and said(x["reason"], 60))
               + (" [auto]" if x["auto"] else "")]
        rows.append([x["root"], *row] if len(roots) > 1 else row)
    head = ["pattern", "kind", "holder", "ends", "since", "reason"]
    table = Table(["project", *head] if len(roots) > 1 else head, rows,
                  wide=("pattern", "reason", "project"))
    footer = page_footer(r) + ("" if len(roots) > 1 else f" in {next(iter(roots))}")
    return [table, footer]


def guard(r: dict[str, Any]) -> str:
    if r["ok"]:
        return f"no conflicts: {r['checked']} file{'s' if r['checked'] != 1 else ''} checked"
    lines = [f"refused: {c['message']}" for c in r["conflicts"]]
    lines.append(f"{len(r['conflicts'])} of {r['checked']} files are another session's to change")
    return "\n".join(lines)
