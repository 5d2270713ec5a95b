"""The store: private, created whole or not at all, migrated in one transaction, and never
written when it cannot be read."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from helpers import A, sid, tree_bytes
from nexus_cli.core.errors import NexusError
from nexus_cli.core.store import APPLICATION_ID, SCHEMA, migrations, paths
from nexus_cli.core.store.db import Store

pytestmark = pytest.mark.migrate  # the store's own making, by the migrations (not a template copy)

READ_ONLY = [("whoami",), ("peers",), ("message", "status", "m-123"), ("tasks", "--open"),
             ("tasks", "--self"), ("handoff", "status"), ("meeting", "list"), ("doc", "list"),
             ("find", "anything"), ("project", "topology")]
WRITES = [("send", "claude@work", "hi"), ("read",), ("profile", "--note", "x"),
          ("chat", "send", "hi"), ("meeting", "start", "t"),
          ("delegate", "claude@work", "job"), ("report", "t-1", "--status", "completed",
                                                  "--result", "r"), ("task", "create", "x")]


def make_store(home: Path) -> Path:
    Store(str(home)).open_write().close()
    return Path(paths.db_path(str(home)))


def test_new_store_is_private_wal_and_migrated(home):
    db = make_store(home)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    # the version every open compares with, kept apart from the migrations: their last one
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA == migrations.CURRENT
    recorded = [r[0] for r in conn.execute("SELECT version FROM migrations ORDER BY version")]
    assert recorded == [m[0] for m in migrations.MIGRATIONS]
    assert not [p for p in os.listdir(home) if ".new-" in p]  # no temporary file left


def test_migrations_are_numbered_in_order():
    numbers = [m[0] for m in migrations.MIGRATIONS]
    # strictly increasing from 1; a feature branch may leave the numbers of others' unmerged ones
    assert numbers[0] == 1 and numbers == sorted(set(numbers))
    assert migrations.pending(migrations.CURRENT) == []


@pytest.mark.parametrize("args", READ_ONLY)
def test_read_only_commands_never_create_the_store(nx, home, args, chdir_work):
    r = nx(*args)
    assert r.code == (3 if args[0] == "message" else 0), r.err  # an unknown message: exit 3
    assert not home.exists()


def test_path_shows_where_without_creating(nx, home):
    r = nx("path", "--json")
    assert r.code == 0 and r.json["home"] == str(home) and r.json["exists"] is False
    assert not home.exists()


def test_read_only_commands_never_migrate(nx, home, chdir_work):
    db = make_store(home)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 0")
    conn.close()
    before = db.read_bytes()
    for args in (("peers",), ("meeting", "list")):  # a workspace read spends no token here
        r = nx(*args)
        assert r.code == 6 and "store_outdated" in r.err and str(db) in r.err
    assert db.read_bytes() == before
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 0


def corrupt_cases(db: Path) -> dict:
    def garbage():
        db.write_bytes(b"this is not a database at all" * 50)

    def empty():
        db.write_bytes(b"")

    def truncated():
        data = db.read_bytes()
        db.write_bytes(data[: len(data) // 2])

    def header_only():
        db.write_bytes(db.read_bytes()[:50])

    def foreign():
        db.unlink()
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE notes (x)")
        conn.commit()
        conn.close()
        os.chmod(db, 0o600)

    def newer():
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA user_version = 999")
        conn.close()

    def world_readable():
        os.chmod(db, 0o644)

    def no_owner_access():
        os.chmod(db, 0o000)

    return {"garbage": (garbage, "store_unreadable"), "empty": (empty, "store_unreadable"),
            "truncated": (truncated, "store_unreadable"),
            "header_only": (header_only, "store_unreadable"),
            "foreign": (foreign, "store_unreadable"), "newer": (newer, "store_newer"),
            "world_readable": (world_readable, "store_insecure"),
            "no_owner_access": (no_owner_access, "store_unreadable")}


@pytest.mark.parametrize("case", list(corrupt_cases(Path("x"))))
def test_unreadable_store_is_refused_by_name_and_left_untouched(nx, hook, home, case, chdir_work):
    db = make_store(home)
    # give it some content so truncation really cuts pages
    conn = sqlite3.connect(db)
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [(str(i), "x" * 2000) for i in range(20)])
    conn.commit()
    conn.close()
    mutate, code = corrupt_cases(db)[case]
    mutate()
    mode = db.stat().st_mode
    before = tree_bytes(home) if case != "no_owner_access" else None
    # every command, each case; but a truncated file is refused only once the shortfall lasted
    # (~0.4 s a command: a checkpoint may be under way), and what a command opens goes through
    # the same header check the other cases prove every command reaches: one read, one write
    commands = [READ_ONLY[1], WRITES[0]] if case == "truncated" else [*READ_ONLY, *WRITES]
    for args in commands:
        r = nx(*args, env=A)
        assert r.code == 6, (args, r.err)
        assert code in r.err and str(db) in r.err and "Traceback" not in r.err
    h = hook("claude", "Stop", sid(1))
    assert h.code == 1 and code in h.err and h.out == ""
    assert db.stat().st_mode == mode
    if before is not None:
        after = tree_bytes(home)
        assert {k: after[k] for k in before} == before  # every byte of what was there
        assert all(k.endswith(("-wal", "-shm")) for k in set(after) - set(before))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
@pytest.mark.parametrize("case", ["newer", "corrupt"])
def test_a_refused_store_leaves_no_descriptor_open(home, case):
    """A long-lived process (the MCP server, the web board) asked again and again of a store it
    must refuse keeps no connection of each refusal open, even with no garbage collection."""
    import gc

    with Store(str(home)).write():
        pass
    if case == "newer":
        conn = sqlite3.connect(home / "nexus.db")
        conn.execute(f"PRAGMA user_version = {migrations.CURRENT + 1}")
        conn.close()
    else:
        with open(home / "nexus.db", "r+b") as fh:
            fh.write(b"not a database" * 100)

    def refuse_all() -> None:
        for open_ in (lambda: Store(str(home)).read(), lambda: Store(str(home)).write()):
            with pytest.raises(NexusError), open_():
                pass

    refuse_all()  # the first one may open what a store keeps (its header, its queue)
    gc.disable()
    try:
        before = len(os.listdir("/proc/self/fd"))
        for _ in range(10):
            refuse_all()
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        gc.enable()


def test_insecure_directory_is_refused(nx, home, chdir_work):
    make_store(home)
    os.chmod(home, 0o755)
    r = nx("read")
    assert r.code == 6 and "store_insecure" in r.err and "chmod 700" in r.err


def test_read_only_file_system_is_reported(nx, home, tmp_path, monkeypatch, chdir_work):
    # a directory we cannot create: NEXUS_HOME below a regular file
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("NEXUS_HOME", str(blocker / "nexus"))
    r = nx("send", "x", "y")
    assert r.code == 6 and "store_" in r.err and "Traceback" not in r.err


def test_concurrent_creation_yields_one_store(home):
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(4) as pool:
        opened = set(pool.map(_open, [str(home)] * 8))
    db = os.stat(paths.db_path(str(home)))
    assert opened == {(db.st_dev, db.st_ino)}  # every process wrote to the one file left
    assert sorted(os.listdir(home)) == ["nexus.db"]  # no temporary file, no second store
    conn = sqlite3.connect(paths.db_path(str(home)))
    assert [r[0] for r in conn.execute("SELECT version FROM migrations ORDER BY version")] == \
        [m[0] for m in migrations.MIGRATIONS]  # migrated once


def _open(root: str) -> tuple[int, int]:
    store = Store(root)
    store.open_write().close()
    assert store._ident is not None
    return store._ident


def test_an_older_store_is_migrated_by_the_first_write_with_its_data(nx, hook, home, chdir_work):
    """Build a schema-1 store by hand (as nexus 0.1 left it), then let a hook write to it."""
    import time as _time

    home.mkdir(mode=0o700)
    db = Path(paths.db_path(str(home)))
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                 " applied_at REAL NOT NULL)")
    _number, name, sql = migrations.MIGRATIONS[0]
    for statement in sql.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT INTO migrations VALUES (1, ?, ?)", (name, _time.time()))
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO messages (id, sender, recipient, text, created_at) VALUES"
                 " ('m-old', 'user:x', 'codex:y', 'kept across the upgrade', 1)")
    conn.commit()
    conn.close()
    os.chmod(db, 0o600)
    assert nx("peers").code == 6  # read-only: refuses, does not migrate
    assert hook("codex", "SessionStart", sid(9), source="startup").code == 0
    conn = sqlite3.connect(db)
    # the version every open compares with, kept apart from the migrations: their last one
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA == migrations.CURRENT
    assert [r[0] for r in conn.execute("SELECT version FROM migrations ORDER BY version")] == \
        [m[0] for m in migrations.MIGRATIONS]
    assert conn.execute("SELECT text, defer FROM messages WHERE id = 'm-old'").fetchone() == (
        "kept across the upgrade", 0)


def test_a_reusing_store_follows_a_replaced_file_and_still_refuses_a_corrupt_one(home):
    """The MCP server keeps a connection per thread: it must notice the file being replaced,
    and keep checking the file before every use."""
    keeper = Store(str(home), reuse=True)
    with keeper.write() as conn:
        conn.execute("INSERT INTO meta VALUES ('mark', 'old store')")
    db = Path(paths.db_path(str(home)))
    for side in ("-wal", "-shm"):
        Path(str(db) + side).unlink(missing_ok=True)
    db.rename(home / "moved-aside.db")
    Store(str(home)).open_write().close()  # a new store in its place
    with keeper.read() as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'mark'").fetchone() is None
    with keeper.write() as conn:
        conn.execute("INSERT INTO meta VALUES ('mark', 'new store')")
    db.write_bytes(b"garbage" * 100)  # overwritten in place: same inode
    with pytest.raises(Exception) as err, keeper.read():
        pass
    assert "store_unreadable" in str(err.value)


def test_a_write_inside_a_write_is_a_savepoint_of_it(home):
    store = Store(str(home))
    with store.write() as outer:
        outer.execute("INSERT INTO meta VALUES ('a', '1')")
        with pytest.raises(ValueError), store.write() as inner:
            assert inner is outer  # no second connection waiting for our own lock
            inner.execute("INSERT INTO meta VALUES ('b', '2')")
            raise ValueError("rolled back to the savepoint only")
        with store.write() as inner:
            inner.execute("INSERT INTO meta VALUES ('c', '3')")
        with store.read() as seen:  # a read inside the write sees the write's own view
            assert {r[0] for r in seen.execute("SELECT key FROM meta")} >= {"a", "c"}
    with store.read() as conn:
        keys = {r[0] for r in conn.execute("SELECT key FROM meta")}
    assert {"a", "c"} <= keys and "b" not in keys


def test_migration_scripts_are_cut_into_whole_statements_triggers_included():
    script = """
        CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT);
        CREATE TABLE log (n INTEGER);
        CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN
            INSERT INTO log VALUES (new.id);
            INSERT INTO log VALUES (-new.id);
        END;
        CREATE INDEX log_n ON log (n)
    """
    parts = migrations.statements(script)
    assert len(parts) == 4 and parts[2].startswith("CREATE TRIGGER") and parts[2].endswith("END;")
    conn = sqlite3.connect(":memory:")
    for statement in parts:
        conn.execute(statement)
    conn.execute("INSERT INTO docs (body) VALUES ('x')")
    assert sorted(r[0] for r in conn.execute("SELECT n FROM log")) == [-1, 1]


READ_VALUE = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
              "print(c.execute(\"SELECT value FROM meta WHERE key = 'k'\").fetchone()[0]); "
              "c.close()")


def test_a_long_lived_connection_keeps_its_wal_while_other_processes_come_and_go(home):
    """Reading the header with open()/close() while this process held SQLite connections dropped
    SQLite's POSIX locks; another process closing its connection then took itself for the last
    user, checkpointed and deleted the WAL, and this process's later commits were lost."""
    import subprocess
    import sys

    store = Store(str(home), reuse=True)  # like the MCP server: one connection kept per thread
    with store.write() as conn:
        conn.execute("INSERT INTO meta VALUES ('k', '1')")
    for value in ("2", "3", "4"):
        with store.write() as conn:  # every write checks the file again
            conn.execute("UPDATE meta SET value = ? WHERE key = 'k'", (value,))
        seen = subprocess.run([sys.executable, "-c", READ_VALUE, store.path], check=True,
                              capture_output=True, text=True).stdout.strip()
        assert seen == value  # another process sees every commit, and its exit loses none


