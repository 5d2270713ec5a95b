"""What judging presence costs `nexus peers` and the board (`nexus board --once`, the frame the
web board's page is drawn from) with 1,000 sessions: each session's client process
looked up (pid and start time, /proc), Claude Code's own registry file read where the page
shows one, its waiter checked: side by side with another build (`--baseline`: the code before
the change, say main's `.venv/bin/nexus`), each on a store of its own holding the same sessions,
interleaved in one run. The sessions' clients are live processes (so every check does its whole
work), half of them Claude Code sessions with a registry file, a third listening with a live
waiter.

    .venv/bin/python bench/presence.py --baseline /work/main/.venv/bin/nexus [--sessions N]

Without --baseline this build is compared with itself (the ratio is the noise)."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from _util import compile_package, console_script, table
from nexus_cli.core.proctable import machine

PROCESSES = 50  # live stand-ins for the sessions' client processes


def start_token(pid: int) -> str:
    """The start time nexus records for a process (field 22 of /proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        data = fh.read()
    return data[data.rindex(b")") + 2:].split()[19].decode()


def fill(nexus: str, home: str, work: str, config: str, procs: list[int], n: int) -> None:
    """A store made by `nexus` (its own schema), then `n` sessions in the project at `work`."""
    env = {**clean_env(), "NEXUS_HOME": home}
    subprocess.run([nexus, "maintenance"], env=env, cwd=work, check=True,
                   stdout=subprocess.DEVNULL)
    now = time.time()
    rows = []
    for i in range(n):
        pid = procs[i % len(procs)]
        client = "claude" if i % 2 == 0 else "codex"
        raw = raw_id(i)
        status = ("working", "idle", "listening")[i % 3]
        transcript = (f"{config}/projects/-bench/{raw}.jsonl" if client == "claude"
                      else f"{home}/rollout-{raw}.jsonl")
        rows.append((f"{client}:{raw}", client, f"s-{i:08x}b00c",
                     f"{client}@bench#{i}", work, work, work, status, pid, start_token(pid),
                     now, now - i, machine(), "Stop" if status != "working" else "PreToolUse",
                     now - 60 - i, transcript, pid if status == "listening" else None))
    conn = sqlite3.connect(os.path.join(home, "nexus.db"))
    conn.executemany(
        "INSERT INTO sessions (id, client, handle, name, cwd, project, scope, status, client_pid,"
        " client_start, created_at, last_active, machine, last_event, last_turn_end,"
        " transcript_path, waiter_pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows)
    conn.commit()
    conn.close()


def registry(config: str, procs: list[int]) -> None:
    """Claude Code's file of each live process, naming one of its sessions (as the pinned client
    writes it)."""
    os.makedirs(os.path.join(config, "sessions"), exist_ok=True)
    for k, pid in enumerate(procs):
        raw = raw_id(k)  # session k runs in process k (the others there: not its current one)
        with open(os.path.join(config, "sessions", f"{pid}.json"), "w") as fh:
            json.dump({"pid": pid, "sessionId": raw, "cwd": "/", "startedAt": 0,
                       "procStart": start_token(pid), "version": "2.1.332", "kind": "interactive",
                       "entrypoint": "cli", "status": "busy",
                       "updatedAt": int(time.time() * 1000),
                       "statusUpdatedAt": int(time.time() * 1000)}, fh)


def raw_id(i: int) -> str:
    return f"{i:08x}-b00c-4000-8000-{i:012x}"


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX"))
            and k not in ("NEXUS_DATABASE_URL",)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", help="another build's nexus console script (before/after)")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=25)
    a = ap.parse_args()
    nexus = console_script()
    compile_package()
    base = a.baseline or nexus
    sleepers = [subprocess.Popen(["sleep", "3600"]) for _ in range(PROCESSES)]
    procs = [p.pid for p in sleepers]
    try:
        with tempfile.TemporaryDirectory(prefix="nexus-bench-") as tmp:
            work = os.path.join(tmp, "work")
            os.makedirs(os.path.join(work, ".git"))
            config = os.path.join(tmp, "claude")
            registry(config, procs)
            homes = {"this": os.path.join(tmp, "this"), "baseline": os.path.join(tmp, "base")}
            fill(nexus, homes["this"], work, config, procs, a.sessions)
            fill(base, homes["baseline"], work, config, procs, a.sessions)
            cases = {(build, what): cmd for build, cmd in (("this", nexus), ("baseline", base))
                     for what in ("peers", "board")}
            argv = {"peers": ["peers", "--json"], "board": ["board", "--once"]}
            samples: dict[tuple[str, str], list[float]] = {k: [] for k in cases}
            for i in range(3 + a.runs):
                for (key, what), cmd in cases.items():
                    env = {**clean_env(), "NEXUS_HOME": homes[key]}
                    start = time.perf_counter()
                    out = subprocess.run([cmd, *argv[what]], env=env, cwd=work,
                                         capture_output=True, check=True).stdout
                    took = time.perf_counter() - start
                    if i >= 3:
                        samples[(key, what)].append(took)
                    if i == 0 and what == "peers":
                        assert json.loads(out)["total"] == a.sessions, (key, out[:200])
    finally:
        for p in sleepers:
            p.kill()
            p.wait()
    print(f"nexus peers and board, {a.sessions} live sessions ({PROCESSES} client processes), "
          f"median of {a.runs}:")
    rows = []
    for what in ("peers", "board --once"):
        this, before = (statistics.median(samples[(k, what.split()[0])])
                        for k in ("this", "baseline"))
        rows += [(f"{what} (this build)", f"{this * 1000:.1f} ms", f"{this / before:.2f}x",
                  "<= 1.2x"), (f"{what} (baseline)", f"{before * 1000:.1f} ms", "1.00x", "")]
    table(rows, ratio="vs baseline")


if __name__ == "__main__":
    main()
