"""The store: the per-user SQLite file (db.py) or the team's PostgreSQL database (pg.py).

What every open of it checks is kept here, where it costs nothing to import (the hooks open it
on every event; the migrations load only when the file is behind); and where rows become
records, on both backends (db.Connection.execute, pg.Conn.execute): what every row read from it
is checked against. (Here, not in a module of its own: importing one more module costs a hook
more than all its checks.)

Reads are input. In team mode a member can write rows with plain SQL; a row nexus would not have
written is skipped, as if it were not there, and remembered (`SKIPPED`): the command line says
so on stderr (`row_invalid`), `nexus doctor` names every such row, and the others are read as
ever: one bad row never stops a listing, a hook or the upkeep. The shapes (predicates over a
value as a row gives it; None is for the schema to allow):

- a token (a message, task, run, approval, reservation or meeting id, a tool use id): 1-100
  ASCII characters of `A-Z a-z 0-9 . _ : @ # + -`, the first a letter or digit: nothing that
  can end a line, a quote or a shell word;
- a participant id: `<client>:<uuid>`, `user:<login>[@<machine>]` (identity.py), `nexus:system`;
- a handle: `s-` and lowercase hex digits cut from its own session's id, or `u-` and the
  person's login;
- a name: 1-128 characters of `A-Z a-z 0-9 . _ @ # -` (what nexus and `profile --name` make),
  an agent's never starting as a handle does;
- a time: seconds since 1970 that a calendar can show (|t| < 1e11: not NaN, not an infinity,
  not 1e300); a number: finite and below 1e15; a state: one nexus knows.

What a statement reads is worked out once per statement text (its plan: which result column
comes from which table's column), from the statement and the names of its result columns: a
column named by an alias of an expression is not checked, nor one whose table the statement
leaves in doubt (a name two joined tables both have, with different shapes). Stdlib only, and
no regular expression: set and comparison tests alone."""

from __future__ import annotations

APPLICATION_ID = 0x4E585331  # 'NXS1': written once at creation; without it, not a nexus store
SCHEMA = 29  # the schema this nexus writes: the number of the last migration (migrations.py)

# -- shapes ---------------------------------------------------------------------------------

_DIGITS = "0123456789"
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_TOKEN = frozenset(_LETTERS + _DIGITS + "._:@#+-")
_LEAD = frozenset(_LETTERS + _DIGITS)
_LOGIN = frozenset(_LETTERS + _DIGITS + "._-")
_NAME = frozenset(_LETTERS + _DIGITS + "._@#-")
_HEX = frozenset("0123456789abcdef")
_DIGITS_SET = frozenset(_DIGITS)
SYSTEM = "nexus:system"
TOKEN_MAX = 100
NAME_MAX = 128
TIME_MAX = 1e11  # the year 5138
NUMBER_MAX = 1e15


def token(value: object) -> bool:
    """An id nexus made (or a tool use id a client gave): see the module's text."""
    return (type(value) is str and 0 < len(value) <= TOKEN_MAX and value[0] in _LEAD
            and _TOKEN.issuperset(value))


def login(value: str) -> bool:
    """What follows `user:`: a login or team name, and in team mode `@` and a machine."""
    who, at, machine = value.partition("@")
    return (0 < len(who) <= 64 and _LOGIN.issuperset(who)
            and (not at or (0 < len(machine) <= 40 and _LOGIN.issuperset(machine))))


def uuid(raw: str) -> bool:
    """Whether `raw` is, as a whole, a lowercase UUID: the shape of both clients' session ids
    (checked without a regular expression: compiling one costs a hook more than the check)."""
    return (len(raw) == 36 and raw[8] == raw[13] == raw[18] == raw[23] == "-"
            and _HEX.issuperset(raw[:8] + raw[9:13] + raw[14:18] + raw[19:23] + raw[24:]))


def participant(value: object) -> bool:
    """A session's or a person's id, exactly as nexus writes them (case included: `User:bob` is
    nobody), or nexus's own: `<client>:<uuid>` (a client's name in lowercase letters; which
    clients nexus knows is for clients/ to say), `user:<login>[@<machine>]`, `nexus:system`."""
    if type(value) is not str:
        return False
    client, sep, rest = value.partition(":")
    if client == "user":
        return login(rest)
    return sep == ":" and ((uuid(rest) and client.isalpha() and client.isascii()
                            and client.islower()) or value == SYSTEM)


