"""The stores the tests start from (tests/templates.py) are what the migrations make: a copied
SQLite template and a recycled team schema hold exactly what a store migrated for the test
itself holds, and a changed migration list gets stores of its own."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess

import pytest

import templates
from helpers import A, B, call, sid
from nexus_cli.core.store import db, migrations, paths
from nexus_cli.core.store.db import LocalStore, Store


def sqlite_image(conn: sqlite3.Connection) -> list[str]:
    """Everything a store holds: its header's settings, its schema and every row (the time each
    migration was applied masked: a template's are when it was built)."""
    pragmas = [f"{p}={conn.execute(f'PRAGMA {p}').fetchone()[0]}" for p in (
        "application_id", "user_version", "journal_mode", "page_size", "auto_vacuum",
        "encoding", "freelist_count")]
    rows = [re.sub(r"(INSERT INTO \"migrations\" VALUES\(\d+,'(?:[^']|'')*',)[^)]*\)",
                   r"\1<time>)", line) for line in conn.iterdump()]
    return pragmas + rows


def test_a_copied_sqlite_store_is_what_the_migrations_build(home, tmp_path):
    Store(str(home)).open_write().close()  # made by the conftest's template copy
    migrated = tmp_path / "migrated"
    os.close(os.open(migrated, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    templates.REAL_BUILD(LocalStore(str(tmp_path)), str(migrated))
    copied = sqlite3.connect(paths.db_path(str(home)))
    built = sqlite3.connect(migrated)
    assert sqlite_image(copied) == sqlite_image(built)
    assert len(sqlite_image(built)) > 100  # (a real schema was compared)
    # and what a read sees before any store exists
    empty = LocalStore(str(tmp_path / "none"))._empty()
    assert sqlite_image(empty) == sqlite_image(templates.REAL_EMPTY(LocalStore(str(tmp_path))))


def test_a_changed_migration_list_gets_stores_of_its_own(home, monkeypatch):
    Store(str(tmp_home := home.parent / "before")).open_write().close()  # the template exists
    extra = (migrations.CURRENT + 1, "a migration of this test",
             "CREATE TABLE only_in_this_test (x INTEGER);")
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS, extra))
    monkeypatch.setattr(migrations, "CURRENT", extra[0])
    monkeypatch.setattr(db, "SCHEMA", extra[0])  # what an open compares with
    Store(str(home)).open_write().close()
    conn = sqlite3.connect(paths.db_path(str(home)))
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'only_in_this_test'")\
        .fetchone() is not None
    assert conn.execute("PRAGMA user_version").fetchone()[0] == extra[0]
    assert tmp_home.exists()


@pytest.fixture
def dump(pg_cluster):
    """pg_dump of one schema, its name replaced by SCHEMA."""
    import pgcluster

    def run(name: str) -> str:
        out = subprocess.run([os.path.join(pgcluster.bindir(), "pg_dump"), "--no-owner",
                              "-h", pg_cluster.sock, "-p", str(pg_cluster.port),
                              "-U", pg_cluster.role, "-n", name, pgcluster.DB],
                             capture_output=True, text=True, check=True).stdout
        out = re.sub(r"^\\(un)?restrict \S+$", r"\\\1restrict KEY", out, flags=re.M)  # random
        return re.sub(rf"\b{name}\b", "SCHEMA", out)

    return run


@pytest.mark.parametrize("backend", ["pg"], indirect=True)
def test_a_recycled_team_schema_is_what_the_migrations_make(pg_cluster, pg_schemas, dump,
                                                            hook, nx, chdir_work, home):
    from conftest import new_schema

    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    assert nx("send", "codex", "hello", env=A).code == 0
    assert nx("delegate", "codex", "a job", env=A).code == 0
    assert nx("reserve", "src/a.py", env=B).code == 0
    call(home, "sync_global_doc", {"docId": "notes", "title": "notes",
                                   "content": "words to index"}, env=A)
    used = os.environ["NEXUS_DATABASE_URL"]
    pg_schemas.give_back(used)
    pg_schemas.lent[templates._schema_of(used)] = 0  # (the fixture gives it back once more)
    again = templates._schema_of(pg_schemas.take())
    fresh = templates._schema_of(new_schema(pg_cluster))
    assert again != templates._schema_of(used)  # a new name: nothing cached reaches it
    recycled, migrated = dump(again), dump(fresh)
    assert "CREATE TABLE SCHEMA.messages" in migrated and "COPY SCHEMA.migrations" in migrated
    assert recycled == migrated


@pytest.mark.parametrize("backend", ["pg"], indirect=True)
def test_a_team_schema_that_saw_ddl_is_not_recycled(pg_cluster, pg_schemas):
    import psycopg

    used = os.environ["NEXUS_DATABASE_URL"]
    with psycopg.connect(used, autocommit=True) as conn:
        conn.execute("CREATE TABLE only_in_this_test (x BIGINT)")
    name = templates._schema_of(used)
    pg_schemas.give_back(used)
    pg_schemas.lent[name] = 0  # (the fixture gives it back once more)
    assert not pg_schemas.free
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = %s",
                            (name,)).fetchone()[0] == 0
