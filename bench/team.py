"""Team mode beside the local store, in one run, with PostgreSQL on a Unix socket of a throwaway
cluster (scripts/pgcluster.py): the hook with nothing pending against the interpreter floor,
wake latency (NOTIFY vs the FIFO bell), and 8 concurrent senders (messages per second, nothing
lost). The team hook runs with the stdlib wire client and, for comparison, with psycopg (what
URLs only libpq serves get), on the Unix socket and over TLS (the same server with ssl=on on
127.0.0.1, sslmode=verify-full: a remote team database's setting); a tool call with nothing new
settles in hook/quick.py's one round trip, shown beside the full hook it skips. Prints medians
and ratios.

Usage: python bench/team.py [--runs N] [--messages N]"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from _util import PY, Client, compile_package, console_script, event, interleaved_in, table

SID = "7ea30000-0000-4000-8000-00000000beef"
PG_SID = "7ea30000-0000-4000-8000-0000000000a5"


# `nexus hook claude` without the team-mode quick check (hook/quick.py): the full hook's path
FULL = [PY, "-c", "import os, sys; from nexus_cli.hook.entry import main; code = main(['claude'],"
        " linger=True); sys.stdout.flush(); os._exit(code)"]


def hooks(env: dict, url: str, tls_url: str, runs: int) -> dict[str, float]:
    nexus = console_script()
    floor = [PY, "-c", "import json, sqlite3"]
    out = {}
    for name, sid, extra in (("sqlite", SID, {}), ("team", PG_SID, {"NEXUS_DATABASE_URL": url}),
                             ("team, psycopg", PG_SID.replace("a5", "a6"),
                              {"NEXUS_DATABASE_URL": url, "NEXUS_PG_DRIVER": "psycopg"}),
                             ("team TLS", PG_SID.replace("a5", "a7"),
                              {"NEXUS_DATABASE_URL": tls_url}),
                             ("team TLS, psycopg", PG_SID.replace("a5", "a8"),
                              {"NEXUS_DATABASE_URL": tls_url, "NEXUS_PG_DRIVER": "psycopg"})):
        client = Client("claude", sid, {**env, **extra})
        try:
            post = event("PostToolUse", sid, tool_name="Bash", tool_use_id="t1", tool_input={})
            pre = event("PreToolUse", sid, tool_name="Bash", tool_use_id="t2", tool_input={})
            cases = {"floor": (floor, b""), "post": ([nexus, "hook", "claude"], post),
                     "pre": ([nexus, "hook", "claude"], pre)}
            if name in ("team", "team TLS"):  # the full hook, as before hook/quick.py
                cases["full"] = (FULL, post)
            res = interleaved_in(client, cases, runs)
        finally:
            client.close()
        out.update({f"{name} {k}": v for k, v in res.items()})
    return out


def wake_latency(root: str, url: str, rounds: int) -> dict[str, float]:
    """Median seconds from a poke (after COMMIT) to the waiter's return from its wait."""
    from nexus_cli.core.store.db import LocalStore
    from nexus_cli.core.store.pg import PgStore

    out = {}
    for name, store in (("fifo", LocalStore(root)), ("notify", PgStore(url, root))):
        sid = "claude:wake-bench"
        samples = []
        with store.channel(sid) as channel:
            for _ in range(rounds):
                box: dict[str, float] = {}
                ready = threading.Event()

                def waiter(box: dict = box, ready: threading.Event = ready) -> None:
                    ready.set()
                    if channel.wait(10):
                        box["woke"] = time.perf_counter()

                t = threading.Thread(target=waiter)
                t.start()
                ready.wait()
                time.sleep(0.005)  # the waiter is inside select()
                start = time.perf_counter()
                store.poke([sid])
                t.join()
                if "woke" in box:
                    samples.append(box["woke"] - start)
        out[name] = statistics.median(samples)
    return out


def _sender(root: str, url: str | None, n: int, count: int, start, done) -> None:
    os.environ["NEXUS_HOME"] = root
    if url:
        os.environ["NEXUS_DATABASE_URL"] = url
    else:
        os.environ.pop("NEXUS_DATABASE_URL", None)
    from nexus_cli.core.store.db import Store
    from nexus_cli.messages import mailbox

    store = Store(reuse=True)  # one connection for the run, as a long-lived sender keeps it
    store.open_write()  # connected (and the schema checked) before the clock starts
    start.wait()
    for i in range(count):
        with store.write() as conn:
            mailbox.insert(conn, sender=f"codex:sender-{n}", recipient="claude:inbox",
                           text=f"{n}-{i}", now=time.time())
    done.put(n)


