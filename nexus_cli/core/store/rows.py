"""Where rows become records: every row a statement returns is checked, per table and column,
against the shape nexus relies on (core/shapes.py), before any feature sees it. In team mode a
member can write rows with plain SQL; a row nexus would not have written (an id with a newline,
a handle cut from another session's id, a person's name on an agent, NaN or 1e300 in a time, a
state nexus does not know) is skipped, as if it were not there, and remembered (`SKIPPED`): the
command line says so on stderr (`row_invalid`), `nexus doctor` names every such row. The others
are read as ever: one bad row never stops a listing, a hook or the upkeep.

Both backends go through here (db.Connection.execute, pg.Conn.execute). What a statement reads
is worked out once per statement text (its plan: which result columns come from which table's
column), from the statement and the names of its result columns: a column named by an alias of
an expression is not checked, nor one whose table the statement leaves in doubt (a name two
joined tables both have, with different shapes). Stdlib only: the hooks read through here."""

from __future__ import annotations

from .. import shapes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

P, TOKEN, TIME, NUM, PID, LINE = (shapes.participant, shapes.token, shapes.time, shapes.number,
                                  shapes.pid, shapes.line)


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


def _actor(value: object) -> bool:
    return value in FACES or P(value)


# table -> column -> check. A column nexus prints, parses, compares or acts on is here; text a
# peer wrote freely (a message's text, a note) is not: it is data, rendered as such (core.text).
RULES: dict[str, dict[str, Callable[[object], bool]]] = {
    "sessions": {
        "id": P, "client": _one_of("claude", "codex", "user", "nexus"), "handle": shapes.handle,
        "name": shapes.name, "status": SESSION_STATUS, "waiter_pid": PID, "client_pid": PID,
        "client_start": LINE, "machine": TEXT, "predecessor": P, "successor": P, "parent": P,
        "offered_to": P, "last_turn_end": TIME, "last_prompt_at": TIME, "last_wake_at": TIME,
        "handoff_at": TIME, "offered_at": TIME, "created_at": TIME, "last_active": TIME,
        "auto_turns": NUM},
    "tool_uses": {"tool_use_id": TOKEN, "session_id": P, "created_at": TIME},
    "messages": {
        "seq": NUM, "id": TOKEN, "kind": MESSAGE_KIND, "sender": P, "recipient": P,
        "reply_to": TOKEN, "task_id": TOKEN, "created_at": TIME, "delivered_at": TIME,
        "read_at": TIME, "expired_at": TIME, "notified_at": TIME},
    "tasks": {
        "seq": NUM, "id": TOKEN, "sender": P, "target": P, "status": TASK_STATUS,
        "message_id": TOKEN, "report_message_id": TOKEN, "progress": NUM, "expires_at": TIME,
        "created_at": TIME, "updated_at": TIME, "closed_at": TIME},
    "events": {"seq": NUM, "at": TIME, "actor": _actor, "action": TOKEN},
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
    ("sessions", "id", "handle"): shapes.handle_of,
    ("sessions", "id", "name"): lambda sid, name: (
        str(sid).startswith("user:") or shapes.agent_name(name)),
}
KEYS = ("id", "seq", "key", "session_id", "tool_use_id", "run_id")  # what names a row
# (table, the row's key, the column) of the rows this process read past, the last KEEP; `last`:
# the latest, cleared at each statement that reads a checked table (what `db.present` reports)
SKIPPED: list[tuple[str, str, str]] = []
KEEP = 100
last: tuple[str, str, str] | None = None

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
                    if name in RULES:
                        after = words[2] if words[1] == "AS" and len(words) > 2 else words[1]
                        alias = after if after and after.upper() not in _KEYWORDS and \
                            _IDENT.issuperset(after) else name
                        found.append((alias.lower(), name))
                at = text.find(keyword, at + 1)
    _TABLES[sql] = got = tuple(found) or None
    return got


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
    global last
    names = row.keys()
    key = next((f"{k}={row[names.index(k)]!r}" for k in KEYS if k in names),
               repr(tuple(row)[:2]))
    last = (table, key if len(key) <= 120 else key[:119] + "…", column)
    SKIPPED.append(last)
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
    global last
    named = tables(sql)
    if named is None:
        return cur
    last = None
    return Checked(cur, sql, named)


def error(entry: tuple[str, str, str]) -> Any:
    """The coded error for a skipped row."""
    from ..errors import NexusError

    table, key, column = entry
    return NexusError("row_invalid", f"{table} {key}",
                      f"its {column} is not what nexus writes (written by hand, or by a member "
                      "with plain SQL); nexus reads past it",
                      "`nexus doctor` lists such rows; fix or delete it in the database")


def scan(conn: Any, most: int = 20) -> tuple[int, list[tuple[str, str, str]]]:
    """Every row of the store read as nexus reads it (the checked columns only): how many fail,
    and the first `most` of them (`nexus doctor`)."""
    global last
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
                if len(found) < most and last is not None:
                    found.append(last)
    return bad, found
