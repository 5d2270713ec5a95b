"""Many processes at once, and processes killed mid-write: nothing lost, nothing read twice."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from helpers import ctx_for, raw_db, sid
from nexus_cli.catalog import load
from nexus_cli.core.registry import TOOLS, invoke
from nexus_cli.core.store.db import Store

pytestmark = pytest.mark.slow
# 1,200 messages: eight writers and two readers racing all along (it was 3,000, 59 s of one worker
# on the team database for the same race)
SENDERS, PER_SENDER, READERS = 8, 150, 2
RECIPIENT = f"codex:{sid(100)}"


# each process keeps one store, as a long-lived MCP server does: a team database's connection
# costs more than a send (16 of 27 ms), and the race is what these tests are about, not
# connecting (a killed writer is then killed in a write, mostly, not while it connects)
def _send(home: str, n: int, start: mp.Event) -> None:
    load()
    env = {"CLAUDE_CODE_SESSION_ID": sid(n)}
    store = Store(home, reuse=True)
    start.wait()
    for i in range(PER_SENDER):
        invoke(TOOLS["send"], ctx_for(home, env, store=store),
               {"target": RECIPIENT, "text": f"{n}:{i}"})


def _read(home: str, out: str, start: mp.Event, done: mp.Value) -> None:
    load()
    env = {"CODEX_SESSION_ID": sid(100)}
    store = Store(home, reuse=True)
    start.wait()
    got = []
    deadline = time.monotonic() + 600  # an outer limit only (the team store is slower per call)
    while time.monotonic() < deadline:
        with done.get_lock():
            if done.value >= SENDERS * PER_SENDER:
                break
        batch = invoke(TOOLS["read"], ctx_for(home, env, store=store),
                       {"count": 50})["messages"]
        with done.get_lock():
            done.value += len(batch)
        got += [m["text"] for m in batch]
        if not batch:
            time.sleep(0.005)
    with open(out, "w") as fh:
        fh.write("\n".join(got))


def test_eight_senders_two_readers_each_message_read_exactly_once(hook, home, tmp_path):
    hook("codex", "SessionStart", sid(100), source="startup")
    for n in range(SENDERS):
        hook("claude", "SessionStart", sid(n), source="startup")
    fork = mp.get_context("fork")
    start, done = fork.Event(), fork.Value("i", 0)
    outs = [str(tmp_path / f"reader{i}.txt") for i in range(READERS)]
    procs = [fork.Process(target=_send, args=(str(home), n, start)) for n in range(SENDERS)]
    procs += [fork.Process(target=_read, args=(str(home), o, start, done)) for o in outs]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(180)
        assert p.exitcode == 0
    per_reader = [Path(o).read_text().split("\n") for o in outs]
    everything = [t for r in per_reader for t in r if t]
    assert len(everything) == SENDERS * PER_SENDER
    assert len(set(everything)) == len(everything)  # nobody got a message twice
    assert all(len([t for t in r if t]) > 0 for r in per_reader)  # both readers really raced
    for r in per_reader:  # within what each reader saw, every sender's order is kept
        for n in range(SENDERS):
            seq = [int(t.split(":")[1]) for t in r if t.startswith(f"{n}:")]
            assert seq == sorted(seq)
    conn = raw_db(home)
    for n in range(SENDERS):  # and in the store, by commit order
        seq = [int(t.split(":")[1]) for (t,) in conn.execute(
            "SELECT text FROM messages WHERE sender = ? ORDER BY seq", (f"claude:{sid(n)}",))]
        assert seq == list(range(PER_SENDER))
    assert conn.execute("SELECT count(*) FROM messages WHERE read_at IS NULL").fetchone()[0] == 0


WRITER = textwrap.dedent("""
    import sys
    from helpers import FakeTable, ctx_for
    from nexus_cli.catalog import load
    from nexus_cli.core.registry import TOOLS, invoke
    from nexus_cli.core.store.db import Store
    FakeTable.adopt(sys.argv[3])
    load()
    env = {"CLAUDE_CODE_SESSION_ID": sys.argv[1]}
    store = Store(reuse=True)
    i = 0
    while True:
        ctx = ctx_for(None, env, cwd="/", store=store)
        r = invoke(TOOLS["send"], ctx, {"target": sys.argv[2], "text": "n%d" % i})
        print(r["message_id"], flush=True)  # printed only after COMMIT
        i += 1
""")


# a writer is killed after this many more commits, wherever in its loop it is then (in the
# middle of a write, mostly: it does nothing else); it was 150: more writing before each kill
# adds nothing the moment of the kill does not
PER_ROUND = 50


def test_kill_9_mid_write_loses_nothing_committed(hook, home, fake):
    hook("codex", "SessionStart", sid(100), source="startup")
    hook("claude", "SessionStart", sid(1), source="startup")
    committed: list[str] = []
    for _round in range(3):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, sid(1), RECIPIENT, fake.export()],
                                stdout=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        while len(committed) < (_round + 1) * PER_ROUND:
            line = proc.stdout.readline()
            assert line, "writer died"
            committed.append(line.strip())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        rest = proc.stdout.read().split()
        committed += rest
    conn = raw_db(home)
    if not os.environ.get("NEXUS_DATABASE_URL"):
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = {r[0] for r in conn.execute("SELECT id FROM messages")}
    assert set(committed) <= stored
    texts = [r[0] for r in conn.execute("SELECT text FROM messages ORDER BY seq")]
    assert len(texts) == len(stored)  # no half-written rows
    conn.close()
    # and the store is fully usable afterwards
    ctx = ctx_for(str(home), {"CODEX_SESSION_ID": sid(100)})
    load()
    assert invoke(TOOLS["read"], ctx, {"count": 50})["count"] == 50