@pytest.mark.parametrize("name", ["nexus.db", "nexus.db-wal", "nexus.db-shm", "nexus.db-journal"])
def test_a_symlinked_store_file_is_refused_and_nothing_is_created(nx, home, tmp_path, name):
    if name != "nexus.db":
        assert nx("send", "user:someone", "create the store first").code in (0, 3)
    home.mkdir(mode=0o700, exist_ok=True)
    target = tmp_path / "elsewhere" / "stolen.db"
    target.parent.mkdir()
    (home / name).unlink(missing_ok=True)
    (home / name).symlink_to(target)  # dangling: SQLite would create it, 0644, outside
    for args in (("peers",), ("send", "user:x", "hi"), ("whoami",)):
        r = nx(*args, "--json")
        assert r.code == 6 and r.json["error"]["code"] == "store_insecure", (args, r.out)
        assert "symbolic link" in r.json["error"]["reason"]
    assert not target.exists()


def test_a_write_holds_the_lock_for_the_write_alone(home):
    """The caller is resolved from a snapshot before `BEGIN IMMEDIATE` (its lookups are a third
    of a short tool's work); inside the write the lock holder only registers it."""
    from nexus_cli.core.context import Ctx
    from nexus_cli.core.sessions import Caller

    store = Store(str(home))
    make_store(home)
    locked = []

    def resolver(conn, now):
        locked.append(conn.in_transaction and getattr(store._active, "conn", None) is not None)
        return Caller("user:someone", str(home), str(home), "user")

    ctx = Ctx(store, resolver)
    with ctx.write() as conn:
        assert ctx.me(conn, register=True).id == "user:someone"
    assert locked == [False]



