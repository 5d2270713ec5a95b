"""Owner of the `messages` table: every message, notice, task and report message is stored,
announced, read, retired and expired through these functions. Stdlib only (the hooks use it).

Nexus's own voice (`nexus:system`) reaches only the caller's own sessions in team mode: a notice
that one member's act owes another member (a mention, an edit of the same file, an idle
session) is written in the name of the session that acted, and the one an expiry owes a sender
is composed by the database itself (EXPIRED_NOTICE), from the message that expired."""

from __future__ import annotations

import os
import sqlite3

from ..core import identity, sessions
from ..core.settings import ANNOUNCE_COUNTED, ANNOUNCE_LISTED
from ..core.store import news, policy
from ..core.store.db import later, present
from . import UNREAD

SYSTEM = identity.SYSTEM_ID
# team mode (core/store/policy.py): a message is read and its delivery state changed by its two
# participants (only that state: its text, sender and kind never change); it is sent in the name
# of one of the sender's own sessions, and nexus's voice only to the caller's own
TEAM_TABLES = {"messages": policy.Table(
    read=policy.participants("sender", "recipient"),
    insert=policy.either(policy.own("sender"), f"sender = '{SYSTEM}' AND kind = 'notice' AND"
                         f" {policy.own('recipient')}"),
    update=policy.participants("sender", "recipient"), delete=policy.FUNCTIONS,
    columns=("delivered_at", "delivered_via", "read_at", "expired_at", "expired_why",
             "ask_state", "notified_at", "recipient", "read_lease", "read_lease_until"))}

# the notice an expired message owes its sender, composed from that message (on the team
# database by a function any participant of it may call, once per message)
EXPIRED_WHY = "unread after 24 h"
_TO = "coalesce(s.name, m.recipient)"
EXPIRED_NOTICE = policy.Function(
    "notice_expired",
    "INSERT INTO messages (id, kind, sender, recipient, text, reply_to, created_at)"
    f" SELECT :id, 'notice', '{SYSTEM}', m.sender, CASE m.kind"
    f" WHEN 'task' THEN 'your task ' || coalesce(m.task_id, '') || ' for ' || {_TO} || ' was not"
    f" read within 24 h; it stays open in the ledger: check on ' || {_TO} || ' (`nexus status`)"
    " before dispatching it again'"
    " WHEN 'report' THEN 'your report on task ' || coalesce(m.task_id, '') || ' was not read by '"
    f" || {_TO} || ' within 24 h; it stays in the task''s record'"
    f" ELSE 'your message ' || m.id || ' to ' || {_TO} || ' expired unread after 24 h' END,"
    " m.id, :now FROM messages AS m LEFT JOIN sessions AS s ON s.id = m.recipient"
    f" WHERE m.id = :message AND m.expired_why = '{EXPIRED_WHY}' AND m.sender <> '{SYSTEM}'"
    " AND m.kind IN ('message', 'task', 'report') AND NOT EXISTS (SELECT 1 FROM messages AS n"
    f" WHERE n.reply_to = m.id AND n.kind = 'notice' AND n.sender = '{SYSTEM}' AND n.created_at"
    " >= m.expired_at) AND ({guard})",
    # (on the team database the caller gives `now`: a notice it dated before the expiry must not
    # let it ask again, and a message expires once there, no member writing its columns)
    policy.when(policy.participants("m.sender", "m.recipient"),
                "NOT EXISTS (SELECT 1 FROM messages AS o WHERE o.reply_to = m.id AND o.kind ="
                f" 'notice' AND o.sender = '{SYSTEM}')"),
    {"id": "text", "now": "double precision", "message": "text"})
TEAM_FUNCTIONS = (EXPIRED_NOTICE,)


def new_id() -> str:
    return "m-" + os.urandom(6).hex()


