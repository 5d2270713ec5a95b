"""The one change the team store makes to a statement: SQLite's placeholders (`?`, `?NNN`,
`:name`) as the protocol's `$n`, found by a tokenizer that steps over string literals, quoted
names, comments and dollar-quoted bodies. Stdlib only."""

from __future__ import annotations

import re

from ..errors import NexusError

# what a statement holds, token by token: literals, quoted names, comments and dollar-quoted
# bodies are stepped over whole (a `?` or `:name` inside one is text), then SQLite's placeholders
_LEX = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|/\*.*?\*/"""
                  r"|\$\$.*?\$\$|\$(?P<tag>[A-Za-z_]\w*)\$.*?\$(?P=tag)\$"
                  r"|\?(?P<number>\d*)|(?<![:\w]):(?P<name>[A-Za-z_]\w*)", re.S)
_PLACES: dict[str, tuple[str, tuple[str, ...] | None]] = {}


def placeholders(sql: str) -> tuple[str, tuple[str, ...] | None]:
    """The statement with the protocol's `$n` for SQLite's placeholders (`?`, `?NNN`, `:name`),
    and for named ones the name each `$n` takes (None: positional, `$n` is the n-th value).
    Nothing else in the text changes: features write SQL both engines read."""
    hit = _PLACES.get(sql)
    if hit is not None:
        return hit
    names: list[str] = []
    largest = [0]

    def token(m: re.Match) -> str:
        if m.group("name") is not None:
            if m.group("name") not in names:
                names.append(m.group("name"))
            return f"${names.index(m.group('name')) + 1}"
        if m.group(0)[0] != "?":
            return m.group(0)
        largest[0] = int(m.group("number")) if m.group("number") else largest[0] + 1
        return f"${largest[0]}"

    text = _LEX.sub(token, sql)
    if names and largest[0]:
        raise NexusError("internal_error", sql[:80], "a statement mixes named and positional "
                         "placeholders", "report this as a bug in nexus")
    if len(_PLACES) > 4096:  # statements built on the fly (IN lists): keep the cache bounded
        _PLACES.clear()
    _PLACES[sql] = hit = (text, tuple(names) if names else None)
    return hit


def bound(sql: str, params: object) -> tuple[str, list | None]:
    """The statement as the server takes it and its values in order (None: no parameters, a
    simple query that may hold several statements). Booleans go as integers, as SQLite keeps
    them (the columns are BIGINT)."""
    if not params:
        return sql, None
    text, names = placeholders(sql)
    values = [params[n] for n in names] if names is not None else list(params)  # type: ignore[index, call-overload]
    return text, [int(v) if type(v) is bool else v for v in values]
