"""Time-driven upkeep: unread messages expire after 24 h (their senders are told), open tasks
past their TTL fail, sessions whose client process exited are recorded offline, old tool-use
bindings go, file reservations past their TTL or of sessions that are gone end. No daemon runs
it: `due` work is done lazily inside normal commands and hooks, at most once a minute, and all
of it by `nexus maintenance`.
Stdlib only (the hooks run it)."""

from __future__ import annotations

import sqlite3

from ..core import events, sessions
from ..core.settings import EXPIRE_AFTER, IDLE_WATCH, MAINTAIN_EVERY
from ..core.store import policy
from ..delivery import notify
from ..messages import mailbox
from ..tasks import ledger
from . import schedule


def expire_messages(conn: sqlite3.Connection, now: float, limit: int = 500) -> list[str]:
    """Unread messages older than 24 h expire; whoever sent one is told (mailbox.EXPIRED_NOTICE).
    Returns whom to wake."""
    woken = []
    for r in mailbox.expirable(conn, now - EXPIRE_AFTER, limit):
        mailbox.expire(conn, r["id"], now)
        if mailbox.notice_expired(conn, r, now):
            woken.append(r["sender"])
    return woken


def offline_watchers(conn: sqlite3.Connection, now: float) -> list[str]:
    """`--notify-when-idle` for recipients that went offline without a SessionEnd (their client
    process exited, or 30 minutes without activity where it cannot be checked): their senders
    are told now, with why. Returns whom to wake."""
    woken = []
    for sid in mailbox.idle_watched(conn, now - IDLE_WATCH):  # older ones have lapsed
        row = sessions.get(conn, sid)
        why = sessions.gone(row, now) if row is not None else "it is unknown here"
        if why:
            woken += notify.idle(conn, sid, now, f"went offline ({why})",
                                 row["last_active"] if row is not None else None, itself=False)
    return woken


def expire_tasks(conn: sqlite3.Connection, now: float) -> list[str]:
    return [r["sender"] for r in ledger.expire_ttl(conn, now)]


def maintain(conn: sqlite3.Connection, now: float, limit: int = 500) -> dict:
    """One round of upkeep inside the caller's write transaction: what it did (counts), and
    `wake`, the sessions whose waiters should look again."""
    conn.execute(policy.write("INSERT INTO meta (key, value) VALUES ('maintained_at', ?)"
                 " ON CONFLICT (key) DO UPDATE SET value = excluded.value"), (repr(now),))
    expired, failed = expire_messages(conn, now, limit), expire_tasks(conn, now)
    retired = sessions.retire_dead(conn)
    watched = offline_watchers(conn, now)
    from ..reservations import leases  # every hook imports this module; a round is rare

    ended = leases.expire(conn, now)
    events.trim(conn)
    return {"expired": len(expired), "tasks_expired": len(failed), "sessions_retired": len(retired),
            "bindings_purged": sessions.purge_bindings(conn, now), "reservations_ended": ended,
            "wake": expired + failed + watched + ([leases.WAKE] if ended else [])}


class Lazy:
    """Maintenance run lazily inside normal commands, hooks and MCP calls: at most once per
    MAINTAIN_EVERY seconds (`core.context.Ctx` calls it). A long-lived process remembers when the
    next round can be due and does not ask the store before."""

    def __init__(self) -> None:
        self.not_before = 0.0

    def due(self, conn: sqlite3.Connection, now: float) -> bool:
        if now < self.not_before:
            return False
        last = schedule.last(conn)
        if 0 <= now - last < MAINTAIN_EVERY:
            self.not_before = last + MAINTAIN_EVERY
            return False
        return True

    def run(self, conn: sqlite3.Connection, now: float) -> list[str]:
        """Whom to wake."""
        if not self.due(conn, now):
            return []
        self.not_before = now + MAINTAIN_EVERY
        return maintain(conn, now)["wake"]


LAZY = Lazy()
lazily = LAZY.run
