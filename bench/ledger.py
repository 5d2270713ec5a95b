"""The task ledger at scale: `tasks --open`, `report` and `status` on a store holding 100,000 tasks
and 10,000 sessions, against the same calls on a nearly empty store, side by side in one run
(in-process, so interpreter start-up does not hide the store's cost).

Usage: python bench/ledger.py [--tasks N] [--sessions N] [--runs N]"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from _util import table
from helpers import FakeTable, ctx_for  # the suite's synthetic process table
from nexus_cli.catalog import load
from nexus_cli.core import proctable
from nexus_cli.core.context import Ctx
from nexus_cli.core.registry import TOOLS, invoke
from nexus_cli.core.store.db import Store

BOSS = "claude:b0550000-0000-4000-8000-000000000001"
WORKER = "codex:c0de0000-0000-4000-8000-000000000002"
PROJECT = "/work/bench-project"


FAKE = FakeTable()  # BOSS and WORKER each run below a (synthetic) client process of their own
proctable.use(FAKE)


def ctx(home: str, sid: str) -> Ctx:
    client, raw = sid.split(":", 1)
    env = {"CLAUDE_CODE_SESSION_ID": raw} if client == "claude" else {"CODEX_SESSION_ID": raw}
    return ctx_for(home, env, cwd=PROJECT)


def build(sessions: int, tasks: int, open_tasks: int) -> str:
    home = tempfile.mkdtemp(prefix="nexus-ledger-")
    store = Store(home)
    now = time.time()
    with store.write() as conn:
        for sid in (BOSS, WORKER):
            pid = FAKE.client_of(sid)
            conn.execute("INSERT INTO sessions (id, client, handle, name, cwd, project, status,"
                         " client_pid, client_start, created_at, last_active)"
                         " VALUES (?, ?, ?, ?, ?, ?, 'idle', ?, ?, ?, ?)",
                         (sid, sid.split(":")[0], "s-" + sid.split(":")[1][:12].replace("-", ""),
                          sid.split(":")[0] + "@bench", PROJECT, PROJECT, pid,
                          FAKE.procs[pid].start, now, now))
        conn.executemany(
            "INSERT INTO sessions (id, client, handle, name, cwd, project, status, created_at,"
            " last_active) VALUES (?, 'claude', ?, ?, ?, ?, ?, ?, ?)",
            [(f"claude:{i:08x}-0000-4000-8000-0000000b0000", f"s-{i:012x}",
              f"claude@p{i % 100}#{i}", f"/p/{i % 100}", f"/p/{i % 100}",
              "offline" if i % 10 else "idle", now - 86400, now - (i % 5000))
             for i in range(sessions)])
        statuses = ("completed", "failed", "blocked", "dispatched", "cancelled")
        conn.executemany(
            "INSERT INTO tasks (id, sender, target, requested_target, task, status, mode,"
            " created_at, updated_at) VALUES (?, ?, ?, 'x', 'bulk task', ?, 'queue', ?, ?)",
            [(f"t-bulk{i:08d}", f"claude:{i % max(sessions, 1):08x}-0000-4000-8000-0000000b0000",
              f"claude:{(i * 7) % max(sessions, 1):08x}-0000-4000-8000-0000000b0000",
              statuses[i % 5], now, now)
             for i in range(tasks)])
    load()
    for i in range(open_tasks):
        invoke(TOOLS["delegate"], ctx(home, BOSS), {"target": WORKER, "task": f"job {i}"})
    return home


def measure(home: str, runs: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"tasks --open": [], "report": [], "status": []}
    open_ids = [t["id"] for t in invoke(TOOLS["tasks"], ctx(home, WORKER),
                                        {"open": True, "limit": 100})["items"]]
    for i in range(runs):
        for name, tool, who, args in (
            ("tasks --open", "tasks", WORKER, {"open": True}),
            ("report", "report", WORKER, {"task_id": open_ids[i], "status": "completed",
                                          "result": "done"}),
            ("status", "status", BOSS, {"target": WORKER}),
        ):
            c = ctx(home, who)
            start = time.perf_counter()
            invoke(TOOLS[tool], c, args)
            out[name].append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=60)
    opts = parser.parse_args()
    empty = build(0, 0, opts.runs + 5)
    full = build(opts.sessions, opts.tasks, opts.runs + 5)
    a, b = measure(empty, opts.runs), measure(full, opts.runs)
    rows = []
    for name in a:
        ma, mb = statistics.median(a[name]), statistics.median(b[name])
        rows.append((f"{name}: empty / {opts.tasks:,} tasks, {opts.sessions:,} sessions",
                     f"{ma * 1000:.2f} / {mb * 1000:.2f} ms", f"{mb / ma:.2f}x", "<= 2x"))
    table(rows, ratio="full / empty")


if __name__ == "__main__":
    main()
