"""Waking without a daemon: latency from a `send` committing to the waiting hook
(`nexus hook claude --wait`) answering with the announcement, beside the FIFO's own floor (a
bare Python process blocked on a FIFO, answering on stderr when a byte arrives, measured in
the same run), and the CPU a waiting hook uses.

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


def start_waiter(nexus: str, env: dict, wrapper: str) -> subprocess.Popen:
    """The idle wait, as Claude Code runs it: below its client (a stand-in that registers the
    session with a SessionStart first). It writes the announcement to stderr when woken."""
    from standin import hook_events

    proc = subprocess.Popen([wrapper, nexus, "hook", "claude", "--wait"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**env, "STANDIN_HOOKS": hook_events("claude", WAITER, "/tmp")})
    proc.stdin.write(json.dumps({"hook_event_name": "Stop", "session_id": WAITER, "cwd": "/tmp",
                                 "stop_hook_active": False}).encode())
    proc.stdin.close()
    return proc


FIFO_WAITER = """
import os, select, sys
path = sys.argv[1]
os.mkfifo(path, 0o600)
fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
sys.stdout.write("ready\\n"); sys.stdout.flush()
poller = select.poll(); poller.register(fd, select.POLLIN)
poller.poll()
os.read(fd, 512)
os.write(2, b"!")
"""


def fifo_floor() -> float:
    """Seconds from a byte written into a FIFO to the process blocked on it answering."""
    path = os.path.join(tempfile.mkdtemp(prefix="nexus-fifo-"), "w")
    proc = subprocess.Popen([sys.executable, "-c", FIFO_WAITER, path], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.readline()
    time.sleep(0.05)  # (it is blocked in poll by now, as a waiter is when a send arrives)
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    start = time.perf_counter()
    os.write(fd, b"!")
    proc.stderr.read(1)
    elapsed = time.perf_counter() - start
    os.close(fd)
    proc.wait()
    os.unlink(path)
    return elapsed


def listening(store) -> bool:
    with store.read() as conn:
        row = conn.execute("SELECT status FROM sessions WHERE id = ?",
                           (f"claude:{WAITER}",)).fetchone()
    return row is not None and row[0] == "listening"


def sender():
    """`send` from the person at the shell (this process, below no client), timing its COMMIT."""
    from nexus_cli.catalog import load
    from nexus_cli.core.context import Ctx, cli_resolver
    from nexus_cli.core.registry import invoke
    from nexus_cli.core.store.db import Store

    send_tool = load()["send"]

    def send(text: str) -> float:
        ctx = Ctx(Store(), cli_resolver(None))
        committed = {}
        original = ctx.after_commit

        def stamp() -> None:  # the moment COMMIT returned, before the poke (its first call)
            committed.setdefault("t", time.perf_counter())
            original()

        ctx.after_commit = stamp  # type: ignore[method-assign]
        invoke(send_tool, ctx, {"target": f"claude:{WAITER}", "text": text,
                                "all_workspaces": True})
        return committed["t"]

    return send


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return 0


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
    from standin import client_wrapper

    os.environ["NEXUS_HOME"] = tempfile.mkdtemp(prefix="nexus-bench-")
    for var in ("CLAUDE_CODE_SESSION_ID", "CODEX_SESSION_ID", "CODEX_THREAD_ID", "CLAUDECODE",
                "CLAUDE_CODE_SESSION_ATTENDED"):
        os.environ.pop(var, None)
    env = dict(os.environ)
    wrapper = client_wrapper(tempfile.mkdtemp(prefix="nexus-client-"), "claude")
    from nexus_cli.core.store.db import Store

    store = Store()
    send = sender()
    latencies, floors = [], []
    for i in range(opts.runs):
        floors.append(fifo_floor())
        proc = start_waiter(nexus, env, wrapper)
        while not listening(store):
            time.sleep(0.002)
        committed = send(f"wake {i}")
        proc.stderr.read(1)  # the first byte of the announcement: the waiter woke and answered
        latencies.append(time.perf_counter() - committed)
        proc.stderr.read()
        assert proc.wait() == 2
        with store.write() as conn:  # the woken turn: a prompt resets the automatic turn count
            conn.execute("UPDATE sessions SET auto_turns = 0, last_event = 'Stop'")
            conn.execute("UPDATE messages SET read_at = 1")
    proc = start_waiter(nexus, env, wrapper)
    while not listening(store):
        time.sleep(0.01)
    waiter = next(int(p) for p in os.listdir("/proc")  # the hook: the stand-in's child
                  if p.isdigit() and _parent(int(p)) == proc.pid)
    before, start = cpu_seconds(waiter), time.monotonic()
    time.sleep(opts.idle_seconds)
    used, elapsed = cpu_seconds(waiter) - before, time.monotonic() - start
    send("end of the idle measurement")
    proc.wait()
    med, floor = statistics.median(latencies), statistics.median(floors)
    table([
        ("FIFO floor: byte written -> blocked process answered (median)",
         f"{floor * 1000:.2f} ms", "1.00x", ""),
        ("wake latency: send COMMIT -> waiting hook answered (median)", f"{med * 1000:.2f} ms",
         f"{med / floor:.2f}x", "<= 2 ms"),
        ("wake latency (p95)", f"{sorted(latencies)[int(len(latencies) * .95)] * 1000:.2f} ms",
         "", ""),
        (f"CPU of a waiting hook over {elapsed:.0f} s", f"{used * 1000:.0f} ms",
         f"{used / elapsed * 100:.3f}% of a core", "< 0.1%"),
    ])


if __name__ == "__main__":
    main()
