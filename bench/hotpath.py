"""The hook hot path, measured side by side with the interpreter floor
`python -c "import json, sqlite3"` in one run (a tool call, a prompt and a Stop), with each
process-table backend (/proc, and the `ps` one macOS and BSD use, forced with
NEXUS_PROCESS_TABLE=ps). Every command runs as a child of a stand-in Claude Code process, as
hooks do. Prints a table of medians and ratios.

With --instructions, each case runs once under valgrind's callgrind instead and the table
gives instructions executed: the same ratios, but repeatable on a loaded machine, where wall
clock moves with whatever else runs.

With --baseline, another build's console script (say main's `.venv/bin/nexus`) runs the same
hook events interleaved with this one's, each on a store of its own: before and after, side by
side in one run.

Usage: python bench/hotpath.py [--runs N] [--pending N] [--baseline NEXUS] [--instructions]"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from _util import (
    PY,
    Client,
    compile_package,
    console_script,
    event,
    interleaved_clients,
    interleaved_in,
    table,
)

SID = "5e55f00d-0000-4000-8000-00000000beef"
PS_SID = "5e55f00d-0000-4000-8000-0000000000a5"
PEER = "codex:7e57c0de-0000-4000-8000-00000000cafe"


def fill_inbox(home: str, n: int, announced: bool = True) -> int:
    """n messages waiting for the benchmarked session: already announced (so the hook has
    nothing new to say but must not scan them), or not yet (each tool call announces the oldest
    few and counts the rest)."""
    conn = sqlite3.connect(os.path.join(home, "nexus.db"))
    now = time.time()
    conn.executemany(
        "INSERT INTO messages (id, kind, sender, recipient, text, created_at, delivered_at)"
        " VALUES (?, 'message', ?, ?, 'pending', ?, ?)",
        [(f"m-bench{i:06d}", PEER, f"claude:{SID}", now, now if announced else None)
         for i in range(n)])
    conn.commit()
    conn.close()
    return n


def unannounce(home: str) -> None:
    """The backlog back to never announced (what a call before this one announced)."""
    conn = sqlite3.connect(os.path.join(home, "nexus.db"))
    conn.execute("UPDATE messages SET delivered_at = NULL, delivered_via = NULL")
    conn.commit()
    conn.close()


def backlog(opts: argparse.Namespace, env: dict[str, str], nexus: str) -> list[tuple]:
    """A tool call's hook with no mail, with `--pending` unread messages all announced, and with
    as many never announced: three stores, their clients' calls interleaved in one run (the
    last store's backlog made unannounced again before each of its calls)."""
    post = event("PostToolUse", SID, tool_name="Bash", tool_use_id="toolu_1", tool_input={})
    homes = {k: tempfile.mkdtemp(prefix="nexus-bench-") for k in ("none", "told", "new")}
    clients = {k: Client("claude", SID, {**env, "NEXUS_HOME": h}) for k, h in homes.items()}
    try:
        fill_inbox(homes["told"], opts.pending)
        fill_inbox(homes["new"], opts.pending, announced=False)
        floor = [PY, "-c", "import json, sqlite3"]
        samples: dict[str, list[float]] = {k: [] for k in ("floor", *homes)}
        for i in range(3 + opts.runs):
            unannounce(homes["new"])
            for key, (client, argv, stdin) in {
                    "floor": (clients["none"], floor, b""),
                    **{k: (c, [nexus, "hook", "claude"], post) for k, c in clients.items()}
            }.items():
                t = client.timed(argv, stdin)
                if i >= 3:
                    samples[key].append(t)
    finally:
        for c in clients.values():
            c.close()
    med = {k: statistics.median(v) for k, v in samples.items()}
    f1 = med["floor"]
    n = opts.pending
    return [("python -c 'import json, sqlite3' (backlog run)", f"{f1 * 1000:.1f} ms", "1.00x", ""),
            ("hook PostToolUse, no mail", f"{med['none'] * 1000:.1f} ms",
             f"{med['none'] / f1:.2f}x", "<= 1.15x"),
            (f"hook PostToolUse, {n} unread already announced",
             f"{med['told'] * 1000:.1f} ms", f"{med['told'] / f1:.2f}x", "= no mail"),
            (f"hook PostToolUse, {n} unread never announced",
             f"{med['new'] * 1000:.1f} ms", f"{med['new'] / f1:.2f}x", "bounded")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pending", type=int, default=1000,
                        help="unread messages pending in the backlog cases")
    parser.add_argument("--baseline", help="another build's nexus console script, run "
                        "interleaved with this one (before/after)")
    parser.add_argument("--instructions", action="store_true",
                        help="instructions executed (valgrind), not wall time")
    opts = parser.parse_args()
    if opts.baseline:
        return baseline(opts)
    if opts.instructions:
        return instructions(opts)
    nexus = console_script()
    compile_package()
    home = tempfile.mkdtemp(prefix="nexus-bench-")
    env = {**os.environ, "NEXUS_HOME": home}
    for var in ("CLAUDE_CODE_SESSION_ID", "CODEX_SESSION_ID", "CODEX_THREAD_ID", "CLAUDECODE"):
        env.pop(var, None)
    client = Client("claude", SID, env)
    try:
        post = event("PostToolUse", SID, tool_name="Bash", tool_use_id="toolu_1", tool_input={})
        pre = event("PreToolUse", SID, tool_name="Bash", tool_use_id="toolu_2", tool_input={})
        prompt = event("UserPromptSubmit", SID, prompt="hello")
        stop = event("Stop", SID, stop_hook_active=False)
        floor = [PY, "-c", "import json, sqlite3"]
        res = interleaved_in(client, {"floor": (floor, b""),
                                      "hook PostToolUse": ([nexus, "hook", "claude"], post),
                                      "hook PreToolUse": ([nexus, "hook", "claude"], pre),
                                      "hook UserPromptSubmit": ([nexus, "hook", "claude"], prompt),
                                      "hook Stop": ([nexus, "hook", "claude"], stop)},
                             opts.runs)
        # the same with the ps backend (start-time tokens are the backend's own: its own session)
        ps_client = Client("claude", PS_SID, {**env, "NEXUS_PROCESS_TABLE": "ps"})
        try:
            ps_post = event("PostToolUse", PS_SID, tool_name="Bash", tool_use_id="toolu_3",
                            tool_input={})
            res.update(interleaved_in(ps_client, {
                "floor (ps run)": (floor, b""),
                "hook PostToolUse, ps backend": ([nexus, "hook", "claude"], ps_post)}, opts.runs))
        finally:
            ps_client.close()
    finally:
        client.close()
    mail = backlog(opts, env, nexus)
    f1 = res["floor"]
    rows = [("python -c 'import json, sqlite3'", f"{f1 * 1000:.1f} ms", "1.00x", "")]
    for key, target in (("hook PostToolUse", "<= 1.15x"), ("hook PreToolUse", "report"),
                        ("hook UserPromptSubmit", "report"), ("hook Stop", "report")):
        rows.append((key, f"{res[key] * 1000:.1f} ms", f"{res[key] / f1:.2f}x", target))
    key = "hook PostToolUse, ps backend"
    rows.append((key + " (macOS, BSD)", f"{res[key] * 1000:.1f} ms",
                 f"{res[key] / res['floor (ps run)']:.2f}x", "report"))
    table(rows + mail)


