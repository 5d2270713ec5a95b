"""What a domain function receives besides its arguments: the store, the clock, the caller, and
the face's hooks for what must happen inside the transaction.

Each face (CLI, MCP) builds a `Ctx` with its own way of finding the caller; the domain only
asks `ctx.me(conn)`. Stdlib only."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from . import events, identity, sessions
from .sessions import Caller
from .store.db import Store
from .timefmt import stamp

Resolver = Callable[[sqlite3.Connection, float], Caller]


class Upkeep(Protocol):
    """Lazy maintenance (maintenance.expiry.LAZY): cheap to ask, rare to run."""

    def due(self, conn: sqlite3.Connection, now: float) -> bool: ...

    def run(self, conn: sqlite3.Connection, now: float) -> list[str]: ...


class Ctx:
    def __init__(self, store: Store, resolver: Resolver, now: float | None = None,
                 face: str = "cli", upkeep: Upkeep | None = None,
                 deliver: Callable[[dict[str, Any]], None] | None = None,
                 progress: Callable[[str, float], None] | None = None) -> None:
        self.store = store
        self.face = face  # cli | mcp: some tools bound their waits by the face's time limits
        self.resolver = resolver
        self.now = time.time() if now is None else now
        self._caller: Caller | None = None
        self._cancelled: threading.Event | None = None
        self._wake: set[str] = set()  # sessions to poke once the write has committed
        self.upkeep = upkeep  # lazy maintenance, run inside the first write when due
        self.deliver = deliver  # writes a consuming tool's result out, once it has committed
        self.delivered = False
        self._handed: tuple[dict[str, Any], Callable[[sqlite3.Connection], None],
                            Callable[[sqlite3.Connection], None] | None] | None = None
        self._depth = 0  # writes open (nested ones are savepoints)
        self.progress = progress  # (what, seconds so far): a wait shows it is alive (CLI: tty)
        self._recorded = False

    @property
    def cancelled(self) -> threading.Event:
        """Set when the caller gave up (a face's own, or one made at the first look)."""
        if self._cancelled is None:
            self._cancelled = threading.Event()
        return self._cancelled

    @cancelled.setter
    def cancelled(self, event: threading.Event) -> None:
        self._cancelled = event

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        self._resolve_early()
        self._depth += 1
        try:  # (the outermost write pokes right after its COMMIT: `after_commit`)
            with self.store.write(self.after_commit if self._depth == 1 else None) as conn:
                upkeep, self.upkeep = self.upkeep, None
                if upkeep is not None:
                    for sid in upkeep.run(conn, self.now):
                        self.wake_later(sid)
                yield conn
        finally:
            self._depth -= 1
        if self._depth == 0:  # committed (a write inside a write is its savepoint)
            self.after_commit()
            self._hand_out()

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        if self.upkeep is not None:
            self._upkeep_before_read()
        with self.store.read() as conn:
            yield conn

    def _upkeep_before_read(self) -> None:
        """A read-only command honours expiry too: when maintenance is due (at most once a
        minute) it runs in its own short write first. Where the store cannot be written
        (read-only media, busy), the read goes on."""
        from .errors import NexusError

        upkeep, self.upkeep = self.upkeep, None
        if upkeep is None:
            return
        try:
            if not (self.store.check_dir() and self.store.check_file()):
                return
            with self.store.read() as conn:
                if not upkeep.due(conn, self.now):
                    return
            with self.store.write() as conn:
                for sid in upkeep.run(conn, self.now):
                    self.wake_later(sid)
            self.after_commit()
        except NexusError:
            pass

    def _resolve_early(self) -> None:
        """Who calls, read before the write lock is taken, so that the lock is held for the write
        alone (the caller's lookups are a third of a short tool's work). It is the caller a lookup
        inside the write would find, unless its session was replaced in that instant: then the
        call reads as having come just before. Where it cannot be read, the write resolves it."""
        from .errors import NexusError

        if self._caller is not None:
            return
        try:
            with self.store.snapshot() as conn:
                if conn is not None:
                    self._caller = self.resolver(conn, self.now)
        except NexusError:
            pass

    def me(self, conn: sqlite3.Connection, register: bool = False) -> Caller:
        """The caller; with `register` (inside a write), its session row is created or revived
        and its presence refreshed."""
        if self._caller is None:
            self._caller = self.resolver(conn, self.now)
        if register:
            sessions.refresh(conn, self._caller.id, self._caller.cwd, self.now)
            if self._caller.source == "option" and self._caller.id != identity.user_id() \
                    and not self._recorded:
                # the person acting for a session: written down, so it can be seen afterwards
                events.record(conn, self.now, identity.user_id(), "security.act_as",
                              self._caller.id)
                self._recorded = True
        return self._caller

    @property
    def me_id(self) -> str:
        """The caller's id once resolved (after a first call that used the store)."""
        assert self._caller is not None, "resolve the caller first"
        return self._caller.id

    def hand_over(self, result: dict[str, Any], undo: Callable[[sqlite3.Connection], None],
                  confirm: Callable[[sqlite3.Connection], None] | None = None) -> dict[str, Any]:
        """For a tool that consumes (takes messages): the face writes the result out once the
        transaction has committed, so a COMMIT that fails (a full disk) prints nothing and
        consumes nothing. If the result then cannot be written (stdout closed or full, a client
        gone), `undo` runs in a write of its own and puts back what was taken; once it was
        written, `confirm` runs in a write of its own (a lease becomes read: a process killed
        before it leaves the lease, and the messages are taken again, at least once)."""
        self._handed = (stamp(result), undo, confirm)  # type: ignore[assignment]
        return result

    def _hand_out(self) -> None:
        from .errors import NexusError

        if self._handed is None:
            return
        (result, undo, confirm), self._handed = self._handed, None
        if self.deliver is not None:  # (none: the caller is handed the result as it returns)
            try:
                self.deliver(result)
            except BaseException:
                with self.store.write() as conn:
                    undo(conn)
                raise
            self.delivered = True
        if confirm is not None:
            try:
                with self.store.write() as conn:
                    confirm(conn)
            except NexusError:
                pass  # what was written stays leased: it is taken again, shown twice, not lost

    def wake_later(self, session_id: str) -> None:
        """Poke this session's waiters, but only after COMMIT."""
        self._wake.add(session_id)

    def after_commit(self) -> None:
        if self._wake:
            self.store.poke(self._wake)
            self._wake = set()


def cli_resolver(explicit: str | None) -> Resolver:
    from . import caller

    def resolve(conn: sqlite3.Connection, now: float) -> Caller:
        return caller.resolve(conn, now, explicit=explicit, env=os.environ)

    return resolve