def test_waits_work_with_descriptors_past_1023(home):
    """A long-lived process can hold more than 1,024 descriptors: a wake channel (and every
    wait built on wake.ready) uses poll(), never select(), which refuses such numbers."""
    from helpers import descriptors_past

    with descriptors_past():
        store = Store(str(home))
        store.open_write()
        with store.channel(f"claude:{sid(1)}") as channel:
            assert channel.fd > 1023
            assert channel.wait(0.05) is False
            store.poke([f"claude:{sid(1)}"])
            assert channel.wait(5) is True


def test_the_inbox_lookups_of_a_tool_call_use_the_partial_indexes(home):
    """A hook looks for unannounced and unread mail on every tool call with news: those lookups
    go through the partial indexes (unread, unannounced), never through every message the
    session ever received (what SQLite chose without statistics)."""
    from nexus_cli.messages import ANNOUNCEABLE, UNREAD

    db = make_store(home)
    conn = sqlite3.connect(db)
    for where, index in ((ANNOUNCEABLE, "messages_undelivered"), (UNREAD, "messages_unread")):
        plan = " ".join(r[3] for r in conn.execute(
            f"EXPLAIN QUERY PLAN SELECT * FROM messages WHERE recipient = 'x' AND {where}"
            " ORDER BY seq LIMIT 10"))
        assert f"USING INDEX {index} " in plan, plan


