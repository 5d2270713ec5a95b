"""Arguments checked against a tool's input schema (contract/tools.json), before any work.

The schemas are generated from each feature's pydantic models; this module applies the subset
of JSON Schema they use, in the standard library, so a command or an MCP call does not pay for
importing pydantic (70 ms). It fills defaults, takes numbers and flags written as text (the CLI),
treats `null` as "not given", and says what is wrong in plain words; `tests/test_validate.py`
checks that it accepts and refuses exactly what the models do."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from . import jsonstrict

_patterns: dict[str, re.Pattern[str]] = {}


class Problem(Exception):
    """One argument that is not as the schema wants it: `path` names it (first element: the
    argument's name), `reason` says why in plain words."""

    def __init__(self, path: tuple[str | int, ...], reason: str, kind: str = "invalid") -> None:
        super().__init__(reason)
        self.path, self.reason, self.kind = path, reason, kind
        self.parts: list[Problem] = []  # the problems it gathers (fields of one object)


def _pattern(text: str) -> re.Pattern[str]:
    compiled = _patterns.get(text)
    if compiled is None:
        # a final `$` in a JSON Schema pattern means the end of the string, not "before a newline"
        anchored = text[:-1] + r"\Z" if text.endswith("$") and not text.endswith("\\$") else text
        compiled = _patterns[text] = re.compile(anchored)
    return compiled


def _depth(value: object, limit: int, level: int = 1) -> bool:
    """True when `value` nests no deeper than `limit` levels (checked without recursion limits)."""
    stack = [(value, level)]
    while stack:
        item, lvl = stack.pop()
        if isinstance(item, dict | list):
            if lvl > limit:
                return False
            stack.extend((v, lvl + 1) for v in (item.values() if isinstance(item, dict) else item))
    return True


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# text read as a number or a flag (the CLI gives every value as text); the models read the same
# (core.models.Args), and tests/test_validate.py checks that both accept exactly this
INT_TEXT = re.compile(r"\A[+-]?\d{1,18}(?:\.0+)?\Z")  # `7`, `-3`, `7.0`: no `1_000`, no `0x10`
NUMBER_TEXT = re.compile(r"\A[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")  # no nan, no inf
TRUE = frozenset({"true", "1", "yes", "on", "t", "y"})
FALSE = frozenset({"false", "0", "no", "off", "f", "n"})


def _coerce(schema: Mapping[str, Any], value: object, path: tuple) -> object:
    kind = schema.get("type")
    if (kind == "string" and isinstance(value, str)) or (
            kind == "boolean" and isinstance(value, bool)):
        return value  # (most arguments, as the checks below would take them)
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if not kinds or (value is None and "null" in kinds):
        return value
    if "integer" in kinds:
        if isinstance(value, bool):
            pass  # a flag is not a number
        elif isinstance(value, int):
            return value
        elif isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
            return int(value)
        elif isinstance(value, str) and INT_TEXT.match(value.strip()):
            return int(value.strip().partition(".")[0])
    if "number" in kinds:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                raise Problem(path, "must be a finite number")
            return value
        if isinstance(value, str):
            text = value.strip()
            if NUMBER_TEXT.match(text):
                if math.isfinite(float(text)):
                    return float(text)
                raise Problem(path, "must be a finite number")  # 1e999
            if text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
                raise Problem(path, "must be a finite number")
    if "boolean" in kinds:
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in TRUE | FALSE:
            return value.strip().lower() in TRUE
    if "string" in kinds and isinstance(value, str):
        return value
    if "object" in kinds:
        if isinstance(value, str) and schema.get("x-json"):
            try:
                value = jsonstrict.loads(value)
            except (ValueError, RecursionError) as exc:
                raise Problem(path, f"is not valid JSON ({exc})") from None
        if isinstance(value, dict):
            return value
    if "array" in kinds and isinstance(value, list):
        return value
    words = {"integer": "a whole number", "number": "a number", "boolean": "true or false",
             "string": "text", "object": "a JSON object", "array": "a list", "null": "null"}
    raise Problem(path, "must be " + " or ".join(words.get(str(k), str(k)) for k in kinds))


_SCALARS = frozenset((str, bool, int, type(None)))


def nonfinite(value: object) -> tuple | None:
    """The path to a NaN or infinity inside `value` (given by a caller in-process: text from
    outside is read by `jsonstrict`, which refuses them), else None."""
    if isinstance(value, dict) and _SCALARS.issuperset(map(type, value.values())):
        return None  # (flat arguments, looked at without a Python loop)
    stack: list[tuple[object, tuple]] = [(value, ())]
    while stack:
        item, where = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return where
        if isinstance(item, dict):
            stack.extend((v, (*where, k)) for k, v in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((v, (*where, i)) for i, v in enumerate(item))
    return None


def check(schema: Mapping[str, Any], value: object, defs: Mapping[str, Any] | None = None,
          path: tuple = ()) -> object:
    """`value` as the schema wants it (coerced, defaults filled), or a Problem."""
    if defs is None:  # the whole arguments: no number in them may be NaN or infinite, at any depth
        where = nonfinite(value)
        if where is not None:
            raise Problem((*path, *where), "must be a finite number (JSON has no NaN or "
                          "Infinity)")
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        if schema.get("x-json") and isinstance(value, str):  # an object given as JSON text
            value = _coerce({"type": "object", "x-json": True}, value, path)
        return check(defs[schema["$ref"].rsplit("/", 1)[-1]], value, defs, path)
    if "anyOf" in schema:
        first: Problem | None = None
        for option in schema["anyOf"]:
            try:
                return check(option, value, defs, path)
            except Problem as exc:
                first = first or exc
        assert first is not None
        raise first
    value = _coerce(schema, value, path)
    if "const" in schema and value != schema["const"]:
        raise Problem(path, f"must be {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        raise Problem(path, "must be one of: " + ", ".join(map(str, schema["enum"])))
    if isinstance(value, str):
        try:
            if not value.isascii():  # (ASCII holds no lone surrogate: no copy to find one)
                value.encode("utf-8")
        except UnicodeEncodeError:
            raise Problem(path, "is not valid text (it holds bytes that are not UTF-8)") from None
        n = len(value)
        if "minLength" in schema and n < schema["minLength"]:
            raise Problem(path, "must not be empty" if schema["minLength"] == 1 else
                          f"must be at least {_plural(schema['minLength'], 'character')}")
        if schema.get("minLength", 0) >= 1 and value.isspace():  # (not empty, as just checked)
            raise Problem(path, "must not be blank")
        if "maxLength" in schema and n > schema["maxLength"]:
            raise Problem(path, f"must be at most {_plural(schema['maxLength'], 'character')} "
                          f"(it has {n:,})")
        if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
            raise Problem(path, schema.get("x-hint") or "has characters that are not allowed")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        for key, ok, words in (("minimum", value >= schema.get("minimum", value), "at least"),
                               ("maximum", value <= schema.get("maximum", value), "at most"),
                               ("exclusiveMinimum",
                                value > schema.get("exclusiveMinimum", value - 1), "more than"),
                               ("exclusiveMaximum",
                                value < schema.get("exclusiveMaximum", value + 1), "less than")):
            if key in schema and not ok:
                raise Problem(path, f"must be {words} {schema[key]:g}")
    elif isinstance(value, dict):
        return _object(schema, value, defs, path)
    elif isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise Problem(path, f"must have at most {_plural(schema['maxItems'], 'item')}")
        if "minItems" in schema and len(value) < schema["minItems"]:
            raise Problem(path, f"must have at least {_plural(schema['minItems'], 'item')}")
        items = schema.get("items")
        if items:
            return [check(items, v, defs, (*path, i)) for i, v in enumerate(value)]
    return value


def _object(schema: Mapping[str, Any], value: dict, defs: Mapping[str, Any],
            path: tuple) -> dict:
    if "x-max-depth" in schema and not _depth(value, schema["x-max-depth"]):
        raise Problem(path, f"nests deeper than {schema['x-max-depth']} levels")
    if "x-max-bytes" in schema:
        try:
            size = len(json.dumps(value, ensure_ascii=False).encode())
        except (ValueError, TypeError, RecursionError):
            raise Problem(path, "cannot be written as JSON") from None
        if size > schema["x-max-bytes"]:
            raise Problem(path, f"is {size:,} bytes as JSON; at most {schema['x-max-bytes']:,}")
    props = schema.get("properties")
    if props is None:
        return value
    aliases = schema.get("x-aliases")
    if aliases:  # another accepted name of an argument (`task_id` for `taskId`)
        value = {aliases.get(k, k) if aliases.get(k, k) not in value else k: v
                 for k, v in value.items()}
    out: dict[str, Any] = {}
    extra = schema.get("additionalProperties", True)
    # inside an object argument (a manifest) every field at fault is named in one error, so that
    # fixing it takes one try; the arguments themselves are named one at a time
    problems: list[Problem] = []

    def fault(problem: Problem) -> None:
        if not path:
            raise problem
        problems.append(problem)

    for key, item in value.items():
        if key in props:
            if item is not None:  # null means "not given"
                try:
                    out[key] = check(props[key], item, defs, (*path, key))
                except Problem as exc:
                    fault(exc)
        elif extra is False:
            fault(Problem((*path, key), "is not an argument of this command", kind="unknown"))
        else:
            out[key] = item
    for key, item in props.items():
        if key in out or (problems and any(p.path[len(path):][:1] == (key,) for p in problems)):
            continue
        if key in schema.get("required", ()):
            fault(Problem((*path, key), "is required", kind="missing"))
            continue
        if "default" in item:
            default = item["default"]
            out[key] = (json.loads(json.dumps(default)) if isinstance(default, dict | list)
                        else default)
        else:
            out[key] = None
    if len(problems) == 1:
        raise problems[0]
    if problems:
        leaves = [leaf for p in problems for leaf in (p.parts or [p])]
        whole = Problem(path, f"has {len(leaves)} fields to fix: " + "; ".join(
            f"{'.'.join(map(str, leaf.path[len(path):])) or '(itself)'} {leaf.reason}"
            for leaf in leaves))
        whole.parts = leaves
        raise whole
    return out