def handle(value: object) -> bool:
    """A session's handle (`s-` and 12 or more lowercase hex digits, `-<n>` after them when
    every length was taken) or a person's (`u-<login>`)."""
    if type(value) is not str:
        return False
    if value.startswith("s-"):
        digits, dash, n = value[2:].partition("-")
        return 12 <= len(digits) <= 32 and _HEX.issuperset(digits) and (
            not dash or (0 < len(n) <= 9 and _DIGITS_SET.issuperset(n)))
    return value.startswith("u-") and login(value[2:])


def id_digits(rest: str) -> str:
    """The hex digits of a client's id (`rest`: after `client:`) in the order a handle is cut
    from them: those that differ first. A UUIDv7 (Codex's thread ids) begins with its time,
    which sessions started together share: its random digits come first, then the rest."""
    digits = rest.replace("-", "").lower()
    if len(digits) == 32 and digits[12] == "7":  # time 0-11, version 12, random 13-15 and 17-31
        return digits[13:16] + digits[17:] + digits[:13] + digits[16]
    return digits


def handle_of(sid: object, value: object) -> bool:
    """Whether `value` is the handle of the session `sid` (a handle is cut from its own id: no
    row can carry another's, nor a person's on an agent)."""
    if not (type(sid) is str and type(value) is str and handle(value)):
        return False
    client, _, rest = sid.partition(":")
    if client == "user":
        return value == "u-" + rest
    return value.startswith("s-") and id_digits(rest).startswith(value[2:].partition("-")[0])


def name(value: object) -> bool:
    """A session's or person's name (see the module's text)."""
    return type(value) is str and 0 < len(value) <= NAME_MAX and _NAME.issuperset(value)


def agent_name(value: object) -> bool:
    """An agent's name: a name that does not read as a handle or a person's id."""
    return name(value) and value[:2].lower() not in ("s-", "u-")  # type: ignore[index]


def time(value: object) -> bool:
    """Seconds since 1970 that a calendar can show (NaN and infinities fail every comparison)."""
    return (type(value) is float or type(value) is int) and -TIME_MAX < value < TIME_MAX  # type: ignore[operator]


def number(value: object) -> bool:
    """A finite number of sane size (a count, a size, a rate, a fraction)."""
    return (type(value) is float or type(value) is int) and -NUMBER_MAX < value < NUMBER_MAX  # type: ignore[operator]


def pid(value: object) -> bool:
    """A process id."""
    return type(value) is int and 0 < value < 1 << 32


def line(value: object) -> bool:
    """One line of printable text (a machine's name, a start time, a state)."""
    return type(value) is str and len(value) <= 200 and value.isprintable()


# -- rows -----------------------------------------------------------------------------------

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

P, TOKEN, TIME, NUM, PID, LINE = participant, token, time, number, pid, line


def TEXT(value: object) -> bool:
    """Text, shown escaped wherever it is shown (a machine's name): a string of sane length."""
    return type(value) is str and len(value) <= 1000


def _one_of(*values: str) -> Callable[[object], bool]:
    known = frozenset(values)
    return lambda v: v in known  # (a str not in it, or any other type: unknown)


SESSION_STATUS = _one_of("idle", "working", "waiting", "listening", "offline")
TASK_STATUS = _one_of("preparing", "pending", "dispatched", "running", "delivery_uncertain",
                      "completed", "blocked", "failed", "cancelled")
MESSAGE_KIND = _one_of("message", "notice", "task", "report")
MEETING_STATUS = _one_of("active", "closed", "archived")
RUN_STATUS = _one_of("queued", "running", "done", "error", "cancelled")
APPROVAL_STATUS = _one_of("pending", "allowed", "rejected", "withdrawn", "timeout")
# who writes the activity log without a session: the faces refusing an attempt (events.refused)
FACES = frozenset(("cli", "mcp", "web", "claude hook", "codex hook"))


def _json_object(value: object) -> bool:
    """Text that is one JSON object (an event's detail, which `nexus events` parses)."""
    if type(value) is not str or not value.startswith("{"):
        return False
    import json  # (loaded already wherever events are read)

    try:
        return type(json.loads(value)) is dict
    except ValueError:
        return False


def _actor(value: object) -> bool:
    return value in FACES or P(value)


