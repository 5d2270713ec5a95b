"""The two validators agree: the pydantic models (the source of contract/tools.json, used at
generation) and `core.validate` (which applies the compiled schemas at run time, without
pydantic) accept and refuse the same arguments, and read them as the same values. Every
argument of every tool is fed the same probes by both, then random values (hypothesis); and what
is not JSON (NaN, Infinity) is refused at every door and never written out."""

from __future__ import annotations

import functools
import io
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nexus_cli.catalog import load
from nexus_cli.core import jsonstrict, registry, validate
from nexus_cli.gen.contract import model

TOOLS = load()
# (tool, argument) for every argument of every tool
ARGS = [(name, prop) for name, tool in sorted(TOOLS.items())
        for prop in registry.spec(tool)["inputSchema"].get("properties", {})]
PROBES: list[Any] = [
    None, True, False, 0, 1, 2, -1, 7, 2**63, 10**20, 0.0, 1.0, 1.5, -0.0, 7.0, 1e19,
    math.nan, math.inf, -math.inf,
    "", " ", "x", "0", "1", "2", "-1", "+7", "-0", "7.0", "7.", ".5", "1e3", "1e999", "1_000",
    "0x10", " 7 ", "9" * 30, "nan", "inf", "-Infinity", "t", "f", "y", "n", "yes", "no", "on",
    "off", "true", "TRUE", " true ", "False", "claude:00000001-0000-4000-8000-000000000001",
    "s-0123456789ab", "on\n", "a" * 70, [], ["x"], [1], {}, {"a": 1}, {"a": math.nan},
    '{"a": 1}', '{"a": NaN}', '{"a": Infinity}', '{"a": 1e999}', "[1]",
    "\u3000\u2003", " \u00e9 ", [1.5], {"a": [math.inf]},  # (non-ASCII, nested)
]


def pydantic_reads(tool_name: str, prop: str, value: Any) -> tuple[bool, Any]:
    """Whether the model accepts `value` for the argument `prop` (other arguments' faults, such
    as a required one missing, do not count), and the value it reads."""
    from pydantic import ValidationError

    tool = TOOLS[tool_name]
    cls = model(tool, tool.args)
    try:
        got = cls.model_validate({prop: value})
    except ValidationError as exc:
        mine = [e for e in exc.errors() if e["loc"][:1] in ((prop,), ()) and
                not (e["loc"] == () and f"{prop}:" not in str(e["msg"]))]
        return not mine, None
    field = next(n for n, f in cls.model_fields.items() if prop in (n, f.alias))
    return True, getattr(got, field)


def runtime_reads(tool_name: str, prop: str, value: Any) -> tuple[bool, Any]:
    """The same for core.validate, given the tool's schema with only that argument in it."""
    whole = registry.spec(TOOLS[tool_name])["inputSchema"]
    schema = {**whole, "properties": {prop: whole["properties"][prop]},
              "required": [r for r in whole.get("required", []) if r == prop]}
    try:
        got = validate.check(schema, {prop: value})
    except validate.Problem:
        return False, None
    assert isinstance(got, dict)
    return True, got[prop]


def same(a: Any, b: Any) -> bool:
    if hasattr(a, "model_dump"):
        a = a.model_dump(by_alias=True, exclude_none=False)
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)


@functools.cache
def others(tool_name: str, prop: str) -> tuple[tuple[str, Any], ...]:
    """Values both validators accept for the tool's other required arguments (an enum's first,
    every_tool.py's, else the first probe), so that what each reads of `prop` can be compared
    in a whole call."""
    from every_tool import STEPS

    schema = registry.spec(TOOLS[tool_name])["inputSchema"]
    filled = []
    for other in schema.get("required", []):
        if other == prop:
            continue
        given = [args[other] for _, tool, args in STEPS if tool == tool_name and other in args]
        good = [v for v in (*schema["properties"][other].get("enum", ()), *given, *PROBES)
                if v is not None and pydantic_reads(tool_name, other, v)[0]
                and runtime_reads(tool_name, other, v)[0]]
        assert good, f"no value of {tool_name}.{other} both accept: give one in every_tool.py"
        filled.append((other, good[0]))
    return tuple(filled)


def whole_reads(tool_name: str, prop: str, value: Any) -> tuple[Any, Any]:
    """What the model and core.validate read of `prop` in a whole call (None: refused)."""
    from pydantic import ValidationError

    tool = TOOLS[tool_name]
    args = {**dict(others(tool_name, prop)), prop: value}
    cls = model(tool, tool.args)
    field = next(n for n, f in cls.model_fields.items() if prop in (n, f.alias))
    try:
        by_model = getattr(cls.model_validate(args), field)
    except ValidationError:
        by_model = None
    try:
        by_run = validate.check(registry.spec(tool)["inputSchema"], args)[prop]
    except validate.Problem:
        by_run = None
    return by_model, by_run


