"""Session insight at scale, measured side by side in one run:

- `nexus log --tail 50` on a 100 MB Claude Code transcript (read from its end, the default for a
  file that large) against `tail -c` of the same 256 KB window, and `--full` (the whole file) for
  comparison;
- `nexus search` over 1,000 sessions (both clients' transcripts) against `grep -ci` over the same
  files: the first search (it builds the index as far as its time budget allows, and reads the
  rest directly), a search with the index current, and `--no-index` (a scan).

The transcripts are the real clients' records of tests/data/transcripts, repeated, each copy with
its own session id. With --pg, the search is also measured on a team database (a throwaway
PostgreSQL cluster, scripts/pgcluster.py: the index's candidates by ILIKE), in the same rounds.
Usage: python bench/insight.py [--runs N] [--sessions N] [--megabytes N] [--pg]"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(__file__))
from _util import ROOT, compile_package, console_script, interleaved, table

DATA = os.path.join(ROOT, "tests", "data", "transcripts")
CLAUDE = ("claude-main.jsonl", "claude-stopblock-compact.jsonl", "claude-interactive.jsonl")
CODEX = ("codex-main.jsonl", "codex-stopblock-error-interrupt.jsonl", "codex-autocompact.jsonl")


def slug(cwd: str) -> str:
    from nexus_cli.clients.claude.transcript import slug as claude_slug

    return claude_slug(cwd)


def rewrite(name: str, cwd: str, session: str, marker: str | None) -> str:
    out = []
    with open(os.path.join(DATA, name)) as fh:
        for line in fh:
            r = json.loads(line)
            if "cwd" in r:
                r["cwd"] = cwd
            if "sessionId" in r:
                r["sessionId"] = session
            if r.get("type") in ("session_meta", "turn_context"):
                r["payload"]["cwd"] = cwd
                if r["type"] == "session_meta":
                    r["payload"]["id"] = r["payload"]["session_id"] = session
            out.append(json.dumps(r, separators=(",", ":")))
    if marker:  # one more answer, holding the word the search looks for
        row = ({"type": "assistant", "cwd": cwd, "sessionId": session,
                "timestamp": "2026-11-30T13:00:00.000Z",
                "message": {"id": f"msg_{session}", "role": "assistant", "stop_reason": "end_turn",
                            "content": [{"type": "text", "text": f"found the {marker} here"}],
                            "usage": {"input_tokens": 1, "output_tokens": 1}}}
               if name.startswith("claude") else
               {"timestamp": "2026-11-30T13:00:00.000Z", "type": "response_item",
                "payload": {"type": "message", "role": "assistant",
                            "content": [{"type": "output_text", "text": f"found the {marker}"}]}})
        out.append(json.dumps(row, separators=(",", ":")))
    return "\n".join(out) + "\n"


def place(home: str, name: str, cwd: str, session: str, text: str) -> str:
    if name.startswith("claude"):
        folder = os.path.join(home, ".claude", "projects", slug(cwd))
        path = os.path.join(folder, f"{session}.jsonl")
    else:
        folder = os.path.join(home, ".codex", "sessions", "2026", "11", "30")
        path = os.path.join(folder, f"rollout-2026-11-30T12-00-00-{session}.jsonl")
    os.makedirs(folder, exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)
    return path


def big_transcript(home: str, cwd: str, megabytes: int) -> tuple[str, str]:
    session = str(uuid.uuid4())
    chunk = rewrite("claude-main.jsonl", cwd, session, None)
    folder = os.path.join(home, ".claude", "projects", slug(cwd))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{session}.jsonl")
    with open(path, "w") as fh:
        while fh.tell() < megabytes << 20:
            fh.write(chunk)
    return session, path


def run_json(cmd: list[str], env: dict) -> tuple[dict, float]:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout), time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--megabytes", type=int, default=100)
    ap.add_argument("--pg", action="store_true", help="search on PostgreSQL too, side by side")
    args = ap.parse_args()
    compile_package()
    nexus = console_script()
    root = tempfile.mkdtemp(prefix="nexus-insight-bench-")
    home, work = os.path.join(root, "home"), os.path.join(root, "work")
    os.makedirs(os.path.join(work, ".git"))
    os.makedirs(home)
    env = {**os.environ, "HOME": home, "NEXUS_HOME": os.path.join(root, "store"),
           "PYTHONDONTWRITEBYTECODE": "1"}
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "CLAUDE_CODE_SESSION_ID", "CODEX_SESSION_ID",
                "CODEX_THREAD_ID", "CLAUDECODE"):
        env.pop(var, None)
    os.chdir(work)
    try:
        rows = []
        # -- log on a 100 MB transcript -----------------------------------------------------------
        session, path = big_transcript(home, work, args.megabytes)
        small, small_path = big_transcript(home, work, 1)
        size = os.path.getsize(path)
        out, _ = run_json([nexus, "log", session, "--tail", "50", "--json"], env)
        assert out["scan"] == "tail" and out["shown"] > 0, out
        times = interleaved({
            "log": ([nexus, "log", session, "--tail", "50", "--json"], None),
            "small": ([nexus, "log", small, "--tail", "50", "--tail-scan", "--json"], None),
            "peers": ([nexus, "peers", "--json"], None),
            "tail": (["tail", "-c", str(1 << 18), path], None),
        }, args.runs, env=env, warmup=1)
        full = interleaved({"full": ([nexus, "log", session, "--tail", "50", "--full", "--json"],
                                     None)}, 1, env=env, warmup=0)["full"]
        rows += [
            (f"log --tail 50, {size / 2**20:.0f} MB transcript (read from the end)",
             f"{times['log'] * 1000:.0f} ms", f"{times['log'] / times['tail']:.1f}x tail -c",
             "report"),
            ("  tail -c 256 KB of the same file", f"{times['tail'] * 1000:.1f} ms", "1.0x", ""),
            ("  the same on a 1 MB transcript", f"{times['small'] * 1000:.0f} ms",
             f"{times['log'] / times['small']:.2f}x (100 MB / 1 MB)", "~1x"),
            ("  nexus peers (the CLI's start-up)", f"{times['peers'] * 1000:.0f} ms",
             f"{times['log'] / times['peers']:.1f}x (log / peers)", "report"),
            ("  log --tail 50 --full (the whole file)", f"{full:.1f} s",
             f"{full / times['tail']:.0f}x tail -c", "report"),
        ]
        os.unlink(path)
        os.unlink(small_path)
        # -- search over 1,000 sessions ------------------------------------------------------------
        subprocess.run([nexus, "maintenance"], env=env, capture_output=True, check=True)
        names = [*CLAUDE, *CODEX]
        paths = []
        for i in range(args.sessions):
            name = names[i % len(names)]
            sid = str(uuid.uuid4())
            marker = "zanzibar" if i % 100 == 7 else None  # 10 sessions in 1,000 hold it
            paths.append(place(home, name, work, sid, rewrite(name, work, sid, marker)))
        total = sum(os.path.getsize(p) for p in paths)
        query = [nexus, "search", "zanzibar", "--all-sessions", "--json"]
        started = time.perf_counter()
        first, first_s = run_json(query, env)
        rounds = 1
        while not first["index"]["current"]:  # a large backlog takes more than one budget
            first, more = run_json(query, env)
            first_s += more
            rounds += 1
        cold = time.perf_counter() - started
        grep = ["grep", "-ci", "-r", "zanzibar", os.path.join(home, ".claude", "projects"),
                os.path.join(home, ".codex", "sessions")]
        warm, _ = run_json(query, env)
        assert warm["index"]["was_current"] and warm["matched"] == args.sessions // 100
        times = interleaved({"search": (query, None), "grep": (grep, None)}, args.runs, env=env,
                            warmup=1)
        scan = interleaved({"scan": ([*query, "--no-index"], None)}, 1, env=env,
                           warmup=0)["scan"]
        rows += [
            (f"search, {args.sessions:,} sessions ({total / 2**20:.0f} MB), index current",
             f"{times['search'] * 1000:.0f} ms", f"{times['search'] / times['grep']:.1f}x grep -ci",
             "report"),
            ("  grep -ci -r over the same files", f"{times['grep'] * 1000:.0f} ms", "1.0x", ""),
            ("  search --no-index (a scan)", f"{scan:.1f} s", f"{scan / times['grep']:.0f}x grep",
             "report"),
            (f"  first search, building the index ({rounds} searches)", f"{cold:.1f} s",
             f"{cold / times['grep']:.0f}x grep", "report"),
        ]
        if args.pg:
            rows += team_search(query, env, grep, args.runs)
        print(f"nexus insight bench: {args.runs} runs, medians\n")
        table(rows, ratio="ratio")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def team_search(query: list[str], env: dict, grep: list[str], runs: int) -> list[tuple]:
    """The same search on a team database beside the local store's, interleaved."""
    import pgcluster  # scripts/ (on the path through _util)

    cluster = pgcluster.start()
    try:
        team = {**env, "NEXUS_DATABASE_URL": cluster.url}
        subprocess.run([query[0], "maintenance"], env=team, capture_output=True, check=True)
        started = time.perf_counter()
        first, _ = run_json(query, team)
        rounds = 1
        while not first["index"]["current"]:
            first, _ = run_json(query, team)
            rounds += 1
        cold = time.perf_counter() - started
        warm, _ = run_json(query, team)
        local, _ = run_json(query, env)
        assert warm["results"] == local["results"], "the team database answers otherwise"
        # one environment for all: each search names its store (set but empty: the local one)
        times = interleaved({"local": (["env", "NEXUS_DATABASE_URL=", *query], None),
                             "team": (["env", f"NEXUS_DATABASE_URL={cluster.url}", *query], None),
                             "grep": (grep, None)}, runs, env=env, warmup=1)
    finally:
        cluster.stop()
    return [
        ("[team] search, index current (same sessions)", f"{times['team'] * 1000:.0f} ms",
         f"{times['team'] / times['local']:.2f}x local ({times['local'] * 1000:.0f} ms)",
         "report"),
        (f"[team]   first search, building the index ({rounds} searches)", f"{cold:.1f} s",
         f"{cold / times['grep']:.0f}x grep", "report"),
    ]


if __name__ == "__main__":
    main()
