"""`nexus team migrate`: everything a user would miss, copied into the team database and back out;
idempotent, resumable after a real kill -9, references intact, row-level security respected."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys

import psycopg
from test_team import schema

from helpers import A_ID, B_ID, A, B, sid, until

# every table of the schema is either copied or named, with its reason, as left behind
COUNTED = ("sessions", "messages", "tasks", "events", "ws_docs", "ws_strategy", "ws_meetings",
           "ws_participants", "ws_chat", "reservations", "insight_titles", "runs", "approvals")


def a_local_store(nx, hook, home) -> dict:
    """A local store with a little of everything a person would miss."""
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    made = {"mid": nx("send", "codex", "from before the team", "--json", env=A).json["message_id"]}
    made["task"] = nx("delegate", "codex", "an old obligation", "--json", env=A).json["id"]
    r = nx("report", made["task"], "--status", "completed", "--result", "done", "--json", env=B)
    assert r.code == 0, r.err
    assert nx("task", "create", "a note to self", "--json", env=A).code == 0
    assert nx("chat", "send", "hello, chat", "--json", env=A).code == 0
    meeting = nx("meeting", "start", "the plan", "--json", env=A)
    assert meeting.code == 0, meeting.err
    made["meeting"] = meeting.json["meetingId"] if "meetingId" in meeting.json else \
        meeting.json["id"]
    assert nx("chat", "send", "in the meeting", "--meeting-id", made["meeting"], "--json",
              env=A).code == 0
    assert nx("chat", "read", "--json", env=B).code == 0  # a read cursor
    assert nx("doc", "sync", "runbook", "Runbook", "restart it", "--json", env=A).code == 0
    assert nx("doc", "set-strategy", "ship it", "--json", env=A).code == 0
    assert nx("reserve", "src/*.py", "--json", env=A).code == 0
    assert nx("rename", "claude", "the planner", "--json", env=A).code == 0
    db = sqlite3.connect(home / "nexus.db")
    with db:  # a run and its approval (headless runs need real clients: the rows as they land)
        db.execute("INSERT INTO runs (id, seq, client, task, cwd, project, launch, dispatcher,"
                   " status, created_at) VALUES ('r-1', 1, 'codex', 'x', '/w', '/w', '{}', ?,"
                   " 'done', 1)", (A_ID,))
        db.execute("INSERT INTO approvals (id, seq, session_id, run_id, tool_name, summary,"
                   " requested_at, deadline) VALUES ('a-1', 1, ?, 'r-1', 'Bash', 'ls', 1, 2)",
                   (A_ID,))
    db.close()
    return made


def counts(conn, tables=COUNTED) -> dict[str, int]:
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_every_table_is_copied_or_left_behind_for_a_reason():
    from nexus_cli.core.store import migrations
    from nexus_cli.team import move

    copied = {t[0] for t in move.TABLES}
    assert not copied & set(move.SKIPPED)
    assert copied | set(move.SKIPPED) == set(migrations.tables())


def test_migrate_copies_everything_in_and_back_out_once(
        nx, hook, chdir_work, pg_cluster, home, tmp_path, monkeypatch):
    made = a_local_store(nx, hook, home)
    local = sqlite3.connect(home / "nexus.db")
    before = counts(local)
    assert all(before.values()), before
    _, url = schema(pg_cluster, migrate=True)
    monkeypatch.setenv("NEXUS_DATABASE_URL", url)
    r = nx("team", "migrate", "--json")
    assert r.code == 0, r.err
    moved = {t["table"]: t for t in r.json["tables"]}
    with psycopg.connect(url, autocommit=True) as conn:
        assert counts(conn) == before
        for t in COUNTED:
            assert moved[t]["copied"] == before[t], t
        # references by id hold: the task's message and report, the approval's run
        assert conn.execute("SELECT count(*) FROM tasks t JOIN messages m ON m.id = t.message_id"
                            " WHERE t.id = %s", (made["task"],)).fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM tasks t JOIN messages m ON"
                            " m.id = t.report_message_id WHERE t.id = %s",
                            (made["task"],)).fetchone()[0] == 1
        assert conn.execute("SELECT r.id FROM approvals a JOIN runs r ON r.id = a.run_id"
                            ).fetchone()[0] == "r-1"
        # a chat read cursor follows its rows' new numbers
        cursors = dict(conn.execute("SELECT stream, seq FROM ws_cursors WHERE reader = %s"
                                    " AND stream != '@announced'", (B_ID,)).fetchall())
        top = conn.execute("SELECT max(seq) FROM ws_chat WHERE meeting IS NULL").fetchone()[0]
        assert top in cursors.values()
    # nexus reads it there as it did here
    assert nx("message", "status", made["mid"], "--json", env=A).code == 0
    assert nx("task", "get", made["task"], "--json", env=A).json["status"] == "completed"
    assert "restart it" in nx("doc", "get", "runbook", "--json", env=A).out
    # twice: nothing copied twice
    again = nx("team", "migrate", "--json").json["tables"]
    assert all(t["copied"] == 0 for t in again), again
    with psycopg.connect(url, autocommit=True) as conn:
        assert counts(conn) == before
    # back out into another machine's empty store, and once more: the same rows, once
    monkeypatch.setenv("NEXUS_HOME", str(tmp_path / "elsewhere"))
    for _ in range(2):
        r = nx("team", "migrate", "--to", "local", "--json")
        assert r.code == 0, r.err
    out = sqlite3.connect(tmp_path / "elsewhere" / "nexus.db")
    assert counts(out) == before
    # and a round trip into the store it came from adds nothing (rows without an id included)
    monkeypatch.setenv("NEXUS_HOME", str(home))
    back = nx("team", "migrate", "--to", "local", "--json").json["tables"]
    assert all(t["copied"] == 0 for t in back), back
    assert counts(local) == before
    monkeypatch.setenv("NEXUS_DATABASE_URL", "")
    assert nx("task", "get", made["task"], "--json", env=A).json["status"] == "completed"


KILLER = """
import os, sys, time
from nexus_cli.team import admin, move
from nexus_cli.cli import main
move.BATCH = 50
admin.people_only = lambda what: None
seen = [0]
real = move._copy_once

