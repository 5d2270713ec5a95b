"""The CLI as people and agents meet it: start-up of `nexus send`, `read`, `peers` and `--version`
against the interpreter floor in one run, and the send path's throughput with 8 concurrent
sender processes (each an agent below its own stand-in client), checking that nothing is lost
or doubled, beside its floor measured in the same run: the same SQL statements a send executes
(recorded from a real send, its transaction included, and replayed by 8 processes on a store of
the same schema with SQLite alone, each time a new message id and text); for reference, bare
SQLite inserts from 8 processes, one row a transaction (`BEGIN IMMEDIATE`, INSERT, COMMIT, WAL,
synchronous=NORMAL, the same busy timeout), each row the size of a message's, into a table of
its own with nothing else on it (a sixteenth of a send's work: no goal); and the same sends from
one process a core (what more processes than cores cost).

With --baseline, another build's console script (say a checkout of an older commit's
`.venv/bin/nexus`): only the throughput, in rounds of bare inserts, this build's sends and the
baseline's (each on a store of its own), so that all three meet the same machine. With
--instructions, one send in a long-lived sender and one bare insert in instructions executed
(valgrind), which do not move with the machine's load (and the baseline's send, when given).

Usage: python bench/cli.py [--runs N] [--senders N] [--per-sender N]
                           [--baseline NEXUS [--rounds N]] [--instructions]"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time

sys.path.insert(0, os.path.dirname(__file__))
from _util import PY, ROOT, Client, compile_package, console_script, interleaved_in, table

ME = "5e55f00d-0000-4000-8000-00000000beef"
PEER = "7e57c0de-0000-4000-8000-00000000cafe"

SENDER = textwrap.dedent("""
    import sys, time
    from nexus_cli.catalog import load
    from nexus_cli.core.context import Ctx, cli_resolver
    from nexus_cli.core.registry import invoke
    from nexus_cli.core.store.db import Store
    from nexus_cli.maintenance import expiry
    send, store, n, target = load()["send"], Store(reuse=True), int(sys.argv[1]), sys.argv[2]
    print("ready", flush=True)
    sys.stdin.readline()
    waits = []
    for i in range(int(sys.argv[3])):
        began = time.perf_counter()
        invoke(send, Ctx(store, cli_resolver(None), upkeep=expiry.LAZY),
               {"target": target, "text": f"{n}:{i}", "all_workspaces": True})
        waits.append(time.perf_counter() - began)
    print(" ".join(map(str, waits)), flush=True)
""")


BARE = textwrap.dedent("""
    import os, sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
    conn.execute("PRAGMA synchronous = NORMAL")
    n, per = int(sys.argv[2]), int(sys.argv[3])
    me, peer = "claude:" + "0" * 36, "codex:" + "7" * 36
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(per):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO bare (id, kind, sender, recipient, target, text, reply_to,"
                     " request_id, created_at, notify_when_idle, task_id, defer, wake)"
                     " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     ("m-" + os.urandom(6).hex(), "message", me, peer, None, f"{n}:{i}", None,
                      None, 1e9, 0, None, 0, 1))
        conn.execute("COMMIT")
    print("done", flush=True)  # (one line at the end, as each sender prints its latencies)
""")


# One real send, recorded: the statements (and parameters) its connection executes, the
# transaction's BEGIN IMMEDIATE and COMMIT included, after a first send (a steady sender's).
RECORD = textwrap.dedent("""
    import json, sys
    from nexus_cli.catalog import load
    from nexus_cli.core.context import Ctx, cli_resolver
    from nexus_cli.core.registry import invoke
    from nexus_cli.core.store import db
    from nexus_cli.core.store.db import Store
    from nexus_cli.maintenance import expiry
    send, store, target = load()["send"], Store(reuse=True), sys.argv[1]
    def go(text):
        return invoke(send, Ctx(store, cli_resolver(None), upkeep=expiry.LAZY),
                      {"target": target, "text": text, "all_workspaces": True})
    go("warm-up")
    seen, plain, plain_many = [], db.Connection.execute, db.Connection.executemany
    def execute(self, sql, params=()):
        seen.append([sql, list(params) if isinstance(params, tuple | list) else params])
        return plain(self, sql, params)
    def executemany(self, sql, rows):
        rows = list(rows)
        seen.append([sql, [list(r) for r in rows], "many"])
        return plain_many(self, sql, rows)
    db.Connection.execute, db.Connection.executemany = execute, executemany
    got = go("the recorded send")
    print(json.dumps({"statements": seen, "id": got["message_id"], "text": "the recorded send"}))
