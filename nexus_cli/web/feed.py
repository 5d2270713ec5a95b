"""The page's data, kept current by one thread that sleeps until the store changes, the way the
terminal board does: a wake channel for every session shown and for the reservations (messages,
tasks, reports and releases poke them after COMMIT), a `PRAGMA data_version` look once a second
(what hooks record: status, tools, permission requests), and a fresh look every REFETCH_EVERY
seconds (transcripts change without a store write; the durations shown grow). On a team
database one LISTEN connection hears every session's wake, and, with no change counter to look
at, the look each second reads the board again. A state is published only when it
differs from the last one; the page's event streams wait on it (`Feed.next`)."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from ..core.errors import NexusError
from ..core.store import wake

REFETCH_EVERY = 10.0  # seconds
TICK = 1.0  # seconds between data_version looks


class Changes:
    """What tells the feed to look again (see the module's text)."""

    def __init__(self, store: Any) -> None:
        from ..reservations import leases

        self.store = store
        self.team = store.backend != "sqlite"
        self.extra = [leases.WAKE]
        self.channels: dict[str | None, Any] = {}
        self.conn = None
        self.seen: object = None

    def follow(self, ids: list[str]) -> None:
        """Channels for these sessions (created before the next look: no poke slips by)."""
        if self.team:
            ids = [None]  # type: ignore[list-item]  # one listener hears every session
        elif not self.store.check_dir():
            return
        wanted = [*ids, *self.extra] if not self.team else ids
        for sid in list(self.channels):
            if sid not in wanted:
                self.channels.pop(sid).close()
        for sid in wanted:
            if sid not in self.channels:
                try:
                    self.channels[sid] = self.store.channel(sid)
                except (OSError, NexusError):
                    pass  # the slow look below still sees every change

    def before_look(self) -> None:
        """The change counter as it stands before a look at the store: whatever commits after
        it (a session the look will show, before its channel exists) is seen by `wait`."""
        if self.conn is None and not self.team and self.store.check_dir() and \
                self.store.check_file():
            self.conn = self.store.open_read()
        if self.conn is not None:
            self.seen = self.store.data_version(self.conn)

    def wait(self, timeout: float, also: int) -> bool:
        """Whether something changed within `timeout` seconds (or `also`, a descriptor, became
        readable)."""
        if self.conn is None and not self.team and self.store.check_file():
            return True  # the store came to be since the last look
        chans = list(self.channels.values())
        ready = wake.ready([also, *(c.fd for c in chans)], timeout)
        changed = also in ready
        for c in chans:
            if c.fd in ready and c.wait(0):
                changed = True
        if self.conn is not None:
            version = self.store.data_version(self.conn)
            if version != self.seen:
                self.seen, changed = version, True
        # a team database has no cheap change counter: what hooks record (statuses, tools,
        # permission requests) pokes nobody, so the look each second is a fresh read
        return changed or self.team

    def close(self) -> None:
        for c in self.channels.values():
            c.close()
        self.channels.clear()
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Feed:
    """The latest state (JSON bytes) and its version number; one thread keeps it current."""

    def __init__(self, store: Any, fetch: Callable[[], dict]) -> None:
        self.store = store
        self.fetch = fetch
        self.cond = threading.Condition()
        self.version = 0
        self.body = b"{}"
        self._shown: object = None
        self.stopped = False
        self._bell_r, self._bell_w = os.pipe()  # `poke`: look again now
        os.set_blocking(self._bell_r, False)
        self.thread = threading.Thread(target=self._run, name="nexus-board-feed", daemon=True)

    def start(self) -> None:
        self._publish()
        self.thread.start()

    def poke(self) -> None:
        """Look again at once (after an action of the page's own)."""
        try:
            os.write(self._bell_w, b"!")
        except OSError:
            pass

    def next(self, after: int, timeout: float) -> tuple[int, bytes] | None:
        """The state newer than version `after`, waiting up to `timeout` seconds; None when
        there is none yet (or the feed stopped)."""
        with self.cond:
            self.cond.wait_for(lambda: self.version > after or self.stopped, timeout)
            if self.version > after and not self.stopped:
                return self.version, self.body
        return None

    def latest(self) -> tuple[int, bytes]:
        with self.cond:
            return self.version, self.body

    def stop(self) -> None:
        with self.cond:
            self.stopped = True
            self.cond.notify_all()
        self.poke()
        if self.thread.is_alive():
            self.thread.join(10)
        for fd in (self._bell_r, self._bell_w):
            os.close(fd)

    def _publish(self) -> dict:
        try:
            state = self.fetch()
        except NexusError as exc:
            state = {"error": exc.shown, "sessions": []}
        shown = {k: v for k, v in state.items() if k != "now_epoch"}
        if shown != self._shown:
            body = json.dumps(state, ensure_ascii=False, default=str).encode("utf-8")
            with self.cond:
                self.version += 1
                self.body = body
                self._shown = shown
                self.cond.notify_all()
        return state

    def _run(self) -> None:
        changes = Changes(self.store)
        try:
            fetched = time.monotonic()
            dirty = True  # the channels did not exist at the first look
            while not self.stopped:
                if dirty or time.monotonic() - fetched > REFETCH_EVERY:
                    changes.before_look()
                    state = self._publish()
                    changes.follow([s["id"] for s in state.get("sessions", [])])
                    fetched, dirty = time.monotonic(), False
                try:
                    dirty = changes.wait(TICK, self._bell_r)
                except NexusError:
                    time.sleep(TICK)
                    dirty = True
                try:
                    while os.read(self._bell_r, 512):
                        pass
                except (BlockingIOError, OSError):
                    pass
        finally:
            changes.close()
