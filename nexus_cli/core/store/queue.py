"""The writers' queue: before `BEGIN IMMEDIATE`, a write takes an exclusive `flock` on the
store's `queue` file, so writers take turns in the order the kernel wakes them, the moment the
lock is free. SQLite's own busy handler polls instead, with sleeps growing from 1 to 100 ms: under
sustained load a writer that keeps finding the lock taken sleeps longer and longer while others
go first (measured here: waits of 3-4 s behind 2 ms transactions, against 25-56 ms queued), and a
lock that is free sits idle while its waiters sleep. SQLite's lock stays what makes writes safe;
the queue only orders them, and a store it cannot open (read-only media) is written without it.

Locks belong to an open file, and a file is shared by a process's threads and by a forked child:
each thread, and each process, opens its own. A wait is bounded by the store's busy timeout (the
main thread is interrupted by an interval timer; other threads poll). Stdlib only."""

from __future__ import annotations

import fcntl
import os
import time
from _thread import _local as thread_local

NAME = "queue"


class Timeout(Exception):
    """The queue did not move within the time given."""


def _interrupt(signum: int, frame: object) -> None:
    raise Timeout


class Queue:
    def __init__(self, root: str) -> None:
        self.path = os.path.join(root, NAME)
        self._mine = thread_local()  # (pid, descriptor) of this thread's open queue file

    def _fd(self) -> int | None:
        held = getattr(self._mine, "fd", None)
        if held is not None and held[0] == os.getpid():
            return held[1]
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:
            return None  # read-only media, a link planted in its place: SQLite's lock alone
        self._mine.fd = (os.getpid(), fd)
        return fd

    def enter(self, timeout: float) -> int | None:
        """Wait for this store's turn (at most `timeout` seconds); the descriptor to `leave`, or
        None when there is no queue to join. Raises Timeout."""
        fd = self._fd()
        if fd is None:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            pass
        except OSError:
            return None
        _wait(fd, timeout)
        return fd

    @staticmethod
    def leave(fd: int | None) -> None:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)


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
