"""JSON as the standard defines it, at every door and every exit. Stdlib only (the hooks use it).

Python's `json` reads `NaN`, `Infinity` and `-Infinity` (and `1e999` as infinity) and writes them
back bare, which strict parsers (Node's `JSON.parse`, Go, jq) reject: one non-finite number in a
task's metadata would make every answer that carries it unreadable for them. So what nexus reads
from outside (CLI arguments, MCP messages, hook events) refuses them, and what it writes never
holds one: a non-finite number that got in anyway (a store written by an older nexus) is written
as `null`, as JavaScript's `JSON.stringify` does."""

from __future__ import annotations

import json
import math


def _not_json(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number (numbers must be finite)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        _not_json(text)
    return value


def loads(text: str | bytes) -> object:
    """`json.loads`, refusing `NaN`, `Infinity`, `-Infinity` and numbers too large for a float
    (ValueError, as for any other text that is not JSON)."""
    return json.loads(text, parse_constant=_not_json, parse_float=_finite_float)


def finite(value: object) -> object:
    """`value` with every non-finite float replaced by None (iteratively: no recursion limit)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if not isinstance(value, dict | list | tuple):
        return value
    root: list = [value]
    stack: list[tuple] = [(root, 0, value)]
    while stack:
        holder, key, item = stack.pop()
        if isinstance(item, dict):
            copy: dict | list = dict(item)
            keys: list | range = list(copy)
        elif isinstance(item, list | tuple):
            copy = list(item)
            keys = range(len(copy))
        else:
            if isinstance(item, float) and not math.isfinite(item):
                holder[key] = None
            continue
        holder[key] = copy
        stack.extend((copy, k, copy[k]) for k in keys)
    return root[0]


def dumps(value: object, indent: int | None = None, ensure_ascii: bool = True,
          separators: tuple[str, str] | None = None) -> str:
    """`json.dumps` that never writes a non-finite number (it becomes null)."""
    try:
        return json.dumps(value, allow_nan=False, indent=indent, ensure_ascii=ensure_ascii,
                          separators=separators)
    except ValueError:  # a NaN or infinity somewhere (rare: only old records can hold one)
        return json.dumps(finite(value), allow_nan=False, indent=indent,
                          ensure_ascii=ensure_ascii, separators=separators)