def test_no_index_holds_a_column_every_tool_call_rewrites(home):
    """Every hook event and every send rewrites its session's last_active: an index holding it
    would move an entry (and write a page more to the WAL) each time."""
    conn = sqlite3.connect(make_store(home))
    for (index,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'"
                                 " AND tbl_name = 'sessions'").fetchall():
        columns = [r[2] for r in conn.execute(f"PRAGMA index_info({index})")]
        assert "last_active" not in columns, (index, columns)


@pytest.fixture
def statements(monkeypatch) -> list[str]:
    """Every SQL statement the store's connections run from now on, in order."""
    from nexus_cli.core.store import db as dbmod

    seen: list[str] = []
    connect = dbmod.Store._connect

    def traced(self, *a, **k):
        conn = connect(self, *a, **k)
        conn.set_trace_callback(seen.append)
        return conn

    monkeypatch.setattr(dbmod.Store, "_connect", traced)
    return seen


def test_a_send_reads_each_row_once_inside_its_write(hook, home, statements):
    """What a send does while it holds the write lock: its own row looked up and touched, the
    recipient found, the message stored. The recipient's row is read once (routing and its news
    marker use it), and who calls was settled before the lock (a snapshot)."""
    from helpers import ctx_for
    from nexus_cli.catalog import load
    from nexus_cli.core.registry import invoke

    hook("codex", "SessionStart", sid(100), source="startup")
    hook("claude", "SessionStart", sid(1), source="startup")
    load()
    statements.clear()
    ctx = ctx_for(home, {"CLAUDE_CODE_SESSION_ID": sid(1)})
    invoke(load()["send"], ctx, {"target": f"codex:{sid(100)}", "text": "hi"})
    begin = statements.index("BEGIN IMMEDIATE")
    inside = statements[begin + 1:statements.index("COMMIT", begin)]
    inside = [s for s in inside if "maintained_at" not in s]  # upkeep's own question, once a minute
    recipient = [s for s in inside if f"codex:{sid(100)}" in s and s.startswith("SELECT")]
    assert len(recipient) == 1, inside
    assert not any("client_pid =" in s for s in inside), inside  # the caller: before the lock
    assert len(inside) <= 4, inside
    before = [s for s in statements[:begin] if "FROM sessions" in s]
    assert len(before) == 1 and "client_pid =" in before[0], before  # one look finds the caller