def slow(source, dest, table, *a):
    real_write = dest.write
    from contextlib import contextmanager

    @contextmanager
    def write():
        with real_write() as conn:
            yield conn
            if table == "events":
                seen[0] += 1
                if seen[0] == 3:  # inside the third batch's open transaction
                    open(os.environ["READY"], "w").close()
                    time.sleep(600)
    dest.write = write
    try:
        return real(source, dest, table, *a)
    finally:
        dest.write = real_write

move._copy_once = slow
sys.exit(main(["team", "migrate", "--json"]))
"""


def test_a_migration_killed_half_way_is_finished_by_the_next_run(
        nx, hook, chdir_work, pg_cluster, home, tmp_path, monkeypatch):
    a_local_store(nx, hook, home)
    db = sqlite3.connect(home / "nexus.db")
    with db:  # enough activity for several batches
        db.executemany("INSERT INTO events (at, actor, action, target) VALUES (?, ?, 'x', ?)",
                       [(i, A_ID, str(i)) for i in range(400)])
    before = counts(db)
    db.close()
    _, url = schema(pg_cluster, migrate=True)
    ready = tmp_path / "ready"
    env = {**os.environ, "NEXUS_HOME": str(home), "NEXUS_DATABASE_URL": url,
           "READY": str(ready), "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", KILLER], env=env, cwd=chdir_work,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        def reached() -> bool:
            assert child.poll() is None, child.communicate()
            return ready.exists()

        until(reached, 120, "the copy to reach its third batch")
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    with psycopg.connect(url, autocommit=True) as conn:
        half = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        assert 0 < half < before["events"]  # two whole batches, not the third
        assert half % 50 == 0 or half < 100
    monkeypatch.setenv("NEXUS_DATABASE_URL", url)
    r = nx("team", "migrate", "--json")
    assert r.code == 0, r.err
    with psycopg.connect(url, autocommit=True) as conn:
        assert counts(conn) == before  # finished: nothing lost, nothing twice
        assert conn.execute("SELECT count(*) FROM (SELECT target FROM events WHERE action = 'x'"
                            " GROUP BY target HAVING count(*) > 1) d").fetchone()[0] == 0


def test_migrate_respects_row_level_security(nx, hook, chdir_work, pg_cluster, home, tmp_path,
                                             monkeypatch):
    """In: mail bob's role could not have sent is refused, not forced. Out: a role copies only
    its own sessions' data, never another's mail."""
    a_local_store(nx, hook, home)
    name, admin_url = schema(pg_cluster)
    alice, bob = "alice_" + os.urandom(3).hex(), "bob_" + os.urandom(3).hex()
    monkeypatch.setenv("NEXUS_DATABASE_URL", admin_url)
    assert nx("team", "init", alice, bob, "--apply", "--json").code == 0
    # bob holds a session under codex's id first: alice's copy of it is skipped
    as_alice = pg_cluster.url_for(name, user=alice)
    with psycopg.connect(admin_url, autocommit=True) as conn:  # as bob's nexus would
        conn.execute("INSERT INTO sessions (id, client, handle, name, created_at, last_active,"
                     " db_role) VALUES (%s, 'codex', 's-000000020000', 'bobs', 0, 0, %s)",
                     (B_ID, bob))
        conn.execute("INSERT INTO messages (id, sender, recipient, text, created_at) VALUES"
                     " ('m-bob', %s, %s, 'bob to bob', 0)", (B_ID, B_ID))
    monkeypatch.setenv("NEXUS_DATABASE_URL", as_alice)
    r = nx("team", "migrate", "--json")
    assert r.code == 0, r.err
    moved = {t["table"]: t for t in r.json["tables"]}
    assert moved["sessions"]["copied"] == 1 and moved["sessions"]["skipped"] == 1
    assert moved["messages"]["refused"] > 0  # codex's report to claude: sent as bob's session
    assert "refused by row-level security" in nx("team", "migrate").out
    # out, as alice: her session and mail, not bob's session nor his message
    monkeypatch.setenv("NEXUS_HOME", str(tmp_path / "alice-elsewhere"))
    assert nx("team", "migrate", "--to", "local", "--json").code == 0
    out = sqlite3.connect(tmp_path / "alice-elsewhere" / "nexus.db")
    assert [r[0] for r in out.execute("SELECT id FROM sessions")] == [A_ID]
    assert out.execute("SELECT count(*) FROM messages WHERE id = 'm-bob'").fetchone()[0] == 0
    assert out.execute("SELECT count(*) FROM messages").fetchone()[0] > 0


def test_migrate_help_names_what_stays_behind(nx):
    r = nx("team", "migrate", "--help")
    assert r.code == 0 and "tool_uses" in r.out and "--to" in r.out


def test_a_reservation_moved_into_the_team_database_takes_its_clones_scope(tmp_path):
    """A reservation taken on the local store is scoped by its root; moved into the team
    database it takes the project's scope there (the normalised remote), so the other clones'
    edits meet it; moved back out, its root again."""
    from nexus_cli.core import identity
    from nexus_cli.team.move import as_person

    clone = tmp_path / "proj"
    (clone / ".git").mkdir(parents=True)
    (clone / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = git@example.com:team/proj.git\n')
    row = {"id": "r1", "root": str(clone), "scope": str(clone), "pattern": "src/*.py"}
    as_person("reservations", row, None, "team")
    assert row["scope"] == identity.scope_of(str(clone), True) != str(clone)
    as_person("reservations", row, None, "local")
    assert row["scope"] == str(clone)
