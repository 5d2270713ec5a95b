"""Waking a waiting process without a daemon.

A waiter creates a FIFO `wake/<session key>.<pid>` before its first check of the store; a writer,
after COMMIT, writes one byte into every FIFO of the sessions it touched (non-blocking: a FIFO
with no reader is skipped). The store stays the only source of truth: a wake only says "look
again", and waiters also poll `PRAGMA data_version` slowly as a safety net. Stdlib only."""

from __future__ import annotations

import os
import re
import select
from collections.abc import Iterable

from . import paths


def ready(fds: Iterable[int], timeout: float) -> list[int]:
    """Which of `fds` can be read (or reached their end) within `timeout` seconds. poll(), not
    select(): select() refuses descriptors numbered 1024 and above, which a long-lived process
    (the MCP server, a board left open) reaches."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return [fd for fd, _ in poller.poll(max(0.0, timeout) * 1000)]


def key(session_id: str) -> str:
    """A file-name-safe form of a session id (ids are `client:[A-Za-z0-9._-]+`)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", session_id)


def poke(root: str, session_ids: Iterable[str]) -> int:
    """Nudge every waiter of these sessions; returns how many were reached."""
    folder = paths.wake_dir(root)
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    wanted = {key(s) for s in session_ids}
    reached = 0
    for name in names:
        if name.rsplit(".", 1)[0] not in wanted:
            continue
        try:
            fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader (ENXIO) or gone: a dead waiter's leftover
            continue
        try:
            os.write(fd, b"!")
            reached += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return reached


def sweep(root: str) -> int:
    """Remove the channels of waiters that died without closing them (kill -9)."""
    from ..proctable import table

    folder = paths.wake_dir(root)
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    removed = 0
    for name in names:
        pid = name.rsplit(".", 1)[-1]
        if pid.isdigit() and not table().alive(int(pid)):
            try:
                os.unlink(os.path.join(folder, name))
                removed += 1
            except OSError:
                pass
    return removed


class Channel:
    """A waiter's FIFO. Create it before the first look at the store, so no poke is missed."""

    def __init__(self, root: str, session_id: str) -> None:
        folder = paths.wake_dir(root)
        paths.ensure_private_dir(folder)
        self.path = os.path.join(folder, f"{key(session_id)}.{os.getpid()}")
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.mkfifo(self.path, 0o600)
        # O_RDWR keeps the FIFO open for writers even between reads, and never blocks here
        self.fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK)

    def wait(self, timeout: float) -> bool:
        """Block until poked or `timeout` seconds pass; True when poked."""
        if not ready([self.fd], timeout):
            return False
        try:
            while os.read(self.fd, 512):
                pass
        except BlockingIOError:
            pass
        return True

    def close(self) -> None:
        try:
            os.close(self.fd)
        finally:
            try:
                os.unlink(self.path)
            except OSError:
                pass

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

