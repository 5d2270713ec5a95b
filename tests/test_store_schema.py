"""One schema, two engines, and SQL both read: the team database's DDL is written out per migration
(core/store/pgschema.py) and must make the same tables and columns as SQLite's migrations; the
store layer changes nothing in a statement but its placeholders (a tokenizer that steps over
literals); and the features' SQL holds none of SQLite's own dialect."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from helpers import string_literals
from nexus_cli.core.store import migrations, pg, pgschema, sqltext

PACKAGE = Path(__file__).resolve().parents[1] / "nexus_cli"


@pytest.mark.parametrize("sql,text,names", [
    ("SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = $1 AND b = $2", None),
    ("SELECT ?1 OR id = ?1 OR x = ?2", "SELECT $1 OR id = $1 OR x = $2", None),
    ("SELECT :a, :b, :a", "SELECT $1, $2, $1", ("a", "b")),
    # what looks like a placeholder or a keyword inside a literal, a quoted name or a comment
    ("SELECT 'looks LIKE rowid AND 1 ? :x' FROM t WHERE k = ?",
     "SELECT 'looks LIKE rowid AND 1 ? :x' FROM t WHERE k = $1", None),
    ("SELECT 'it''s ?', \"odd ? name\" FROM t -- a ? here\nWHERE k = ?",
     "SELECT 'it''s ?', \"odd ? name\" FROM t -- a ? here\nWHERE k = $1", None),
    ("SELECT /* :skip ? */ :k, x::text, $q$ ? :n $q$",
     "SELECT /* :skip ? */ $1, x::text, $q$ ? :n $q$", ("k",)),
    ("SELECT 100 % 7, '%s', '%(x)s' WHERE a = ?", "SELECT 100 % 7, '%s', '%(x)s' WHERE a = $1",
     None),
])
def test_placeholders_change_nothing_else(sql, text, names):
    assert sqltext.placeholders(sql) == (text, names)


def test_values_follow_their_placeholders():
    assert sqltext.bound("SELECT :b, :a, :b", {"a": 1, "b": True, "unused": 3}) == (
        "SELECT $1, $2, $1", [1, 1])
    assert sqltext.bound("SELECT ?", (False,)) == ("SELECT $1", [0])
    assert sqltext.bound("SELECT 1; SELECT 2", ()) == ("SELECT 1; SELECT 2", None)


def test_a_literal_that_looks_like_sql_reaches_the_team_database_unchanged(pg_cluster):
    from conftest import new_schema

    conn = pg.connect(new_schema(pg_cluster), "/nonexistent")
    try:
        text = "looks LIKE rowid AND 1 ? :x %s INSERT OR IGNORE"
        conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)", ("odd", text))
        assert conn.execute("SELECT value FROM meta WHERE key = 'odd' AND value = ?",
                            (text,)).fetchone()[0] == text
    finally:
        conn.close()


def test_every_migration_has_its_postgresql_statements():
    assert sorted(pgschema.DDL) == [number for number, _, _ in migrations.MIGRATIONS]


PG_TYPES = {"TEXT": "text", "INTEGER": "bigint", "REAL": "double precision", "BLOB": "bytea"}
SQLITE_ONLY = {"ws_fts", "insight_fts"}  # full-text tables: team mode has fulltext.py's instead
PG_ONLY = {"ws_words"}


def test_both_engines_make_the_same_tables_and_columns(pg_cluster):
    """Column by column, in order, the type each engine gives it; every text column of the team
    database compares bytes (COLLATE "C"), as SQLite's do."""
    import sqlite3

    from conftest import new_schema

    lite = sqlite3.connect(":memory:")
    migrations.apply(lite, 0.0)
    url = new_schema(pg_cluster)
    schema = re.search(r"search_path%3D(\w+)", url).group(1)
    conn = pg.connect(url, "/nonexistent")
    try:
        rows = conn.execute("SELECT table_name, column_name, data_type, collation_name FROM"
                            " information_schema.columns WHERE table_schema = ?"
                            " ORDER BY table_name, ordinal_position", (schema,)).fetchall()
    finally:
        conn.close()
    team: dict[str, list[tuple]] = {}
    for table, column, kind, collation in rows:
        team.setdefault(table, []).append((column, kind, collation))
    local = {t: c for t, c in migrations.tables().items() if t not in SQLITE_ONLY}
    assert set(team) - PG_ONLY == set(local)
    for table, columns in local.items():
        declared = {r[1]: r[2] for r in lite.execute(f"PRAGMA table_info({table})")}
        theirs = [c for c in team[table] if c[0] != "db_role"]  # team mode's owner column
        assert [c[0] for c in theirs] == columns, table
        for column, kind, collation in theirs:
            assert kind == PG_TYPES[declared[column].split()[0].upper()], (table, column)
            if kind == "text" and table != "migrations":
                assert collation == "C", (table, column)


