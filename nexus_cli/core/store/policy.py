"""Who may touch which rows of a team database, declared once per table beside the code that owns
it, and the writes across members that only nexus's own server-side functions make.

A table's `Table` says, for reading a row, inserting one (and in whose name), changing it and
deleting it, who may: `TEAM` (every member), `OWNER` (the member whose role wrote it: the row's
`db_role`, which the server fills in and a member cannot choose), `own(column)` (the column
names one of the member's own sessions), `participants(...)` (any of them does), `ADMIN` (the
team's administrator role), or `FUNCTIONS` (nobody directly: only nexus's SECURITY DEFINER
functions). `either`/`when` combine them. `nexus team init` makes the row-level security, the
grants and the functions from these declarations (team/security.py); a table without one
fails a test. On the local store (one user) none of this applies.

A `Function` is one statement (SQL both engines read, named placeholders) for a write that
reaches rows of other members and must stay consistent (a task's close by its assignee, a
notice an expiry owes a sender). On the team database it runs inside a function the database
runs as its owner, with `guard` added: the check, against the caller's role, that the member
may make it; locally the statement runs as it is. `call` runs either.

Every other write nexus makes in team mode is declared once with `write(sql)` beside the code
that runs it (`Update` for the columns chosen at run time). On a secured team database a member
role holds no INSERT, UPDATE or DELETE on any table: each declared statement is a function of
its own (`nexus_w_<digest>`), SECURITY DEFINER as the team's writer role, which is subject to
row-level security like a member (the rules above speak of `session_user`, the member who
called), every function with a fixed search path (pg_catalog, the schema, pg_temp last: a
member's temporary table never stands in for a real one). The team connection (pg.Conn) sends a
declared statement as a call of its function; locally it runs as written. Stdlib only (the
hooks' modules declare their tables and writes)."""

from __future__ import annotations

from ..record import Record

# the caller's own sessions: those its role registered (the session's db_role, set by the server)
OWN = "(SELECT id FROM sessions WHERE db_role = session_user)"
TEAM = "TRUE"
OWNER = "db_role = session_user"
ADMIN = "nexus_is_admin()"
FUNCTIONS = None


def own(column: str) -> str:
    return f"{column} IN {OWN}"


def person(column: str) -> str:
    """`column` is the caller's own person id: `user:<role>` or `user:<role>@<machine>` (in team
    mode the person is the database role, so no member can take another's name)."""
    return (f"({column} = 'user:' || session_user OR starts_with({column}, 'user:' ||"
            " session_user || '@'))")


def participants(*columns: str) -> str:
    return " OR ".join(own(c) for c in columns)


def either(*rules: str) -> str:
    return " OR ".join(f"({r})" for r in rules)


def when(condition: str, rule: str) -> str:
    return f"({condition}) AND ({rule})"


# read, insert, update, delete: a rule (SQL over the row) or FUNCTIONS; `owner`: the table has a
# db_role column; `columns`: the only columns an update may set (None: any)
class Table(Record):
    __slots__ = ()
    _fields = ("read", "insert", "update", "delete", "owner", "columns")
    _defaults = (False, None)
    read: str | None
    insert: str | None
    update: str | None
    delete: str | None
    owner: bool
    columns: tuple[str, ...] | None


SERVER_NOW = "extract(epoch FROM statement_timestamp())"


class Function:
    """A guarded write: `sql` holds `{guard}` where the team database adds its check (locally:
    TRUE); `types` gives each named parameter's PostgreSQL type."""

    __slots__ = ("guard", "local", "name", "sql", "types")

    def __init__(self, name: str, sql: str, guard: str, types: dict[str, str]) -> None:
        self.name, self.sql, self.guard, self.types = name, sql, guard, types
        self.local = sql.replace("{guard}", TEAM)

    @property
    def team(self) -> str:
        """The statement on the team database: its guard added, and its time (`:now`) the
        server's own, never one its caller gives."""
        import re

        return re.sub(r":now\b", SERVER_NOW, self.sql.replace("{guard}", self.guard))


WRITES: set[str] = set()  # every statement declared with `write`
UPDATES: list[Update] = []  # and every `Update` (its statement made when first needed)
_NAMES: dict[str, str] = {}


