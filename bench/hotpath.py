"""Hook hot path and CLI commands, each measured side by side with the interpreter floor
`python -c "import json, sqlite3"` in one run. Prints a table of medians and ratios.

Usage: python bench/hotpath.py [--runs N]"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from _util import PY, compile_package, console_script, interleaved, table  # noqa: E402

SID = "5e55f00d-0000-4000-8000-00000000beef"
PEER = "codex:7e57c0de-0000-4000-8000-00000000cafe"


def event(name: str, **extra: object) -> bytes:
    return json.dumps({"hook_event_name": name, "session_id": SID, "cwd": os.getcwd(),
                       "transcript_path": None, **extra}).encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pending", type=int, default=200,
                        help="unread messages pending for the hot path with mail case")
    opts = parser.parse_args()
    nexus = console_script()
    compile_package()
    home = tempfile.mkdtemp(prefix="nexus-bench-")
    env = {**os.environ, "NEXUS_HOME": home, "NEXUS_CLIENT_PID": str(os.getpid())}
    env.pop("CLAUDE_CODE_SESSION_ID", None)
    post = event("PostToolUse", tool_name="Bash", tool_use_id="toolu_1", tool_input={})
    pre = event("PreToolUse", tool_name="Bash", tool_use_id="toolu_2", tool_input={})
    import subprocess

    for ev in (event("SessionStart", source="startup"),):
        subprocess.run([nexus, "hook", "claude"], input=ev, env=env, check=True)
    subprocess.run([nexus, "hook", "codex"], check=True, env=env, input=json.dumps(
        {"hook_event_name": "SessionStart", "session_id": PEER.split(":")[1], "cwd": os.getcwd(),
         "source": "startup"}).encode())
    floor = [PY, "-c", "import json, sqlite3"]
    agent_env = {**env, "CLAUDE_CODE_SESSION_ID": SID}
    cases = {
        "floor": (floor, None),
        "hook PostToolUse": ([nexus, "hook", "claude"], post),
        "hook PreToolUse": ([nexus, "hook", "claude"], pre),
    }
    res = interleaved(cases, opts.runs, env=agent_env)
    cli = interleaved({
        "floor": (floor, None),
        "nexus send": ([nexus, "send", PEER, "bench message"], None),
        "nexus read": ([nexus, "read"], None),
    }, max(10, opts.runs // 3), env=agent_env)
    f1, f2 = res["floor"], cli["floor"]
    rows = [("python -c 'import json, sqlite3'", f"{f1 * 1000:.1f} ms", "1.00x", "")]
    for key in ("hook PostToolUse", "hook PreToolUse"):
        rows.append((key, f"{res[key] * 1000:.1f} ms", f"{res[key] / f1:.2f}x", "<= 1.3x"))
    for key in ("nexus send", "nexus read"):
        rows.append((key, f"{cli[key] * 1000:.1f} ms", f"{cli[key] / f2:.2f}x", "(report)"))
    table(rows)


if __name__ == "__main__":
    main()
