"""Team mode: joining a team database, a server that is down, row-level security between two
people's roles, and waking across two homes (two machines' stores) through LISTEN/NOTIFY.
Store- and tool-level behaviour on the team database is checked by running the core suites on
both backends (tests/conftest.py BOTH_BACKENDS)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psycopg
import pytest

from helpers import A_ID, B_ID, A, B, claude_env, sid, until


def schema(cluster, migrate: bool = False) -> tuple[str, str]:
    """A fresh schema (migrated or not): its name and URL."""
    name = "t_" + os.urandom(6).hex()
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    url = cluster.url_for(name)
    if migrate:
        from nexus_cli.core.store import pg

        conn = pg.connect(url, "/nonexistent")
        pg.migrate(conn, 0.0)
        conn.close()
    return name, url



@pytest.fixture(params=["wire", "psycopg"])
def driver(request, monkeypatch):
    """The stdlib client (`pgwire`, what hooks use) and psycopg (libpq, for TLS) alike."""
    monkeypatch.setenv("NEXUS_PG_DRIVER", request.param)
    return request.param


def test_join_status_and_leave(nx, hook, chdir_work, pg_cluster, home, driver):
    assert nx("team", "status", "--json").json["joined"] is False
    name, url = schema(pg_cluster)
    r = nx("team", "join", url, "--json")
    assert r.code == 0, r.err
    assert r.json["server"]["schema_version"] == r.json["server"]["schema_current"]
    assert oct(os.stat(r.json["file"]).st_mode & 0o777) == "0o600"
    from nexus_cli.core.proctable import machine_name
    from nexus_cli.core.store import team

    # the person is the database role the URL connects as (libpq's default: the login)
    assert r.json["person"] == f"user:{team.role(url)}@{machine_name()}"
    assert team.pinned_machine() == machine_name()  # fixed at the first join
    assert oct(os.stat(team.machine_file()).st_mode & 0o777) == "0o600"
    status = nx("team", "status", "--json").json
    assert status["joined"] and status["source"] == "config" and status["reachable"]
    assert status["server"]["schema_name"] == name
    # from now on every command and hook works on the team database
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    mid = nx("send", "codex", "over the wire", "--json", env=A).json["message_id"]
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT text FROM messages WHERE id = %s", (mid,)).fetchone() == (
            "over the wire",)
    assert not (home / "nexus.db").exists()  # nothing went to the local store
    # the environment overrides the stored URL; set but empty: the local store
    assert nx("team", "status", "--json", env={"NEXUS_DATABASE_URL": ""}).json["joined"] is False
    left = nx("team", "leave", "--json").json
    assert left["left"] and not left["still_set"]
    assert nx("team", "status", "--json").json["joined"] is False
    assert nx("read", "--json", env=B).json["count"] == 0  # the local store: not that mail


def test_join_refuses_what_is_not_a_postgresql_url(nx):
    r = nx("team", "join", "http://example.invalid/db")
    assert r.code == 2 and "invalid_argument" in r.err and "Traceback" not in r.err


@pytest.mark.parametrize("url", [
    "garbage", "postgresql:///x?host=/tmp&port=abc", "postgresql:///x?host=/tmp&sslmode=bogus",
    "postgresql://ann:sekret@[::1:1/x", "postgresql://ann:sekret@127.0.0.1:99999/x"])
def test_a_url_postgresql_cannot_use_is_said_as_such_where_it_came_from(nx, home, url):
    """Not "the server is down, retry": the URL is wrong, and where it is set is named; its
    password never shown."""
    r = nx("peers", env={"NEXUS_DATABASE_URL": url})
    assert r.code == 2 and r.err.startswith("nexus: team_url_invalid: NEXUS_DATABASE_URL ("), r.err
    assert "unset it" in r.err and "sekret" not in r.err and "Traceback" not in r.err
    r = nx("team", "join", url, "--json")  # refused before any connection
    not_postgresql = "://" not in url  # refused as an argument; the others as what libpq says
    assert r.code == 2 and r.json["error"]["code"] == (
        "invalid_argument" if not_postgresql else "team_url_invalid"), r.json
    assert "sekret" not in r.out + r.err
    from nexus_cli.core.store import team

    assert not os.path.exists(team.url_file())


def test_a_server_that_is_down_is_a_coded_error_and_hooks_let_their_client_go(
        nx, hook, chdir_work, tmp_path, home):
    down = tmp_path / "no-server"
    down.mkdir()
    env = {"NEXUS_DATABASE_URL": f"postgresql:///nexus?host={down}"}
    r = nx("peers", env=env)
    assert r.code == 6 and "team_unreachable" in r.err and "Traceback" not in r.err
    assert "nexus team status" in r.err  # the next action
    r = nx("send", "codex", "lost?", env={**env, **A})
    assert r.code == 6 and "team_unreachable" in r.err
    started = time.monotonic()
    h = hook("claude", "PostToolUse", sid(1), tool_name="Bash", env=env)
    assert h.code == 0 and h.out == "" and h.err == ""
    assert time.monotonic() - started < 30  # within the hook's budget (connect timeout 2 s)
    log = (home / "team-offline.log").read_text()
    assert "claude hook" in log and "team_unreachable" in log
    status = nx("team", "status", "--json", env=env).json
    assert status["joined"] and status["reachable"] is False
    assert "team_unreachable" in status["error"]


def test_a_server_stopped_mid_run_loses_nothing_and_everything_resumes(
        nx, hook, chdir_work, pg_cluster, monkeypatch):
    """Its own cluster: stopping the shared one would disturb the other tests."""
    import pgcluster

    cluster = pgcluster.start()
    try:
        _, url = schema(cluster, migrate=True)
        monkeypatch.setenv("NEXUS_DATABASE_URL", url)
        hook("claude", "SessionStart", sid(1), source="startup")
        hook("codex", "SessionStart", sid(2), source="startup")
        first = nx("delegate", "codex", "before the outage", "--json", env=A).json["id"]
        cluster.pause()
        r = nx("delegate", "codex", "during the outage", env=A)
        assert r.code == 6 and "team_unreachable" in r.err
        assert hook("codex", "PostToolUse", sid(2), tool_name="Bash").code == 0
        cluster.resume()
        tasks = nx("tasks", "--json", env=A).json["items"]
        assert [t["id"] for t in tasks] == [first]  # nothing half written
        r = nx("report", first, "--status", "completed", "--result", "done", "--json", env=B)
        assert r.code == 0, r.err
        assert nx("task", "get", first, "--json", env=A).json["status"] == "completed"
    finally:
        cluster.stop()


def test_row_level_security_keeps_one_role_out_of_anothers_inbox(
        nx, hook, chdir_work, pg_cluster, monkeypatch, driver):
    name, admin_url = schema(pg_cluster)
    alice, bob = "alice_" + os.urandom(3).hex(), "bob_" + os.urandom(3).hex()
    monkeypatch.setenv("NEXUS_DATABASE_URL", admin_url)
    printed = nx("team", "init", alice, bob).out
    assert "ENABLE ROW LEVEL SECURITY" in printed and f"CREATE ROLE {alice}" in printed
    assert printed.isascii()  # a DBA reviews it: no invisible or bidirectional character
    r = nx("team", "init", alice, bob, "--apply", "--json")
    assert r.code == 0 and r.json["applied"], r.err
    as_alice = pg_cluster.url_for(name, user=alice)
    as_bob = pg_cluster.url_for(name, user=bob)
    # alice's two agents talk through nexus, as her role
    monkeypatch.setenv("NEXUS_DATABASE_URL", as_alice)
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    mid = nx("send", "codex", "for alice's eyes", "--json", env=A).json["message_id"]
    task = nx("delegate", "codex", "alice's task", "--json", env=A).json["id"]
    status = nx("team", "status", "--json").json
    assert status["server"]["role"] == alice and status["server"]["row_security"]
    # bob, with plain SQL on his own role, neither reads nor writes her mail
    with psycopg.connect(as_bob, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0
        for write in ("UPDATE messages SET read_at = 1", "UPDATE messages SET text = 'forged'",
                      "DELETE FROM tasks"):  # members write through nexus's functions only
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(write)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO messages (id, sender, recipient, text, created_at)"
                         " VALUES ('m-forged', %s, %s, 'from alice, honest', 0)", (A_ID, B_ID))
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] >= 2  # presence
        # nor takes her session (and its inbox) over: mail follows db_role, successor and name
        for change in ("db_role = current_user", f"successor = 'codex:{sid(9)}'",
                       "name = 'bobs'", "project = '/elsewhere'"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"UPDATE sessions SET {change} WHERE id = %s", (A_ID,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM sessions WHERE id = %s", (A_ID,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO sessions (id, client, handle, name, cwd, project, status,"
                         " created_at, last_active, db_role) VALUES ('claude:x', 'claude', 's-x',"
                         " 'x', '/', '/', 'idle', 0, 0, %s)", (alice,))
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
    with psycopg.connect(as_alice, autocommit=True) as conn:
        assert conn.execute("SELECT text, read_at FROM messages WHERE id = %s",
                            (mid,)).fetchone() == ("for alice's eyes", None)
        assert conn.execute("SELECT count(*) FROM tasks WHERE id = %s", (task,)).fetchone()[0] == 1
    # and bob's own nexus sees nothing of it either
    monkeypatch.setenv("NEXUS_DATABASE_URL", as_bob)
    assert nx("message", "status", mid, "--json").code == 3


def test_find_shows_no_role_another_roles_mail_even_for_a_forged_caller(
        nx, hook, chdir_work, pg_cluster, monkeypatch):
    """`find` reads direct messages from the messages table itself: row-level security decides
    what it can find, whatever session the query names."""
    from nexus_cli.core.store import pg
    from nexus_cli.workspace import find
    from nexus_cli.workspace.models import FindArgs

    name, admin_url = schema(pg_cluster)
    alice, bob = "alice_" + os.urandom(3).hex(), "bob_" + os.urandom(3).hex()
    monkeypatch.setenv("NEXUS_DATABASE_URL", admin_url)
    assert nx("team", "init", alice, bob, "--apply", "--json").code == 0
    as_alice, as_bob = pg_cluster.url_for(name, user=alice), pg_cluster.url_for(name, user=bob)
    monkeypatch.setenv("NEXUS_DATABASE_URL", as_alice)
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    nx("send", "codex", "the zebra passphrase is 'tiger'", env=A)
    assert nx("doc", "sync", "zoo", "Zoo", "a zebra in the zoo", env=A).code == 0
    mine = nx("find", "zebra", "--json", env=A).json
    assert sorted(h["kind"] for h in mine["hits"]) == ["doc", "message"]
    monkeypatch.setenv("NEXUS_DATABASE_URL", as_bob)
    C = claude_env(sid(3))
    hook("claude", "SessionStart", sid(3), source="startup")
    theirs = nx("find", "zebra", "--json", env=C).json
    assert [h["kind"] for h in theirs["hits"]] == ["doc"]  # the workspace is shared, mail is not

    def forged(url: str) -> list[str]:  # the query as alice's session, on a role's connection
        conn = pg.connect(url, "/nonexistent")
        try:
            with pg._transaction(conn, write=False):
                rows, _ = find._query(conn, "zebra", FindArgs(query="zebra"), A_ID, ())
        finally:
            conn.close()
        return sorted(r["kind"] for r in rows)

    assert forged(as_alice) == ["doc", "message"]
    assert forged(as_bob) == ["doc"]


def test_the_transcript_index_is_each_roles_own(nx, pg_cluster, monkeypatch):
    """insight search's index holds the conversations' text: another role reads none of it and
    adds nothing to it, with plain SQL."""
    name, admin_url = schema(pg_cluster)
    alice, bob = "alice_" + os.urandom(3).hex(), "bob_" + os.urandom(3).hex()
    monkeypatch.setenv("NEXUS_DATABASE_URL", admin_url)
    assert nx("team", "init", alice, bob, "--apply", "--json").code == 0
    with psycopg.connect(admin_url, autocommit=True) as conn:  # as alice's nexus would
        fid = conn.execute("INSERT INTO insight_files (path, session_id, client, indexed_at,"
                           " db_role) VALUES ('/home/alice/t.jsonl', 'claude:x', 'claude', 0, %s)"
                           " RETURNING id", (alice,)).fetchone()[0]
        conn.execute("INSERT INTO insight_chunks (file_id, seq, type, \"offset\", text) VALUES"
                     " (%s, 1, 'user/message', 0, 'my private prompt')", (fid,))
    with psycopg.connect(pg_cluster.url_for(name, user=alice), autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM insight_chunks").fetchone()[0] == 1
    from test_team_members import declared

    plant = declared("INSERT INTO insight_chunks")
    with psycopg.connect(pg_cluster.url_for(name, user=bob), autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM insight_files").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM insight_chunks WHERE text ILIKE '%private%'"
                            ).fetchone()[0] == 0
        for write, params in (
                ("INSERT INTO insight_chunks (file_id, seq, type, \"offset\", text)"
                 " VALUES (%s, 2, 'user/message', 0, 'planted')", (fid,)),
                ("DELETE FROM insight_chunks", ()),  # members write through functions only
                (f"SELECT * FROM {plant}(%s, '2', 'user/message', '0', '0', 'planted')", (fid,))):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):  # nor into her file
                conn.execute(write, params)


FTS_DOCS = ["alpha beta gamma", "Alpha delta", "beta x_y and foo-bar", "naïve café, CRÈME brûlée",
            "über ALLES", "Ωmega test", "don't stop", "mail bob@example.com now",
            "see https://example.com/a/b?c=d", "path /usr/lib/python3.11/site.py", "3.14 and 1e10",
            "snake_case_name v2 0x1F", "日本語 text", "emoji 😀 here", "tabs\tand\nnewlines",
            "100% sure; it's \"quoted\"", "back\\slash", "Gamma ray GAMMA", "alphabet soup"]
FTS_QUERIES = ["alpha", "ALPHA", "alph*", "alpha beta", "alpha OR delta", "alpha NOT beta",
               "(alpha OR beta) gamma", '"alpha beta"', '"beta alpha"', '"alpha b"*', "x_y",
               "foo-bar", '"foo-bar"', "naive", "cafe", "CREME", "brulee", "uber", "ωmega",
               "OMEGA", "don't", '"don\'t"', "bob@example.com", "example", "com", "usr lib",
               "python3", "11", "site.py", "3.14", "14", "1e10", "snake_case", "name", "v2",
               "0x1f", "日本語", "text", "😀", "emoji", "newlines", "100%", "sure", "quoted",
               '"quoted"', "back\\slash", "slash", "gamma", "NEAR(alpha beta)", "title:alpha",
               "^alpha", "alpha + beta", "alpha AND", "NOT alpha", "(alpha", "***", '"', "%",
               "_", "a%b", "'", "alpha*beta", "a OR b AND c", "soup alphabet*"]


def test_find_matches_on_postgresql_what_fts5_matches(pg_cluster, home):
    """The same documents in a local store (FTS5) and a team database (tsvector): every query
    finds the same documents, counts the same total, or fails with the same error code."""
    from nexus_cli.core.errors import NexusError
    from nexus_cli.core.store import pg
    from nexus_cli.core.store.db import Store
    from nexus_cli.workspace import find
    from nexus_cli.workspace.models import FindArgs

    rows = [(f"d{n}", f"Doc {n}", text) for n, text in enumerate(FTS_DOCS)]
    insert = ("INSERT INTO ws_docs (id, title, content, updated_by, updated_at)"
              " VALUES (?, ?, ?, 'test', 0)")
    with Store().write() as conn:
        conn.executemany(insert, rows)
    _, url = schema(pg_cluster, migrate=True)
    team = pg.connect(url, "/nonexistent")
    with pg._transaction(team, write=True):
        team.executemany(insert, rows)

    def answer(conn, query: str) -> object:  # type: ignore[no-untyped-def]
        try:
            hits, total = find.search(conn, FindArgs(query=query, limit=100), "nobody")
        except NexusError as exc:
            return exc.code
        return sorted(h["ref"] for h in hits), total

    try:
        with Store().read() as local, pg._transaction(team, write=False):
            for query in FTS_QUERIES:
                expected = answer(local, query)
                if query in ("NEAR(alpha beta)", "title:alpha", "^alpha", "alpha + beta"):
                    continue  # FTS5 syntax team mode takes as plain words (docs/team.md)
                assert answer(team, query) == expected, query
    finally:
        team.close()


def test_an_ask_wakes_across_two_homes(nx, hook, chdir_work, pg_cluster, tmp_path, monkeypatch):
    """Two machines' stores (two NEXUS_HOMEs) on one team database: the asker waits on LISTEN
    in its own process; the reply from the other home wakes it through NOTIFY."""
    _, url = schema(pg_cluster, migrate=True)
    monkeypatch.setenv("NEXUS_DATABASE_URL", url)
    hook("codex", "SessionStart", sid(2), source="startup")
    other = tmp_path / "laptop-home"
    env = {"PATH": os.environ["PATH"], "NEXUS_HOME": str(other), "NEXUS_DATABASE_URL": url,
           "PYTHONPATH": os.pathsep.join(sys.path), "NEXUS_MACHINE_ID": "laptop-machine-id"}
    asker = subprocess.Popen([sys.executable, "-m", "nexus_cli", "ask", B_ID, "ready?",
                              "--all-workspaces", "--timeout", "120", "--json"],
                             env=env, cwd=chdir_work, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        got = until(lambda: nx("read", "--json", env=B).json["messages"], 60,
                    "the question to arrive")
        nx("reply", got[0]["message_id"], "yes", env=B)
        out, err = asker.communicate(timeout=120)
    finally:
        if asker.poll() is None:
            asker.kill()
    import json

    answer = json.loads(out)
    assert asker.returncode == 0 and answer["answered"], err
    assert answer["reply"]["text"] == "yes"
    assert answer["waited_seconds"] < 60  # woken, not timed out


def test_every_text_column_compares_bytes_as_sqlite_does(nx, pg_cluster, monkeypatch):
    """Whatever the database's collation (the test cluster's ignores punctuation first): the
    same order and equality as the local store, and no collation library loaded per connection.
    Row-level security's own column (`team init`) included."""
    name, url = schema(pg_cluster, migrate=True)
    monkeypatch.setenv("NEXUS_DATABASE_URL", url)
    assert nx("team", "init", "ann_" + os.urandom(3).hex(), "--apply").code == 0
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        assert conn.execute("SELECT datlocprovider FROM pg_database WHERE datname ="
                            " current_database()").fetchone()[0] == "i"  # ICU, not bytes
        columns = conn.execute(
            "SELECT table_name, column_name, collation_name FROM information_schema.columns"
            " WHERE table_schema = %s AND data_type = 'text' AND table_name != 'migrations'",
            (name,)).fetchall()
    assert len(columns) > 100
    assert [c for c in columns if c[2] != "C"] == []


