"""The automatic turn limit: waking, a listening Stop and a Stop held open for messages each
count as an automatic turn; after `maxAutoTurns` since the user's last prompt, messages are
still stored but no longer wake or hold the conversation. Stdlib only."""

from __future__ import annotations

import sqlite3

from ..core import sessions
from ..core.settings import WOKEN_TURN, load
from ..core.store import policy
from ..messages import mailbox


def allowed(me: sqlite3.Row, root: str) -> tuple[int, int] | None:
    """(n, N) when one more automatic turn is allowed since the user's last prompt, else None."""
    limit = int(load(root)["maxAutoTurns"])  # type: ignore[call-overload]
    n = me["auto_turns"] + 1
    return (n, limit) if n <= limit else None


def wakes(conn: sqlite3.Connection, me: sqlite3.Row, root: str) -> bool:
    """Whether what is unread may give `me` an automatic turn: it accepts being woken (listen
    mode is a request to), and a message that may wake it waits that was never announced (not
    `send --no-wake`; mail already put before the model never forces another turn)."""
    if not me["listening"] and not sessions.wants_waking(me, load(root)):
        return False
    return mailbox.has_news(conn, me["id"])


def count(conn: sqlite3.Connection, sid: str, now: float, wake: bool) -> None:
    """One more automatic turn (one statement: no look at the row first)."""
    if wake:
        conn.execute(_WOKEN, (now, sid))
    else:
        conn.execute(_TURN, (sid,))


_TURN = policy.write("UPDATE sessions SET auto_turns = auto_turns + 1 WHERE id = ?")
_WOKEN = policy.write("UPDATE sessions SET auto_turns = auto_turns + 1, last_wake_at = ?,"
                      " last_wake_error = NULL WHERE id = ?")


def user_prompt(conn: sqlite3.Connection, me: sqlite3.Row, now: float) -> None:
    """A prompt from the user resets the automatic turn count (unless it is the woken turn)."""
    if me["last_wake_at"] is None or now - me["last_wake_at"] > WOKEN_TURN:
        sessions.update(conn, me["id"], auto_turns=0)