def test_a_tool_calls_hook_reads_and_writes_its_session_once(hook, home, statements):
    """A PostToolUse of a known session: one look at its row (admission and the event use it),
    one UPDATE of it (the event's; no separate touch), one read back for the handlers."""
    hook("claude", "SessionStart", sid(1), source="startup")
    statements.clear()
    assert hook("claude", "PostToolUse", sid(1), tool_name="Bash", tool_use_id="t1").code == 0
    mine = [s for s in statements if "FROM sessions" in s or s.startswith("UPDATE sessions")]
    assert [s.split()[0] for s in mine] == ["SELECT", "UPDATE", "SELECT"], mine


def test_a_woken_waiter_answers_on_its_connection_in_one_write(hook, home, fake, monkeypatch):
    """From the poke to the answer, the idle wait opens no connection (a new one reads the
    schema again) and writes once: the wait's end, the announcement's delivery and the turn it
    counts commit together."""
    import threading
    import time

    from nexus_cli.core import sessions
    from nexus_cli.core.store import db as dbmod
    from nexus_cli.hook import waits
    from nexus_cli.messages import mailbox

    hook("claude", "SessionStart", sid(1), source="startup")
    hook("claude", "Stop", sid(1), stop_hook_active=False)
    me = f"claude:{sid(1)}"
    seen: list[tuple[int, str]] = []
    connect = dbmod.Store._connect

    def traced(self, *a, **k):
        conn = connect(self, *a, **k)
        seen.append((threading.get_ident(), "CONNECT"))
        conn.set_trace_callback(lambda sql: seen.append((threading.get_ident(), sql)))
        return conn

    monkeypatch.setattr(dbmod.Store, "_connect", traced)
    store = Store(str(home))
    with store.read() as conn:
        row = sessions.get(conn, me)
    got: list = []

    def wait() -> None:
        fake.parent = fake.client_of(me)  # (this thread's process tree: below its client)
        got.append(waits.idle("claude", me, row, Store(str(home)), {}, {}))

    waiter = threading.Thread(target=wait)
    waiter.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with store.read() as conn:
            if sessions.get(conn, me)["status"] == "listening":
                break
        time.sleep(0.01)
    poked = len(seen)
    with store.write() as conn:
        mailbox.insert(conn, sender=f"codex:{sid(2)}", recipient=me, text="wake up", now=0.0)
    store.poke([me])
    waiter.join(60)
    assert got and got[0][1] == 2 and "wake up" in got[0][2], got
    after = [sql for ident, sql in seen[poked:] if ident == waiter.ident]
    assert "CONNECT" not in after, after
    assert [s for s in after if s.startswith("BEGIN")] == ["BEGIN IMMEDIATE"], after


