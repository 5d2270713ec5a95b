"""The team store: the same interface as `db.Store` on a PostgreSQL server.

Imported only when a team URL is set (`team.url()`): the SQLite default never loads it. It
talks to the server with the standard library's sockets (`pgwire`, no import cost for a hook)
where that serves the URL exactly (a Unix socket, or TCP with or without TLS as libpq would
connect: see pgwire's docstring), and with psycopg 3 (libpq: service files, CRLs,
channel_binding=require ...) otherwise.
Features write their SQL once, in the subset both engines read (upserts as `ON CONFLICT ... DO
UPDATE`, `RETURNING`, `IS NOT DISTINCT FROM`, `TRUE`, explicit keys, aliased subqueries): the
only change made here is to the placeholders (`?`, `?NNN`, `:name` become `$n`, found by a
tokenizer that steps over literals, `placeholders`), and both drivers take that form (the wire
client, and psycopg's RawCursor). The schema is each migration's PostgreSQL DDL, written out in
`pgschema` (team mode searches with PostgreSQL's own full-text search: `fulltext`).

The guarantees SQLite's single writer gives are kept by a transaction-level advisory lock every
write transaction takes first (keyed by the schema, so several teams can share one database):
writers run one at a time, and each sees every write committed before it, as `BEGIN IMMEDIATE`
does. Reads run in a REPEATABLE READ READ ONLY snapshot. Wake-ups are NOTIFY on one channel
(`nexus`, the session id as payload), sent after COMMIT; waiters LISTEN."""

from __future__ import annotations

import itertools
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from .. import store as rows
from ..errors import NexusError
from . import APPLICATION_ID, migrations, paths, pgwire, policy, team, wake
from .sqltext import bound, placeholders

CONNECT_TIMEOUT = 3  # seconds (libpq's minimum that means anything is 2)
HOOK_CONNECT_TIMEOUT = 2  # a hook's budget for reaching the server
HOOK_BUDGET = 2.0  # a hook's every wait for the server, in all (pgwire.Deadline)
BUSY_MS = 10_000  # the writers' lock is waited for this long (SQLite's busy timeout)
STATEMENT_MS = 30_000
COMMAND_BUDGET = STATEMENT_MS / 1000 + CONNECT_TIMEOUT  # a whole command's waits for the server
CHANNEL = "nexus"
LOCK = f"SELECT pg_advisory_xact_lock({APPLICATION_ID}, hashtext(current_schema()))"
SETTINGS = (f"-c lock_timeout={BUSY_MS} -c statement_timeout={STATEMENT_MS}"
            " -c idle_in_transaction_session_timeout=60000")
DRIVER_ENV = "NEXUS_PG_DRIVER"  # wire | psycopg: force one (tests, benchmarks)
# what a failed statement raises: the wire client's error, and psycopg's once it is loaded
ERRORS: tuple[type[BaseException], ...] = (pgwire.WireError,)


# -- rows ------------------------------------------------------------------------------------


class RowBase(tuple):
    """A row readable by position and by column name, as `sqlite3.Row`."""

    __slots__ = ()
    _index: dict[str, int]
    _names: tuple[str, ...]

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


_ROWS: dict[tuple[str, ...], type] = {}


def row_class(names: tuple[str, ...]) -> type:
    cls = _ROWS.get(names)
    if cls is None:
        cls = _ROWS[names] = type("Row", (RowBase,), {
            "__slots__": (), "_names": names, "_index": {n: i for i, n in enumerate(names)}})
    return cls


# -- psycopg (everything else libpq does), loaded only when needed ---- ---------------------

_PSYCOPG: list = []