def write(sql: str) -> str:
    """Declare `sql` (one INSERT, UPDATE or DELETE, SQL both engines read, `RETURNING` at most
    one BIGINT column) as a write nexus makes; returns it unchanged."""
    WRITES.add(sql)
    return sql


def writer(sql: str) -> str:
    """The name of the team database's function for the declared statement `sql`."""
    name = _NAMES.get(sql)
    if name is None:
        import hashlib

        name = _NAMES[sql] = "nexus_w_" + hashlib.sha256(sql.encode()).hexdigest()[:20]
    return name


def returns(sql: str) -> bool:
    """Whether the declared statement hands rows back (RETURNING) rather than a count."""
    return " RETURNING " in sql


class Update:
    """`UPDATE table SET <some of columns> WHERE key = ?`, the columns chosen at each call: one
    declared statement that sets each column given and keeps the others (on a secured team
    database), else the statement with those columns alone."""

    __slots__ = ("_declared", "columns", "key", "table")

    def __init__(self, table: str, columns: tuple[str, ...] | frozenset[str],
                 key: str = "id") -> None:
        self.table, self.key, self.columns = table, key, columns
        self._declared: str | None = None  # made when first needed (not on a hook's path)
        UPDATES.append(self)

    @property
    def declared(self) -> str:
        if self._declared is None:
            columns = sorted(self.columns)
            self._declared = write(
                f"UPDATE {self.table} SET " + ", ".join(
                    f"{c} = CASE WHEN strpos(:given_, ',{c},') > 0 THEN :{c} ELSE {c} END"
                    for c in columns) + f" WHERE {self.key} = :key_")
        return self._declared

    def run(self, conn: object, key: object, fields: dict[str, object]) -> int:
        unknown = fields.keys() - self.columns
        if unknown:
            raise ValueError(f"not settable: {', '.join(sorted(unknown))}")
        if secured(conn):
            values = {**dict.fromkeys(self.columns), **fields,
                      "given_": "," + ",".join(fields) + ",", "key_": key}
            return conn.execute(self.declared, values).rowcount  # type: ignore[attr-defined]
        return conn.execute(  # type: ignore[attr-defined]
            f"UPDATE {self.table} SET {', '.join(f'{k} = ?' for k in fields)} WHERE"
            f" {self.key} = ?", (*fields.values(), key)).rowcount


def call(conn: object, fn: Function, params: dict[str, object]) -> int:
    """Run the guarded write; returns how many rows it changed."""
    if secured(conn):
        from .sqltext import placeholders

        names = placeholders(fn.team)[1] or ()
        sql = f"SELECT nexus_{fn.name}({', '.join(':' + n for n in names)})"
        return int(conn.execute(sql, params).fetchone()[0])  # type: ignore[attr-defined]
    return conn.execute(fn.local, params).rowcount  # type: ignore[attr-defined]


def secured(conn: object) -> bool:
    """Whether `conn` is a team database's that `nexus team init` secured (its functions exist);
    asked once per connection."""
    known = getattr(conn, "secured", None)
    if known is None:
        if not hasattr(conn, "url"):
            return False  # SQLite: one user
        known = conn.secured = conn.execute(  # type: ignore[attr-defined]
            "SELECT to_regprocedure('nexus_is_admin()') IS NOT NULL").fetchone()[0]
    return bool(known)


def mine(conn: object, sid: str) -> bool:
    """Whether the session `sid` is the caller's own (always, unless the database is secured)."""
    if not secured(conn):
        return True
    return bool(conn.execute("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ? AND"  # type: ignore[attr-defined]
                             " db_role = session_user)", (sid,)).fetchone()[0])


def role(conn: object) -> str | None:
    """The database role the connection is (None: the local store)."""
    return getattr(conn, "role", None)


def is_admin(conn: object) -> bool:
    """Whether the caller may change team-wide settings: always on the local store and on a team
    database nobody secured; else its administrator role (or the schema's owner)."""
    if not secured(conn):
        return True
    return bool(conn.execute("SELECT nexus_is_admin()").fetchone()[0])  # type: ignore[attr-defined]