def test_doctor_checks_the_team_database(nx, pg_cluster, monkeypatch):
    _, url = schema(pg_cluster, migrate=True)
    monkeypatch.setenv("NEXUS_DATABASE_URL", url)
    checks = {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}
    assert checks["team database"]["status"] == "ok" and "PostgreSQL" in checks["team database"][
        "detail"]
    assert checks["schema"]["status"] == "ok"
    assert "latency" in checks and "tls" in checks
    assert checks["role rights"]["status"] == "warn"  # no row-level security on this one
    assert "team init" in checks["role rights"]["fix"]
    monkeypatch.setenv("NEXUS_DATABASE_URL", "postgresql:///nexus?host=/nonexistent")
    checks = {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}
    assert checks["team database"]["status"] == "fail"
    assert "team_unreachable" in checks["team database"]["detail"]


def test_team_results_match_their_schemas(nx, pg_cluster):
    from schemas import validate

    _, url = schema(pg_cluster)
    r = nx("team", "join", url, "--json")
    validate("team_join", r.json)
    validate("team_status", nx("team", "status", "--json").json)
    validate("team_migrate", nx("team", "migrate", "--json").json)


def test_another_machines_pids_are_never_judged_here(nx, hook, chdir_work, home):
    """A session of another machine (team mode) is believed as it recorded itself: its waiter's
    pid is not looked up in this machine's process table, nor cleared by maintenance here."""
    from helpers import raw_db
    from nexus_cli.core.proctable import machine

    hook("codex", "SessionStart", sid(2), source="startup")
    hook("claude", "SessionStart", sid(1), source="startup")
    conn = raw_db(home)
    assert conn.execute("SELECT machine FROM sessions WHERE id = ?", (B_ID,)).fetchone()[0] == \
        machine()
    for where, sid_ in (("laptop/0123456789ab", B_ID), (machine(), A_ID)):
        conn.execute("UPDATE sessions SET status = 'listening', waiter_pid = 999999,"
                     " machine = ? WHERE id = ?", (where, sid_))
    conn.commit()
    nx("maintenance")
    peers = {p["id"]: p["status"] for p in nx("peers", "--json", env={}).json["items"]}
    assert peers[B_ID] == "listening"  # another machine's waiter: not ours to judge
    assert peers.get(A_ID, "idle") == "idle"  # this machine's dead waiter: cleared