def _psycopg():  # type: ignore[no-untyped-def]
    """psycopg, with nexus's adapters registered (once)."""
    global ERRORS
    if _PSYCOPG:
        return _PSYCOPG[0]
    import psycopg
    from psycopg.adapt import Loader
    from psycopg.types.string import StrDumperUnknown, TextLoader

    class Numeric(Loader):
        """sum() of integers is numeric in PostgreSQL: an int when whole, as SQLite gives."""

        def load(self, data: object) -> int | float:
            text = bytes(data).decode()  # type: ignore[call-overload]
            try:
                return int(text)
            except ValueError:
                return float(text)

    class Text(StrDumperUnknown):
        """PostgreSQL text cannot hold NUL, which SQLite stores: NUL is kept as U+FFFF 0 and
        U+FFFF itself as U+FFFF 1 (a noncharacter), and turned back on the way out."""

        def dump(self, obj: str):  # type: ignore[no-untyped-def]
            if "\x00" in obj or "\uffff" in obj:
                obj = obj.replace("\uffff", "\uffff1").replace("\x00", "\uffff0")
            return super().dump(obj)

    class TextOut(TextLoader):
        def load(self, data):  # type: ignore[no-untyped-def]
            text = str(super().load(data))
            if "\uffff" in text:
                text = re.sub("\uffff([01])",
                              lambda m: "\x00" if m.group(1) == "0" else "\uffff", text)
            return text

    class Connection(psycopg.Connection):  # type: ignore[type-arg]
        """A statement's deadline kept on the socket (libpq has none): see `_watched`."""

        limit: pgwire.Deadline | None = None

        def execute(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            with _watched(self):
                return super().execute(*args, **kwargs)

    psycopg.adapters.register_loader("numeric", Numeric)
    psycopg.adapters.register_dumper(str, Text)
    for oid in ("text", "varchar", "bpchar"):
        psycopg.adapters.register_loader(oid, TextOut)
    psycopg.NexusConnection = Connection  # type: ignore[attr-defined]
    ERRORS = (pgwire.WireError, psycopg.Error)
    _PSYCOPG.append(psycopg)
    return psycopg


@contextmanager
def _watched(raw: Any) -> Iterator[None]:
    """A psycopg statement ends by its deadline whatever the server sends meanwhile: past it,
    a timer shuts the connection's socket (libpq's own read is then cut short), and the error
    is the deadline's."""
    import socket
    import threading

    started = time.monotonic()
    spent = pgwire.budget()
    ends = [started + STATEMENT_MS / 1000 + CONNECT_TIMEOUT]
    if raw.limit is not None:
        ends.append(raw.limit.at)
    if spent is not None:
        ends.append(started + spent.left_s)
    fired: list[bool] = []

    def cut() -> None:
        fired.append(True)
        try:
            with socket.socket(fileno=os.dup(raw.pgconn.socket)) as sock:
                sock.shutdown(socket.SHUT_RDWR)
        except (OSError, ValueError):
            pass

    timer = threading.Timer(max(0.0, min(ends) - time.monotonic()), cut)
    timer.daemon = True
    timer.start()
    try:
        yield
    except ERRORS:
        if fired:
            raise pgwire.WireError("the server did not answer in time", pgwire.LATE) from None
        raise
    finally:
        timer.cancel()
        if spent is not None:
            spent.spend(time.monotonic() - started)


def _row_factory(cursor):  # type: ignore[no-untyped-def]
    desc = cursor.description
    if desc is None:
        return tuple
    return row_class(tuple(d.name for d in desc))


# -- the wire client, dressed as the part of a psycopg connection nexus uses --------------------


class _WireInfo:
    def __init__(self, wire: pgwire.Wire) -> None:
        self.wire = wire

    @property
    def transaction_status(self) -> int:  # as psycopg's: 0 idle, 2 in a transaction, 3 failed
        if self.wire.in_transaction and self.wire.status == "I":
            return 2  # its BEGIN waits to travel with the first statement
        return {"I": 0, "T": 2, "E": 3}.get(self.wire.status, 0)

    def parameter_status(self, name: str) -> str | None:
        return self.wire.parameters.get(name)


class _WireCursor:
    def __init__(self, raw: WireRaw, result: pgwire.Result | None) -> None:
        self.connection = raw
        self._result = result
        self._rows: list = []
        if result is not None and result.names is not None:
            cls = row_class(result.names)
            self._rows = [cls(r) for r in result.rows]
        self._pos = 0
        self.rowcount = result.rowcount if result is not None else -1

    @property
    def description(self) -> tuple | None:
        return self._result.names if self._result is not None else None

    def fetchone(self):  # type: ignore[no-untyped-def]
        if self._pos >= len(self._rows):
            return None
        self._pos += 1
        return self._rows[self._pos - 1]

    def fetchall(self) -> list:
        rows, self._pos = self._rows[self._pos:], len(self._rows)
        return rows

    def executemany(self, sql: str, rows: list) -> None:
        total = 0
        for values in rows:
            got = self.connection.execute(sql, values)
            total += max(got.rowcount, 0)
        self.rowcount = total


class _Pgconn:
    def __init__(self, wire: pgwire.Wire) -> None:
        self.ssl_in_use = wire.tls
        self.wire = wire


class WireRaw:
    """The wire client with the surface of a psycopg connection that this module uses
    (statements with `$n` placeholders, as psycopg's RawCursor takes them)."""

    def __init__(self, wire: pgwire.Wire) -> None:
        self.wire = wire
        self.info = _WireInfo(wire)
        self.pgconn = _Pgconn(wire)

    @property
    def closed(self) -> bool:
        return self.wire.closed

    @property
    def broken(self) -> bool:
        return self.wire.broken

    def execute(self, sql: str, values: list | None = None) -> _WireCursor:
        return _WireCursor(self, self.wire.query(sql, values))

    def execute_later(self, sql: str, values: list | None) -> None:
        """`execute` for a write whose result nobody reads: inside a transaction it travels with
        the next statement (see pgwire.Wire.defer); outside one, it runs now."""
        if self.wire.in_transaction:
            self.wire.defer(sql, values)
        else:
            self.execute(sql, values)

    def cursor(self) -> _WireCursor:
        return _WireCursor(self, None)

    def notifies(self, timeout: float = 0, stop_after: int | None = None) -> Iterator:
        self.wire.wait_notify(timeout)
        notes, self.wire.notes = self.wire.notes, []
        return iter(notes)

    def fileno(self) -> int:
        return self.wire.sock.fileno()

    def close(self) -> None:
        self.wire.close()


# -- errors ----------------------------------------------------------------------------------


def _said(exc: BaseException | str, url: str) -> str:
    """The first line of a driver's message, without the URL's password (libpq quotes a URI it
    cannot parse whole)."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    reason = reason.replace(url, team.redact(url))
    given = re.match(r"[^:]+://[^:@/]*:([^@/]+)@", url)  # user:password@ as written
    return reason.replace(given.group(1), "***") if given else reason


def unreachable(url: str, exc: BaseException | str) -> NexusError:
    reason = _said(exc, url)
    return NexusError("team_unreachable", team.redact(url),
                      f"the team database cannot be reached ({reason[:200]}); nothing was written",
                      "retry when the server is back (`nexus team status` checks it), or "
                      "`nexus team leave` to work on the local store")


def _lost(exc: BaseException) -> bool:
    """A connection that failed or broke (no SQLSTATE, or the connection-exception class)."""
    state = getattr(exc, "sqlstate", None) or ""
    if state:
        return state.startswith("08") or state in ("57P01", "57P02", "57P03")
    return isinstance(exc, pgwire.WireError) or type(exc).__name__ in (
        "OperationalError", "InterfaceError")


def translate_error(exc: BaseException, url: str) -> NexusError:
    state = getattr(exc, "sqlstate", None) or ""
    if state == "54000":  # one row or one result past its cap, or the server's own limit
        return NexusError("team_row_too_large", team.redact(url),
                          f"{str(exc).splitlines()[0][:200]}; nothing was written",
                          "write less at once (a smaller file or text); a row another member "
                          "wrote past it: ask the team's administrator to remove it")
    if state == "08P01":
        return server_invalid(url, exc)
    if state.startswith("28"):
        return login_refused(url, exc)
    if state == "42501":
        return NexusError("team_denied", team.redact(url),
                          f"the server refused it ({str(exc).splitlines()[0][:200]})",
                          "ask the team's administrator for the role's rights "
                          "(`nexus team init` prints the SQL)")
    if state == "23514":  # a shape migration 28 checks: a row the write would make or keep
        return NexusError("row_invalid", team.redact(url),
                          f"the row is not what nexus writes ({str(exc).splitlines()[0][:200]});"
                          " nothing was written",
                          "`nexus doctor` names such rows; fix or delete it in the database")
    if state in ("57014", "55P03"):
        return NexusError("store_busy", team.redact(url),
                          "the team database did not answer in time; nothing was written",
                          "retry; `nexus team status` shows the server's latency")
    if _lost(exc):
        return unreachable(url, exc)
    return NexusError("internal_error", team.redact(url),
                      f"PostgreSQL says: {str(exc).splitlines()[0][:300]}",
                      "please report it; nothing was committed")


# -- connections -----------------------------------------------------------------------------


class Cursor:
    __slots__ = ("_cur",)

    def __init__(self, cur) -> None:  # type: ignore[no-untyped-def]
        self._cur = cur

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    def fetchone(self):
        return self._cur.fetchone() if self._cur.description is not None else None

    def fetchall(self) -> list:
        return self._cur.fetchall() if self._cur.description is not None else []

    def __iter__(self) -> Iterator:
        return iter(self.fetchall())


class _Counted:
    """The cursor of a declared write that hands back no rows: how many it changed."""

    description = None

    def __init__(self, rowcount: int) -> None:
        self.rowcount = rowcount


def _text(value: object) -> object:
    """A parameter of a declared write's call as text (the server reads it as the parameter's
    type), but for bytes and None."""
    if value is None or isinstance(value, bytes | bytearray | memoryview | str):
        return value
    if isinstance(value, float):
        text = repr(value)
        return {"inf": "Infinity", "-inf": "-Infinity", "nan": "NaN"}.get(text, text)
    return str(value)


def _call(sql: str, params: object) -> tuple[str, list | None]:
    """The call of the function of the declared write `sql` (team/security.py makes them),
    with its values."""
    values = bound(sql, params)[1]
    args = ", ".join(f"${i}" for i in range(1, len(values or ()) + 1))
    return (f"SELECT * FROM {policy.writer(sql)}({args})",
            None if values is None else [_text(v) for v in values])


def _undeclared(exc: BaseException, url: str) -> NexusError:
    """A declared write's error; its function missing: the team's security is older than this
    nexus (its writes changed since `nexus team init --apply` ran)."""
    if getattr(exc, "sqlstate", None) == "42883" and "nexus_w_" in str(exc):
        return NexusError("store_outdated", team.redact(url), "the team database's functions"
                          " are older than this nexus (a write it makes has none)", "ask the "
                          "team's administrator to run `nexus team init --apply` with this "
                          "nexus (as the schema's owner); nothing was written")
    return translate_error(exc, url)


class _ConnCursor:
    """`conn.cursor()`: statements through the connection (`row_factory` is accepted and
    ignored: rows read by position and by name alike)."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn
        self.row_factory = None

    def execute(self, sql: str, params: object = ()) -> Cursor:
        return self.conn.execute(sql, params)

    def executemany(self, sql: str, seq: Iterable) -> Cursor:
        return self.conn.executemany(sql, seq)


