"""An agent's turn as users feel it: a scripted turn of 10 shell tool calls, run by the real
Claude Code and Codex against the fake model on 127.0.0.1, with three hook set-ups measured
side by side: no hooks, nexus's table with every command replaced by /bin/true (what running
hooks costs the client itself), and nexus as installed. Nothing is pending, so nexus should
cost what the no-op table costs (targets: <= 1.15x the no-op table, <= 1.5x no hooks).

Run it where the real-client tests run (loopback only):
  unshare -n -- python scripts/loopback.py python bench/turn.py [--runs 3] [--calls 10]"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from _util import compile_package, table  # also puts tests/ on sys.path
from e2e.harness import World, available

MODES = ("none", "noop", "nexus")


def hook_files(world: World) -> dict[str, Path]:
    return {"claude": world.home / ".claude" / "settings.json",
            "codex": world.home / ".codex" / "hooks.json"}


def variants(path: Path) -> dict[str, str]:
    """The client's hook file three ways: without hooks, with no-op commands, as installed."""
    text = path.read_text()
    conf = json.loads(text)
    noop = json.loads(text)
    for groups in noop["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = "/bin/true"
    bare = {k: v for k, v in conf.items() if k != "hooks"}
    return {"none": json.dumps(bare), "noop": json.dumps(noop), "nexus": text}


def one_turn(world: World, client: str, run: str, calls: int) -> float:
    world.script(**{run: [*({"shell": f"echo step {i}"} for i in range(calls)),
                          {"text": "done"}]})
    start = time.perf_counter()
    if client == "claude":
        world.claude(run, "go")
    else:
        world.codex(run, "go")
    wall = time.perf_counter() - start
    if len(world.requests(run)) != calls + 1:
        sys.exit(f"bench: {client} made {len(world.requests(run))} model requests, "
                 f"expected {calls + 1}")
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="timed runs per mode (after a warm-up)")
    ap.add_argument("--calls", type=int, default=10, help="shell tool calls per turn")
    args = ap.parse_args()
    why = available()
    if why:
        sys.exit(f"bench: the real clients cannot run here: {why}")
    compile_package()
    rows = []
    with tempfile.TemporaryDirectory(prefix="nexus-bench-turn-") as tmp:
        world = World(Path(tmp))
        try:
            world.install()
            files = hook_files(world)
            setups = {c: variants(files[c]) for c in files}
            samples = {(c, m): [] for c in files for m in MODES}
            n = 0
            for round_ in range(1 + args.runs):
                for client in files:
                    for mode in MODES:
                        files[client].write_text(setups[client][mode])
                        n += 1
                        t = one_turn(world, client, f"b{n}", args.calls)
                        if round_:
                            samples[(client, mode)].append(t)
                    files[client].write_text(setups[client]["nexus"])
        finally:
            world.close()
    for client in files:
        med = {m: statistics.median(samples[(client, m)]) for m in MODES}
        rows.append((f"{client}: no hooks", f"{med['none']:.2f} s", "", ""))
        rows.append((f"{client}: no-op hook table", f"{med['noop']:.2f} s", "", ""))
        rows.append((f"{client}: nexus vs no-op table", f"{med['nexus']:.2f} s",
                     f"{med['nexus'] / med['noop']:.2f}x", "<= 1.15x"))
        rows.append((f"{client}: nexus vs no hooks", "", f"{med['nexus'] / med['none']:.2f}x",
                     "<= 1.5x"))
    print(f"a turn of {args.calls} shell tool calls, nothing pending; medians of {args.runs} "
          "runs per mode, interleaved")
    table(rows, ratio="ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
