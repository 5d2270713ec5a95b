"""Waking a waiting process without a daemon.

A waiter creates a FIFO `wake/<session key>.<pid>` before its first check of the store; a writer,
after COMMIT, writes one byte into every FIFO of the sessions it touched (non-blocking: a FIFO
with no reader is skipped). The store stays the only source of truth: a wake only says "look
again", and waiters also poll `PRAGMA data_version` slowly as a safety net. Stdlib only."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

from . import paths

FOLDER = paths.WAKE


def ready(fds: Iterable[int], timeout: float) -> list[int]:
    """Which of `fds` can be read (or reached their end) within `timeout` seconds. poll(), not
    select(): select() refuses descriptors numbered 1024 and above, which a long-lived process
    (the MCP server, a board left open) reaches."""
    import select  # (a waiter's: a writer that pokes does not load it)

    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return [fd for fd, _ in poller.poll(max(0.0, timeout) * 1000)]


_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def key(session_id: str) -> str:
    """A file-name-safe form of a session id (ids are `client:[A-Za-z0-9._-]+`): every other
    character becomes `_` (no regular expression: compiling one costs a hook more than this)."""
    return "".join(c if c in _SAFE else "_" for c in session_id)


def poke(root: str, session_ids: Iterable[str]) -> int:
    """Nudge every waiter of these sessions; returns how many were reached. Only FIFOs of the
    store's own wake folder are written to (a planted link or file is not)."""
    wanted = {key(s) for s in session_ids}
    reached = 0
    with paths.subdir(root, FOLDER) as folder:
        for name in os.listdir(folder) if folder is not None else ():
            if name.rsplit(".", 1)[0] not in wanted:
                continue
            try:
                fd = os.open(name, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW, dir_fd=folder)
            except OSError:  # no reader (ENXIO) or gone: a dead waiter's leftover
                continue
            try:
                if stat.S_ISFIFO(os.fstat(fd).st_mode):
                    os.write(fd, b"!")
                    reached += 1
            except OSError:
                pass
            finally:
                os.close(fd)
    return reached


def sweep(root: str) -> int:
    """Remove the channels of waiters that died without closing them (kill -9): FIFOs of the
    wake folder only."""
    from ..proctable import table

    removed = 0
    with paths.subdir(root, FOLDER) as folder:
        for name in os.listdir(folder) if folder is not None else ():
            pid = name.rsplit(".", 1)[-1]
            if not pid.isdigit() or table().alive(int(pid)):
                continue
            try:
                if stat.S_ISFIFO(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
                    os.unlink(name, dir_fd=folder)
                    removed += 1
            except OSError:
                pass
    return removed


class Channel:
    """A waiter's FIFO. Create it before the first look at the store, so no poke is missed."""

    def __init__(self, root: str, session_id: str) -> None:
        self.folder = paths.open_subdir(root, FOLDER, create=True)
        self.name = f"{key(session_id)}.{os.getpid()}"
        self.path = os.path.join(root, FOLDER, self.name)
        try:
            try:
                os.unlink(self.name, dir_fd=self.folder)
            except FileNotFoundError:
                pass
            os.mkfifo(self.name, 0o600, dir_fd=self.folder)
            # O_RDWR keeps the FIFO open for writers even between reads, and never blocks here
            self.fd = os.open(self.name, os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW,
                              dir_fd=self.folder)
        except BaseException:
            os.close(self.folder)
            raise

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
        """Once: a second call does nothing (a descriptor number may belong to another file by
        then)."""
        if self.folder < 0:
            return
        fd, folder, self.fd, self.folder = self.fd, self.folder, -1, -1
        try:
            os.close(fd)
        finally:
            try:
                os.unlink(self.name, dir_fd=folder)
            except OSError:
                pass
            os.close(folder)

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