# SQLite's own dialect, which PostgreSQL does not read (the store no longer translates it)
SQLITE_DIALECT = {
    r"\bINSERT OR\b|\bUPDATE OR\b": "an upsert: INSERT ... ON CONFLICT (key) DO UPDATE/NOTHING",
    r"\bIS \?|\bIS :\w": "IS NOT DISTINCT FROM",
    r"\browid\b": "the table's own key",
    r"\b(max|min)\(\w+, ": "CASE, or Python",
    r"\bgroup_concat\(|\bifnull\(|\bCOLLATE BINARY\b": "what both engines read",
    r"(?<!lower\(c\.text\) )(?<!lower\(\{c\}\) )(?<!lower\(id\) )(?<!lower\(handle\) )\bLIKE\b":
        "lower(column) LIKE a lowered pattern",
    r"FROM \(SELECT [^()]*(\([^()]*\)[^()]*)*\)(?!\s*(AS\b|[a-z]))": "an alias for the subquery",
}
# where SQLite's own tables are read, only ever on SQLite (FTS5: fulltext.py on PostgreSQL)
SQLITE_ONLY_TEXT = ("ws_fts", "insight_fts", "sqlite_", "PRAGMA")


def _statements() -> list[tuple[str, str]]:
    out = []
    for path in PACKAGE.rglob("*.py"):
        if path.name in ("migrations.py", "pgschema.py", "fulltext.py", "security.py"):
            continue  # each engine's own DDL
        for node, text in string_literals(ast.parse(path.read_text())):
            if re.search(r"\b(SELECT|INSERT|UPDATE|DELETE)\b", text) and \
                    not any(s in text for s in SQLITE_ONLY_TEXT):
                out.append((f"{path.relative_to(PACKAGE)}:{node.lineno}", text))
    return out


def test_the_features_write_sql_both_engines_read():
    found = [(where, text, fix) for where, text in _statements()
             for pattern, fix in SQLITE_DIALECT.items() if re.search(pattern, text)]
    assert found == []


def test_the_store_layer_changes_nothing_but_placeholders():
    """No regular expression in the team store touches a statement's text: the translation
    functions are gone, and the only substitution left is the placeholder tokenizer."""
    store = PACKAGE / "core" / "store"
    source = "".join((store / f).read_text() for f in ("pg.py", "sqltext.py", "pgwire.py"))
    for gone in ("def translate(", "def ddl(", "def tables(", "ILIKE", "ctid", "lastval()",
                 "_alias_subqueries", "def bytewise(", "def dollars("):
        assert gone not in source, gone
    subs = [line.strip() for line in source.splitlines() if ".sub(" in line]
    # the tokenizer, and NUL's stand-in turned back in a value read (not a statement)
    assert len(subs) == 3 and sum("_LEX.sub(" in s for s in subs) == 1, subs
    assert all("_LEX.sub(" in s or "uffff" in s for s in subs), subs


def test_a_sqlite_older_than_the_sql_needs_is_a_coded_error(nx, monkeypatch):
    """The features' SQL needs SQLite 3.39 (IS NOT DISTINCT FROM); this machine has what
    `sqlite3.sqlite_version` says. An older one is said as such, never a syntax error later."""
    import sqlite3

    from nexus_cli.core.store import db

    assert sqlite3.sqlite_version_info >= db.SQLITE_MIN, sqlite3.sqlite_version
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 31, 1))
    monkeypatch.setattr(sqlite3, "sqlite_version", "3.31.1")
    r = nx("peers")
    assert r.code == 6 and "store_unreadable" in r.err and "3.31.1" in r.err, r.err


def test_every_table_has_one_declared_team_policy():
    """Beside the code that owns it (TEAM_TABLES): SQLite's tables but its full-text ones, and
    team mode's own (ws_words). The same against a migrated team database: test_team_members."""
    from nexus_cli.team import security

    assert set(security.tables()) == set(migrations.tables()) - SQLITE_ONLY | PG_ONLY
