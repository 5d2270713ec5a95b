"""The shapes of what nexus stores and reads back: ids, handles, names, times and numbers. Each is
a predicate over a value as a row gives it (None is a missing value, checked by the schema, not
here). They are what core/store/rows.py checks every row against, so that what a team member
writes with plain SQL is read like any other input. Stdlib only, and no regular expression: a
hook checks the rows it reads with set and comparison tests alone.

- a token (a message, task, run, approval, reservation or meeting id, a tool use id): 1-100
  ASCII characters of `A-Z a-z 0-9 . _ : @ # + -`, the first a letter or digit: nothing that
  can end a line, a quote or a shell word;
- a participant id: `claude:<uuid>`, `codex:<uuid>`, `user:<login>[@<machine>]` (identity.py),
  or nexus's own `nexus:system`;
- a handle: `s-` and lowercase hex digits (a session's), or `u-` and a person's login;
- a name: 1-128 characters of `A-Z a-z 0-9 . _ @ # -` (what nexus and `profile --name` make);
- a time: a number of seconds since 1970 that a calendar can show (|t| < 1e11, so not NaN, not
  an infinity, not 1e300), a number: finite and below 1e15."""

from __future__ import annotations

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


def handle_of(sid: object, value: object) -> bool:
    """Whether `value` is the handle of the session `sid` (a handle is cut from its own id: no
    row can carry another's, nor a person's on an agent)."""
    if not (type(sid) is str and type(value) is str and handle(value)):
        return False
    client, _, rest = sid.partition(":")
    if client == "user":
        return value == "u-" + rest
    return value.startswith("s-") and rest.replace("-", "").startswith(value[2:].partition("-")[0])


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
