"""The shared workspace at scale: `find` (the FTS5 index) with 100,000 documents and 1,000
meetings, and `read_messages` on a 100,000-message global chat, each against the same call on a
nearly empty store, side by side in one run (in-process, through the registry as the CLI and
MCP call it, the rate limit's write included).

With --pg, the same two stores are also built in a throwaway PostgreSQL cluster
(scripts/pgcluster.py; `find` through tsvector/GIN, migration 14) and measured in the same
rounds: full / empty on each backend, and team / local for each call (a team call opens its
connection, as a CLI call does).

Usage: python bench/workspace.py [--docs N] [--meetings N] [--messages N] [--runs N] [--pg]"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from _util import table
from helpers import FakeTable, ctx_for  # the suite's synthetic process table
from nexus_cli.catalog import load
from nexus_cli.core import proctable
from nexus_cli.core.registry import TOOLS, invoke
from nexus_cli.core.store.db import Store

ME = "claude:b0550000-0000-4000-8000-000000000001"
PROJECT = "/work/bench-project"
FAKE = FakeTable()
proctable.use(FAKE)
WORDS = [f"w{i}" for i in range(5000)]  # a vocabulary: each word is in ~0.6% of the documents
NEEDLE = "kafkaesque"  # in exactly 10 documents of either store


def text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def build(docs: int, meetings: int, messages: int, reader_behind: int,
          url: str | None = None) -> str:
    home = tempfile.mkdtemp(prefix="nexus-workspace-")
    backend(url)
    rng = random.Random(7)
    now = time.time()
    with Store(home).write() as conn:
        pid = FAKE.client_of(ME)
        conn.execute("INSERT INTO sessions (id, client, handle, name, cwd, project, status,"
                     " client_pid, client_start, created_at, last_active)"
                     " VALUES (?, 'claude', 's-b05500000000', 'claude@bench', ?, ?, 'idle', ?, ?,"
                     " ?, ?)", (ME, PROJECT, PROJECT, pid, FAKE.procs[pid].start, now, now))
        conn.executemany("INSERT INTO ws_docs (id, title, content, updated_by, updated_at)"
                         " VALUES (?, ?, ?, 'user:bench', ?)",
                         [(f"doc-{i}", f"doc {i} {text(rng, 3)}",
                           text(rng, 40) + (f" {NEEDLE}" if i % max(docs // 10, 1) == 0 else ""),
                           now) for i in range(docs)])
        conn.executemany("INSERT INTO ws_meetings (id, topic, status, initiator, started_at,"
                         " ended_at, decisions, updated_at) VALUES (?, ?, 'closed', ?, ?, ?, '[]',"
                         " ?)", [(f"mtg-{i:08x}", text(rng, 4), ME, now, now, now)
                                 for i in range(meetings)])
        conn.executemany("INSERT INTO ws_chat (meeting, sender, project, category, text,"
                         " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                         [(f"mtg-{i % meetings:08x}", ME, PROJECT, "CHAT", text(rng, 12), now)
                          for i in range(meetings * 10)])
        conn.executemany("INSERT INTO ws_chat (meeting, sender, project, category, text,"
                         " created_at) VALUES (NULL, ?, ?, 'CHAT', ?, ?)",
                         [(ME, PROJECT, text(rng, 12), now) for _ in range(messages)])
        last = conn.execute("SELECT max(seq) FROM ws_chat").fetchone()[0] or 0
        conn.execute("INSERT INTO ws_cursors (reader, stream, seq) VALUES (?, '', ?)",
                     (ME, last - reader_behind))
    return home


def backend(url: str | None) -> None:
    """The store `Store()` opens from now on: this team database, or (None) the local one."""
    os.environ["NEXUS_DATABASE_URL"] = url or ""


def ctx(home: str):
    return ctx_for(home, {"CLAUDE_CODE_SESSION_ID": ME.split(":", 1)[1]}, cwd=PROJECT)


def measure(homes: list[tuple[str, str | None]], runs: int) -> list[dict[str, list[float]]]:
    """Each call on each store in turn, so load on the machine hits both alike."""
    # find --kind doc matches about 1% of the documents (a common word): its cost follows the
    # matches it ranks, so it is reported beside the selective query, not held to 2x
    out: list[dict[str, list[float]]] = [
        {"find": [], "find --kind doc": [], "read_messages": []} for _ in homes]
    cases = (("find", "find", {"query": NEEDLE}),
             ("find --kind doc", "find", {"query": f"{NEEDLE} OR w1", "kind": "doc",
                                          "limit": 10}),
             ("read_messages", "read_messages", {"count": 10}))
    for _ in range(runs):
        for name, tool, args in cases:
            for (home, url), samples in zip(homes, out, strict=True):
                backend(url)
                c = ctx(home)
                start = time.perf_counter()
                r = invoke(TOOLS[tool], c, args)
                samples[name].append(time.perf_counter() - start)
                assert r.get("hits", r.get("messages")), (name, r)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--meetings", type=int, default=1_000)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--pg", action="store_true", help="also on PostgreSQL, side by side")
    opts = parser.parse_args()
    config = tempfile.mkdtemp(prefix="nexus-config-")
    os.makedirs(os.path.join(config, "nexus"))
    with open(os.path.join(config, "nexus", "config.toml"), "w") as fh:
        fh.write("rateLimit = 100000\nrateBurst = 1000000\n")  # measure the calls, not the limit
    os.environ["XDG_CONFIG_HOME"] = config
    os.environ.pop("NEXUS_HOME", None)
    load()
    behind = opts.runs * 10 + 10
    cluster = None
    if opts.pg:
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "scripts"))
        import pgcluster

        cluster = pgcluster.start()
    try:
        started = time.perf_counter()
        stores: list[tuple[str, str | None]] = []
        for small, big in [(None, None), *([team_schemas(cluster)] if cluster else [])]:
            stores.append((build(20, 2, behind, behind, small), small))
            stores.append((build(opts.docs, opts.meetings, opts.messages, behind, big), big))
        built = time.perf_counter() - started
        results = measure(stores, opts.runs)
    finally:
        if cluster is not None:
            cluster.stop()
    rows = []
    sizes = {"find": f"{opts.docs:,} docs, {opts.meetings:,} meetings",
             "find --kind doc": f"{opts.docs:,} docs, a common word OR'd in",
             "read_messages": f"{opts.messages:,}-message chat"}
    medians = [{k: statistics.median(v) for k, v in r.items()} for r in results]
    for label, (a, b) in (("", medians[0:2]), ("[team] ", medians[2:4])):
        if not a:
            continue
        for name in a:
            rows.append((f"{label}{name}: near-empty / {sizes[name]}",
                         f"{a[name] * 1000:.2f} / {b[name] * 1000:.2f} ms",
                         f"{b[name] / a[name]:.2f}x",
                         "report" if name == "find --kind doc" or label else "<= 2x"))
    if len(medians) == 4:
        for name in medians[0]:
            for which, local, team in (("near-empty", medians[0], medians[2]),
                                       ("full", medians[1], medians[3])):
                rows.append((f"{name}, {which}: local / team", f"{local[name] * 1000:.2f} / "
                             f"{team[name] * 1000:.2f} ms", f"{team[name] / local[name]:.2f}x "
                             "team/local", "report"))
    table(rows, ratio="full / empty")
    size = os.path.getsize(os.path.join(stores[1][0], "nexus.db"))
    print(f"(stores built in {built:.0f} s; the full local one is {size / 2**20:.0f} MiB)")


def team_schemas(cluster) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """Two fresh, migrated schemas (empty, full) in the cluster: their URLs."""
    from nexus_cli.core.store import pg

    urls = []
    for name in ("bench_empty", "bench_full"):
        conn = pg.connect(cluster.url, "/nonexistent")
        conn.raw.execute(f"CREATE SCHEMA {name}")
        conn.close()
        url = cluster.url_for(name)
        conn = pg.connect(url, "/nonexistent")
        pg.migrate(conn, time.time())
        conn.close()
        urls.append(url)
    return urls[0], urls[1]


if __name__ == "__main__":
    main()