def get(conn: sqlite3.Connection, mid: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM messages WHERE id = ?", (mid,)).fetchone()


def known(conn: sqlite3.Connection, mid: str) -> sqlite3.Row:
    """A message written or found in this transaction."""
    return present(get(conn, mid), f"message {mid}")


def state(row: sqlite3.Row) -> str:
    """Where a message stands: stored, delivered (announced), read or expired."""
    return ("read" if row["read_at"] else "expired" if row["expired_at"]
            else "delivered" if row["delivered_at"] else "stored")


def history(conn: sqlite3.Connection, me: str, peer: str | None, sent: bool, received: bool,
            unread: bool, limit: int, offset: int) -> tuple[list[sqlite3.Row], int]:
    """Messages to and from `me`, newest first, and how many match in all."""
    where = ["(" + " OR ".join((["recipient = :me"] if received or not sent else [])
                               + (["sender = :me"] if sent or not received else [])) + ")"]
    if peer:
        where.append("(sender = :peer OR recipient = :peer)")
    if unread:
        where.append(UNREAD)
    sql = " AND ".join(where)
    params = {"me": me, "peer": peer, "limit": limit, "offset": offset}
    total = conn.execute(f"SELECT count(*) FROM messages WHERE {sql}", params).fetchone()[0]
    rows = conn.execute(f"SELECT * FROM messages WHERE {sql} ORDER BY seq DESC"
                        " LIMIT :limit OFFSET :offset", params).fetchall()
    return rows, total


def insert(conn: sqlite3.Connection, *, sender: str, recipient: str, text: str, now: float,
           kind: str = "message", target: str | None = None, reply_to: str | None = None,
           request_id: str | None = None, notify_when_idle: bool | int = False,
           task_id: str | None = None, defer: bool = False,
           known: sqlite3.Row | None = None, wake: bool = True) -> str:
    """A message stored (and its recipient's news marker raised); `known`: the recipient's
    session row when the caller has just read it in this transaction (no look at all).
    `notify_when_idle`: 1, or 2 for a recipient that was offline when it was sent (the notice
    waits for it to come back); `wake`: False when it may not wake its recipient."""
    mid = new_id()
    # one look at the recipient serves routing and the news marker (a round trip on PostgreSQL)
    row = known if known is not None and known["id"] == recipient else \
        sessions.mail_row(conn, recipient)
    if row is not None:
        routed = sessions.route(conn, recipient, row)  # a handed-over conversation's mail follows
        if routed != recipient:
            recipient, row = routed, sessions.mail_row(conn, routed)
    later(
        conn,
        policy.write(
            "INSERT INTO messages (id, kind, sender, recipient, target, text, reply_to,"
            " request_id, created_at, notify_when_idle, task_id, defer, wake)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        (mid, kind, sender, recipient, target, text, reply_to, request_id, now,
         int(notify_when_idle), task_id, int(defer), int(wake)),
    )
    if not defer and row is not None:  # (no session, no client to tell)
        news.mark(conn, recipient, row)
    return mid


def notice(conn: sqlite3.Connection, recipient: str, text: str, now: float,
           reply_to: str | None = None, by: str | None = None) -> str | None:
    """A message from nexus itself (idle notifications, mentions, edits of one file ...). To
    another member's session (team mode) it is `by`'s, the session whose act it reports; without
    one none is written (that member's own nexus tells it). Returns the message id, if any."""
    sender = SYSTEM
    if not policy.mine(conn, recipient):
        if by is None:
            return None
        sender = by
    return insert(conn, sender=sender, recipient=recipient, text=text, now=now, kind="notice",
                  reply_to=reply_to)


def notice_expired(conn: sqlite3.Connection, row: sqlite3.Row, now: float) -> bool:
    """The notice the expired message `row` owes its sender (once); True when written."""
    if not policy.call(conn, EXPIRED_NOTICE, {"id": new_id(), "now": now, "message": row["id"]}):
        return False
    news.mark(conn, row["sender"])
    return True


def mark_delivered(conn: sqlite3.Connection, ids: list[str], now: float, via: str) -> None:
    conn.executemany(
        policy.write("UPDATE messages SET delivered_at = ?, delivered_via = ? WHERE id = ?"
        " AND delivered_at IS NULL"),
        [(now, via, mid) for mid in ids],
    )


# -- consuming reads, at least once ---------------------------------------------------------------
# What `read` and `ask` take is leased to the process taking it (LEASE_SECONDS) and marked read
# only once its output was written (`confirm`). A process killed between the two leaves its lease;
# the next read takes the messages again once the holder is gone (its pid and start time, judged
# on its machine) or the lease has run out: shown twice at worst, under the same message id,
# never lost. A lease read back is input: one that claims more time than a lease has is none.

LEASE_SECONDS = 600.0
PAGE_CHARS = 8_000_000  # what one `read` returns at most, in characters of text (one message more
# than that is returned alone): a jammed inbox of 23 MB messages reads a page at a time
# (past twice a lease's time, a lease is none: a reader's clock, or the time it waited for the
# lock, may differ from the holder's by a little, never by that much)
_TAKEABLE = ("(read_lease IS NULL OR read_lease_until IS NULL OR read_lease_until <= :now"
             f" OR read_lease_until > :now + {2 * LEASE_SECONDS})")


def holder() -> str:
    """This process, as its leases name it: pid, machine and start time."""
    from ..core.proctable import machine, table

    pid = os.getpid()
    proc = table().get(pid)
    return f"{pid}|{machine()}|{proc.start if proc is not None else ''}"


def _holder_gone(lease: str) -> bool:
    """Whether a lease's process is known to have ended: on this machine only (another's pids mean
    nothing here; its lease runs out)."""
    from ..core.proctable import machine, table

    pid, _, rest = lease.partition("|")
    where, _, start = rest.rpartition("|")
    if where != machine() or not pid.isdigit():
        return False
    return not table().alive(int(pid), start or None)


def _free_dead_leases(conn: sqlite3.Connection, recipient: str, now: float) -> None:
    """Leases on `recipient`'s unread mail held by a process that has ended are given up."""
    leases = conn.execute(f"SELECT DISTINCT read_lease FROM messages WHERE recipient = :me AND"
                          f" {UNREAD} AND read_lease IS NOT NULL AND NOT {_TAKEABLE}",
                          {"me": recipient, "now": now}).fetchall()
    for (lease,) in leases:
        if _holder_gone(lease):
            conn.execute(policy.write(
                "UPDATE messages SET read_lease = NULL, read_lease_until = NULL WHERE"
                f" recipient = ? AND read_lease = ? AND {UNREAD}"), (recipient, lease))


def lease(conn: sqlite3.Connection, rows: list[sqlite3.Row], now: float, who: str,
          via: str = "read") -> None:
    """Take these rows for reading: delivered now (as `via`), held by `who` until `confirm`."""
    ids = [r["id"] for r in rows]
    mark_delivered(conn, ids, now, via)
    conn.executemany(policy.write(
        "UPDATE messages SET read_lease = ?, read_lease_until = ? WHERE id = ?"),
                     [(who, now + LEASE_SECONDS, mid) for mid in ids])


def confirm(conn: sqlite3.Connection, rows: list[sqlite3.Row], now: float, who: str) -> None:
    """The output holding these rows was written: they are read (those `who` still holds)."""
    conn.executemany(policy.write(
        "UPDATE messages SET read_at = ?, read_lease = NULL, read_lease_until = NULL"
        " WHERE id = ? AND read_lease = ? AND read_at IS NULL"),
                     [(now, r["id"], who) for r in rows])


def release(conn: sqlite3.Connection, rows: list[sqlite3.Row], who: str) -> None:
    """The output could not be written: these rows are unread, and delivered as they were
    before `lease` (`rows` as read before it)."""
    conn.executemany(policy.write(
        "UPDATE messages SET read_lease = NULL, read_lease_until = NULL,"
        " delivered_at = ?, delivered_via = ? WHERE id = ? AND read_lease = ?"),
                     [(r["delivered_at"], r["delivered_via"], r["id"], who) for r in rows])


def pick_mode(mode: str, target: sqlite3.Row, now: float) -> str:
    """When a message or task is announced. auto: a working session (or one waiting for a person
    in its turn) at its next tool call (steer), anyone else at its next turn (queue)."""
    if mode != "auto":
        return mode
    from ..core import availability  # (the hooks' announcements never pick a mode)

    return "steer" if availability.effective_status(target, now) in ("working", "waiting") \
        else "queue"


def by_request(conn: sqlite3.Connection, sender: str, request_id: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM messages WHERE sender = ? AND request_id = ?",
                        (sender, request_id)).fetchone()


def take(conn: sqlite3.Connection, recipient: str, count: int, now: float) -> list[sqlite3.Row]:
    """The oldest unread messages of `recipient` that no living read holds, up to `count` and
    PAGE_CHARS of text (the first one whatever its size)."""
    _free_dead_leases(conn, recipient, now)
    return conn.execute(
        "SELECT * FROM (SELECT *, sum(length(text)) OVER (ORDER BY seq) AS upto FROM messages"
        f" WHERE recipient = :me AND {UNREAD} AND {_TAKEABLE} ORDER BY seq LIMIT :count) AS page"
        " WHERE upto <= :page OR upto = length(text) ORDER BY seq",
        {"me": recipient, "now": now, "count": count, "page": PAGE_CHARS}).fetchall()


def unread_count(conn: sqlite3.Connection, recipient: str) -> int:
    return conn.execute(f"SELECT count(*) FROM messages WHERE recipient = ? AND {UNREAD}",
                        (recipient,)).fetchone()[0]


def depth(conn: sqlite3.Connection, recipient: str) -> tuple[int, int]:
    """(unread, of those not yet announced) for a probe of the recipient."""
    return conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE delivered_at IS NULL) FROM messages"
        f" WHERE recipient = ? AND {UNREAD}", (recipient,)).fetchone()