def senders(root: str, url: str | None, count: int) -> tuple[float, int]:
    """8 processes sending `count` messages each, one transaction per message."""
    fork = mp.get_context("fork")
    start, done = fork.Event(), fork.Queue()
    procs = [fork.Process(target=_sender, args=(root, url, n, count, start, done))
             for n in range(8)]
    for p in procs:
        p.start()
    time.sleep(0.5)  # every sender imported and connected
    t0 = time.perf_counter()
    start.set()
    for p in procs:
        p.join(600)
    elapsed = time.perf_counter() - t0
    os.environ["NEXUS_HOME"] = root
    if url:
        os.environ["NEXUS_DATABASE_URL"] = url
    from nexus_cli.core.store.db import Store

    with Store().read() as conn:
        stored = conn.execute("SELECT count(*) FROM messages WHERE recipient = 'claude:inbox'"
                              ).fetchone()[0]
    os.environ.pop("NEXUS_DATABASE_URL", None)
    return 8 * count / elapsed, stored


def main() -> None:
    import pgcluster

    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--messages", type=int, default=300, help="per sender")
    parser.add_argument("--wakes", type=int, default=50)
    opts = parser.parse_args()
    compile_package()
    certs = pgcluster.certificates(tempfile.mkdtemp(prefix="nexus-bench-tls-"))
    cluster = pgcluster.start(tls={"cert": certs["cert"], "key": certs["key"]}, bytewise=True)
    tls_url = cluster.tcp_url(host="localhost", sslmode="verify-full", sslrootcert=certs["root"])
    try:
        from nexus_cli.core.store import pg

        conn = pg.connect(cluster.url, "/nonexistent")
        pg.migrate(conn, time.time())
        conn.close()
        home = tempfile.mkdtemp(prefix="nexus-bench-team-")
        env = {**os.environ, "NEXUS_HOME": home}
        for var in ("CLAUDE_CODE_SESSION_ID", "CODEX_SESSION_ID", "CODEX_THREAD_ID", "CLAUDECODE",
                    "NEXUS_DATABASE_URL"):
            env.pop(var, None)
        res = hooks(env, cluster.url, tls_url, opts.runs)
        wake = wake_latency(home, cluster.url, opts.wakes)
        local_rate, local_n = senders(tempfile.mkdtemp(prefix="nexus-bench-s-"), None,
                                      opts.messages)
        team_rate, team_n = senders(home, cluster.url, opts.messages)
    finally:
        cluster.stop()
    rows = []
    for name in ("sqlite", "team", "team, psycopg", "team TLS", "team TLS, psycopg"):
        f = res[f"{name} floor"]
        rows.append((f"[{name}] python -c 'import json, sqlite3'", f"{f * 1000:.1f} ms", "1.00x",
                     ""))
        for key, label in (("post", "hook PostToolUse, nothing pending"),
                           ("pre", "hook PreToolUse")):
            v = res[f"{name} {key}"]
            rows.append((f"[{name}] {label}", f"{v * 1000:.1f} ms", f"{v / f:.2f}x",
                         "<= 1.3x" if name == "sqlite" else "<= 3x"))
            if key == "post" and f"{name} full" in res:
                v = res[f"{name} full"]
                rows.append((f"[{name}] the same through the full hook (no quick check)",
                             f"{v * 1000:.1f} ms", f"{v / f:.2f}x", "before"))
    rows.append(("wake latency, FIFO bell (local)", f"{wake['fifo'] * 1000:.2f} ms", "", ""))
    rows.append(("wake latency, LISTEN/NOTIFY (team)", f"{wake['notify'] * 1000:.2f} ms",
                 f"{wake['notify'] / wake['fifo']:.1f}x fifo", "<= 20 ms"))
    total = 8 * opts.messages
    rows.append(("8 senders, local store", f"{local_rate:,.0f} msg/s",
                 f"{local_n}/{total} stored", ""))
    rows.append(("8 senders, team database", f"{team_rate:,.0f} msg/s",
                 f"{team_n}/{total} stored", ">= 2,000 msg/s"))
    table(rows, ratio="ratio")


if __name__ == "__main__":
    main()
