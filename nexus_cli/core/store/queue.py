"""The writers' queue: before `BEGIN IMMEDIATE`, a write takes an exclusive `flock` on the
store's `queue` file, so writers take turns in the order the kernel wakes them, the moment the
lock is free. SQLite's own busy handler polls instead, with sleeps growing from 1 to 100 ms: under
sustained load a writer that keeps finding the lock taken sleeps longer and longer while others
go first (measured here: waits of 3-4 s behind 2 ms transactions, against 25-56 ms queued), and a
lock that is free sits idle while its waiters sleep. SQLite's lock stays what makes writes safe;
the queue only orders them, and a store it cannot open (read-only media) is written without it.

A waiter first spins for a moment (`SPIN`), giving its processor away between tries, and only then
sleeps in the kernel. A write holds the lock for a fraction of a millisecond, and a sleeper woken
by its release is queued behind the releaser on the releaser's processor: with 8 writers on 2
cores the lock sat idle ~45% of the time while 5 or 6 of them slept (the cores 27% idle). A spinner
is already running when the lock comes free, and yields to any process that has work meanwhile.

Locks belong to an open file, and a file is shared by a process's threads and by a forked child:
each thread, and each process, opens its own, once per store (closed with the thread). A wait is
bounded by the store's busy timeout (the main thread is interrupted by an interval timer; other
threads poll). Stdlib only."""

from __future__ import annotations

import fcntl
import os
import time
from _thread import _local as thread_local

NAME = "queue"
SPIN = 0.001  # seconds a waiter tries before it sleeps: a few writes' worth (bench/cli.py)


class Timeout(Exception):
    """The queue did not move within the time given."""


def _interrupt(signum: int, frame: object) -> None:
    raise Timeout


class _Held:
    """This thread's open queue file of one store; closed when the thread ends."""

    __slots__ = ("depth", "fd", "pid")

    def __init__(self, fd: int) -> None:
        self.pid, self.fd, self.depth = os.getpid(), fd, 0

    def __del__(self) -> None:
        if self.pid == os.getpid():
            try:
                os.close(self.fd)
            except OSError:
                pass


_mine = thread_local()  # {queue path: _Held}, per thread: one descriptor per store, not per Store


class Queue:
    def __init__(self, root: str) -> None:
        self.path = os.path.join(root, NAME)

    def _held(self) -> _Held | None:
        files = getattr(_mine, "files", None)
        if files is None:
            files = _mine.files = {}
        held = files.get(self.path)
        if held is not None and held.pid == os.getpid():
            return held
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:
            return None  # read-only media, a link planted in its place: SQLite's lock alone
        held = files[self.path] = _Held(fd)
        return held

    def enter(self, timeout: float) -> _Held | None:
        """Wait for this store's turn (at most `timeout` seconds); what to `leave`, or None when
        there is no queue to join. Raises Timeout. Re-entrant within a thread (a second Store
        object of the same file)."""
        held = self._held()
        if held is None:
            return None
        if held.depth == 0:
            deadline = time.monotonic() + timeout
            try:
                try:
                    fcntl.flock(held.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    if not _spin(held.fd, min(SPIN, timeout)):
                        _wait(held.fd, max(deadline - time.monotonic(), 0.001))
            except Timeout:
                raise
            except OSError:
                return None  # no lock to be had on this file (ENOLCK): SQLite's lock alone
            except BaseException:
                fcntl.flock(held.fd, fcntl.LOCK_UN)  # interrupted just as it got the lock
                raise
        held.depth += 1
        return held

    @staticmethod
    def leave(held: _Held | None) -> None:
        if held is not None:
            held.depth -= 1
            if held.depth == 0:
                fcntl.flock(held.fd, fcntl.LOCK_UN)


def _spin(fd: int, seconds: float) -> bool:
    """Try for the lock for `seconds`, yielding the processor between tries: True once held."""
    deadline = time.monotonic() + seconds
    while True:
        os.sched_yield()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False


def _wait(fd: int, timeout: float) -> None:
    import signal

    try:
        previous = signal.signal(signal.SIGALRM, _interrupt)
    except ValueError:  # not the main thread: no signals here, poll instead
        _poll(fd, timeout)
        return
    signal.setitimer(signal.ITIMER_REAL, timeout)  # nexus runs no other interval timer
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # the kernel wakes it when the holder lets go
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Timeout:
        fcntl.flock(fd, fcntl.LOCK_UN)  # granted just as the timer fired, perhaps: never kept
        raise
    finally:
        signal.signal(signal.SIGALRM, previous)


def _poll(fd: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    pause = 0.0005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise Timeout from None
        time.sleep(pause)
        pause = min(pause * 2, 0.005)
