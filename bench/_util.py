"""Shared helpers for the benchmarks: run commands interleaved, report medians and ratios."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

PY = sys.executable


def console_script(name: str = "nexus") -> str:
    """The installed console script beside this interpreter (what hooks are installed as)."""
    path = os.path.join(os.path.dirname(PY), name)
    if not os.path.exists(path):
        sys.exit(f"bench: {path} not found; install nexus into this interpreter's environment")
    return path


def compile_package() -> None:
    """Installed packages have bytecode; a dev checkout under PYTHONDONTWRITEBYTECODE may not."""
    import compileall

    import nexus_cli

    compileall.compile_dir(os.path.dirname(nexus_cli.__file__), quiet=1)


def time_once(cmd: Sequence[str], stdin: bytes | None = None, env: dict | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, input=stdin, env=env, stdout=subprocess.DEVNULL, check=True,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def interleaved(cases: dict[str, tuple[Sequence[str], bytes | None]], runs: int,
                env: dict | None = None, warmup: int = 3) -> dict[str, float]:
    """Median wall time per case, the cases run in turn so drift hits all of them alike."""
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for i in range(warmup + runs):
        for key, (cmd, stdin) in cases.items():
            t = time_once(cmd, stdin, env)
            if i >= warmup:
                samples[key].append(t)
    return {k: statistics.median(v) for k, v in samples.items()}


def table(rows: list[tuple[str, str, str, str]], ratio: str = "vs floor") -> None:
    head = ("measure", "value", ratio, "target")
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(4)]
    for r in [head, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)))


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "scripts"), os.path.join(ROOT, "tests")]


def event(name: str, session: str, **extra: object) -> bytes:
    import json

    return json.dumps({"hook_event_name": name, "session_id": session, "cwd": os.getcwd(),
                       "transcript_path": None, **extra}).encode()


class Client:
    """A stand-in client process (named claude or codex, scripts/standin.py): commands run as
    its children have it in their ancestry, as an agent's commands have the real client. Every
    timed command runs through it, the interpreter floor included, so its overhead cancels out."""

    def __init__(self, name: str, session: str, env: dict[str, str],
                 nexus: str | None = None) -> None:
        from standin import StandIn

        self.name, self.session, self.env = name, session, env
        self.proc = StandIn(name)
        nexus = nexus or console_script()
        got = self.run([nexus, "hook", name], event("SessionStart", session, source="startup"))
        assert got["code"] == 0, got["err"]

    @property
    def agent_env(self) -> dict[str, str]:
        var = "CLAUDE_CODE_SESSION_ID" if self.name == "claude" else "CODEX_SESSION_ID"
        return {**self.env, var: self.session}

    def run(self, argv: Sequence[str], stdin: bytes = b"") -> dict:
        return self.proc.run(list(argv), self.agent_env, stdin.decode())

    def timed(self, argv: Sequence[str], stdin: bytes = b"") -> float:
        """Seconds from asking the stand-in to its child's exit (the pipe round trip included)."""
        start = time.perf_counter()
        got = self.run(argv, stdin)
        elapsed = time.perf_counter() - start
        assert got["code"] in (0, 2), got["err"]  # 2: a hook's asyncRewake answer
        return elapsed

    def close(self) -> None:
        self.proc.close()


def interleaved_in(client: Client, cases: dict[str, tuple[Sequence[str], bytes]], runs: int,
                   warmup: int = 3) -> dict[str, float]:
    """`interleaved`, each command run as a child of the stand-in client."""
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for i in range(warmup + runs):
        for key, (cmd, stdin) in cases.items():
            t = client.timed(cmd, stdin)
            if i >= warmup:
                samples[key].append(t)
    return {k: statistics.median(v) for k, v in samples.items()}


def interleaved_clients(cases: dict[str, tuple[Client, Sequence[str], bytes]], runs: int,
                        warmup: int = 3) -> dict[str, float]:
    """`interleaved_in` over several stand-in clients (two builds of nexus side by side)."""
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for i in range(warmup + runs):
        for key, (client, cmd, stdin) in cases.items():
            t = client.timed(cmd, stdin)
            if i >= warmup:
                samples[key].append(t)
    return {k: statistics.median(v) for k, v in samples.items()}
