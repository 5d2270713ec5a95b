"""`send --notify-when-idle`: one notice to each sender who asked, when the recipient next ends
a turn, starts listening or goes offline (sent to a session that was offline already: once it
has come back). Stdlib only."""

from __future__ import annotations

import sqlite3

from ..core import sessions
from ..core.settings import IDLE_WATCH
from ..core.text import one_line
from ..messages import mailbox


def idle(conn: sqlite3.Connection, sid: str, now: float, why: str,
         back_since: float | None = None, itself: bool = True) -> list[str]:
    """Notify every waiting sender; returns whom to wake. `back_since`: the session went offline
    without a SessionEnd and was last active then: who sent to it while it was already offline
    is told only once it has been back (see mailbox.idle_watchers). `itself`: the session `sid`
    itself went idle (a notice to another member is in its name); else maintenance found it
    gone, and tells only the caller's own senders (another member's nexus tells theirs)."""
    me = sessions.get(conn, sid)
    name = one_line(me["name"]) if me else sid
    woken = []
    for r in mailbox.idle_watchers(conn, sid, back_since):
        if r["created_at"] >= now - IDLE_WATCH:
            state = "has read it" if r["read_at"] else "has not read it yet"
            if mailbox.notice(conn, r["sender"], f"{name} {why}; it {state} (your message "
                              f"{r['id']}).", now, reply_to=r["id"],
                              by=sid if itself else None) is None:
                continue  # not ours to tell, nor to mark
            woken.append(r["sender"])
        mailbox.mark_notified(conn, r["id"], now)
    return woken
