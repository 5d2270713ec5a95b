"""Processes of a run, read from /proc directly (pid plus start time, so a reused pid never
counts): is it alive, its descendants, and ending a whole process group. Stdlib only."""

from __future__ import annotations

import os
import signal
import time


def start_of(pid: int | None) -> str | None:
    """The process's start time (clock ticks since boot), or None when it is gone."""
    if not pid:
        return None
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as fh:
            raw = fh.read().decode("utf-8", "replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2:].split()
    if len(fields) < 20 or fields[0] == "Z":
        return None  # a zombie has ended
    return fields[19]


def alive(pid: int | None, start: str | None) -> bool:
    now = start_of(pid)
    return now is not None and (start is None or now == start)


def _parents() -> dict[int, int]:
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                raw = fh.read().decode("utf-8", "replace")
        except OSError:
            continue
        fields = raw[raw.rfind(")") + 2:].split()
        if len(fields) > 1:
            out[int(name)] = int(fields[1])
    return out


def descendants(pid: int) -> list[int]:
    parents = _parents()
    found, frontier = [], {pid}
    while frontier:
        kids = {p for p, pp in parents.items() if pp in frontier and p not in found}
        found += sorted(kids)
        frontier = kids
    return found


def carries(pid: int, run_id: str) -> bool:
    """Whether the process was started for the run `run_id` (the runner puts NEXUS_RUN in its
    client's environment, runner.client_env): what a stored pid and start time alone cannot
    prove, whoever could have written them."""
    try:
        with open(f"/proc/{int(pid)}/environ", "rb") as fh:
            env = fh.read(1 << 20).split(b"\0")
    except OSError:
        return False
    return f"NEXUS_RUN={run_id}".encode() in env


def end_group(pid: int | None, start: str | None, run_id: str, grace: float = 5.0) -> bool:
    """SIGTERM to the process group `pid` leads (and to every descendant that left it), then
    SIGKILL to what is left after `grace`; only when `pid` is this machine's client process of
    the run `run_id`. True when something was signalled."""
    if not pid or not alive(pid, start) or not carries(pid, run_id):
        return False
    family = [pid, *descendants(pid)]
    starts = {p: start_of(p) for p in family}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except OSError:
            pass
        for p in family:
            if alive(p, starts[p]):
                try:
                    os.kill(p, sig)
                except OSError:
                    pass
        deadline = time.monotonic() + (grace if sig == signal.SIGTERM else 2.0)
        while time.monotonic() < deadline:
            if not any(alive(p, starts[p]) for p in family):
                return True
            time.sleep(0.05)
    return True