# table -> column -> check. A column nexus prints, parses, compares or acts on is here; text a
# peer wrote freely (a message's text, a note) is not: it is data, rendered as such (core.text).
RULES: dict[str, dict[str, Callable[[object], bool]]] = {
    "sessions": {
        "id": P, "client": _one_of("claude", "codex", "user", "nexus"), "handle": handle,
        "name": name, "status": SESSION_STATUS, "waiter_pid": PID, "client_pid": PID,
        "client_start": LINE, "machine": TEXT, "predecessor": P, "successor": P, "parent": P,
        "offered_to": P, "last_turn_end": TIME, "last_prompt_at": TIME, "last_wake_at": TIME,
        "handoff_at": TIME, "offered_at": TIME, "created_at": TIME, "last_active": TIME,
        "auto_turns": NUM},
    "tool_uses": {"tool_use_id": TOKEN, "session_id": P, "created_at": TIME},
    "messages": {
        "seq": NUM, "id": TOKEN, "kind": MESSAGE_KIND, "sender": P, "recipient": P,
        "reply_to": TOKEN, "task_id": TOKEN, "created_at": TIME, "delivered_at": TIME,
        "read_at": TIME, "expired_at": TIME, "notified_at": TIME, "read_lease_until": TIME},
    "tasks": {
        "seq": NUM, "id": TOKEN, "sender": P, "target": P, "status": TASK_STATUS,
        "message_id": TOKEN, "report_message_id": TOKEN, "progress": NUM, "expires_at": TIME,
        "created_at": TIME, "updated_at": TIME, "closed_at": TIME},
    "events": {"seq": NUM, "at": TIME, "actor": _actor, "action": TOKEN,
               "detail": _json_object},
    "reservations": {"id": TOKEN, "session_id": P, "created_at": TIME, "expires_at": TIME},
    "ws_meetings": {"seq": NUM, "id": TOKEN, "status": MEETING_STATUS, "initiator": P,
                    "started_at": TIME, "ended_at": TIME, "updated_at": TIME},
    "ws_participants": {"meeting": TOKEN, "session": P, "joined_at": TIME},
    "ws_chat": {"seq": NUM, "meeting": TOKEN, "sender": P, "created_at": TIME},
    "ws_cursors": {"seq": NUM},
    "ws_buckets": {"tokens": NUM, "at": TIME},
    "ws_projects": {"created_at": TIME, "updated_at": TIME},
    "ws_docs": {"updated_at": TIME},
    "ws_assets": {"size": NUM, "updated_at": TIME},
    "runs": {"id": TOKEN, "seq": NUM, "session_id": P, "task_id": TOKEN, "status": RUN_STATUS,
             "runner_pid": PID, "client_pid": PID, "exit_code": NUM, "created_at": TIME,
             "started_at": TIME, "client_started_at": TIME, "finished_at": TIME},
    "approvals": {"id": TOKEN, "seq": NUM, "session_id": P, "run_id": TOKEN,
                  "status": APPROVAL_STATUS, "hook_pid": PID, "requested_at": TIME,
                  "deadline": TIME, "answered_at": TIME},
    "approval_routes": {"run_id": TOKEN, "client_pid": PID, "created_at": TIME},
    "insight_titles": {"session_id": P, "set_at": TIME},
}
# checks across two columns of one row: (table, column, column) -> check(first, second)
PAIRS: dict[tuple[str, str, str], Callable[[object, object], bool]] = {
    ("sessions", "id", "handle"): handle_of,
    ("sessions", "id", "name"): lambda sid, name: (
        str(sid).startswith("user:") or agent_name(name)),
}
KEYS = ("id", "seq", "key", "session_id", "tool_use_id", "run_id")  # what names a row
# (table, the row's key, the column) of the rows this process read past, the last KEEP;
# `last_skipped`: the latest, cleared at each statement that reads a checked table (what
# `db.present` and `sessions.ensure` report)
SKIPPED: list[tuple[str, str, str]] = []
KEEP = 100
last_skipped: tuple[str, str, str] | None = None

_KEYWORDS = frozenset(("WHERE", "ON", "JOIN", "LEFT", "INNER", "CROSS", "NATURAL", "ORDER",
                       "GROUP", "LIMIT", "USING", "SET", "VALUES", "DEFAULT", "RETURNING",
                       "UNION", "HAVING", "OFFSET", "AS", "FROM", "SELECT", "("))
_IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")

# statement text -> the tables it names (None: none with rules) and, once its first row was
# seen, its plan: (checks, pairs) by result column position
_TABLES: dict[str, tuple | None] = {}
_PLANS: dict[tuple[str, type], tuple] = {}


def _tokens(sql: str) -> list[str]:
    return sql.replace("(", " ( ").replace(")", " ) ").replace(",", " , ").split()


