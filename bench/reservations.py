"""The edit check of file reservations, measured side by side in one run: the PreToolUse hook of a
file edit (Claude Code `Write`) with 1,000 active reservations in the store, the same hook with
none, and the interpreter floor `python -c "import json, sqlite3"`. Every command runs as a child
of a stand-in Claude Code process, as hooks do; the two stores (none, 1,000) have a stand-in
each, and all cases take turns in one loop so drift hits them alike.

Rows:
- `installed ...`: the command as `nexus install` writes it, run by `sh -c` the way the client
  runs it: `[ -e <store>/reserved ] || exit 0; nexus hook claude` (no reservation: no Python);
- `nexus hook claude ...`: the Python hook itself, for a file nobody holds, a file the editing
  session holds, and a file another session holds (the denial).

- `1,000 globs in src/ ...`: a store whose 1,000 reservations are all globs in one directory
  (`src/m<i>_*.py`): every one is a candidate for an edit in src/ and must be ruled out.

Usage: python bench/reservations.py [--runs N] [--reservations N]"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from _util import PY, Client, compile_package, console_script, event, table

SID = "5e55f00d-0000-4000-8000-00000000beef"
PEERS = [f"codex:7e57c0de-0000-4000-8000-{n:012x}" for n in range(10)]


def project(root: str) -> str:
    path = os.path.join(root, "project")
    os.makedirs(os.path.join(path, ".git"))
    os.makedirs(os.path.join(path, "src"))
    return path


def fill(home: str, proj: str, n: int, globs: bool = False) -> None:
    """n live reservations in the project: nine in ten exact files spread over 100 directories,
    one in ten globs, held by ten peers; plus one file the benchmarked session holds. With
    `globs`, all n are globs in one directory (`src/m<i>_*.py`): every one of them is a
    candidate of an edit in src/."""
    os.environ["NEXUS_HOME"] = home
    from nexus_cli.core import sessions
    from nexus_cli.core.store.db import Store
    from nexus_cli.reservations import leases, marker, patterns

    store = Store(home)
    now = time.time()
    with store.write() as conn:
        for peer in PEERS:
            sessions.ensure(conn, peer, proj, now)
        for i in range(n):
            raw = f"src/m{i}_*.py" if globs else \
                f"pkg{i % 100}/**/*_{i}.py" if i % 10 == 9 else f"src/mod{i % 100}/file{i}.py"
            spec = patterns.normalise(raw, proj, proj)
            leases.take(conn, PEERS[i % len(PEERS)], spec, True, f"bench {i}", now, 86400)
        mine = patterns.normalise("src/mine.py", proj, proj)
        leases.take(conn, f"claude:{SID}", mine, True, "mine", now, 86400)
        marker.raise_(home)
        live = conn.execute("SELECT count(*) FROM reservations").fetchone()[0]
    assert live == n + 1, live


def write(proj: str, rel: str) -> bytes:
    return event("PreToolUse", SID, tool_name="Write", tool_use_id="toolu_bench",
                 tool_input={"file_path": os.path.join(proj, rel), "content": "x = 1\n"},
                 cwd=proj)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--reservations", type=int, default=1000)
    opts = parser.parse_args()
    nexus = console_script()
    compile_package()
    base = tempfile.mkdtemp(prefix="nexus-bench-reservations-")
    env = {k: v for k, v in os.environ.items() if k not in (
        "CLAUDE_CODE_SESSION_ID", "CODEX_SESSION_ID", "CODEX_THREAD_ID", "CLAUDECODE")}
    homes = {"none": os.path.join(base, "none"), "full": os.path.join(base, "full"),
             "globs": os.path.join(base, "globs")}
    proj = project(base)
    empty = Client("claude", SID, {**env, "NEXUS_HOME": homes["none"]})
    full = Client("claude", SID, {**env, "NEXUS_HOME": homes["full"]})
    globbed = Client("claude", SID, {**env, "NEXUS_HOME": homes["globs"]})
    try:
        fill(homes["full"], proj, opts.reservations)
        fill(homes["globs"], proj, opts.reservations, globs=True)
        hook = [nexus, "hook", "claude"]

        def installed(home: str) -> list[str]:
            guard = shlex.quote(os.path.join(home, "reserved"))
            return ["sh", "-c", f"[ -e {guard} ] || exit 0; {shlex.quote(nexus)} hook claude"]

        free = write(proj, "src/mod7/unheld.py")
        cases = [
            (empty, "floor", [PY, "-c", "import json, sqlite3"], b""),
            (empty, "sh -c 'exit 0'", ["sh", "-c", "exit 0"], b""),
            (empty, "none: installed (no Python)", installed(homes["none"]), free),
            (empty, "none: nexus hook claude, a free file", hook, free),
            (full, "1,000: installed, a free file", installed(homes["full"]), free),
            (full, "1,000: nexus hook claude, a free file", hook, free),
            (full, "1,000: nexus hook claude, its own file", hook, write(proj, "src/mine.py")),
            (full, "1,000: nexus hook claude, refused", hook,
             write(proj, "src/mod7/file7.py")),
            (globbed, "1,000 globs in src/: nexus hook claude, a free file", hook,
             write(proj, "src/zzz.py")),
            (globbed, "1,000 globs in src/: nexus hook claude, refused", hook,
             write(proj, "src/m7_x.py")),
        ]
        denied = full.run(hook, write(proj, "src/mod7/file7.py"))
        reply = json.loads(denied["out"])["hookSpecificOutput"]
        assert reply["permissionDecision"] == "deny", denied
        assert not full.run(hook, free)["out"] and not empty.run(hook, free)["out"]
        assert not globbed.run(hook, write(proj, "src/zzz.py"))["out"]
        assert "deny" in globbed.run(hook, write(proj, "src/m7_x.py"))["out"]
        assert not os.path.exists(os.path.join(homes["none"], "reserved"))
        samples: dict[str, list[float]] = {key: [] for _, key, _, _ in cases}
        for i in range(3 + opts.runs):
            for client, key, cmd, stdin in cases:
                t = client.timed(cmd, stdin)
                if i >= 3:
                    samples[key].append(t)
    finally:
        empty.close()
        full.close()
        globbed.close()
    inside = {label: check_alone(homes[name], stdin) for label, name, stdin in
              (("none", "none", free), ("1,000", "full", free),
               ("1,000 globs in src/", "globs", write(proj, "src/zzz.py")))}
    med = {k: statistics.median(v) for k, v in samples.items()}
    floor = med["floor"]
    rows = [(key, f"{med[key] * 1000:.1f} ms", f"{med[key] / floor:.2f}x",
             "<= 1.3x" if "nexus hook" in key or "installed" in key else "")
            for _, key, _, _ in cases]
    print(f"{opts.reservations} reservations ({opts.reservations // 10} globs), {opts.runs} runs "
          f"each, medians; the denial's reason:\n  {reply['permissionDecisionReason']}\n")
    table(rows)
    print("\nthe check alone, in-process (no interpreter start, no imports), median of 500: "
          + ", ".join(f"{k} {v * 1e6:.0f} us" for k, v in inside.items()))


def check_alone(home: str, stdin: bytes, n: int = 500) -> float:
    """What the hook does for one edit once Python runs: open the store, one indexed lookup."""
    from nexus_cli.core.store.db import Store
    from nexus_cli.reservations import edits

    data = json.loads(stdin)
    sid = f"claude:{SID}"
    times = []
    for _ in range(n):
        store = Store(home, linger=True)
        start = time.perf_counter()
        reply = edits.pre_edit("claude", sid, data, store, {}, time.time())
        times.append(time.perf_counter() - start)
        assert reply[0] is None
    return statistics.median(times)


if __name__ == "__main__":
    main()