""")

# The recorded statements, replayed by one process `per` times on a store of the same schema
# with SQLite alone: each time the message's id and text are new (nothing else a send writes
# must be unique), every SELECT's rows fetched.
REPLAY = textwrap.dedent("""
    import json, os, sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
    conn.execute("PRAGMA synchronous = NORMAL")
    n, per = int(sys.argv[2]), int(sys.argv[3])
    rec = json.loads(sys.stdin.readline())
    def swap(value, mid, text):
        return mid if value == rec["id"] else text if value == rec["text"] else value
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(per):
        mid, text = "m-" + os.urandom(6).hex(), f"{n}:{i}"
        for sql, params, *many in rec["statements"]:
            if many:
                conn.executemany(sql, [[swap(v, mid, text) for v in row] for row in params])
                continue
            if isinstance(params, dict):
                params = {k: swap(v, mid, text) for k, v in params.items()}
            else:
                params = [swap(v, mid, text) for v in params]
            cur = conn.execute(sql, params)
            if cur.description:
                cur.fetchall()
    print("done", flush=True)
""")


def record(env: dict) -> dict:
    """One send's statements, as a sender below its own stand-in client executes them."""
    from standin import client_wrapper, hook_events

    wrapper = client_wrapper(tempfile.mkdtemp(prefix="nexus-record-"), "claude")
    sid = "0000000f-5e4d-4000-8000-000000000000"
    hooks = json.loads(hook_events("claude", sid, os.getcwd()))
    got = subprocess.run([wrapper, PY, "-c", RECORD, f"codex:{PEER}"], capture_output=True,
                         text=True, check=True,
                         env={**env, "CLAUDE_CODE_SESSION_ID": sid,
                              "STANDIN_HOOKS": json.dumps(hooks)})
    rec = json.loads(got.stdout.strip().splitlines()[-1])
    assert any(s[0].lstrip().upper().startswith("INSERT INTO MESSAGES") for s in
               rec["statements"]), "no message insert recorded"
    return rec