def tables(sql: str) -> tuple | None:
    """The tables with rules that `sql` reads its columns from (its own FROM and JOIN, not a
    subquery's), with their aliases: ((alias, table), ...); None when there are none (a
    statement with nothing to check costs one look-up from then on), and for a UNION, whose
    columns come from several statements."""
    try:
        return _TABLES[sql]
    except KeyError:
        pass
    found: list[tuple[str, str]] = []
    if ("RETURNING" in sql or sql.lstrip()[:6].upper() == "SELECT") and "UNION" not in sql:
        # (string methods, no tokens: a hook works out each statement it runs once)
        text = " ".join(sql.replace("(", " ( ").replace(")", " ) ").split()) + " "
        for keyword in (" FROM ", " JOIN ", "UPDATE ", " INTO "):
            at = text.find(keyword)
            while at >= 0:
                if text.count("(", 0, at) == text.count(")", 0, at):  # not in a subquery
                    words = text[at + len(keyword):].split(" ", 3)
                    name = words[0].lower()
                    if name == "(":  # a derived table: its columns are its statement's
                        found += _derived(text, at + len(keyword))
                    elif name in RULES:
                        found.append(((_alias(words) or name).lower(), name))
                at = text.find(keyword, at + 1)
    _TABLES[sql] = got = tuple(found) or None
    return got


def _derived(text: str, start: int) -> list[tuple[str, str]]:
    """The tables of the derived table `( SELECT ... ) [AS] alias` opening at `start` of `text`
    (tokens spaced), its alias naming them too when it has one table."""
    depth, end = 0, start
    for end in range(start, len(text)):
        depth += (text[end] == "(") - (text[end] == ")")
        if depth == 0:
            break
    inner = tables(text[start + 1:end].strip()) or ()
    alias = _alias(text[end + 1:].split(" ", 3))
    return [*inner, (alias.lower(), inner[0][1])] if len(inner) == 1 and alias else list(inner)


def _alias(words: list[str]) -> str:
    """The alias after a table (`words[0]`, `[AS] alias` after it), or ''."""
    after = words[2] if len(words) > 2 and words[1] == "AS" else words[1] if len(words) > 1 else ""
    return after if after and after.upper() not in _KEYWORDS and _IDENT.issuperset(after) else ""


def _selected(sql: str) -> list[list[str]]:
    """The items of the statement's (first) select list, or its RETURNING list, as tokens."""
    toks = _tokens(sql)
    upper = [t.upper() for t in toks]
    start = upper.index("RETURNING") + 1 if "RETURNING" in upper else (
        upper.index("SELECT") + 1 if "SELECT" in upper else len(toks))
    items: list[list[str]] = [[]]
    depth = 0
    for tok, up in zip(toks[start:], upper[start:], strict=True):
        if depth == 0 and up in ("FROM", "WHERE", "ORDER", "LIMIT", "UNION"):
            break
        depth += (tok == "(") - (tok == ")")
        if depth == 0 and tok == ",":
            items.append([])
        else:
            items[-1].append(tok)
    return [i for i in items if i]


def _plan(sql: str, names: list[str], named: tuple) -> tuple:
    """(checks, pairs): checks are (position, table, column, check); pairs (position, position,
    table, check)."""
    if len(named) == 1 and " AS " not in sql and "(" not in sql.partition(" FROM ")[0]:
        table = named[0][1]  # one table, no expression: each column is the table's own
        own = RULES[table]
        only = tuple((pos, table, name, own[name]) for pos, name in enumerate(names)
                     if name in own and names.count(name) == 1)
        return only, _pairs(table, {c[2]: c[0] for c in only})
    aliases = dict(named)
    by_name: dict[str, list[tuple[str, str]] | None] = {}  # result name -> its sources

    def source(ref: str) -> list[tuple[str, str]] | None:
        if not _IDENT.issuperset(ref) or ref[:1].isdigit():
            return None  # an expression
        qual, _, col = ref.lower().rpartition(".")
        if qual:
            return [(aliases[qual], col)] if qual in aliases else None
        return [(t, col) for _, t in named]

    stars: list[str] = []
    for item in _selected(sql):
        if item[-2:-1] and item[-2].upper() == "AS":
            by_name[item[-1].strip('"').lower()] = source(item[0]) if len(item) == 3 else None
        elif len(item) == 1 and item[0].endswith("*"):
            qual = item[0][:-1].rstrip(".").lower()
            stars += [aliases[qual]] if qual in aliases else [t for _, t in named] \
                if not qual else []
        elif len(item) == 1:
            ref = source(item[0])
            by_name.setdefault(item[0].lower().rpartition(".")[2], ref)
    checks, where = [], {}
    for pos, name in enumerate(names):
        if names.count(name) > 1:
            continue  # which of two columns of one name is which: not for a name to say
        if name in by_name:
            sources = by_name[name] or []
        else:
            sources = [(t, name) for t in stars]
        rules = {(t, RULES[t][c]) for t, c in sources if c in RULES[t]}
        if len({r for _, r in rules}) == 1:
            table, rule = next(iter(rules))
            col = next(c for t, c in sources if t == table and c in RULES[t])
            checks.append((pos, table, col, rule))
            where[(table, col)] = pos
    pairs: tuple = ()
    for table in {t for t, _ in where}:
        pairs += _pairs(table, {c: p for (t, c), p in where.items() if t == table})
    return tuple(checks), pairs


