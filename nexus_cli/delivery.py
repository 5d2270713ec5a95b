"""Getting messages in front of the model: announcements, delivery receipts, the automatic turn
limit, idle notifications and expiry. Stdlib only (the hooks use all of it)."""

from __future__ import annotations

import json
import sqlite3
import time

from . import identity, mailbox, sessions
from .store import paths

LISTED = 5  # messages listed per announcement
FIRST_LINE = 100
EXPIRE_AFTER = 24 * 3600
IDLE_WATCH = 24 * 3600
WOKEN_TURN = 60  # a prompt this soon after a wake is the woken turn itself
DEFAULTS = {"maxAutoTurns": 8}


def settings(root: str) -> dict:
    """`settings.json` in the store directory over the defaults. An unreadable file is reported by
    `nexus doctor` and ignored here (a hook must never fail on it, nor rewrite it)."""
    try:
        with open(paths.settings_path(root), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return dict(DEFAULTS)
    out = dict(DEFAULTS)
    if isinstance(data, dict):
        value = data.get("maxAutoTurns")
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100:
            out["maxAutoTurns"] = value
    return out


def unread(conn: sqlite3.Connection, sid: str, only_new: bool) -> tuple[list[sqlite3.Row], int]:
    """Up to LISTED unread messages (only those never announced, with `only_new`), oldest first,
    and how many there are in all."""
    extra = " AND delivered_at IS NULL AND defer = 0" if only_new else ""
    where = f"recipient = ? AND read_at IS NULL AND expired_at IS NULL{extra}"
    rows = conn.execute(f"SELECT * FROM messages WHERE {where} ORDER BY seq LIMIT ?",
                        (sid, LISTED)).fetchall()
    if len(rows) < LISTED:
        return rows, len(rows)
    return rows, conn.execute(f"SELECT count(*) FROM messages WHERE {where}", (sid,)).fetchone()[0]


def first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= FIRST_LINE else line[: FIRST_LINE - 1] + "…"


def announce(conn: sqlite3.Connection, me: sqlite3.Row, rows: list[sqlite3.Row], total: int,
             now: float, via: str | None, auto_turn: tuple[int, int] | None = None) -> str:
    """The text that reaches the model. With `via`, the listed messages count as delivered from
    here on (pass None when the text may still fail to arrive, and mark them later)."""
    names = {}
    for r in rows:
        if r["sender"] not in names:
            peer = sessions.get(conn, r["sender"])
            names[r["sender"]] = f"{peer['name']} ({peer['handle']})" if peer else r["sender"]
    plural = "s" if total != 1 else ""
    lines = [f"[nexus] {total} unread message{plural} for you ({me['name']}):"]
    for r in rows:
        when = time.strftime("%H:%M", time.localtime(r["created_at"]))
        if r["kind"] == "notice":
            lines.append(f"- {r['id']} notice from nexus, {when}: {first_line(r['text'])}")
        elif r["kind"] == "task":
            lines.append(f"- {r['id']} TASK {r['task_id']} for you from {names[r['sender']]}, "
                         f"{when}: read it, do it, then `nexus report {r['task_id']}`")
        else:
            reply = f" (reply to {r['reply_to']})" if r["reply_to"] else ""
            lines.append(f"- {r['id']} from {names[r['sender']]}, {when}{reply}: "
                         f"{first_line(r['text'])}")
    if total > len(rows):
        lines.append(f"- and {total - len(rows)} more")
    lines.append("Read them with `nexus read` (or the nexus `read` tool); answer with "
                 "`nexus reply <id> \"<text>\"`.")
    if auto_turn:
        lines.append(f"Automatic turn {auto_turn[0]} of {auto_turn[1]}.")
    if via:
        mailbox.mark_delivered(conn, [r["id"] for r in rows], now, via)
    return "\n".join(lines)


def open_work(conn: sqlite3.Connection, sid: str) -> str | None:
    """The line about obligations this session owns and has not closed, if any."""
    n = conn.execute("SELECT count(*) FROM tasks WHERE target = ? AND status IN"
                     f" {sessions.OPEN_TASKS_SQL}", (sid,)).fetchone()[0]
    if not n:
        return None
    return (f"[nexus] You have {n} open task{'s' if n != 1 else ''} assigned to you: "
            "`nexus tasks --open` lists them; close each with `nexus report <task id>`.")


def greeting(conn: sqlite3.Connection, me: sqlite3.Row, now: float) -> str:
    """SessionStart: who you are, who else is here, who can answer now, and how to use nexus."""
    caller = sessions.Caller(me["id"], me["cwd"], me["project"], "hook")
    others = [r for r in sessions.scoped_rows(conn, caller, now, False, False) if r["id"] != me["id"]]
    lines = [f"[nexus] You are {me['name']} ({me['id']}, handle {me['handle']})."]
    if others:
        shown = ", ".join(f"{r['name']} ({r['handle']}, {sessions.effective_status(r, now)})"
                          for r in others[:LISTED])
        more = f" and {len(others) - LISTED} more" if len(others) > LISTED else ""
        lines.append(f"Other sessions in this project: {shown}{more}.")
        ready = [r["name"] for r in others if sessions.effective_status(r, now) == "listening"]
        lines.append("Can answer right away: " + (", ".join(ready) if ready else "none") + ".")
    else:
        lines.append("No other sessions in this project right now.")
    lines.append("`nexus peers` lists sessions; `nexus send <name> \"<text>\"` messages one; "
                 "`nexus read` reads yours (or the nexus MCP tools peers, send, read).")
    return "\n".join(lines)


def auto_turn_allowed(me: sqlite3.Row, root: str) -> tuple[int, int] | None:
    """(n, N) when one more automatic turn is allowed since the user's last prompt, else None."""
    limit = settings(root)["maxAutoTurns"]
    n = me["auto_turns"] + 1
    return (n, limit) if n <= limit else None


def count_auto_turn(conn: sqlite3.Connection, sid: str, now: float, wake: bool) -> None:
    conn.execute("UPDATE sessions SET auto_turns = auto_turns + 1" +
                 (", last_wake_at = ?, last_wake_error = NULL" if wake else "") + " WHERE id = ?",
                 (now, sid) if wake else (sid,))


def user_prompt(conn: sqlite3.Connection, me: sqlite3.Row, now: float) -> None:
    """A prompt from the user resets the automatic turn count (unless it is the woken turn)."""
    if me["last_wake_at"] is None or now - me["last_wake_at"] > WOKEN_TURN:
        conn.execute("UPDATE sessions SET auto_turns = 0 WHERE id = ?", (me["id"],))


def notify_idle(conn: sqlite3.Connection, sid: str, now: float, why: str) -> list[str]:
    """`send --notify-when-idle`: one notice to each waiting sender. Returns who to wake."""
    rows = conn.execute(
        "SELECT * FROM messages WHERE recipient = ? AND notify_when_idle = 1 AND notified_at IS NULL",
        (sid,)).fetchall()
    me = sessions.get(conn, sid)
    name = me["name"] if me else sid
    woken = []
    for r in rows:
        if r["created_at"] >= now - IDLE_WATCH:
            state = "has read it" if r["read_at"] else "has not read it yet"
            mailbox.notice(conn, r["sender"], f"{name} {why}; it {state} (your message {r['id']}).",
                            now, reply_to=r["id"])
            woken.append(r["sender"])
        conn.execute("UPDATE messages SET notified_at = ? WHERE id = ?", (now, r["id"]))
    return woken


def expire(conn: sqlite3.Connection, now: float, limit: int = 500) -> list[str]:
    """Unread messages older than 24 h expire; each sender gets a notice. Bounded per call."""
    rows = conn.execute(
        "SELECT * FROM messages WHERE read_at IS NULL AND expired_at IS NULL AND created_at < ?"
        " ORDER BY created_at LIMIT ?", (now - EXPIRE_AFTER, limit)).fetchall()
    woken = []
    for r in rows:
        conn.execute("UPDATE messages SET expired_at = ? WHERE id = ?", (now, r["id"]))
        if r["kind"] == "message" and r["sender"] != identity.SYSTEM_ID:
            to = sessions.get(conn, r["recipient"])
            mailbox.notice(conn, r["sender"],
                            f"your message {r['id']} to {to['name'] if to else r['recipient']} "
                            "expired unread after 24 h", now, reply_to=r["id"])
            woken.append(r["sender"])
    return woken


def expire_tasks(conn: sqlite3.Connection, now: float) -> list[str]:
    """Open tasks past their TTL fail ("TTL expired"); finished self tasks go after 7 days."""
    rows = conn.execute("SELECT id, sender FROM tasks WHERE expires_at < ? AND status IN"
                        f" {sessions.OPEN_TASKS_SQL}", (now,)).fetchall()
    conn.executemany("UPDATE tasks SET status = 'failed', error = 'TTL expired', updated_at = ?,"
                     " closed_at = ? WHERE id = ?", [(now, now, r["id"]) for r in rows])
    conn.execute("DELETE FROM tasks WHERE mode = 'self' AND closed_at < ?", (now - 7 * 86400,))
    return [r["sender"] for r in rows]


def purge_bindings(conn: sqlite3.Connection, now: float) -> int:
    """Tool-use bindings only matter for the call they precede: drop those over an hour old."""
    return conn.execute("DELETE FROM tool_uses WHERE created_at < ?", (now - 3600,)).rowcount


def maintain(conn: sqlite3.Connection, now: float, every: float = 60.0) -> list[str]:
    """Lazy maintenance inside normal commands: at most once per `every` seconds."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'maintained_at'").fetchone()
    if row and now - float(row[0]) < every:
        return []
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('maintained_at', ?)", (repr(now),))
    purge_bindings(conn, now)
    return expire(conn, now) + expire_tasks(conn, now)

