"""Waking without a daemon: latency from a `send` committing to the waiting hook
(`nexus hook claude --wait`) exiting with the announcement, and the CPU a waiting hook uses.

Usage: python bench/wake.py [--runs N] [--idle-seconds S]"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from _util import compile_package, console_script, table

WAITER = "5e55f00d-0000-4000-8000-00000000beef"


def setup(nexus: str, env: dict) -> None:
    for client, sid in (("claude", WAITER), ("codex", "7e57c0de-0000-4000-8000-00000000cafe")):
        subprocess.run([nexus, "hook", client], check=True, env=env, capture_output=True,
                       input=json.dumps({"hook_event_name": "SessionStart", "session_id": sid,
                                         "cwd": "/tmp", "source": "startup"}).encode())


def start_waiter(nexus: str, env: dict) -> subprocess.Popen:
    proc = subprocess.Popen([nexus, "hook", "claude", "--wait"], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    proc.stdin.write(json.dumps({"hook_event_name": "Stop", "session_id": WAITER, "cwd": "/tmp",
                                 "stop_hook_active": False}).encode())
    proc.stdin.close()
    return proc


def listening(store) -> bool:
    with store.read() as conn:
        row = conn.execute("SELECT status FROM sessions WHERE id = ?", (f"claude:{WAITER}",)).fetchone()
    return row is not None and row[0] == "listening"


def sender():
    from nexus_cli import caller
    from nexus_cli.context import Ctx
    from nexus_cli.registry import TOOLS, invoke, load
    from nexus_cli.store.db import Store

    load()
    env = {"CODEX_SESSION_ID": "7e57c0de-0000-4000-8000-00000000cafe"}

    def send(text: str) -> float:
        ctx = Ctx(Store(), lambda conn, now: caller.resolve(conn, now, env=env, cwd="/tmp"))
        committed = {}
        original = ctx.after_commit

        def stamp() -> None:  # the moment COMMIT returned, before the poke
            committed["t"] = time.perf_counter()
            original()

        ctx.after_commit = stamp  # type: ignore[method-assign]
        invoke(TOOLS["send"], ctx, {"target": f"claude:{WAITER}", "text": text})
        return committed["t"]

    return send


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    opts = parser.parse_args()
    nexus = console_script()
    compile_package()
    os.environ["NEXUS_HOME"] = tempfile.mkdtemp(prefix="nexus-bench-")
    env = {**os.environ, "NEXUS_CLIENT_PID": str(os.getpid())}
    env.pop("CLAUDE_CODE_SESSION_ATTENDED", None)
    setup(nexus, env)
    from nexus_cli.store.db import Store

    store = Store()
    send = sender()
    latencies = []
    for i in range(opts.runs):
        proc = start_waiter(nexus, env)
        while not listening(store):
            time.sleep(0.002)
        committed = send(f"wake {i}")
        proc.wait()
        latencies.append(time.perf_counter() - committed)
        assert proc.returncode == 2, proc.stderr.read()
        with store.write() as conn:  # the woken turn: a prompt resets the automatic turn count
            conn.execute("UPDATE sessions SET auto_turns = 0, last_event = 'Stop'")
            conn.execute("UPDATE messages SET read_at = 1")
    proc = start_waiter(nexus, env)
    while not listening(store):
        time.sleep(0.01)
    before, start = cpu_seconds(proc.pid), time.monotonic()
    time.sleep(opts.idle_seconds)
    used, elapsed = cpu_seconds(proc.pid) - before, time.monotonic() - start
    send("end of the idle measurement")
    proc.wait()
    med = statistics.median(latencies)
    table([
        ("wake latency: send COMMIT -> waiting hook exited (median)", f"{med * 1000:.2f} ms", "",
         "< 10 ms"),
        ("wake latency (p95)", f"{sorted(latencies)[int(len(latencies) * .95)] * 1000:.2f} ms", "", ""),
        (f"CPU of a waiting hook over {elapsed:.0f} s", f"{used * 1000:.0f} ms",
         f"{used / elapsed * 100:.3f}% of a core", "< 0.1%"),
    ])


if __name__ == "__main__":
    main()
