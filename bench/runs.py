"""`nexus run --detach` to the client process started, against starting the client directly,
side by side in one run. The client is a stand-in `claude` (a /bin/sh script on PATH that writes
the time it started and exits), so both sides measure the same thing: the time until the client
program runs. The nexus side adds the CLI, the run record (one write), the runner's start and
fork, its claim of the record and the client's spawn in a process group of its own.

Usage: python bench/runs.py [--runs N]"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from _util import compile_package, console_script, table

STANDIN = '#!/bin/sh\ndate +%s.%N > "$STARTED.$$"\n'


def started(folder: str, before: set[str], timeout: float = 30) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        new = [n for n in os.listdir(folder) if n not in before]
        for name in new:
            with open(os.path.join(folder, name)) as fh:
                text = fh.read().strip()
            if text:
                return float(text)
        time.sleep(0.001)
    raise SystemExit("bench: the client never started")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    opts = parser.parse_args()
    compile_package()
    nexus = console_script()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        bindir, marks, home = (os.path.join(tmp, d) for d in ("bin", "marks", "home"))
        os.makedirs(bindir)
        os.makedirs(marks)
        os.makedirs(home, mode=0o700)
        client = os.path.join(bindir, "claude")
        with open(client, "w") as fh:
            fh.write(STANDIN)
        os.chmod(client, 0o755)
        env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "NEXUS_HOME": home,
               "STARTED": os.path.join(marks, "s")}
        for var in ("CLAUDE_CODE_SESSION_ID", "CLAUDECODE", "CODEX_SESSION_ID", "CODEX_THREAD_ID"):
            env.pop(var, None)
        subprocess.run([nexus, "config", "set", "maxRuns", "1000"], env=env, check=True,
                       capture_output=True)
        os.environ.update({k: env[k] for k in ("PATH", "NEXUS_HOME", "STARTED")})
        for var in ("CLAUDE_CODE_SESSION_ID", "CLAUDECODE", "CODEX_SESSION_ID", "CODEX_THREAD_ID"):
            os.environ.pop(var, None)
        from nexus_cli.catalog import load
        from nexus_cli.core.context import Ctx, cli_resolver
        from nexus_cli.core.registry import invoke
        from nexus_cli.core.store.db import Store

        tool = load()["run"]
        direct, via, cli, warm = [], [], [], []
        for i in range(opts.runs + 3):
            before = set(os.listdir(marks))
            t0 = time.time()
            subprocess.Popen([client, "-p", "task"], env=env, stdin=subprocess.DEVNULL).wait()
            d = started(marks, before) - t0
            before = set(os.listdir(marks))
            t0 = time.time()
            subprocess.run([nexus, "run", "claude", "task", "--detach"], env=env, check=True,
                           stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            c = time.time() - t0
            v = started(marks, before) - t0
            before = set(os.listdir(marks))
            t0 = time.time()  # what a running `nexus mcp` does for a run tool call
            invoke(tool, Ctx(Store(), cli_resolver(None), face="mcp"),
                   {"client": "claude", "task": "task", "detach": True})
            w = started(marks, before) - t0
            if i >= 3:
                direct.append(d)
                via.append(v)
                cli.append(c)
                warm.append(w)
        deadline = time.monotonic() + 60  # let the last runners record their results
        while time.monotonic() < deadline and '"active": 0' not in subprocess.run(
                [nexus, "run", "list", "--json"], env=env, capture_output=True, text=True).stdout:
            time.sleep(0.1)
    d, v, c, w = (statistics.median(x) for x in (direct, via, cli, warm))
    print(f"{opts.runs} runs each, interleaved; medians")
    table([
        ("start the client directly", f"{d * 1000:.1f} ms", "1.00x", "-"),
        ("`nexus run --detach` until the client runs", f"{v * 1000:.1f} ms", f"{v / d:.1f}x",
         "report"),
        ("`nexus run --detach` until it returns", f"{c * 1000:.1f} ms", f"{c / d:.1f}x",
         "report"),
        ("the run tool in a running process (MCP) until the client runs", f"{w * 1000:.1f} ms",
         f"{w / d:.1f}x", "report"),
        ("nexus's own cost to the client started (CLI / MCP)",
         f"{(v - d) * 1000:.1f} / {(w - d) * 1000:.1f} ms", "-", "report"),
    ], ratio="vs direct")


if __name__ == "__main__":
    main()
