"""Hook hot path and CLI commands, each measured side by side with the interpreter floor
`python -c "import json, sqlite3"` in one run. Prints a table of medians and ratios.

Usage: python bench/hotpath.py [--runs N]"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from _util import PY, compile_package, console_script, interleaved, table

SID = "5e55f00d-0000-4000-8000-00000000beef"
PEER = "codex:7e57c0de-0000-4000-8000-00000000cafe"


def event(name: str, **extra: object) -> bytes:
    return json.dumps({"hook_event_name": name, "session_id": SID, "cwd": os.getcwd(),
                       "transcript_path": None, **extra}).encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pending", type=int, default=1000,
                        help="unread messages pending for the hot path with mail case")
    parser.add_argument("--senders", type=int, default=8)
    parser.add_argument("--per-sender", type=int, default=250)
    opts = parser.parse_args()
    nexus = console_script()
    compile_package()
    home = tempfile.mkdtemp(prefix="nexus-bench-")
    env = {**os.environ, "NEXUS_HOME": home, "NEXUS_CLIENT_PID": str(os.getpid())}
    env.pop("CLAUDE_CODE_SESSION_ID", None)
    post = event("PostToolUse", tool_name="Bash", tool_use_id="toolu_1", tool_input={})
    pre = event("PreToolUse", tool_name="Bash", tool_use_id="toolu_2", tool_input={})
    import subprocess

    quiet = {"env": env, "check": True, "stdout": subprocess.DEVNULL}
    subprocess.run([nexus, "hook", "claude"], input=event("SessionStart", source="startup"), **quiet)
    subprocess.run([nexus, "hook", "codex"], **quiet, input=json.dumps(
        {"hook_event_name": "SessionStart", "session_id": PEER.split(":")[1], "cwd": os.getcwd(),
         "source": "startup"}).encode())
    floor = [PY, "-c", "import json, sqlite3"]
    agent_env = {**env, "CLAUDE_CODE_SESSION_ID": SID}
    cases = {
        "floor": (floor, None),
        "hook PostToolUse": ([nexus, "hook", "claude"], post),
        "hook PreToolUse": ([nexus, "hook", "claude"], pre),
    }
    res = interleaved(cases, opts.runs, env=agent_env)
    pending = fill_inbox(home, opts.pending)
    mail = interleaved({"floor": (floor, None), "hook": ([nexus, "hook", "claude"], post)},
                       opts.runs, env=agent_env)
    cli = interleaved({
        "floor": (floor, None),
        "nexus send": ([nexus, "send", PEER, "bench message"], None),
        "nexus read": ([nexus, "read"], None),
    }, max(10, opts.runs // 3), env=agent_env)
    f1, f2 = res["floor"], cli["floor"]
    rows = [("python -c 'import json, sqlite3'", f"{f1 * 1000:.1f} ms", "1.00x", "")]
    for key in ("hook PostToolUse", "hook PreToolUse"):
        rows.append((key, f"{res[key] * 1000:.1f} ms", f"{res[key] / f1:.2f}x", "<= 1.3x"))
    rows.append((f"hook PostToolUse, {pending} unread pending", f"{mail['hook'] * 1000:.1f} ms",
                 f"{mail['hook'] / mail['floor']:.2f}x", "<= 1.3x"))
    for key in ("nexus send", "nexus read"):
        rows.append((key, f"{cli[key] * 1000:.1f} ms", f"{cli[key] / f2:.2f}x", "(report)"))
    rate = throughput(home, opts.senders, opts.per_sender)
    rows.append((f"send throughput, {opts.senders} processes", f"{rate:,.0f} msg/s", "", "(report)"))
    table(rows)


def fill_inbox(home: str, n: int) -> int:
    """n messages waiting for the benchmarked session, all already announced (so the hook has
    nothing new to say but must not scan them)."""
    import sqlite3
    import time

    conn = sqlite3.connect(os.path.join(home, "nexus.db"))
    now = time.time()
    conn.executemany(
        "INSERT INTO messages (id, kind, sender, recipient, text, created_at, delivered_at)"
        " VALUES (?, 'message', ?, ?, 'pending', ?, ?)",
        [(f"m-bench{i:06d}", PEER, f"claude:{SID}", now, now) for i in range(n)])
    conn.commit()
    conn.close()
    return n


def _sender(home: str, n: int, count: int, start) -> None:
    from nexus_cli import caller
    from nexus_cli.context import Ctx
    from nexus_cli.registry import TOOLS, invoke, load
    from nexus_cli.store.db import Store

    load()
    env = {"CLAUDE_CODE_SESSION_ID": f"{n:08x}-0000-4000-8000-000000000000"}
    start.wait()
    for i in range(count):
        invoke(TOOLS["send"], Ctx(Store(home), lambda c, now: caller.resolve(c, now, env=env, cwd="/")),
               {"target": PEER, "text": f"{n}:{i}", "all_workspaces": True})


def throughput(home: str, senders: int, per: int) -> float:
    import multiprocessing as mp
    import time

    ctx = mp.get_context("fork")
    start = ctx.Event()
    procs = [ctx.Process(target=_sender, args=(home, n, per, start)) for n in range(senders)]
    for p in procs:
        p.start()
    time.sleep(0.5)
    t0 = time.perf_counter()
    start.set()
    for p in procs:
        p.join()
    return senders * per / (time.perf_counter() - t0)


if __name__ == "__main__":
    main()
