"""The texts that reach the model: the SessionStart greeting, the announcement of unread
messages, the line about open obligations. Every name, note and first line in them comes from
a peer and is rendered so it cannot forge a line (see core.text). Stdlib only."""

from __future__ import annotations

import sqlite3
import time

from ..core import identity, sessions, shellcmd
from ..core.settings import ANNOUNCE_COUNTED, ANNOUNCE_LISTED, FIRST_LINE
from ..core.text import one_line, party, quoted, token
from ..messages import mailbox


def _who(row: sqlite3.Row | None, sid: str) -> str:
    if row is None:
        return token(sid)
    return party(row["name"], row["handle"])


def announce(conn: sqlite3.Connection, me: sqlite3.Row, rows: list[sqlite3.Row], total: int,
             now: float, via: str | None, auto_turn: tuple[int, int] | None = None) -> str:
    """The text that reaches the model. With `via`, the listed messages count as delivered from
    here on (pass None when the text may still fail to arrive, and mark them later)."""
    names: dict[str, str] = {}
    for r in rows:
        if r["sender"] not in names:
            names[r["sender"]] = _who(sessions.get(conn, r["sender"]), r["sender"])
    nexus = shellcmd.name(conn)
    plural = "s" if total != 1 else ""
    over = "over " if total > ANNOUNCE_COUNTED else ""  # (counted up to that: mailbox.unread)
    total = min(total, ANNOUNCE_COUNTED)
    lines = [f"[nexus] {over}{total} unread message{plural} for you ({one_line(me['name'])}):"]
    for r in rows:
        when = time.strftime("%H:%M", time.localtime(r["created_at"]))
        if r["kind"] == "notice":  # nexus's own voice only from nexus itself
            who = "nexus" if r["sender"] == identity.SYSTEM_ID else names[r["sender"]]
            lines.append(f"- {token(r['id'])} notice from {who}, {when}: "
                         f"{quoted(r['text'], FIRST_LINE)}")
        elif r["kind"] == "task":
            task = token(r["task_id"])
            lines.append(f"- {token(r['id'])} TASK {task} for you from {names[r['sender']]}, "
                         f"{when}: read it, do it, then `{nexus} report {task}`")
        else:
            reply = f" (reply to {token(r['reply_to'])})" if r["reply_to"] else ""
            lines.append(f"- {token(r['id'])} from {names[r['sender']]}, {when}{reply}: "
                         f"{quoted(r['text'], FIRST_LINE)}")
    if total > len(rows):
        lines.append(f"- and {over}{total - len(rows)} more")
    lines.append(f"Read them with `{nexus} read` (or the nexus `read` tool); answer with "
                 f"`{nexus} reply <id> \"<text>\"`.")
    if auto_turn:
        lines.append(f"Automatic turn {auto_turn[0]} of {auto_turn[1]}.")
    if via:
        mailbox.mark_delivered(conn, [r["id"] for r in rows], now, via)
    return "\n".join(lines)


def open_work(conn: sqlite3.Connection, sid: str) -> str | None:
    """The line about obligations this session owns and has not closed, if any."""
    from ..tasks import ledger  # not on a tool call's path

    n = ledger.count_open(conn, sid)
    if not n:
        return None
    nexus = shellcmd.name(conn)
    return (f"[nexus] You have {n} open task{'s' if n != 1 else ''} assigned to you: "
            f"`{nexus} tasks --open` lists them; close each with `{nexus} report <task id>` "
            "(or the nexus MCP tools tasks, report).")


def greeting(conn: sqlite3.Connection, me: sqlite3.Row, now: float) -> str:
    """SessionStart: who you are, who else is here, who can answer now, and how to use nexus."""
    from ..core import availability, discovery  # a session's start only

    caller = sessions.Caller(me["id"], me["cwd"], me["project"], "hook", me["scope"])
    others = [r for r in discovery.scoped_rows(conn, caller, now, False, False)
              if r["id"] != me["id"]]
    lines = [f"[nexus] You are {one_line(me['name'])} ({token(me['id'])}, handle "
             f"{token(me['handle'])})."]
    if others:
        shown = ", ".join(f"{one_line(r['name'])} ({token(r['handle'])}, "
                          f"{availability.effective_status(r, now)})"
                          for r in others[:ANNOUNCE_LISTED])
        more = f" and {len(others) - ANNOUNCE_LISTED} more" if len(others) > ANNOUNCE_LISTED else ""
        lines.append(f"Other sessions in this project: {shown}{more}.")
        ready = [one_line(r["name"]) for r in others
                 if availability.effective_status(r, now) == "listening"]
        listed = ", ".join(ready[:ANNOUNCE_LISTED])
        if len(ready) > ANNOUNCE_LISTED:
            listed += f" and {len(ready) - ANNOUNCE_LISTED} more"
        lines.append("Can answer right away: " + (listed or "none") + ".")
    else:
        lines.append("No other sessions in this project right now.")
    nexus = shellcmd.name(conn)
    lines.append(f"`{nexus} peers` lists sessions; `{nexus} send <name> \"<text>\"` messages "
                 f"one; `{nexus} read` reads yours (or the nexus MCP tools peers, send, read).")
    return "\n".join(lines)
