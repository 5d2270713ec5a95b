"""Human output of the task tools."""

from __future__ import annotations

from typing import Any

from ..core.human import Part, Table, ago, page_footer, who
from ..core.text import labelled, one_line

NOTIFICATION = {
    "none": None,
    "pending": "saved; not yet seen by the dispatcher",
    "delivered": "seen by the dispatcher",
    "expired": "the dispatcher did not read it within 24 h",
}


def task(r: dict[str, Any]) -> str:
    dup = " (a repeat: the original is shown, nothing new was recorded)" if r["duplicate"] else ""
    lines = [f"{r['id']} {r['status']}{dup}"]
    if r["mode"] == "self":
        lines.append(f"your own task, created {ago(r['created_at_epoch'])}")
    else:
        lines.append(f"from {who(r['sender'])} to {who(r['target'])}, delivered at the target's "
                     + ("next tool call" if r["mode"] == "steer" else "next turn"))
    if r["progress"] is not None:
        lines.append(f"progress {r['progress']:.0%}")
    if r["result"]:
        lines.append(labelled("result", r["result"]))
    if r["error"]:
        lines.append(labelled("error", r["error"]))
    if NOTIFICATION.get(r["notification"]):
        lines.append(f"report: {NOTIFICATION[r['notification']]}")
    lines.append(labelled("task", r["task"]))
    return "\n".join(lines)


def tasks(r: dict[str, Any]) -> list[Part] | str:
    if not r["items"]:
        return "no tasks"
    rows = [[t["id"], t["status"], t["sender"]["name"], t["target"]["name"], t["mode"],
             ago(t["updated_at_epoch"]), one_line(t["task"], 60)] for t in r["items"]]
    return [Table(["id", "status", "from", "to", "mode", "updated", "task"], rows,
                  wide=("task",)), page_footer(r)]


def created(r: dict[str, Any]) -> str:
    return task(r["task"])


def self_tasks(r: dict[str, Any]) -> list[Part] | str:
    return tasks({**r, "items": r["tasks"]})