class Conn:
    """The subset of `sqlite3.Connection` the features use, on a team database connection."""

    def __init__(self, raw, url: str, root: str) -> None:  # type: ignore[no-untyped-def]
        self.raw = raw
        self.url = url
        self.local_root = root  # news markers and wake channels stay on this machine
        self.version_checked = False
        self.secured: bool | None = None  # `nexus team init` secured it (policy.secured)

    @property
    def role(self) -> str | None:
        """The login role (the person, in a team): reported by the server at startup."""
        return self.raw.info.parameter_status("session_authorization")

    def execute(self, sql: str, params: object = ()) -> Cursor:
        if sql in policy.WRITES and policy.secured(self):
            return self._declared(sql, params)
        text, values = bound(sql, params)
        try:
            return rows.checked(Cursor(self.raw.execute(text, values)), sql)  # type: ignore[return-value]
        except ERRORS as exc:
            if os.environ.get("NEXUS_DEBUG_SQL"):
                print("SQL:", text, values, file=sys.stderr)
            raise translate_error(exc, self.url) from None

    def _declared(self, sql: str, params: object) -> Cursor:
        """A declared write (policy.write) as the call of its function; the values go as text
        for the server to read as the function's parameters' types (the statement's own)."""
        text, values = _call(sql, params)
        try:
            cur = self.raw.execute(text, values)
            if policy.returns(sql):
                return Cursor(cur)
            return Cursor(_Counted(cur.fetchone()[0]))
        except ERRORS as exc:
            raise _undeclared(exc, self.url) from None

    def execute_later(self, sql: str, params: object = ()) -> None:
        """A write whose result nobody reads (store.db.later): with the wire client it travels
        with the transaction's next statement, a round trip fewer; its error, if any, fails
        that statement and so the transaction."""
        if sql in policy.WRITES and policy.secured(self):
            if isinstance(self.raw, WireRaw):
                try:
                    self.raw.execute_later(*_call(sql, params))
                except ERRORS as exc:
                    raise _undeclared(exc, self.url) from None
            else:
                self._declared(sql, params)
            return
        if not isinstance(self.raw, WireRaw):
            self.execute(sql, params)
            return
        try:
            self.raw.execute_later(*bound(sql, params))
        except ERRORS as exc:
            raise translate_error(exc, self.url) from None

    def executemany(self, sql: str, seq: Iterable) -> Cursor:
        if sql in policy.WRITES and policy.secured(self):
            return Cursor(_Counted(sum(self._declared(sql, p).rowcount for p in seq)))
        rows = [bound(sql, p)[1] for p in seq]
        cur = self.raw.cursor()
        if rows:
            try:
                cur.executemany(placeholders(sql)[0], rows)
            except ERRORS as exc:
                raise translate_error(exc, self.url) from None
        return Cursor(cur)

    def cursor(self) -> _ConnCursor:
        return _ConnCursor(self)

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> Conn:  # as `with sqlite3.connect(...)`: autocommit, nothing to do
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def connect(url: str, root: str, timeout: float = CONNECT_TIMEOUT,
            limit: pgwire.Deadline | None = None) -> Conn:
    """A connection in autocommit mode (transactions are explicit); a writer waits for the
    writers' lock as long as SQLite's busy timeout, and every statement has a deadline kept on
    the socket (its statement_timeout and the connect timeout; and `limit`, a hook's budget)."""
    driver = os.environ.get(DRIVER_ENV, "")
    p = pgwire.params(url) if driver != "psycopg" else None
    try:
        if p is not None:  # the settings travel with the startup message: no round trip
            p = {**p, "options": f"{p.get('options', '')} {SETTINGS}".strip()}
            raw = WireRaw(pgwire.Wire(p, timeout, read_timeout=STATEMENT_MS / 1000 + timeout,
                                      limit=limit))
        else:
            psycopg = _psycopg()
            try:  # libpq's own parse of the URL, before any server is asked
                psycopg.conninfo.conninfo_to_dict(url)
            except psycopg.ProgrammingError as exc:
                raise bad_url(url, exc) from None
            if limit is not None:
                timeout = max(1, min(timeout, int(limit.left())))
            if (spent := pgwire.budget()) is not None:  # (libpq counts whole seconds, 1 at least)
                timeout = max(1, min(timeout, int(spent.left_s)))
            raw = psycopg.NexusConnection.connect(
                url, autocommit=True, connect_timeout=timeout, application_name="nexus",
                row_factory=_row_factory, cursor_factory=psycopg.RawCursor)
            raw.limit = limit
            raw.execute(f"SET lock_timeout = {BUSY_MS}; SET statement_timeout = {STATEMENT_MS};"
                        " SET idle_in_transaction_session_timeout = 60000")
    except ERRORS as exc:
        raise refused(url, exc, wire=p is not None) from None
    return Conn(raw, url, root)


