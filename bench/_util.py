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