def test_the_wire_client_serves_only_what_it_serves_exactly():
    from nexus_cli.core.store import pgwire

    p = pgwire.params("postgresql://ann:pw@/team?host=/run/pg&options=-cx%3D1")
    assert p is not None and (p["host"], p["user"], p["password"], p["dbname"], p["options"]) == (
        "/run/pg", "ann", "pw", "team", "-cx=1")
    assert pgwire.params("postgresql://ann@localhost:5433/team")["port"] == "5433"
    # over the network TLS as libpq sets it up (tests/test_pgwire.py); what libpq alone does
    # (a CRL, channel_binding=require ...) is libpq's job (psycopg)
    assert pgwire.params("postgresql://ann@db.example/team") is not None
    assert pgwire.params("postgresql://ann@db.example/team?sslmode=require") is not None
    assert pgwire.params("postgresql://ann@db.example/team?sslmode=disable") is not None
    assert pgwire.params("postgresql://ann@db.example/team?sslcrl=/r.crl") is None
    assert pgwire.params("postgresql://ann@db.example/team?channel_binding=require") is None
    assert pgwire.params("postgresql://ann@/team?service=x") is None


@pytest.mark.parametrize("method", ["scram", "md5"])
def test_password_authentication_and_a_wrong_password(nx, pg_cluster, monkeypatch, method):
    """The stdlib client speaks SCRAM-SHA-256 and MD5; a wrong password is a coded error."""
    role = {"scram": "nexus_pw", "md5": "nexus_md5"}[method]
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(f"SET password_encryption = '{'md5' if method == 'md5' else 'scram-sha-256'}'")
        conn.execute(f"DROP ROLE IF EXISTS {role}")
        conn.execute(f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD 's3:cr@t'")
    name, _ = schema(pg_cluster, migrate=True)
    url = (f"postgresql://{role}:s3%3Acr%40t@/nexus?host={pg_cluster.sock}"
           f"&options=-csearch_path%3D{name}")
    monkeypatch.setenv("NEXUS_PG_DRIVER", "wire")
    monkeypatch.setenv("NEXUS_DATABASE_URL", url)
    status = nx("team", "status", "--json").json
    assert status["reachable"] and status["server"]["role"] == role, status
    # the password never shown (not "s3": a random folder name in the URL held it once)
    assert "cr@t" not in status["url"] and "cr%40t" not in status["url"]
    monkeypatch.setenv("NEXUS_DATABASE_URL", url.replace("s3%3Acr%40t", "wrong"))
    r = nx("peers")  # the login, not the server: fix the password, not "retry later"
    assert r.code == 5 and "team_auth_failed" in r.err and "Traceback" not in r.err
    assert "PGPASSWORD" in r.err and "wrong" not in r.err


def test_migrate_copies_a_local_store_in_and_back_out_idempotently(
        nx, hook, chdir_work, pg_cluster, home, tmp_path, monkeypatch, pair):
    mid = nx("send", "codex", "from before the team", "--json", env=A).json["message_id"]
    task = nx("delegate", "codex", "an old obligation", "--json", env=A).json["id"]
    from nexus_cli.core import identity

    local_me = identity.user_id()
    assert nx("send", A_ID, "the person was here").code == 0  # registers user:<login>
    nx("send", local_me, "mail for the person", env=A)
    _, url = schema(pg_cluster, migrate=True)
    monkeypatch.setenv("NEXUS_DATABASE_URL", url)
    team_me = identity.user_id()
    assert team_me != local_me and team_me.startswith(f"user:{pg_cluster.role}@")
    moved = {t["table"]: t for t in nx("team", "migrate", "--json").json["tables"]}
    assert moved["sessions"]["copied"] == 3 and moved["tasks"]["copied"] == 1
    assert moved["messages"]["copied"] == 4  # two messages, the task's, the person's two
    again = {t["table"]: t for t in nx("team", "migrate", "--json").json["tables"]}
    assert all(t["copied"] == 0 for t in again.values())  # idempotent: a rerun resumes
    assert again["messages"]["skipped"] == 4
    # the team database now holds the mail and the obligation, as nexus reads them
    got = nx("read", "--json", env=B).json["messages"]
    assert {m["message_id"] for m in got} >= {mid}
    assert nx("tasks", "--json", env=A).json["items"][0]["id"] == task
    # the person's mail followed the person to its team id (user:<login>@<machine>)
    me = nx("whoami", "--json").json
    assert me["id"] == team_me and me["registered"] and me["handle"] == "u-" + team_me[5:]
    assert [m["text"] for m in nx("read", "--json").json["messages"]] == ["mail for the person"]
    # and back out, into another machine's empty local store
    monkeypatch.setenv("NEXUS_HOME", str(tmp_path / "elsewhere"))
    back = {t["table"]: t for t in nx("team", "migrate", "--to", "local", "--json").json["tables"]}
    assert back["sessions"]["copied"] == 3 and back["tasks"]["copied"] == 1
    monkeypatch.setenv("NEXUS_DATABASE_URL", "")
    assert nx("task", "get", task, "--json", env=A).json["id"] == task
    assert nx("whoami", "--json").json["id"] == local_me
    sent = [m for m in nx("read", "--json", env=A).json["messages"]
            if m["text"] == "the person was here"]
    assert sent and sent[0]["from"]["id"] == local_me


def test_in_team_mode_every_edit_reaches_the_reservation_check(hook, chdir_work, pg_cluster,
                                                               home, monkeypatch):
    """A reservation made on another machine cannot raise this machine's marker: in team mode
    the marker stays raised, so the installed edit hook always asks nexus."""
    from nexus_cli.core.store.db import Store
    from nexus_cli.reservations import marker

    _, url = schema(pg_cluster, migrate=True)
    monkeypatch.setenv("NEXUS_DATABASE_URL", url)
    hook("claude", "SessionStart", sid(1), source="startup")
    assert marker.raised(str(home))
    assert marker.settle(Store(), time.time()) is False and marker.raised(str(home))


def test_an_agent_may_not_switch_the_store(nx, hook, chdir_work, pg_cluster):
    hook("claude", "SessionStart", sid(1), source="startup")
    _, url = schema(pg_cluster, migrate=True)
    for args in (("team", "join", url), ("team", "leave"), ("team", "migrate"),
                 ("team", "init", "--apply")):
        r = nx(*args, env=A)
        assert r.code == 5 and "people_only" in r.err, (args, r.err)
    assert nx("team", "status", "--json", env=A).json["joined"] is False  # looking is fine


def test_one_login_on_two_machines_is_two_people_each_behind_its_own_role(
        nx, hook, chdir_work, pg_cluster, monkeypatch, tmp_path):
    """The person is user:<role>@<machine> in team mode: the same login on alice's laptop (her
    role) and bob's devbox (his role) is two participants with two inboxes, and row-level
    security keeps each out of the other's; a team name is the role's own, another role's
    refused."""
    from nexus_cli.core import identity, proctable

    name, admin_url = schema(pg_cluster)
    alice, bob = "alice_" + os.urandom(3).hex(), "bob_" + os.urandom(3).hex()
    monkeypatch.setenv("NEXUS_DATABASE_URL", admin_url)
    assert nx("team", "init", alice, bob, "--apply", "--json").code == 0
    as_alice = pg_cluster.url_for(name, user=alice)
    as_bob = pg_cluster.url_for(name, user=bob)

    def at(machine: str, url: str) -> str:  # each machine has its own home
        monkeypatch.setenv("NEXUS_HOME", str(tmp_path / f"{machine}-home"))
        monkeypatch.setattr(proctable, "_PARTS", [(machine, machine + "0123456789")])
        monkeypatch.setattr(proctable, "_MACHINE", [])
        monkeypatch.setenv("NEXUS_DATABASE_URL", url)
        return identity.user_id()

    pa = at("laptop", as_alice)
    hook("claude", "SessionStart", sid(1), source="startup")  # alice's agent, on her laptop
    assert nx("send", A_ID, "alice is here").code == 0  # the person registers by writing
    mid = nx("send", pa, "for alice at her laptop", "--json", env=A).json["message_id"]
    pb = at("devbox", as_bob)
    assert pa == f"user:{alice}@laptop-laptop" and pb == f"user:{bob}@devbox-devbox"
    assert nx("whoami", "--json").json["id"] == pb
    assert nx("read", "--json").json["messages"] == []  # not alice's mail
    assert nx("message", "status", mid, "--json").code == 3
    assert nx("send", A_ID, "bob is here too").code == 0  # his own row, as his role
    with psycopg.connect(as_bob, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM messages WHERE recipient = %s",
                            (pa,)).fetchone()[0] == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE sessions SET name = 'mine' WHERE id = %s", (pa,))
        roles = dict(conn.execute("SELECT id, db_role FROM sessions WHERE id IN (%s, %s)",
                                  (pa, pb)).fetchall())
    assert roles == {pa: alice, pb: bob}
    at("laptop", as_alice)
    assert [m["text"] for m in nx("read", "--json").json["messages"]] == [
        "for alice at her laptop"]
    # a team name: user:NAME on every machine of hers, NAME her role's; no other name
    r = nx("team", "join", as_alice, "--name", "alice-w")
    assert r.code == 4 and "name_taken" in r.err and f"--name {alice}" in r.err, r.err
    r = nx("team", "join", as_alice, "--name", alice, "--json")
    assert r.code == 0 and r.json["person"] == f"user:{alice}", r.err
    assert identity.user_id() == f"user:{alice}"
    assert nx("send", A_ID, "alice, by her team name").code == 0
    assert nx("team", "leave", "--json").json["left"]
    assert identity.user_id() == pa  # the team name went with the team
    at("devbox", as_bob)
    r = nx("team", "join", as_bob, "--name", alice)
    assert r.code != 0 and "name_taken" in r.err and "Traceback" not in r.err
    assert identity.user_id() == pb  # nothing was kept
    r = nx("team", "join", as_bob, "--name", "u-alice")  # would read as a person's handle
    assert r.code == 2 and "s- or u-" in r.err and identity.user_id() == pb


def test_a_transaction_begins_with_its_first_statement_and_an_empty_one_sends_nothing(
        pg_cluster, home, monkeypatch):
    """With the wire client, BEGIN and the writers' lock travel with a transaction's first
    statement: a one-statement write is two round trips (statement, COMMIT), not three."""
    from nexus_cli.core.store import pgwire
    from nexus_cli.core.store.pg import PgStore

    monkeypatch.setenv("NEXUS_PG_DRIVER", "wire")
    store = PgStore(schema(pg_cluster, migrate=True)[1], str(home))
    with store.read() as conn:  # both connections open
        conn.execute("SELECT 1")
    store.open_write()
    sent: list[bytes] = []
    real = pgwire.Wire._send
    monkeypatch.setattr(pgwire.Wire, "_send", lambda self, data: (sent.append(data),
                                                                  real(self, data))[1])
    with store.write() as conn:
        conn.execute("INSERT INTO meta (key, value) VALUES ('k', 'v')")
    assert len(sent) == 2 and b"pg_advisory_xact_lock" in sent[0], sent
    sent.clear()
    with store.write():
        pass
    with store.read():
        pass
    assert sent == []
    with store.read() as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'k'").fetchone()[0] == "v"


def test_a_writers_lock_held_elsewhere_is_store_busy_and_the_connection_stays_in_step(
        pg_cluster, home, monkeypatch):
    """The lock's wait fails inside the round trip of the first statement: the error is the
    lock's (store_busy), nothing is written, and the connection answers the next write."""
    from nexus_cli.core.errors import NexusError
    from nexus_cli.core.store import pg
    from nexus_cli.core.store.pg import PgStore

    monkeypatch.setenv("NEXUS_PG_DRIVER", "wire")
    url = schema(pg_cluster, migrate=True)[1]
    store = PgStore(url, str(home))
    store.open_write().raw.execute("SET lock_timeout = 300")
    holder = psycopg.connect(url, autocommit=True)  # another writer, in its transaction
    try:
        holder.execute("BEGIN")
        holder.execute(pg.LOCK)
        with pytest.raises(NexusError) as err, store.write() as conn:
            conn.execute("INSERT INTO meta (key, value) VALUES ('busy', 'x')")
        assert err.value.code == "store_busy", err.value
        holder.execute("ROLLBACK")
    finally:
        holder.close()
    with store.write() as conn:
        conn.execute("INSERT INTO meta (key, value) VALUES ('after', 'y')")
    with store.read() as conn:
        assert [r[0] for r in conn.execute("SELECT key FROM meta WHERE key IN ('busy', 'after')"
                                           ).fetchall()] == ["after"]


def test_a_write_nobody_reads_travels_with_the_next_statement_and_its_error_fails_the_write(
        pg_cluster, home, monkeypatch):
    """store.db.later on the team database: the statement is sent with the next one (a read
    after it sees it), an error it meets fails the transaction (nothing of it committed, the
    connection in step), and outside a transaction it runs at once."""
    from nexus_cli.core.errors import NexusError
    from nexus_cli.core.store import pgwire
    from nexus_cli.core.store.db import later
    from nexus_cli.core.store.pg import PgStore

    monkeypatch.setenv("NEXUS_PG_DRIVER", "wire")
    store = PgStore(schema(pg_cluster, migrate=True)[1], str(home))
    sent: list[bytes] = []
    real = pgwire.Wire._send
    monkeypatch.setattr(pgwire.Wire, "_send", lambda self, data: (sent.append(data),
                                                                  real(self, data))[1])
    store.open_write()
    sent.clear()
    with store.write() as conn:
        later(conn, "INSERT INTO meta (key, value) VALUES ('a', '1')")
        later(conn, "INSERT INTO meta (key, value) VALUES ('b', '2')")
        assert sent == []
        assert conn.execute("SELECT count(*) FROM meta WHERE key IN ('a', 'b')"
                            ).fetchone()[0] == 2
    assert len(sent) == 2, sent  # the read (with BEGIN and both writes), then COMMIT
    sent.clear()
    with store.write() as conn:
        later(conn, "INSERT INTO meta (key, value) VALUES ('c', '3')")
    assert len(sent) == 1  # BEGIN, the write and COMMIT in one round trip
    with pytest.raises(NexusError) as err, store.write() as conn:
        later(conn, "INSERT INTO meta (key, value) VALUES ('d', '4')")
        later(conn, "INSERT INTO meta (key, value) VALUES ('a', 'again')")  # the key is taken
    assert err.value.code == "internal_error" and "duplicate" in err.value.reason
    with store.snapshot() as conn:  # outside a transaction: at once
        later(conn, "INSERT INTO meta (key, value) VALUES ('e', '5')")
    with store.read() as conn:
        keys = [r[0] for r in conn.execute("SELECT key FROM meta WHERE key IN"
                                           " ('a', 'b', 'c', 'd', 'e') ORDER BY key").fetchall()]
    assert keys == ["a", "b", "c", "e"]