# libpq's words for a URL it cannot use (checked before it asks a server: no SQLSTATE)
_BAD_URL = re.compile(r'missing "=" after|invalid (sslmode|integer|port|URI|percent|connection '
                      r'option|\w+ value)|end of string reached|unterminated quoted|unexpected '
                      r'spaces|could not translate host name')
# libpq's words for a login the server refused (its SQLSTATE is not passed on by psycopg)
_LOGIN = re.compile(r"password authentication failed|role \S+ does not exist|no pg_hba\.conf "
                    r"entry|authentication failed|no password supplied|password is required")


def refused(url: str, exc: BaseException, wire: bool) -> NexusError:
    """Why a connection could not be made, said as what fits it: the URL (only libpq's own
    parse of it: the wire client serves only URLs it parsed), the login, the server breaking
    the protocol, or a server that is not there."""
    state = getattr(exc, "sqlstate", None) or ""
    if state == "3D000":  # the database the URL names does not exist
        return bad_url(url, exc)
    if state.startswith("28") or (not state and _LOGIN.search(str(exc))):
        return login_refused(url, exc)
    if state == "08P01":
        return server_invalid(url, exc)
    if not wire and not state and _BAD_URL.search(str(exc)):
        return bad_url(url, exc)
    return unreachable(url, exc)


