"""Human output of the approval tools (peer text escaped)."""

from __future__ import annotations

from typing import Any

from ..core.human import Part, Table, page_footer, who
from ..core.text import one_line


def approvals(r: dict[str, Any]) -> list[Part] | str:
    if not r["items"]:
        return r["summary"]
    rows = [[a["id"], who(a["session"]), one_line(a["tool_name"], 40), one_line(a["summary"], 70),
             a["waited"]] for a in r["items"]]
    return [Table(["id", "session", "tool", "what", "waiting"], rows, wide=("what",)),
            f"{r['summary']} (rejected after {r['timeout']}); " + page_footer(r),
            f"answer: {r['hint']}"]


def approved(r: dict[str, Any]) -> str:
    if r["ok"]:
        return (f"{r['approval_id']}: {r['outcome']} accepted\n{r['pending_summary']}")
    return f"{r['approval_id']}: not pending ({r['next']})"
