"""`nexus mcp`: spawn to `initialize` answered, against `python -c pass` in the same run (served
as installed by default, and with `--tools all`: the start stays flat as groups are added), and
the median warm `tools/call` round trip over stdio.

With --baseline, another build's console script (say main's `.venv/bin/nexus`) is spawned in
turn with this one, so both starts are measured side by side against the same floor.

Usage: python bench/mcp.py [--runs N] [--calls N] [--baseline NEXUS]"""

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
from _util import PY, compile_package, console_script, table, time_once

SESSION = "be4c0000-0000-4000-8000-000000000001"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"}}}


def until_initialized(nexus: str, env: dict, *args: str) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen([nexus, "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    proc.stdin.write((json.dumps(INIT) + "\n").encode())
    proc.stdin.flush()
    proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait()
    return elapsed


def warm_calls(nexus: str, env: dict, calls: int) -> list[float]:
    """Calls as a session: the server runs below a stand-in Claude Code that registered it."""
    from standin import client_wrapper, hook_events

    wrapper = client_wrapper(tempfile.mkdtemp(prefix="nexus-client-"), "claude")
    proc = subprocess.Popen([wrapper, nexus, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL,
                            env={**env,
                                 "STANDIN_HOOKS": hook_events("claude", SESSION, os.getcwd())})

    def rpc(msg: dict) -> dict:
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    rpc(INIT)
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    rpc({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    times = []
    for i in range(calls):
        start = time.perf_counter()
        reply = rpc({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                     "params": {"name": "whoami", "arguments": {}}})
        times.append(time.perf_counter() - start)
        assert not reply["result"]["isError"], reply
    proc.stdin.close()
    proc.wait()
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--baseline", help="another build's nexus console script, spawned in "
                        "turn with this one")
    opts = parser.parse_args()
    nexus = console_script()
    compile_package()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX"))}
    env["NEXUS_HOME"] = tempfile.mkdtemp(prefix="nexus-bench-")
    floor, init, every, base = [], [], [], []
    for i in range(opts.runs + 3):
        f = time_once([PY, "-c", "pass"])
        t = until_initialized(nexus, env)
        a = until_initialized(nexus, env, "--tools", "all")
        b = until_initialized(opts.baseline, env) if opts.baseline else 0.0
        if i >= 3:
            floor.append(f)
            init.append(t)
            every.append(a)
            base.append(b)
    f, t, a = statistics.median(floor), statistics.median(init), statistics.median(every)
    calls = warm_calls(nexus, env, opts.calls)  # its hooks create the store first, as in real use
    c = statistics.median(calls)
    table([
        ("python -c pass", f"{f * 1000:.1f} ms", "1.00x", ""),
        ("nexus mcp: spawn to initialize answered", f"{t * 1000:.1f} ms", f"{t / f:.2f}x",
         "<= 2.5x"),
        ("  the same, --tools all", f"{a * 1000:.1f} ms", f"{a / f:.2f}x", "<= 2.5x"),
        *([("the same, --baseline", f"{statistics.median(base) * 1000:.1f} ms",
            f"{statistics.median(base) / f:.2f}x", "")] if opts.baseline else []),
        ("warm tools/call whoami (median)", f"{c * 1000:.2f} ms", "", "< 2 ms"),
        ("warm tools/call whoami (p95)", f"{sorted(calls)[int(len(calls) * .95)] * 1000:.2f} ms",
         "", ""),
    ])


if __name__ == "__main__":
    main()