def unread(conn: sqlite3.Connection, sid: str, only_new: bool) -> tuple[list[sqlite3.Row], int]:
    """Up to ANNOUNCE_LISTED unread messages (only those never announced, with `only_new`), oldest
    first, and how many there are in all, counted up to ANNOUNCE_COUNTED + 1 (more than
    ANNOUNCE_COUNTED: "over"): what a tool call pays for a backlog stays bounded."""
    extra = " AND delivered_at IS NULL AND defer = 0" if only_new else ""
    where = f"recipient = ? AND {UNREAD}{extra}"
    rows = conn.execute(f"SELECT * FROM messages WHERE {where} ORDER BY seq LIMIT ?",
                        (sid, ANNOUNCE_LISTED)).fetchall()
    if len(rows) < ANNOUNCE_LISTED:
        return rows, len(rows)
    return rows, conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM messages WHERE {where}"
                              " LIMIT ?) AS counted", (sid, ANNOUNCE_COUNTED + 1)).fetchone()[0]


def has_news(conn: sqlite3.Connection, sid: str) -> bool:
    """Whether something unannounced that may wake `sid` waits (what ends an idle or listening
    wait and holds a Stop open; `send --no-wake` waits for the next prompt)."""
    return conn.execute(f"SELECT 1 FROM messages WHERE recipient = ? AND delivered_at IS NULL"
                        f" AND wake = 1 AND {UNREAD} LIMIT 1", (sid,)).fetchone() is not None