def instructions(opts: argparse.Namespace) -> None:
    """Each case once under callgrind: instructions, which do not move with the machine's load."""
    import re
    import shutil

    if not shutil.which("valgrind"):
        sys.exit("bench: --instructions needs valgrind")
    nexus = console_script()
    compile_package()
    home = tempfile.mkdtemp(prefix="nexus-bench-")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAUDE", "CODEX")) and k != "NEXUS_DATABASE_URL"}
    # the same count at every run: one hash seed, and no address randomisation (objects hashed
    # by address fill sets and dicts in another order at each start: +-0.3 M otherwise)
    env["PYTHONHASHSEED"] = "0"
    fixed = ["setarch", os.uname().machine, "-R"] if shutil.which("setarch") else []
    client = Client("claude", SID, {**env, "NEXUS_HOME": home})

    def count(argv: list[str], stdin: bytes = b"") -> int:
        out = os.path.join(home, "callgrind.out")
        got = client.run([*fixed, "valgrind", "--tool=callgrind",
                          f"--callgrind-out-file={out}", *argv], stdin)
        assert got["code"] in (0, 2), got["err"][-2000:]
        with open(out) as fh:
            found = re.search(r"^summary: (\d+)", fh.read(), re.M)
        assert found, "no callgrind summary"
        return int(found.group(1))

    hook = [nexus, "hook", "claude"]
    post = event("PostToolUse", SID, tool_name="Bash", tool_use_id="toolu_1", tool_input={})
    try:
        count(hook, post)  # (a first run may compile)
        floor = count([PY, "-c", "import json, sqlite3"])
        rows = [("python -c 'import json, sqlite3'", f"{floor / 1e6:.1f} M", "1.00x", "")]
        for name, stdin, target in (
                ("hook PostToolUse", post, "<= 1.15x"),
                ("hook PreToolUse", event("PreToolUse", SID, tool_name="Bash",
                                          tool_use_id="toolu_2", tool_input={}), "report"),
                ("hook UserPromptSubmit", event("UserPromptSubmit", SID, prompt="hello"),
                 "report"),
                ("hook Stop", event("Stop", SID, stop_hook_active=False), "report")):
            n = count(hook, stdin)
            rows.append((name, f"{n / 1e6:.1f} M", f"{n / floor:.3f}x", target))
        pending = fill_inbox(home, opts.pending)
        n = count(hook, post)
        rows.append((f"hook PostToolUse, {pending} unread already announced", f"{n / 1e6:.1f} M",
                     f"{n / floor:.3f}x", "<= 1.15x, = no mail"))
        unannounce(home)
        n = count(hook, post)
        rows.append((f"hook PostToolUse, {pending} unread never announced", f"{n / 1e6:.1f} M",
                     f"{n / floor:.3f}x", "bounded"))
    finally:
        client.close()
    table(rows)


