"""New stores for the tests, made by the migrations once and then copied (most of a short test's
time went into migrating a store of its own).

- SQLite: the first store a test worker needs is built by the real `Store._build` (every
  migration, in order) into a template file; every later new store is a copy of that file, and a
  read before any store exists reads an in-memory copy of the store `Store._empty` builds. The
  templates are kept by the content of the migration list: a test that changes the list gets
  stores built from its list.
- PostgreSQL: a schema made by `conftest.new_schema` (the migrations) goes, after its test, back
  to a pool, emptied back to the rows the migrations left and renamed (a new name: nothing a
  process cached about the old one, nor a process of the old test still running, reaches it),
  unless anyone ran DDL in the database meanwhile (an event trigger counts every DDL command),
  which no emptying could undo: such a schema is dropped.

tests/test_templates.py proves both equal what the migrations make (the files' dumps; pg_dump of
the schemas)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

from nexus_cli.core.store import APPLICATION_ID, migrations
from nexus_cli.core.store.db import LocalStore, Store

REAL_BUILD: Callable[[Store, str], None] = Store._build
REAL_EMPTY: Callable[[Store], sqlite3.Connection] = Store._empty


def sqlite_key() -> str:
    """What a new SQLite store is made from: the migration list and the SQLite library."""
    text = repr((APPLICATION_ID, migrations.MIGRATIONS, sqlite3.sqlite_version))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class SqliteTemplates:
    """Template stores in `folder`, one per migration list (a file and an in-memory image)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.images: dict[str, bytes] = {}

    def file(self) -> str:
        path = self.folder / f"{sqlite_key()}.db"
        if not path.exists():
            partial = path.with_suffix(".partial")
            os.close(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            REAL_BUILD(LocalStore(str(self.folder)), str(partial))
            partial.rename(path)
        return str(path)

    def image(self) -> bytes:
        key = sqlite_key()
        if key not in self.images:
            conn = REAL_EMPTY(LocalStore(str(self.folder)))
            try:
                self.images[key] = conn.serialize()
            finally:
                conn.close()
        return self.images[key]

    def install(self, monkeypatch) -> None:  # type: ignore[no-untyped-def]
        """New stores of this test are copies (the rest of `Store._create` runs as it is)."""
        templates = self

        def build(store: Store, tmp: str) -> None:
            shutil.copyfile(templates.file(), tmp)

        def empty(store: Store) -> sqlite3.Connection:
            conn = store._connect(":memory:")
            conn.deserialize(templates.image())
            return conn

        monkeypatch.setattr(Store, "_build", build)
        monkeypatch.setattr(Store, "_empty", empty)


# -- PostgreSQL ---------------------------------------------------------------------------------

DDL_COUNTER = "public.nexus_tests_ddl"
COUNT_DDL = f"""
CREATE SEQUENCE IF NOT EXISTS {DDL_COUNTER};
CREATE OR REPLACE FUNCTION public.nexus_tests_ddl_seen() RETURNS event_trigger
    LANGUAGE plpgsql SECURITY DEFINER AS $$ BEGIN PERFORM nextval('{DDL_COUNTER}'); END $$;
DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_event_trigger WHERE evtname = 'nexus_tests_ddl') THEN
        CREATE EVENT TRIGGER nexus_tests_ddl ON ddl_command_end
            EXECUTE FUNCTION public.nexus_tests_ddl_seen();
        ALTER EVENT TRIGGER nexus_tests_ddl ENABLE ALWAYS;
        CREATE EVENT TRIGGER nexus_tests_drop ON sql_drop
            EXECUTE FUNCTION public.nexus_tests_ddl_seen();
        ALTER EVENT TRIGGER nexus_tests_drop ENABLE ALWAYS;
    END IF;
END $$;
"""


class PgSchemas:
    """Migrated schemas of one cluster, handed from test to test (see the module's text)."""

    def __init__(self, cluster, make: Callable[[object], str]) -> None:  # type: ignore[no-untyped-def]
        self.cluster = cluster
        self.make = make  # conftest.new_schema: a new, migrated schema's URL
        self.free: list[str] = []  # schema names ready for a test
        self.lent: dict[str, int] = {}  # schema name -> the DDL count when it was lent
        self.tables: list[str] = []
        self.sequences: list[tuple[str, int]] = []  # (name, start value)
        self.rows: list[str] = []  # what re-inserts the migrations' own rows
        self._admin = None

    def admin(self):  # type: ignore[no-untyped-def]
        import psycopg

        if self._admin is None or self._admin.closed:
            self._admin = psycopg.connect(self.cluster.url, autocommit=True)
            self._admin.execute(COUNT_DDL)
        return self._admin

    def ddl_count(self) -> int:
        return self.admin().execute(f"SELECT last_value + (CASE WHEN is_called THEN 1 ELSE 0 END)"
                                    f" FROM {DDL_COUNTER}").fetchone()[0]

    def take(self) -> str:
        """A schema as the migrations leave it: its URL."""
        if self.free:
            name = self.free.pop()
        else:
            self.admin()  # the DDL counter exists before the first schema
            name = _schema_of(self.make(self.cluster))
            if not self.tables:
                self._learn(name)
        self.lent[name] = self.ddl_count()
        return self.cluster.url_for(name)

    def _learn(self, name: str) -> None:
        """The shape of a fresh schema: its tables, its sequences, the rows the migrations
        wrote (their order by the first column, enough for the few rows there are)."""
        from psycopg import sql

        conn = self.admin()
        self.tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY 1", (name,))]
        self.sequences = [(r[0], r[1]) for r in conn.execute(
            "SELECT sequencename, start_value FROM pg_sequences WHERE schemaname = %s"
            " ORDER BY 1", (name,))]
        for table in self.tables:
            ident = sql.Identifier(name, table)
            for row in conn.execute(sql.SQL("SELECT * FROM {} ORDER BY 1").format(ident)):
                self.rows.append(sql.SQL("INSERT INTO {} VALUES ({})").format(
                    sql.Identifier(table), sql.SQL(", ").join(map(sql.Literal, row)))
                    .as_string(conn))

    def give_back(self, url: str) -> None:
        """After the test: empty the schema for the next one, or drop it if anyone ran DDL."""
        from psycopg import sql

        name = _schema_of(url)
        lent = self.lent.pop(name, None)
        try:
            conn = self.admin()
            if lent is None or self.ddl_count() != lent:
                conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                    sql.Identifier(name)))
                return
            fresh = "t_" + os.urandom(6).hex()
            reset = [
                "SET LOCAL lock_timeout = '2s'",
                # neither triggers nor foreign keys at work while emptying (superuser only)
                "SET LOCAL session_replication_role = replica",
                sql.SQL("SET LOCAL search_path = {}").format(sql.Identifier(name))
                .as_string(conn),
                *(sql.SQL("DELETE FROM {}").format(sql.Identifier(t)).as_string(conn)
                  for t in self.tables),
                *self.rows,
                *(sql.SQL("SELECT setval({}, {}, false)")
                  .format(sql.Literal(seq), sql.Literal(start)).as_string(conn)
                  for seq, start in self.sequences),
                sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(
                    sql.Identifier(name), sql.Identifier(fresh)).as_string(conn),
            ]
            with conn.transaction():
                conn.execute(";\n".join(reset))  # type: ignore[arg-type]
            self.free.append(fresh)
        except Exception:  # the server went away, a lock stayed held: the schema is not reused
            if self._admin is not None:
                self._admin.close()

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()


def _schema_of(url: str) -> str:
    return url.rsplit("search_path%3D", 1)[1].split("&", 1)[0]