def _pairs(table: str, where: dict[str, int]) -> tuple:
    """The checks across two columns of `table` whose columns are both read (`where`: column
    -> position)."""
    return tuple((where[a], where[b], t, check) for (t, a, b), check in PAIRS.items()
                 if t == table and a in where and b in where)


def plan(sql: str, named: tuple, row: Any) -> tuple:
    """The plan of `sql` for rows like `row` (by position: the same statement reads its columns
    in another order on the other backend, whose row classes differ)."""
    key = (sql, type(row))
    got = _PLANS.get(key)
    if got is None:
        got = _PLANS[key] = _plan(sql, list(row.keys()), named)
    return got


def valid(plan: tuple, row: Any) -> bool:
    """Whether `row` holds the shapes of every column its plan checks; a row that does not is
    remembered in SKIPPED."""
    checks, pairs = plan
    for pos, table, col, check in checks:
        value = row[pos]
        if value is not None and not check(value):
            return _skip(row, table, col)
    for first, second, table, check in pairs:
        if not check(row[first], row[second]):
            return _skip(row, table, row.keys()[second])
    return True


def _skip(row: Any, table: str, column: str) -> bool:
    global last_skipped
    names = row.keys()
    key = next((f"{k}={row[names.index(k)]!r}" for k in KEYS if k in names),
               repr(tuple(row)[:2]))
    last_skipped = (table, key if len(key) <= 120 else key[:119] + "…", column)
    SKIPPED.append(last_skipped)
    del SKIPPED[:-KEEP]
    return False


class Checked:
    """A cursor whose rows are checked: the invalid ones are skipped."""

    __slots__ = ("_cur", "_named", "_plan", "_sql")
    _plan: tuple | None

    def __init__(self, cur: Any, sql: str, named: tuple) -> None:
        self._cur, self._sql, self._named, self._plan = cur, sql, named, None

    def fetchone(self) -> Any:
        while True:
            row = self._cur.fetchone()
            if row is None:
                return None
            if self._plan is None:
                self._plan = plan(self._sql, self._named, row)
            if valid(self._plan, row):
                return row

    def fetchall(self) -> list:
        got = self._cur.fetchall()
        if not got:
            return got
        if self._plan is None:
            self._plan = plan(self._sql, self._named, got[0])
        checks = self._plan
        return [r for r in got if valid(checks, r)]

    def __iter__(self) -> Iterator:
        return iter(self.fetchall())

    def __getattr__(self, name: str) -> object:
        return getattr(self._cur, name)


def checked(cur: Any, sql: str) -> Any:
    """`cur` (the cursor of `sql`, executed), checking its rows when `sql` reads a table with
    rules."""
    global last_skipped
    named = tables(sql)
    if named is None:
        return cur
    last_skipped = None
    return Checked(cur, sql, named)


def row_error(entry: tuple[str, str, str]) -> Any:
    """The coded error for a skipped row."""
    from ..errors import NexusError  # (an error's path only)

    table, key, column = entry
    return NexusError("row_invalid", f"{table} {key}",
                      f"its {column} is not what nexus writes (written by hand, or by a member "
                      "with plain SQL); nexus reads past it",
                      "`nexus doctor` lists such rows; fix or delete it in the database")


def scan_rows(conn: Any, most: int = 20) -> tuple[int, list[tuple[str, str, str]]]:
    """Every row of the store read as nexus reads it (the checked columns only): how many fail,
    and the first `most` of them (`nexus doctor`)."""
    global last_skipped
    found: list[tuple[str, str, str]] = []
    bad = 0
    for table, rules in RULES.items():
        cols = ", ".join(dict.fromkeys([*rules, *(k for k in KEYS if k in rules)]))
        sql = f"SELECT {cols} FROM {table}"
        cur = conn.execute(sql)
        raw = cur._cur if isinstance(cur, Checked) else cur
        steps = None
        for row in iter(raw.fetchone, None):
            steps = steps or plan(sql, ((table, table),), row)
            if not valid(steps, row):
                bad += 1
                if len(found) < most and last_skipped is not None:
                    found.append(last_skipped)
    return bad, found
