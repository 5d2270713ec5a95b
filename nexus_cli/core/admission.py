"""Whether a hook event may be believed, and which client process a process runs below. Stdlib
only (the hooks use it; core/caller.py resolves callers with it).

A hook event is believed only from its session's own client process: the first event of a
session records that process (pid and start time); a live one is never replaced, a dead one
only by a SessionStart that is its new process's own first event (`claude --resume`, `codex
resume`: never into a process that runs other sessions, as a start fed by hand from an agent's
shell would), which is recorded in the event log. A client process nexus has not registered is
never a registered session by its variable or `_meta` alone, and a process that runs a shell is
no client, whatever its name."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from .. import clients
from . import sessions
from .errors import NexusError
from .proctable import Proc
from .record import Record


class Found(Record):
    _fields = __slots__ = ("proc", "client", "depth", "current", "hosted")
    proc: Proc  # the nearest client process above us
    client: str  # its kind
    depth: int  # its place in the ancestry (0: our parent)
    current: sqlite3.Row | None  # the session it runs now, when nexus registered it
    hosted: frozenset[str]  # every session it ran, and their successors


def kind_of(proc: Proc) -> str | None:
    for name, adapter in clients.ADAPTERS.items():
        if adapter.is_client(proc):
            return name
    return None


def nearest_client(conn: sqlite3.Connection, chain: Sequence[Proc], now: float) -> Found | None:
    """The nearest ancestor that is a client process: registered by its hooks (a session names
    its pid and start time), or recognised by its name."""
    for depth, proc in enumerate(chain):
        rows = sessions.of_process(conn, proc)
        if rows:
            return Found(proc, rows[0]["client"], depth, sessions.current_of(rows, now),
                         hosted(rows))
        kind = kind_of(proc)
        if kind:
            return Found(proc, kind, depth, None, frozenset())
    return None


def hosted(rows: Sequence[sqlite3.Row]) -> frozenset[str]:
    """The sessions a client process ran. Its successors after /clear are among them (the same
    process registered them); a successor elsewhere (`handoff now --to`) is not: handing over
    never makes a process another session."""
    return frozenset(r["id"] for r in rows)


def admit_hook(conn: sqlite3.Connection, sid: str, event: str, client: str, proc: Proc | None,
               chain: Sequence[Proc], now: float, row: sqlite3.Row | None) -> str | None:
    """Whether a hook event for `sid` (its row: `row`, None when new), run below `proc`, may be
    believed; returns the session that started this one's client (a nested agent's parent), if
    any. Raises `hook_refused`."""
    if proc is None:
        raise NexusError("hook_refused", sid, f"no {client} process runs this hook",
                         f"hooks are for {client} to call; nothing was recorded")
    if row is not None and row["client_pid"] is not None and \
            (row["client_pid"], row["client_start"]) != (proc.pid, proc.start):
        if sessions.client_alive(row):
            raise NexusError("hook_refused", sid,
                             f"the session runs in {client} process {row['client_pid']}, not in "
                             f"process {proc.pid}", "nothing was recorded")
        if event != "SessionStart":
            raise NexusError("hook_refused", sid,
                             f"the session's {client} process {row['client_pid']} has exited; "
                             "only a SessionStart (a resume) may move it to another process",
                             "nothing was recorded")
        if sessions.of_process(conn, proc):  # a resume is believed from a client's own start
            raise NexusError("hook_refused", sid,
                             f"the session's {client} process {row['client_pid']} has exited, "
                             f"and process {proc.pid} runs other sessions already: a "
                             "conversation moves to a client process only as that process's "
                             "first event (`claude --resume`, `codex resume`), never into a "
                             "running one (a start fed by hand from an agent's shell)",
                             f"resume it in a new {client} process; nothing was recorded")
        from . import events  # rare: a session resumed in another process

        events.record(conn, now, sid, "session.moved", sid, from_pid=row["client_pid"],
                      to_pid=proc.pid)
    if row is not None:
        return row["parent"]  # set when the session was first seen (one lookup per ancestor)
    depth = next((i for i, p in enumerate(chain) if p.pid == proc.pid), len(chain))
    above = nearest_client(conn, chain[depth + 1:], now)
    return above.current["id"] if above and above.current is not None else None