def first_reply(conn: sqlite3.Connection, mid: str, recipient: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM messages WHERE reply_to = ? AND recipient = ?"
                        " ORDER BY seq LIMIT 1", (mid, recipient)).fetchone()


def set_ask_state(conn: sqlite3.Connection, mid: str, state: str) -> None:
    conn.execute(policy.write("UPDATE messages SET ask_state = ? WHERE id = ?"), (state, mid))


def move_unread(conn: sqlite3.Connection, old_id: str, new_id: str) -> int:
    """Handoff: the unread mail of a replaced conversation goes to its successor."""
    return conn.execute(policy.write(
        f"UPDATE messages SET recipient = ? WHERE recipient = ? AND {UNREAD}"),
                        (new_id, old_id)).rowcount


def idle_watchers(conn: sqlite3.Connection, recipient: str,
                  back_since: float | None = None) -> list[sqlite3.Row]:
    """The `--notify-when-idle` messages to `recipient` not yet notified; with `back_since` (it
    went offline without a SessionEnd), not those sent while it was offline (2) unless it was
    active after they were sent (it came back: `back_since` is its last activity)."""
    extra = "" if back_since is None else " AND (notify_when_idle = 1 OR created_at < ?)"
    return conn.execute("SELECT * FROM messages WHERE recipient = ? AND notify_when_idle > 0"
                        f" AND notified_at IS NULL{extra}",
                        (recipient, *(() if back_since is None else (back_since,)))).fetchall()


def mark_notified(conn: sqlite3.Connection, mid: str, now: float) -> None:
    conn.execute(policy.write("UPDATE messages SET notified_at = ? WHERE id = ?"), (now, mid))


def expirable(conn: sqlite3.Connection, before: float, limit: int) -> list[sqlite3.Row]:
    return conn.execute(f"SELECT * FROM messages WHERE {UNREAD} AND created_at < ?"
                        " ORDER BY created_at LIMIT ?", (before, limit)).fetchall()


def expire(conn: sqlite3.Connection, mid: str, now: float, why: str = EXPIRED_WHY) -> None:
    """Take a message out of its recipient's inbox unread (aged out, or its task closed)."""
    conn.execute(policy.write("UPDATE messages SET expired_at = ?, expired_why = ? WHERE id = ? AND"
                 f" {UNREAD}"), (now, why, mid))


def idle_watched(conn: sqlite3.Connection, since: float = 0.0) -> list[str]:
    """Recipients someone asked to hear about (`--notify-when-idle`) since `since`, not yet
    told."""
    return [r[0] for r in conn.execute("SELECT DISTINCT recipient FROM messages WHERE"
                                       " notify_when_idle > 0 AND notified_at IS NULL"
                                       " AND created_at >= ?", (since,))]
