"""Meeting and global chat: `send_message` routes exactly as seed 004 says (the meeting named,
else the active meeting, else global chat); `read_messages` returns what this reader (a session;
the person too) has not been given yet, oldest first. A message that addresses a session by
`@name`, and a DECISION in a meeting a session joined, reach it as a notice that wakes it; the
rest is announced briefly by its hooks (see feed.py). `host_maintenance` prunes global chat.
Stdlib only."""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING

from ..core import discovery, sessions
from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.store import news
from ..core.text import one_line
from ..messages import mailbox
from . import streams
from .base import confirmed, record, writing

if TYPE_CHECKING:
    from .models import MaintenanceArgs, ReadMessagesArgs, SendMessageArgs

MENTION = re.compile(r"(?<![A-Za-z0-9._#-])@([A-Za-z0-9._@#-]{1,60})")
QUIET_MAX = 50  # sessions whose news marker one message raises, at most


def mentioned(conn: sqlite3.Connection, text: str, now: float) -> list[str]:
    """Sessions addressed by `@name` (a live session's name) or `@handle`, in order."""
    found: list[str] = []
    for token in MENTION.findall(text):
        for candidate in dict.fromkeys((token, token.rstrip(".,:;!?-"))):
            row = conn.execute(f"SELECT id FROM sessions WHERE handle = :t OR (name = :t AND"
                               f" {sessions.LIVE_SQL}) ORDER BY handle = :t DESC LIMIT 1",
                               {"t": candidate, **sessions.stale(now)}).fetchone()
            if row is not None:
                if row[0] not in found:
                    found.append(row[0])
                break
    return found


def _project_peers(conn: sqlite3.Connection, me: sessions.Caller, now: float) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT id FROM sessions WHERE (scope = :p OR (scope = '' AND project = :root))"
        f" AND {sessions.LIVE_SQL} ORDER BY last_active DESC LIMIT :n",
        {"p": me.key, "root": me.project, "n": QUIET_MAX, **sessions.stale(now)})]


def send(ctx: Ctx, a: SendMessageArgs) -> dict:
    category = a.category or "CHAT"
    with writing(ctx) as (conn, me):
        row: sqlite3.Row | None
        if a.meetingId:
            row = streams.need(conn, a.meetingId)
            if row["status"] != "active":
                raise NexusError("meeting_state", a.meetingId, f"Meeting '{a.meetingId}' is "
                                 f"{row['status']}, not active", "reopen it (reopen_meeting), or "
                                 "leave meetingId out to post to global chat")
        else:
            row = streams.active(conn)
        mid = row["id"] if row else None
        seq = streams.post(conn, mid, me.id, me.key, category, a.message, ctx.now)
        sender = one_line(discovery.ref(conn, me.id)["name"], 60)
        where = f"meeting {mid} {one_line(row['topic'], 40)!r}" if row else "global chat"
        how = f'read_messages(meetingId="{mid}")' if mid else "read_messages()"
        line = one_line(a.message, 80)
        told = [s for s in mentioned(conn, a.message, ctx.now) if s != me.id]
        for sid in told:
            mailbox.notice(conn, sid, f"@you in {where} from {sender}: {line} ({how}, or "
                           f"`nexus chat read{' --meeting-id ' + mid if mid else ''}`)", ctx.now,
                           by=me.id)
            ctx.wake_later(sid)
        quiet = [] if mid is None else [s for s in streams.participants(conn, mid)
                                        if s not in told and s != me.id]
        if mid is not None and category == "DECISION":
            for sid in quiet:
                mailbox.notice(conn, sid, f"DECISION in {where} from {sender}: {line} ({how})",
                               ctx.now, by=me.id)
                ctx.wake_later(sid)
            told += quiet
            quiet = []
        if mid is None or category == "MEETING_START":
            quiet += [s for s in _project_peers(conn, me, ctx.now)
                      if s not in told and s != me.id and s not in quiet]
        for sid in quiet[:QUIET_MAX]:
            news.mark(conn, sid)  # announced after its next tool call, without waking it
        record(conn, ctx, me, "chat.send", mid or "global", messageId=seq, category=category,
               mentioned=told or None)
    return {"ok": True, "sentTo": "meeting" if mid else "global", "meetingId": mid,
            "messageId": seq, "message": a.message, "category": category, "mentioned": told}


def read(ctx: Ctx, a: ReadMessagesArgs) -> dict:
    try:
        with writing(ctx) as (conn, me):
            row = streams.need(conn, a.meetingId) if a.meetingId else None
            if row is not None:
                streams.join(conn, row["id"], me.id, ctx.now)
            rows, left = streams.unread(conn, me.id, a.meetingId, a.count)
            stream = a.meetingId or streams.GLOBAL
            was = streams.cursor(conn, me.id, stream)
            if rows:
                streams.advance(conn, me.id, stream, rows[-1]["seq"])
            who = streams.names(conn, {r["sender"] for r in rows})
            result = {"source": "meeting" if row else "global", "hub": None if row else "Global",
                      "meetingId": row["id"] if row else None,
                      "meeting": row["topic"] if row else None,
                      "messages": [{"id": r["seq"], "from": r["sender"], "name": who[r["sender"]],
                                    "text": r["text"], "category": r["category"],
                                    "timestamp_epoch": r["created_at"]} for r in rows],
                      "remaining": left}
            return ctx.hand_over(result, lambda again: streams.rewind(
                again, me.id, stream, rows[-1]["seq"] if rows else was, was))
    except NexusError as exc:
        if exc.code != "caller_unknown":
            raise
        raise NexusError("caller_unknown", "read_messages", "read_messages needs an instanceId: "
                         "unread cursors are kept per instance", exc.action) from None


def maintain(ctx: Ctx, a: MaintenanceArgs) -> dict:
    with writing(ctx) as (conn, me):
        confirmed(me, a.confirm, "host_maintenance", f"{a.action} of the global chat")
        removed, remaining = streams.prune(conn, None if a.action == "clear" else a.count)
        record(conn, ctx, me, f"maintenance.{a.action}", "global", removed=removed,
               remaining=remaining)
    return {"ok": True, "removed": removed, "remaining": remaining}