def login_refused(url: str, exc: BaseException) -> NexusError:
    return NexusError("team_auth_failed", team.redact(url),
                      f"the server refused the login ({_said(exc, url)[:200]}); nothing was "
                      "written", "check the role and its password (~/.pgpass, PGPASSWORD or the "
                      "URL), or ask the team's administrator for a role (`nexus team init "
                      "ROLE`); `nexus team status` shows what the server says")


def server_invalid(url: str, exc: BaseException) -> NexusError:
    return NexusError("team_server_invalid", team.redact(url),
                      f"what answers there does not speak PostgreSQL's protocol as it must "
                      f"({_said(exc, url)[:200]}); nothing was written",
                      "check that the URL's host and port name the team's PostgreSQL server "
                      "(not a proxy or another service); `nexus team status` shows what answers")


def bad_url(url: str, exc: BaseException) -> NexusError:
    """The URL itself is wrong: said as where it came from, with how to put it right."""
    reason = _said(exc, url).removeprefix("connection is bad: ")[:200]
    source = team.source() if url == team.url() else None
    if source == "env":
        key, action = team.ENV, f"fix {team.ENV} (postgresql://[user@]host[:port]/database), " \
                                "or unset it for the local store"
    elif source == "config":
        key, action = team.url_file(), "`nexus team join URL` with a URL that works, or " \
                                       "`nexus team leave` for the local store"
    else:
        key, action = "url", "pass postgresql://[user@]host[:port]/database"
    return NexusError("team_url_invalid", key, f"{reason}; nothing was written", action)


