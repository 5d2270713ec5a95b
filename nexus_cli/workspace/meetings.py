"""Meetings: start (the caller is its initiator), end with a summary (its DECISION messages are
collected into its record), archive, reopen; only the initiator, or the person at the shell, may
end, archive or reopen one. Stdlib only."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from ..core.context import Ctx
from ..core.errors import NexusError
from ..core.sessions import Caller
from ..core.store import policy
from . import streams
from .base import person, reading, record, writing

if TYPE_CHECKING:
    import sqlite3

    from .models import EndMeetingArgs, ListMeetingsArgs, MeetingIdArgs, StartMeetingArgs


def _ack(conn: sqlite3.Connection, row: sqlite3.Row, message: str) -> dict:
    return {"ok": True, "message": message, "meetingId": row["id"], "status": row["status"],
            "topic": row["topic"], "summary": row["summary"], "meeting": streams.record(conn, row)}


def _initiator(me: Caller, row: sqlite3.Row, verb: str) -> None:
    if me.id != row["initiator"] and not person(me):
        raise NexusError("not_initiator", row["id"], f"Only the meeting initiator "
                         f"({row['initiator']}) can {verb} a meeting",
                         "ask its initiator, or the person at the shell")


def list_meetings(ctx: Ctx, a: ListMeetingsArgs) -> dict:
    with reading(ctx) as (conn, _):
        where, params = ("WHERE status = ?", [a.status]) if a.status else ("", [])
        rows = conn.execute(f"SELECT * FROM ws_meetings {where} ORDER BY seq DESC LIMIT ?",
                            (*params, a.limit)).fetchall()
        current = streams.active(conn)
        items = [streams.record(conn, r) for r in rows]
    return {"count": len(items), "activeMeetingId": current["id"] if current else None,
            "meetings": items}


def start(ctx: Ctx, a: StartMeetingArgs) -> dict:
    with writing(ctx) as (conn, me):
        mid = streams.new_id()
        conn.execute(policy.write(
            "INSERT INTO ws_meetings (id, topic, status, initiator, started_at,"
            " updated_at) VALUES (?, ?, 'active', ?, ?, ?)"),
                     (mid, a.topic, me.id, ctx.now, ctx.now))
        streams.post(conn, mid, me.id, me.key, "MEETING_START",
                     f"Meeting started: {a.topic}", ctx.now)
        record(conn, ctx, me, "meeting.start", mid, topic=a.topic)
        return _ack(conn, streams.need(conn, mid), f"Meeting started: {a.topic}")


def end(ctx: Ctx, a: EndMeetingArgs) -> dict:
    with writing(ctx) as (conn, me):
        row: sqlite3.Row | None
        if a.meetingId:
            row = streams.need(conn, a.meetingId)
        else:
            row = streams.active(conn)
            if row is None:
                raise NexusError("meeting_not_found", "meetingId", "No active meeting found to "
                                 "end", "name the meeting (`nexus meeting list`)")
        _initiator(me, row, "end")
        if row["status"] == "closed" and a.summary in (None, row["summary"]):
            return _ack(conn, row, f"Meeting ended: {row['topic']}")  # a replay changes nothing
        if row["status"] != "active":
            raise NexusError("meeting_state", row["id"], f"Meeting '{row['id']}' is "
                             f"{row['status']}, not active", "reopen it first (reopen_meeting)")
        made = streams.decisions(conn, row["id"])
        conn.execute(policy.write(
            "UPDATE ws_meetings SET status = 'closed', ended_at = ?, summary = ?,"
            " decisions = ?, updated_at = ? WHERE id = ?"),
                     (ctx.now, a.summary, json.dumps(made, ensure_ascii=False), ctx.now,
                      row["id"]))
        record(conn, ctx, me, "meeting.end", row["id"], decisions=len(made),
               summary=a.summary is not None)
        return _ack(conn, streams.need(conn, row["id"]), f"Meeting ended: {row['topic']}")


def archive(ctx: Ctx, a: MeetingIdArgs) -> dict:
    with writing(ctx) as (conn, me):
        row = streams.need(conn, a.meetingId)
        _initiator(me, row, "archive")
        if row["status"] == "active":
            raise NexusError("meeting_state", row["id"], f"Meeting '{row['id']}' is still "
                             "active; only a closed meeting is archived",
                             "end it first (end_meeting)")
        if row["status"] == "closed":
            conn.execute(policy.write(
                "UPDATE ws_meetings SET status = 'archived', updated_at = ? WHERE id = ?"),
                         (ctx.now, row["id"]))
            record(conn, ctx, me, "meeting.archive", row["id"])
        return _ack(conn, streams.need(conn, row["id"]),
                    f"Meeting '{row['topic']}' (ID: {row['id']}) has been archived.")


def reopen(ctx: Ctx, a: MeetingIdArgs) -> dict:
    with writing(ctx) as (conn, me):
        row = streams.need(conn, a.meetingId)
        _initiator(me, row, "reopen")
        if row["status"] != "active":
            conn.execute(policy.write("UPDATE ws_meetings SET status = 'active', ended_at = NULL,"
                         " decisions = NULL, updated_at = ? WHERE id = ?"), (ctx.now, row["id"]))
            record(conn, ctx, me, "meeting.reopen", row["id"], was=row["status"])
        return _ack(conn, streams.need(conn, row["id"]),
                    f"Meeting '{row['topic']}' (ID: {row['id']}) is now active again.")
