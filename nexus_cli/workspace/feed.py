"""What the hooks say about meeting and global chat: one brief line of counts per stream since
the session was last told, never the text (that comes through read_messages). A session hears of
global chat and meeting starts from its own project, and of every message of the meetings it
joined; messages it already read are left out. Waking is not done here: a message that must
wake a session (`@name`, a DECISION in a meeting it joined) is a notice in its mailbox.

Stdlib only, and O(1) when nothing is new: the hooks run it on the agent's critical path."""

from __future__ import annotations

import sqlite3

from ..core.store import policy

ANNOUNCED = "@announced"  # the cursor stream of what a session was told (never a meeting id)
SCAN = 1000  # messages looked at per announcement, at most
LISTED = 3  # streams named per announcement


def _set(conn: sqlite3.Connection, sid: str, seq: int) -> None:
    conn.execute(policy.write("INSERT INTO ws_cursors (reader, stream, seq) VALUES (?, ?, ?)"
                 " ON CONFLICT (reader, stream) DO UPDATE SET seq = excluded.seq"),
                 (sid, ANNOUNCED, seq))


def news(conn: sqlite3.Connection, me: sqlite3.Row, nexus: str | None = None) -> str | None:
    """Inside the hook's write: the line announcing new chat for `me`, if any (and the session's
    announcement cursor moves past it). `nexus`: the command as the line names it (by default
    as the session's shell finds it). What only a line needs loads only for one: a tool call
    with no chat pays for two lookups."""
    sid = me["id"]
    top = conn.execute("SELECT coalesce(max(seq), 0) FROM ws_chat").fetchone()[0]
    row = conn.execute("SELECT seq FROM ws_cursors WHERE reader = ? AND stream = ?",
                       (sid, ANNOUNCED)).fetchone()
    if row is None or row[0] >= top:
        if row is None:  # first seen now: it hears of what comes from here on
            _set(conn, sid, top)
        return None
    rows = conn.execute(
        "SELECT c.meeting, c.category FROM (SELECT * FROM ws_chat WHERE seq > :after"
        " ORDER BY seq LIMIT :scan) AS c LEFT JOIN ws_cursors r ON r.reader = :me"
        " AND r.stream = coalesce(c.meeting, '') WHERE c.sender != :me"
        " AND c.seq > coalesce(r.seq, 0) AND ((c.project = :project AND (c.meeting IS NULL"
        " OR c.category = 'MEETING_START')) OR c.meeting IN"
        " (SELECT meeting FROM ws_participants WHERE session = :me)) ORDER BY c.seq",
        {"after": row[0], "scan": SCAN, "me": sid,
         "project": me["scope"] or me["project"]}).fetchall()
    _set(conn, sid, top)
    if not rows:
        return None
    from ..core import shellcmd
    from ..core.text import one_line, quoted

    nexus = nexus or shellcmd.name(conn)
    streams: dict[str | None, list[int]] = {}
    for meeting, category in rows:
        counts = streams.setdefault(meeting, [0, 0, 0])
        counts[0] += 1
        counts[1] += category == "DECISION"
        counts[2] += category == "MEETING_START"
    parts = []
    for meeting, (n, decided, started) in list(streams.items())[:LISTED]:
        plural = "s" if n != 1 else ""
        if meeting is None:
            parts.append(f"{n} new message{plural} in global chat")
            continue
        topic = conn.execute("SELECT topic FROM ws_meetings WHERE id = ?", (meeting,)).fetchone()
        label = f"meeting {one_line(meeting, 20)} {quoted(topic[0] if topic else '', 60)}"
        if started and n == started:
            parts.append(f"{label} started")
            continue
        extra = f" ({decided} DECISION{'s' if decided != 1 else ''})" if decided else ""
        parts.append(f"{n} new message{plural} in {label}{extra}")
    if len(streams) > LISTED:
        parts.append(f"and {len(streams) - LISTED} more streams")
    return (f"[nexus] Shared chat: {'; '.join(parts)}. Read with `{nexus} chat read"
            f" [--meeting-id ID]` (or the nexus MCP tool read_messages).")