def schema_version(conn: Conn) -> int:
    try:
        # inside a transaction: look before touching (an error would abort it)
        if conn.raw.info.transaction_status != 0 and conn.raw.execute(
                "SELECT to_regclass('migrations')").fetchone()[0] is None:  # type: ignore[index]
            return 0
        # (and, in the same round trip, whether `team init` secured it: policy.secured)
        row = conn.raw.execute("SELECT max(version), to_regprocedure('nexus_is_admin()') IS NOT"
                               " NULL FROM migrations").fetchone()
    except ERRORS as exc:
        if getattr(exc, "sqlstate", None) == "42P01":
            return 0
        raise translate_error(exc, conn.url) from None
    version = (row[0] if row else 0) or 0
    if row and conn.secured is None:
        conn.secured = bool(row[1])
    if type(version) is not int:  # not nexus's table (another program's, or edited by hand)
        raise NexusError("store_unreadable", team.redact(conn.url),
                         f"its migrations table says the schema is {str(version)[:40]!r}, not a "
                         "schema number: not a nexus schema", "point the URL at nexus's own "
                         "schema (options=-csearch_path=...), or ask the team's administrator to "
                         "look at it; nothing was written")
    return version


def migrate(conn: Conn, now: float, secure: list[str] | None = None) -> int:
    """Bring the team database to CURRENT (under the writers' lock, in one transaction with the
    migrations' records), then run `secure` (the team's security, team/security.py) in the same
    transaction; returns the version reached. A database `nexus team init` secured is migrated
    only so: its schema and its security move together (else new tables would be open)."""
    from . import policy

    with pgwire.outside_budget(), _transaction(conn, write=True):
        version = schema_version(conn)
        if version > migrations.CURRENT:
            raise NexusError("store_newer", team.redact(conn.url),
                             f"schema {version} is newer than this nexus knows "
                             f"({migrations.CURRENT})", "upgrade nexus; nothing was written")
        if secure is None and version < migrations.CURRENT and policy.secured(conn):
            raise NexusError("store_outdated", team.redact(conn.url),
                             f"the team database is at schema {version}, this nexus needs "
                             f"{migrations.CURRENT}, and its security moves with its schema",
                             "ask the team's administrator to run `nexus team init --apply` "
                             "with this nexus (as the schema's owner); nothing was written")
        if version == 0:
            conn.raw.execute("CREATE TABLE IF NOT EXISTS migrations (version BIGINT PRIMARY KEY,"
                             " name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)")
        from .pgschema import DDL

        for number, name, _ in migrations.pending(version):
            for stmt in DDL[number]:
                try:
                    conn.raw.execute(stmt)
                except ERRORS as exc:
                    raise translate_error(exc, conn.url) from None
            conn.raw.execute("INSERT INTO migrations VALUES ($1, $2, $3)", [number, name, now])
        for stmt in secure or ():
            try:
                conn.raw.execute(stmt)
            except ERRORS as exc:
                raise translate_error(exc, conn.url) from None
    if secure:
        conn.secured = None  # asked again (policy.secured)
    return migrations.CURRENT


_savepoints = itertools.count(1)


@contextmanager
def _transaction(conn: Conn, write: bool) -> Iterator[None]:
    """BEGIN (and the writers' lock) ... COMMIT. With the wire client the BEGIN travels with the
    transaction's first statement (a round trip fewer), and a transaction that ran nothing ends
    without a word to the server."""
    raw = conn.raw
    begin = f"BEGIN; {LOCK}" if write else "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
    try:
        if isinstance(raw, WireRaw):
            raw.wire.defer_begin(begin)
        else:
            raw.execute(begin)
    except ERRORS as exc:
        raise translate_error(exc, conn.url) from None
    try:
        yield
        _end(raw, "COMMIT")
    except BaseException as exc:
        try:
            _end(raw, "ROLLBACK")
        except ERRORS:
            pass
        if isinstance(exc, ERRORS):
            raise translate_error(exc, conn.url) from None
        raise


def _end(raw: object, sql: str) -> None:
    """COMMIT, ROLLBACK or ROLLBACK TO: what waits to travel goes with a COMMIT and is dropped
    by a rollback; a transaction the server never saw begin ends without a word."""
    if not (isinstance(raw, WireRaw) and raw.wire.settle(commit=sql == "COMMIT")):
        raw.execute(sql)  # type: ignore[attr-defined]