def agree(tool_name: str, prop: str, value: Any) -> None:
    ok_model, _ = pydantic_reads(tool_name, prop, value)
    ok_run, _ = runtime_reads(tool_name, prop, value)
    assert ok_model == ok_run, (f"{tool_name}.{prop} = {value!r}: the model "
                                f"{'accepts' if ok_model else 'refuses'} it, core.validate "
                                f"{'accepts' if ok_run else 'refuses'} it")
    if ok_model and value is not None:
        read_model, read_run = whole_reads(tool_name, prop, value)
        assert (read_model, read_run) != (None, None), (
            f"{tool_name}: both refuse the whole call with {prop} = {value!r}: {others.__doc__}")
        assert same(read_model, read_run), (tool_name, prop, value, read_model, read_run)


@pytest.mark.parametrize("value", PROBES, ids=repr)
def test_both_validators_read_every_argument_alike(value):
    for tool_name, prop in ARGS:
        agree(tool_name, prop, value)


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats()
    | st.text(max_size=30) | st.sampled_from([p for p in PROBES if isinstance(p, str)]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=6)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arg=st.sampled_from(ARGS), value=VALUES)
def test_both_validators_agree_on_random_values(arg, value):
    agree(*arg, value)


# -- not JSON: refused at the door, never written ------------------------------------------------


@pytest.mark.parametrize("text", ['{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}',
                                  '{"a": 1e999}', '[1e400]'])
def test_non_finite_numbers_are_not_json(text):
    with pytest.raises(ValueError):
        jsonstrict.loads(text)


def test_nothing_written_holds_a_non_finite_number():
    value = {"a": math.nan, "b": [math.inf, {"c": -math.inf}], "d": 1.5, "e": "NaN"}
    text = jsonstrict.dumps(value)
    assert json.loads(text, parse_constant=lambda c: pytest.fail(c)) == \
        {"a": None, "b": [None, {"c": None}], "d": 1.5, "e": "NaN"}
    assert value["a"] != value["a"]  # the value itself is left as it was


@pytest.mark.parametrize("metadata", ['{"a": NaN}', '{"a": Infinity}', '{"a": [1, -Infinity]}',
                                      '{"a": 1e999}'])
def test_task_metadata_refuses_non_finite_numbers(nx, chdir_work, metadata):
    r = nx("task", "create", "do it", "--metadata", metadata)
    assert r.code == 2 and "invalid_argument" in r.err and "--metadata" in r.err, r.err
    assert nx("tasks", "--json").json["total"] == 0


def test_an_mcp_call_with_nan_is_a_parse_error_and_nothing_is_stored(home):
    from nexus_cli.mcp.server import Server

    out = io.BytesIO()
    server = Server(out)
    server.handle_line(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
                       b'{"name": "create_task", "arguments": {"text": "x", '
                       b'"metadata": {"a": NaN}}}}')
    reply = json.loads(out.getvalue().splitlines()[0])
    assert reply["error"]["code"] == -32700 and "NaN" in reply["error"]["message"]


def test_an_old_record_with_nan_is_written_as_null(nx, chdir_work, home):
    from helpers import raw_db

    assert nx("task", "create", "do it", "--metadata", '{"a": 1}').code == 0
    db = raw_db(home)
    db.execute("UPDATE tasks SET metadata = ?", ('{"a": NaN}',))  # written by an older nexus
    db.commit()
    r = nx("tasks", "--json")
    assert r.code == 0 and "NaN" not in r.out
    assert r.json["items"][0]["metadata"] == {"a": None}


# -- one validation for every duration -----------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "Infinity", "1e999", "-1", "x", ""])
def test_every_duration_refuses_what_is_not_a_duration(nx, chdir_work, value):
    """`watch --timeout` is read as every other duration (`ask --timeout`, `reserve --ttl`,
    `reserve --wait`): one validation, the same refusal."""
    import subprocess
    import sys

    asked = nx("ask", "claude:00000001-0000-4000-8000-000000000001", "q", "--timeout", value)
    # a process of its own: a watch that took nan or inf would wait until killed
    watched = subprocess.run([sys.executable, "-m", "nexus_cli", "watch", "--timeout", value],
                             capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert asked.code == watched.returncode == 2, (asked.err, watched.stderr)
    assert "--timeout" in watched.stderr and "invalid_argument" in watched.stderr
    def reason(err: str) -> str:
        return err.split("(", 1)[1].split(";", 1)[0]

    assert reason(asked.err) == reason(watched.stderr), (asked.err, watched.stderr)


def test_text_that_is_not_text_or_only_blanks_is_refused_whatever_its_alphabet():
    """(The checks of text take ASCII without a copy: what they refuse stays refused.)"""
    schema = registry.spec(TOOLS["send"])["inputSchema"]
    for text, reason in (("x\ud800", "not valid text"), ("\u3000 \u2003", "must not be blank"),
                         ("\t \n", "must not be blank"), ("", "must not be empty")):
        with pytest.raises(validate.Problem, match=reason):
            validate.check(schema, {"target": "s-1", "text": text})
    for text in (" é ", "x", "\u3000x"):
        assert validate.check(schema, {"target": "s-1", "text": text})["text"] == text