def replayed(env: dict, rec: dict, writers: int, per: int) -> tuple[float, int, int]:
    """Sends a second that `writers` processes replaying `rec` make at once, on a store like
    the senders' (its schema and sessions); (stored, distinct) counts of their messages."""
    path = os.path.join(env["NEXUS_HOME"], "nexus.db")
    procs = [subprocess.Popen([PY, "-c", REPLAY, path, str(n), str(per)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for n in range(writers)]
    for p in procs:
        p.stdin.write(json.dumps(rec) + "\n")
        p.stdin.flush()
    elapsed, _ = race(procs)
    conn = sqlite3.connect(path)
    texts = [r[0] for r in conn.execute("SELECT text FROM messages WHERE text LIKE '%:%'")]
    conn.close()
    return writers * per / elapsed, len(texts), len(set(texts))


def race(procs: list[subprocess.Popen]) -> tuple[float, list[str]]:
    """Start processes that said `ready` at once; seconds until all are done, and the last line
    each printed."""
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    start = time.perf_counter()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    lines = []
    for p in procs:
        p.stdin.close()
        lines.append(p.stdout.readline())
        assert p.wait() == 0
    return time.perf_counter() - start, lines


def bare_store() -> str:
    """A database holding one table shaped like `messages`, with nothing else on it."""
    path = os.path.join(tempfile.mkdtemp(prefix="nexus-bare-"), "bare.db")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE bare (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, kind TEXT,"
                 " sender TEXT, recipient TEXT, target TEXT, text TEXT, reply_to TEXT,"
                 " request_id TEXT, created_at REAL, notify_when_idle INTEGER, task_id TEXT,"
                 " defer INTEGER, wake INTEGER)")
    conn.close()
    return path


def bare_procs(path: str, writers: int, per: int, wrap: tuple[str, ...] = ()) -> list:
    return [subprocess.Popen([*wrap, PY, "-c", BARE, path, str(n), str(per)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for n in range(writers)]


def bare(writers: int, per: int) -> tuple[float, int, int]:
    """Rows per second that `writers` processes insert at once, one a transaction, with SQLite
    alone; (stored, distinct) counts."""
    path = bare_store()
    elapsed, _ = race(bare_procs(path, writers, per))
    conn = sqlite3.connect(path)
    texts = [r[0] for r in conn.execute("SELECT text FROM bare")]
    conn.close()
    return writers * per / elapsed, len(texts), len(set(texts))


def sender_procs(env: dict, senders: int, per: int, python: str = PY, root: str = ROOT,
                 wrap: tuple[str, ...] = ()) -> list:
    """`senders` processes, each an agent below a stand-in Claude Code whose SessionStart hook
    ran, ready to send `per` messages; `python` and `root`: the build that sends (and runs the
    hooks)."""
    from standin import client_wrapper, hook_events

    wrapper = client_wrapper(tempfile.mkdtemp(prefix="nexus-senders-"), "claude")
    procs = []
    for n in range(senders):
        sid = f"{n:08x}-5e4d-4000-8000-000000000000"
        hooks = json.loads(hook_events("claude", sid, os.getcwd()))
        for hook in hooks:
            hook["argv"][:1] = [python, "-P"]  # (-P: not the current directory's nexus_cli)
        procs.append(subprocess.Popen(
            [wrapper, *wrap, python, "-P", "-c", SENDER, str(n), f"codex:{PEER}", str(per)],
            env={**env, "CLAUDE_CODE_SESSION_ID": sid, "PYTHONPATH": root,
                 "STANDIN_HOOKS": json.dumps(hooks)},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    return procs


def throughput(env: dict, senders: int, per: int, python: str = PY,
               root: str = ROOT) -> tuple[float, int, int, list[float]]:
    """Messages per second with `senders` processes at once, (stored, distinct) counts, and
    every send's latency (the writers' queue keeps the slowest near the typical)."""
    procs = sender_procs(env, senders, per, python, root)
    elapsed, lines = race(procs)
    latencies = [float(t) for line in lines for t in line.split()]
    conn = sqlite3.connect(os.path.join(env["NEXUS_HOME"], "nexus.db"))
    texts = [r[0] for r in conn.execute("SELECT text FROM messages WHERE text LIKE '%:%'")]
    return senders * per / elapsed, len(texts), len(set(texts)), sorted(latencies)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--senders", type=int, default=8)
    parser.add_argument("--per-sender", type=int, default=500)
    parser.add_argument("--baseline", help="another build's nexus console script: throughput "
                        "only, in rounds with this build's and bare inserts")
    parser.add_argument("--rounds", type=int, default=3, help="rounds with --baseline")
    parser.add_argument("--instructions", action="store_true",
                        help="instructions of one send and of one bare insert (valgrind), with "
                        "--baseline the baseline's send too")
    opts = parser.parse_args()
    if opts.instructions:
        return instructions(opts)
    if opts.baseline:
        return baseline(opts)
    nexus = console_script()
    compile_package()
    env = fresh_env()
    peer = Client("codex", PEER, env)
    me = Client("claude", ME, env)
    try:
        floor = [PY, "-c", "import json, sqlite3"]
        res = interleaved_in(me, {
            "floor": (floor, b""),
            "nexus send": ([nexus, "send", f"codex:{PEER}", "bench message"], b""),
            "nexus read": ([nexus, "read"], b""),
            "nexus peers": ([nexus, "peers"], b""),
            "nexus --version": ([nexus, "--version"], b""),
        }, opts.runs)
    finally:
        me.close()
        peer.close()
    floor_rate, floor_stored, floor_distinct = bare(opts.senders, opts.per_sender)
    rec = record(senders_env((PY, ROOT)))
    same_rate, same_stored, same_distinct = replayed(senders_env((PY, ROOT)), rec, opts.senders,
                                                     opts.per_sender)
    rate, stored, distinct, lat = throughput(env, opts.senders, opts.per_sender)
    cores = os.cpu_count() or 1
    per_core = throughput(env, cores, opts.senders * opts.per_sender // cores)[0] \
        if cores < opts.senders else None
    f = res["floor"]
    rows = [("python -c 'import json, sqlite3'", f"{f * 1000:.1f} ms", "1.00x", "")]
    for key, target in (("nexus send", "<= 5x"), ("nexus read", "<= 5x"),
                        ("nexus peers", "<= 5x"), ("nexus --version", "<= 2x")):
        rows.append((key, f"{res[key] * 1000:.1f} ms", f"{res[key] / f:.2f}x", target))
    total = opts.senders * opts.per_sender
    rows.append((f"the same statements, {opts.senders} processes", f"{same_rate:,.0f}/s",
                 "1.00x", f"({len(rec['statements'])} statements a send, SQLite alone)"))
    rows.append(("  stored / distinct / replayed",
                 f"{same_stored} / {same_distinct} / {total}", "", "all equal"))
    rows.append((f"send throughput, {opts.senders} processes", f"{rate:,.0f} msg/s",
                 f"{rate / same_rate:.2f}x", ">= 0.5x"))
    rows.append(("  stored / distinct / sent", f"{stored} / {distinct} / {total}", "",
                 "all equal"))
    rows.append((f"bare SQLite inserts, {opts.senders} processes (one row a transaction)",
                 f"{floor_rate:,.0f} rows/s", f"{rate / floor_rate:.2f}x", "report"))
    rows.append(("  stored / distinct / inserted",
                 f"{floor_stored} / {floor_distinct} / {total}", "", "all equal"))
    if per_core is not None:  # what oversubscribing the cores costs
        rows.append((f"  the same sends from {cores} processes (one a core)",
                     f"{per_core:,.0f} msg/s", f"{rate / per_core:.2f}x", "report"))
    med, p99 = (lat[int(len(lat) * q)] * 1000 for q in (0.5, 0.99))
    rows.append(("  one send: median / p99 / slowest",
                 f"{med:.2f} / {p99:.1f} / {lat[-1] * 1000:.0f} ms",
                 f"{lat[-1] * 1000 / med:.0f}x", "report"))
    table(rows)
    json.dump({"rate": rate}, sys.stderr)


def fresh_env() -> dict[str, str]:
    """This environment without a session's variables, with a store of its own."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAUDE", "CODEX")) and k not in ("NEXUS_HOME",
                                                                  "NEXUS_DATABASE_URL")}
    return {**env, "NEXUS_HOME": tempfile.mkdtemp(prefix="nexus-bench-")}


def builds(opts: argparse.Namespace) -> dict[str, tuple[str, str]]:
    """(interpreter, checkout) of this build and of the baseline's, when given."""
    out = {"this build": (PY, ROOT)}
    if opts.baseline:
        python = os.path.join(os.path.dirname(opts.baseline), "python")
        out["baseline"] = (python, subprocess.run(
            [python, "-P", "-c", "import nexus_cli, os; print(os.path.dirname(os.path.dirname("
             "os.path.abspath(nexus_cli.__file__))))"],
            capture_output=True, text=True, check=True, env=fresh_env()).stdout.strip())
    return out


def senders_env(build: tuple[str, str]) -> dict[str, str]:
    """A new store where the recipient (a Codex session, gone since) has been seen."""
    env = fresh_env()
    Client("codex", PEER, {**env, "PYTHONPATH": build[1]},
           nexus=os.path.join(os.path.dirname(build[0]), "nexus")).close()
    return env


def baseline(opts: argparse.Namespace) -> None:
    """Bare inserts, this build's sends and the baseline's, in turn, each round on new stores."""
    compile_package()
    total = opts.senders * opts.per_sender
    rows = []
    for r in range(opts.rounds):
        floor, stored, distinct = bare(opts.senders, opts.per_sender)
        rows.append((f"#{r + 1} bare SQLite inserts, {opts.senders} processes",
                     f"{floor:,.0f} rows/s", "1.00x", f"{stored} / {distinct} / {total}"))
        for label, build in builds(opts).items():
            rate, stored, distinct, _ = throughput(senders_env(build), opts.senders,
                                                   opts.per_sender, *build)
            rows.append((f"#{r + 1} send throughput, {opts.senders} processes, {label}",
                         f"{rate:,.0f} msg/s", f"{rate / floor:.2f}x",
                         f"{stored} / {distinct} / {total}"))
    table(rows, ratio="vs bare")
    print(f"(last column: stored / distinct / sent; baseline {builds(opts)['baseline'][1]})")


def counted(procs: list, out: str) -> int:
    """Instructions the one process in `procs` (started under callgrind) ran."""
    import re

    race(procs)
    with open(out) as fh:
        found = re.search(r"^summary: (\d+)", fh.read(), re.M)
    assert found, "no callgrind summary"
    return int(found.group(1))


def instructions(opts: argparse.Namespace) -> None:
    """One send in a long-lived sender (below its stand-in client) and one bare insert, in
    instructions: a process making N + K of them less one making N, over K."""
    import shutil

    if not shutil.which("valgrind"):
        sys.exit("bench: --instructions needs valgrind")
    compile_package()
    out = os.path.join(tempfile.mkdtemp(prefix="nexus-cg-"), "callgrind.out")
    grind = ("valgrind", "-q", "--tool=callgrind", f"--callgrind-out-file={out}")
    first, more = 20, 200

    def each(start: object) -> float:
        a, b = (counted(start(n), out) for n in (first, first + more))  # type: ignore[operator]
        return (b - a) / more

    floor = each(lambda n: bare_procs(bare_store(), 1, n, grind))
    rows = [("one bare insert (BEGIN IMMEDIATE, INSERT, COMMIT)", f"{floor / 1e3:,.1f} k",
             "1.00x", "")]
    for label, build in builds(opts).items():
        n = each(lambda k, build=build: sender_procs(senders_env(build), 1, k, *build,
                                                     wrap=grind))
        rows.append((f"one send, in-process, {label}", f"{n / 1e6:.3f} M",
                     f"{n / floor:.1f}x", ""))
    table(rows, ratio="vs bare")


if __name__ == "__main__":
    main()