_CURRENT: set[str] = set()  # team URLs this process found at the current schema


class PgStore:
    """A team database, with the `Store` interface: `write()`, `read()`, wake channels."""

    backend = "postgresql"

    def __init__(self, url: str, root: str | None = None, linger: bool = False,
                 reuse: bool = False) -> None:
        self.url = url
        self.root = root or paths.home()
        self.path = team.redact(url)
        self.linger = linger  # a hook: 2 s in all for every wait for the server
        self.timeout = HOOK_CONNECT_TIMEOUT if linger else CONNECT_TIMEOUT
        self.limit = pgwire.process_deadline(HOOK_BUDGET) if linger else None
        self._local = threading.local()

    def command(self) -> None:
        """A command (a CLI command, an MCP tool call) starts in this thread: its waits for the
        server, every connection and statement together, end within one budget."""
        pgwire.command(COMMAND_BUDGET)

    def check_dir(self) -> bool:
        return True

    def check_file(self) -> bool:
        return True

    def _conn(self, kind: str = "write") -> Conn:
        """This thread's connection of that kind (a write may run while a read is open, as
        with the SQLite store's two connections)."""
        conn = getattr(self._local, kind, None)
        if conn is not None and not conn.raw.closed and not conn.raw.broken:
            return conn
        conn = connect(self.url, self.root, self.timeout, self.limit)
        setattr(self._local, kind, conn)
        return conn

    def _checked(self, conn: Conn, write: bool) -> Conn:
        if not conn.version_checked and self.url in _CURRENT:
            conn.version_checked = True  # this process saw the schema current already
        if not conn.version_checked:
            version = schema_version(conn)
            if version < migrations.CURRENT:
                if not write:
                    raise NexusError("store_outdated", self.path,
                                     f"the team database is at schema {version}, this nexus needs "
                                     f"{migrations.CURRENT}", "run `nexus team join` again (it "
                                     "migrates), or any command that writes")
                migrate(conn, time.time())
            elif version > migrations.CURRENT:
                raise NexusError("store_newer", self.path,
                                 f"schema {version} is newer than this nexus knows "
                                 f"({migrations.CURRENT})", "upgrade nexus; nothing was written")
            conn.version_checked = True
            _CURRENT.add(self.url)
        return conn

    def open_write(self) -> Conn:
        conn = self._checked(self._conn(), write=True)
        if not getattr(self._local, "rooted", False):
            # settings, wake channels and news markers stay in the local directory
            paths.ensure_private_dir(self.root)
            self._local.rooted = True
        return conn

    def open_read(self) -> Conn:
        """A connection of its own (a waiter polls on it outside any transaction)."""
        return self._checked(connect(self.url, self.root, self.timeout, self.limit), write=False)

    def keep(self) -> None:
        """(Its connections are kept already: one per thread and kind.)"""

    def info(self) -> dict:
        try:
            version = schema_version(self._conn())
        except NexusError:
            version = None
        return {"home": self.root, "database": self.path, "exists": version is not None,
                "schema_version": version, "schema_current": migrations.CURRENT}

    @contextmanager
    def write(self, committed: Callable[[], object] | None = None) -> Iterator[Conn]:
        outer = getattr(self._local, "active", None)
        if outer is not None:
            name = f"nx{next(_savepoints)}"
            outer.raw.execute(f"SAVEPOINT {name}")  # type: ignore[arg-type]
            try:
                yield outer
            except BaseException:
                _end(outer.raw, f"ROLLBACK TO {name}")
                outer.raw.execute(f"RELEASE {name}")  # type: ignore[arg-type]
                raise
            outer.raw.execute(f"RELEASE {name}")  # type: ignore[arg-type]
            return
        conn = self.open_write()
        self._local.active = conn
        try:
            with _transaction(conn, write=True):
                yield conn
        finally:
            self._local.active = None
        if committed is not None:
            committed()

    @contextmanager
    def read(self) -> Iterator[Conn]:
        outer = getattr(self._local, "active", None) or getattr(self._local, "reading", None)
        if outer is not None:
            yield outer
            return
        conn = self._checked(self._conn("read"), write=False)
        self._local.reading = conn
        try:
            with _transaction(conn, write=False):
                yield conn
        finally:
            self._local.reading = None

    @contextmanager
    def snapshot(self) -> Iterator[Conn]:
        """A read just before a write, outside its advisory lock: on the write's own connection
        with each statement committing by itself (no second connection, no extra round trip)."""
        outer = getattr(self._local, "active", None) or getattr(self._local, "reading", None)
        yield outer if outer is not None else self.open_write()

    # -- waking ----------------------------------------------------------------------------------

    def poke(self, session_ids: Iterable[str]) -> int:
        ids = sorted(set(session_ids))
        if not ids:
            return 0
        try:
            self._conn().raw.execute(
                "SELECT " + ", ".join(f"pg_notify(${2 * i + 1}, ${2 * i + 2})"
                                      for i in range(len(ids))),
                [v for sid in ids for v in (CHANNEL, sid)])
        except ERRORS:
            return 0  # a wake is only a hint: waiters poll as a safety net
        except NexusError:
            return 0
        return len(ids)

    def channel(self, session_id: str | None) -> Channel:
        return Channel(self, session_id)

    def data_version(self, conn: Conn) -> object:
        return None  # no cheap global change counter: a waiter looks again at each safety poll


