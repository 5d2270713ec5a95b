"""Reservations along a conversation's life: the greeting names them, SessionEnd ends them (a
`/clear` that hands over keeps them for the successor, which takes them in succession), handoff
moves them, maintenance ends expired ones and those of sessions that are gone. Stdlib only (the
hooks run it)."""

from __future__ import annotations

import os
import sqlite3

from ..core import sessions, settings, shellcmd
from ..core.settings import ANNOUNCE_LISTED
from ..core.text import one_line
from . import leases, marker


def greeting(conn: sqlite3.Connection, me: sqlite3.Row, now: float) -> str | None:
    """The lines of the SessionStart greeting about reservations in the session's project."""
    root = os.path.realpath(me["project"] or me["cwd"] or "/")
    theirs, total = leases.sample(conn, root, me["id"], False, now, ANNOUNCE_LISTED)
    mine, held = leases.sample(conn, root, me["id"], True, now, ANNOUNCE_LISTED)
    if not theirs and not mine:
        return None
    nexus = shellcmd.name(conn)
    lines = []
    if theirs:
        shown = []
        for r in theirs:
            holder = sessions.get(conn, r["session_id"])
            who = f"{one_line(holder['name'])} ({holder['handle']}){leases.where(holder)}" \
                if holder else r["session_id"]
            why = f", {leases.said(r['reason'], 60)}" if r["reason"] else ""
            kind = "exclusive" if r["exclusive"] else "shared"
            shown.append(f"{leases.shown(r['pattern'])} ({kind}"
                         f", {who} until {leases.until(r['expires_at'], now)}{why})")
        more = f" and {total - len(theirs)} more" if total > len(theirs) else ""
        lines.append(f"[nexus] Files reserved in this project: {'; '.join(shown)}{more}. An "
                     "edit of a file another session holds exclusively is refused.")
    if mine:
        names = ", ".join(leases.shown(r["pattern"]) for r in mine)
        more = f" and {held - len(mine)} more" if held > len(mine) else ""
        lines.append(f"[nexus] You hold: {names}{more}; `{nexus} release --all` when done.")
    lines.append(f"`{nexus} reservations` lists them; `{nexus} reserve <path>` takes one.")
    return "\n".join(lines)


def session_start(conn: sqlite3.Connection, me: sqlite3.Row, now: float, root: str) -> str | None:
    if marker.auto_reserve(root) or marker.shared_store():
        # every edit must reach nexus: to take its automatic reservation, or (team mode) to see
        # reservations made on other machines, which cannot raise this machine's marker
        marker.raise_(root)
    return greeting(conn, me, now)


def session_end(conn: sqlite3.Connection, me: sqlite3.Row, reason: object, now: float,
                root: str) -> list[str]:
    """A conversation that ended lets its reservations go, unless a `/clear` hands it over: then
    the successor's SessionStart takes them. Returns the wake channels to poke."""
    if reason == "clear" and me["handoff"] and settings.load(root)["handoff"]:
        return []
    return [leases.WAKE] if leases.release_all(conn, me["id"]) else []

