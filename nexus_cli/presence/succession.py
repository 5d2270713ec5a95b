"""Succession: a conversation's successor in its client process takes over its name, note,
listen mode, unread mail and open obligations, and what is addressed to the old id from then on
arrives at the successor. Stdlib only: the SessionStart hook links successors (the `handoff`
tool is in handoff.py)."""

from __future__ import annotations

import sqlite3

from ..core import availability, events, sessions, settings
from ..core.proctable import Proc
from ..messages import mailbox
from ..tasks import ledger


def transfer(conn: sqlite3.Connection, old_id: str, new_id: str, now: float) -> dict:
    from ..reservations import leases  # a hook imports this module; a handoff is rare

    old = sessions.get(conn, old_id)
    assert old is not None
    moved = mailbox.move_unread(conn, old_id, new_id)
    tasks = ledger.move_open(conn, old_id, new_id, now)
    reserved = leases.transfer(conn, old_id, new_id)
    sessions.hand_over(conn, old, new_id, now)
    return {"from": old_id, "to": new_id, "messages": moved, "tasks": tasks,
            "reservations": reserved, "name": old["name"]}


# A Claude Code /clear ends the old conversation (SessionEnd, reason `clear`) and starts the new
# one (SessionStart, source `clear`) from the same process within ~0.1 s; Codex may end the old
# thread (reason `other`) after /new, before the next prompt starts the new one. An end this
# recent still pairs with the next start from the same, still running, process (generous: the
# SessionEnd hook itself may be slow). `other` is also an exit's: a process gone starts nothing.
CLEAR_PAIRING = 60.0
PAIRED_ENDS = ("clear", "other")
# sources of a SessionStart that begin a new conversation in a running client: Claude Code
# /clear; Codex /clear (`clear`) and /new (`startup`, from a process that already ran one)
SUCCEEDS = ("clear", "startup")


def on_session_start(conn: sqlite3.Connection, sid: str, source: object, proc: Proc,
                     now: float, root: str) -> str | None:
    """A client process runs one conversation at a time: a SessionStart for another id replaces
    the one it ran before. That one goes offline; when this conversation begins afresh in the
    same process (not a resumed one, not compaction, which keeps the id), it is the
    predecessor and hands over, unless handoff is off. Returns the predecessor's id.

    Observed (contract/hook.json): Claude Code /clear sends SessionEnd(clear) for the old id,
    then SessionStart(clear); Codex /new and /clear send at most SessionEnd(other) for the old
    thread, then at the next prompt SessionStart(startup|clear); /resume in either switches to
    an existing id. Another process's sessions are never touched."""
    if source == "compact":
        return None
    prev = None
    for row in sessions.of_process(conn, proc):
        if row["id"] == sid or row["successor"]:
            continue
        state = availability.effective_status(row, now)
        if source == "startup" and state == "working":
            continue  # a thread still at work beside this one (an app server): not replaced
        just_ended = row["end_reason"] in PAIRED_ENDS and now - row["last_active"] <= CLEAR_PAIRING
        if state != "offline":
            sessions.update(conn, row["id"], status="offline")
        elif not just_ended:
            continue
        prev = prev or row
    if prev is None or source not in SUCCEEDS:
        return None
    sessions.update(conn, prev["id"], successor=sid)
    sessions.update(conn, sid, predecessor=prev["id"])
    if prev["handoff"] and settings.load(root)["handoff"]:
        moved = transfer(conn, prev["id"], sid, now)
        events.record(conn, now, sid, "session.handoff", prev["id"], trigger=str(source),
                      messages=moved["messages"], tasks=moved["tasks"],
                      reservations=moved["reservations"], name=moved["name"])
    return prev["id"]
