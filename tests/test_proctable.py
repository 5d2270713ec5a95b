"""Both process-table backends on the real process tree: the same parents and names, a start
token that names one process, a dead pid seen as dead. (The rest of the suite runs on a synthetic
table; the tests marked `realprocs` or `realclient` run through both backends, chosen by
NEXUS_PROCESS_TABLE: tests/conftest.py.)"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import pytest

from nexus_cli.core.proctable import ProcFS, PsTable

BACKENDS = [pytest.param(ProcFS, id="proc",
                         marks=pytest.mark.skipif(not os.path.exists("/proc/self/stat"),
                                                  reason="no /proc here")),
            pytest.param(PsTable, id="ps")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_chain_above_this_process(backend):
    table = backend()
    me = table.get(os.getpid())
    assert me is not None and me.pid == os.getpid() and me.ppid == os.getppid()
    chain = table.ancestors()
    assert chain and chain[0].pid == os.getppid()
    for child, parent in itertools.pairwise(chain):
        assert child.ppid == parent.pid
    assert all(p.name and len(p.name) <= 15 for p in chain)
    assert table.alive(me.pid, me.start) and not table.alive(me.pid, me.start + "x")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_child_is_named_and_a_dead_pid_is_dead(backend):
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        table = backend()
        row = table.get(child.pid)
        assert row is not None and row.ppid == os.getpid() and row.name.startswith("python")
        assert table.alive(child.pid, row.start)
        exe = table.exe(child.pid)
        if backend is ProcFS or exe is not None:  # ps names a path only where comm is one
            assert os.path.basename(exe).startswith("python"), exe
    finally:
        child.communicate(b"")
    fresh = backend()
    assert fresh.get(child.pid) is None and not fresh.alive(child.pid, row.start)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_child_that_exited_but_is_not_reaped_is_not_alive(backend):
    """A zombie still answers kill(pid, 0): its session's client is gone all the same."""
    import time

    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        row = backend().get(child.pid)
        assert row is not None and backend().alive(child.pid, row.start)
        child.stdin.close()
        deadline = time.monotonic() + 30
        while state_of(child.pid) not in ("Z", None) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert state_of(child.pid) in ("Z", None)
        fresh = backend()
        assert fresh.get(child.pid) is None and not fresh.alive(child.pid, row.start)
    finally:
        child.wait()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_long_lived_table_sees_a_client_started_after_its_first_look(backend, monkeypatch):
    """The board and the MCP server live long and judge every session's client by its pid and
    start time: a process started after their first look is alive, one that died is dead."""
    table = backend()
    monkeypatch.setattr(PsTable, "FRESH", 0.0, raising=False)  # (ps: a snapshot a second old)
    assert table.get(os.getpid()) is not None
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        row = table.get(child.pid)
        assert row is not None and table.alive(child.pid, row.start)
    finally:
        child.communicate(b"")
    assert not table.alive(child.pid, row.start)


def state_of(pid: int) -> str | None:
    """The process's state letter (ps where there is no /proc)."""
    out = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True)
    return out.stdout.strip()[:1] or None


def test_both_backends_agree_on_the_tree():
    if not os.path.exists("/proc/self/stat"):
        pytest.skip("no /proc here")
    proc, ps = ProcFS().ancestors(), PsTable().ancestors()
    assert [(p.pid, p.ppid, p.name) for p in proc] == [(p.pid, p.ppid, p.name) for p in ps]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_parent_is_alive_without_a_look_until_it_exits(backend, monkeypatch):
    """This process's parent as its ancestry was read (the client that started an MCP server) is
    alive while it is the parent, which the table tells without reading the process table; once
    it exits (the child is re-parented at once) it is dead, though the ancestry was read before."""
    table = backend()
    parent = table.ancestors()[0]

    def no_look(*args: object) -> None:
        raise AssertionError("the process table was read")

    with monkeypatch.context() as patched:
        patched.setattr(table, "get", no_look)
        patched.setattr(ProcFS, "_stat", staticmethod(no_look))
        assert table.alive(parent.pid, parent.start)
    assert not table.alive(parent.pid, parent.start + "x")  # another process of that pid
    orphan = subprocess.run([sys.executable, "-c", MIDDLE, ORPHAN, backend.__name__],
                            capture_output=True, text=True, timeout=60)
    assert (orphan.stdout.split(), orphan.stderr) == (["True"], "False"), orphan


MIDDLE = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", *sys.argv[1:]], stdout=subprocess.PIPE, text=True)
print(child.stdout.readline().strip(), flush=True)  # then it exits: its child is an orphan
"""
ORPHAN = """
import os, sys, time
from nexus_cli.core import proctable
proctable.PsTable.FRESH = 0.0  # (ps: no snapshot of the time its parent ran)
table = getattr(proctable, sys.argv[1])()
parent = table.ancestors()[0]
print(table.alive(parent.pid, parent.start), flush=True)
deadline = time.monotonic() + 30
while os.getppid() == parent.pid and time.monotonic() < deadline:
    time.sleep(0.01)
sys.stderr.write(str(table.alive(parent.pid, parent.start)))
"""