def baseline(opts: argparse.Namespace) -> None:
    """This build's hooks and the baseline's, interleaved, each with its own store."""
    nexus = console_script()
    compile_package()
    env = {k: v for k, v in os.environ.items() if k not in (
        "CLAUDE_CODE_SESSION_ID", "CODEX_SESSION_ID", "CODEX_THREAD_ID", "CLAUDECODE",
        "NEXUS_DATABASE_URL")}
    this = Client("claude", SID, {**env, "NEXUS_HOME": tempfile.mkdtemp(prefix="nexus-bench-")})
    base = Client("claude", SID, {**env, "NEXUS_HOME": tempfile.mkdtemp(prefix="nexus-bench-")},
                  nexus=opts.baseline)
    try:
        post = event("PostToolUse", SID, tool_name="Bash", tool_use_id="toolu_1", tool_input={})
        pre = event("PreToolUse", SID, tool_name="Bash", tool_use_id="toolu_2", tool_input={})
        floor = [PY, "-c", "import json, sqlite3"]
        res = interleaved_clients({
            "floor": (this, floor, b""),
            "hook PostToolUse": (this, [nexus, "hook", "claude"], post),
            "hook PostToolUse, baseline": (base, [opts.baseline, "hook", "claude"], post),
            "hook PreToolUse": (this, [nexus, "hook", "claude"], pre),
            "hook PreToolUse, baseline": (base, [opts.baseline, "hook", "claude"], pre)},
            opts.runs)
    finally:
        this.close()
        base.close()
    f1 = res["floor"]
    table([(k, f"{v * 1000:.1f} ms", f"{v / f1:.2f}x", "") for k, v in res.items()])


if __name__ == "__main__":
    main()
