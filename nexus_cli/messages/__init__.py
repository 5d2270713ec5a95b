"""Direct messages. The conditions below are what a message's state means, kept here, light, for
the hooks' tool-call checks (hook/quick.py, hook/entry.py) as well as the mailbox."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    import sqlite3

UNREAD = "read_at IS NULL AND expired_at IS NULL"
# what a tool call's hook announces (and what a news marker stands for): unread, not yet
# announced, not held back for a task's delivery
ANNOUNCEABLE = f"{UNREAD} AND delivered_at IS NULL AND defer = 0"
# what a tool call's hook may announce, in one question (hook/quick.py asks the team database
# before the hook's modules load, the hook asks its open write: `news`): an announceable
# message, or chat newer than the session's `@announced` cursor (workspace/feed.py); a session
# without a cursor counts as told (`{unset}`: the largest number) for the team's question, and
# as not told for the hook's own, which sets it
NEWS = (f"SELECT EXISTS (SELECT 1 FROM messages WHERE recipient = $1 AND {ANNOUNCEABLE}) OR"
        " coalesce((SELECT max(seq) FROM ws_chat), 0) > coalesce((SELECT seq FROM ws_cursors"
        " WHERE reader = $1 AND stream = '@announced'), {unset})")


def announceable(conn: sqlite3.Connection, sid: str) -> bool:
    """Whether a tool call's hook would announce something to `sid` (what its news marker means)."""
    return conn.execute(f"SELECT 1 FROM messages WHERE recipient = ? AND {ANNOUNCEABLE} LIMIT 1",
                        (sid,)).fetchone() is not None


def news(conn: sqlite3.Connection, sid: str) -> bool:
    """Inside a tool call's write: whether the full hook may have something to announce to `sid`
    (NEWS, in SQLite's placeholders; the team store's driver takes them too)."""
    sql = NEWS.replace("$1", "?1").replace("{unset}", "-1")
    return bool(conn.execute(sql, (sid,)).fetchone()[0])
