"""What the project's scope costs a session's registration in team mode: the `.git/config` read
(`identity.scope_of`) beside the root lookup it joins (`identity.project_root`), measured side by
side in one run, in a worktree (a `.git` file and `commondir` to follow) and a plain clone. It runs
only when a session row is created, its cwd changes, or at SessionStart: never on a tool call.

    .venv/bin/python bench/scope.py [--runs N]"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from _util import table
from nexus_cli.core import identity


def tree(base: str) -> tuple[str, str]:
    main = os.path.join(base, "main")
    os.makedirs(os.path.join(main, ".git", "worktrees", "wt"))
    with open(os.path.join(main, ".git", "config"), "w") as fh:
        fh.write("[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
                 '[remote "origin"]\n\turl = git@github.com:acme/widget.git\n'
                 "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
                 '[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n')
    meta = os.path.join(main, ".git", "worktrees", "wt")
    with open(os.path.join(meta, "commondir"), "w") as fh:
        fh.write("../..\n")
    wt = os.path.join(base, "wt")
    os.makedirs(os.path.join(wt, "src", "pkg"))
    with open(os.path.join(wt, ".git"), "w") as fh:
        fh.write(f"gitdir: {meta}\n")
    os.makedirs(os.path.join(main, "src", "pkg"))
    return os.path.join(main, "src", "pkg"), os.path.join(wt, "src", "pkg")


def per_call(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--calls", type=int, default=2000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as base:
        clone, wt = tree(base)
        cases = {
            "root (clone)": lambda: identity.project_root(clone),
            "root + scope (clone)": lambda: identity.scope_of(identity.project_root(clone), True),
            "root (worktree)": lambda: identity.project_root(wt),
            "root + scope (worktree)": lambda: identity.scope_of(identity.project_root(wt), True),
        }
        assert identity.scope_of(identity.project_root(wt), True) == "github.com/acme/widget"
        samples: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(a.runs):  # interleaved: drift hits every case alike
            for k, fn in cases.items():
                samples[k].append(per_call(fn, a.calls))
        med = {k: statistics.median(v) for k, v in samples.items()}
    rows = []
    for where in ("clone", "worktree"):
        base_t, with_t = med[f"root ({where})"], med[f"root + scope ({where})"]
        rows.append((f"root lookup ({where})", f"{base_t * 1e6:.1f} us", "1.00x", ""))
        extra = f"+{(with_t - base_t) * 1e6:.1f} us per registration"
        rows.append((f"root + scope ({where})", f"{with_t * 1e6:.1f} us",
                     f"{with_t / base_t:.2f}x", extra))
    table(rows, ratio="vs root")


if __name__ == "__main__":
    main()
