"""The writers' queue (core/store/queue.py): writes take turns on a file lock before SQLite's own,
a wait is bounded by the busy timeout on every thread, and a queue file nexus cannot use is
never followed or required."""

from __future__ import annotations

import fcntl
import os
import signal
import threading
import time

import pytest

from nexus_cli.core.errors import NexusError
from nexus_cli.core.store import db, queue
from nexus_cli.core.store.db import Store


@pytest.fixture
def store(home):
    s = Store(str(home))
    s.open_write()  # created and migrated
    return s


def hold(home) -> int:
    """The queue taken by another open file (as another process would hold it)."""
    fd = os.open(os.path.join(home, queue.NAME), os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def write_one(store: Store) -> None:
    with store.write() as conn:
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('queue-test', '1')")


def test_a_write_waits_its_turn_and_goes_the_moment_the_queue_moves(store, home):
    write_one(store)  # the queue file exists now
    fd = hold(home)
    done = threading.Event()
    worker = threading.Thread(target=lambda: (write_one(store), done.set()))
    worker.start()
    assert not done.wait(0.3), "a write went ahead of the queue's holder"
    fcntl.flock(fd, fcntl.LOCK_UN)
    assert done.wait(30), "the write did not go once the queue moved"
    worker.join()
    os.close(fd)


@pytest.mark.parametrize("where", ["main thread", "other thread"])
def test_a_stuck_queue_is_store_busy_within_the_busy_timeout(store, home, monkeypatch, where):
    write_one(store)
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 300)
    fd = hold(home)
    before = signal.getsignal(signal.SIGALRM)
    box: dict = {}

    def attempt() -> None:
        try:
            write_one(store)
        except NexusError as exc:
            box["code"] = exc.code

    try:
        if where == "main thread":
            attempt()
        else:
            t = threading.Thread(target=attempt)
            t.start()
            t.join(30)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    assert box.get("code") == "store_busy"
    assert signal.getsignal(signal.SIGALRM) is before  # the timer's handler put back
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    write_one(store)  # nothing left held: the next write goes at once


def test_a_queue_file_that_is_a_link_is_never_followed(store, home, tmp_path):
    target = tmp_path / "created-through-the-link"
    q = os.path.join(home, queue.NAME)
    if os.path.exists(q):
        os.unlink(q)
    os.symlink(target, q)
    fresh = Store(str(home))  # a process that never opened the queue
    write_one(fresh)  # SQLite's lock alone
    assert not target.exists() and os.path.islink(q)


def test_the_queue_file_is_private(store, home):
    write_one(store)
    import stat

    mode = os.stat(os.path.join(home, queue.NAME)).st_mode
    assert stat.S_IMODE(mode) == 0o600


def test_one_descriptor_per_thread_and_store_however_many_store_objects(store, home):
    """A long-lived process (the MCP server, a test run) makes a Store per call: the queue file is
    opened once per thread, and closed when the thread ends."""
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    write_one(store)
    before = open_fds()
    for _ in range(200):
        write_one(Store(str(home)))
    assert open_fds() <= before + 2  # SQLite's own connections come and go

    t = threading.Thread(target=lambda: [write_one(Store(str(home))) for _ in range(20)])
    t.start()
    t.join(30)
    import gc

    gc.collect()
    assert open_fds() <= before + 2


def test_a_second_store_object_in_the_same_thread_does_not_wait_for_the_first(home):
    """Nested writes through two Store objects of one file: the queue is re-entrant per thread
    (SQLite's lock, not the queue, answers the inner BEGIN)."""
    outer, inner = Store(str(home)), Store(str(home))
    outer.open_write()
    turn = outer._queue.enter(1)
    again = inner._queue.enter(1)  # no wait on itself
    assert again is turn and turn.depth == 2
    inner._queue.leave(again)
    assert turn.depth == 1
    outer._queue.leave(turn)
    assert turn.depth == 0


def test_a_waiter_that_sees_the_queue_move_while_it_spins_never_sleeps(store, home, monkeypatch):
    """The lock freed during the spin is taken at once: no sleep in the kernel, where a waker's
    processor would hold the woken writer back (queue.py)."""
    write_one(store)
    fd = hold(home)
    monkeypatch.setattr(queue, "SPIN", 60.0)  # the whole wait is a spin here
    monkeypatch.setattr(queue, "_wait", lambda fd, timeout: pytest.fail("the waiter slept"))
    spinning, done = threading.Event(), threading.Event()
    real_spin = queue._spin
    monkeypatch.setattr(queue, "_spin", lambda fd, s: (spinning.set(), real_spin(fd, s))[1])
    worker = threading.Thread(target=lambda: (write_one(store), done.set()))
    worker.start()
    assert spinning.wait(30)
    assert not done.wait(0.1), "a write went ahead of the queue's holder"
    fcntl.flock(fd, fcntl.LOCK_UN)
    assert done.wait(30), "the spinning write did not go once the queue moved"
    worker.join()
    os.close(fd)


def test_a_spin_gives_up_in_its_time_and_the_wait_goes_on_in_the_kernel(store, home, monkeypatch):
    write_one(store)
    fd = hold(home)
    mine = os.open(os.path.join(home, queue.NAME), os.O_RDWR)
    try:
        began = time.monotonic()
        assert queue._spin(mine, 0.05) is False
        assert time.monotonic() - began >= 0.05
        fcntl.flock(fd, fcntl.LOCK_UN)
        assert queue._spin(mine, 0.05) is True
    finally:
        os.close(mine)
        os.close(fd)


def test_a_wait_interrupted_just_as_it_got_the_lock_leaves_it_free(store, home, monkeypatch):
    """Ctrl-C landing between the lock granted and `enter` returning (a caller that catches it
    and goes on, as `ask` does) must not keep every other writer waiting."""
    write_one(store)
    fd = hold(home)

    def granted_then_interrupted(mine: int, seconds: float) -> bool:
        fcntl.flock(fd, fcntl.LOCK_UN)
        fcntl.flock(mine, fcntl.LOCK_EX | fcntl.LOCK_NB)
        raise KeyboardInterrupt

    monkeypatch.setattr(queue, "_spin", granted_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_one(store)
    other = os.open(os.path.join(home, queue.NAME), os.O_RDWR)
    try:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: no BlockingIOError
    finally:
        os.close(other)
        os.close(fd)
    monkeypatch.undo()
    write_one(store)  # and this thread's own depth was left at 0