class Channel:
    """A waiter's LISTEN connection; created before the first look, so no NOTIFY is missed.
    `session_id` None hears every session's wake (the web board)."""

    def __init__(self, store: PgStore, session_id: str | None) -> None:
        self.sid = session_id
        self.limit = store.limit  # a waiting hook: each wait starts its budget again
        self.conn = connect(store.url, store.root, store.timeout, store.limit)
        try:
            self.conn.raw.execute(f"LISTEN {CHANNEL}")  # type: ignore[arg-type]
        except ERRORS as exc:
            self.conn.close()
            raise translate_error(exc, store.url) from None

    def wait(self, timeout: float) -> bool:
        try:
            return self._wait(timeout)
        finally:
            if self.limit is not None:
                self.limit.renew()

    def _wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + max(0.0, timeout)
        raw = self.conn.raw
        while True:
            got = False
            try:
                for note in raw.notifies(timeout=0, stop_after=None):  # drain what is queued
                    got = got or self.sid is None or note.payload == self.sid
            except ERRORS:
                time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
                return False
            if got:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            try:
                wake.ready([raw.fileno()], remaining)
            except (OSError, ValueError):
                return False

    @property
    def fd(self) -> int:
        """What to poll for a NOTIFY (as a local channel's FIFO)."""
        return self.conn.raw.fileno()

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def verification(raw: Any) -> str:
    """How far the server behind a TLS connection was verified, as libpq verifies it: "full"
    (its certificate and its host name: verify-full), "ca" (its certificate only: verify-ca, or
    a root certificate at hand in a weaker mode), "none" (encrypted, but anyone on the way could
    pose as the server); "" without TLS."""
    if not getattr(raw.pgconn, "ssl_in_use", False):
        return ""
    wire = getattr(raw.pgconn, "wire", None)
    if wire is not None:
        return "full" if wire.name_checked else "ca" if wire.verified else "none"
    opts = {o.keyword.decode(): o.val.decode() if o.val else "" for o in raw.pgconn.info}
    mode = opts.get("sslmode") or "prefer"
    root = pgwire.root_cert(opts.get("sslrootcert"))
    if mode == "verify-full":
        return "full"
    return "ca" if mode == "verify-ca" or root == "system" or os.path.exists(root) else "none"


def ping(url: str) -> dict:
    """For `team status` and doctor: reachability, server version, schema, latency, TLS, role."""
    started = time.perf_counter()
    conn = connect(url, paths.home())
    try:
        connected = time.perf_counter() - started
        raw = conn.raw
        trips = []
        for _ in range(5):
            t0 = time.perf_counter()
            raw.execute("SELECT 1").fetchone()
            trips.append(time.perf_counter() - t0)
        latency = sorted(trips)[2]  # the median of five
        version = schema_version(conn)
        role, schema = raw.execute("SELECT current_user, current_schema()").fetchone()  # type: ignore[misc]
        secured = raw.execute("SELECT relrowsecurity FROM pg_class WHERE oid ="
                              " to_regclass('messages')").fetchone()
        can_write = raw.execute(
            "SELECT has_schema_privilege(current_schema(), 'USAGE')").fetchone()[0]  # type: ignore[index]
        return {"server_version": raw.info.parameter_status("server_version"),
                "schema_version": version, "schema_current": migrations.CURRENT,
                "connect_ms": round(connected * 1000, 2), "latency_ms": round(latency * 1000, 3),
                "tls": bool(getattr(raw.pgconn, "ssl_in_use", False)),
                "tls_verification": verification(raw), "role": role,
                "schema": schema, "schema_usage": bool(can_write),
                "row_security": bool(secured and secured[0])}
    finally:
        conn.close()