def test_links_planted_for_the_wake_and_news_folders_are_never_followed(nx, hook, chdir_work,
                                                                         home, tmp_path):
    """A same-user process could plant `wake` or `news` as links to another folder: nexus writes
    into, creates in and deletes from its own folders only (it overwrote a byte of a file there,
    created markers, and swept files whose names ended in `.<number>`)."""
    import subprocess

    from nexus_cli.core.store import wake

    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    dead = subprocess.Popen(["true"])
    dead.wait()
    victim = tmp_path / "victim"
    victim.mkdir()
    files = {f"report.{dead.pid}": "keep", "backup.2024": "keep", "4000000": "keep",
             f"{wake.key(f'codex:{sid(2)}')}.1": "HELLO"}
    for name, text in files.items():
        (victim / name).write_text(text)
    for folder in ("wake", "news"):
        if (home / folder).exists():
            for p in (home / folder).iterdir():
                p.unlink()
            (home / folder).rmdir()
        (home / folder).symlink_to(victim)
    assert nx("send", "codex", "poke", env=A).code == 0
    assert nx("maintenance").code == 0
    assert {p.name: p.read_text() for p in victim.iterdir()} == files
    # in its own folders too, only what nexus makes is touched: FIFOs in wake/, files in news/
    for folder in ("wake", "news"):
        (home / folder).unlink()
        (home / folder).mkdir(mode=0o700)
    planted = home / "wake" / f"{wake.key(f'codex:{sid(2)}')}.{dead.pid}"
    planted.write_text("HELLO")
    (home / "news" / "link").symlink_to(victim / "backup.2024")
    assert nx("send", "codex", "again", env=A).code == 0
    assert nx("maintenance").code == 0
    assert planted.read_text() == "HELLO" and (victim / "backup.2024").read_text() == "keep"


def test_doctor_tells_what_to_do_with_a_store_it_cannot_read(nx, home):
    """Its advice was to run `nexus doctor`, from doctor: now it says how to get going again."""
    db = make_store(home)
    db.write_bytes(b"garbage" * 2000)
    r = nx("doctor", "--json")
    row = next(c for c in r.json["checks"] if c["name"] == "store")
    assert row["status"] == "fail" and "nexus doctor" not in row["fix"]
    assert "mv nexus.db* damaged-" in row["fix"] and f"cd {db.parent} && " in row["fix"]


def test_a_wake_folder_planted_as_a_link_is_the_store_s_error_not_stdout_s(nx, home, tmp_path):
    make_store(home)
    (home / "wake").symlink_to(tmp_path)
    r = nx("watch", "--timeout", "0.5")
    assert r.code == 6 and "store_insecure" in r.err and "wake folder" in r.err, r.err


def test_an_in_list_of_any_length_is_read_a_chunk_at_a_time(home):
    """Lookups by a list of values (transcripts' titles here) bind at most inlist.SIZE at once
    and read every row all the same."""
    from nexus_cli.core.store import inlist
    from nexus_cli.insight import index

    ids = [f"claude:{sid(n)}" for n in range(2 * inlist.SIZE + 7)]
    with Store(str(home)).write() as conn:
        for n, session in enumerate(ids):
            index.set_title(conn, session, f"title {n}", "test", 0.0)
        found = index.titles(conn, [*ids, "claude:unknown"])
    assert sorted(found) == sorted(ids)
    assert [len(part) for part in inlist.chunked(ids)] == [inlist.SIZE, inlist.SIZE, 7]
