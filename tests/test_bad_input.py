"""Bad input for every argument of every tool: a coded error (exit 2), never a traceback, never a
write. The bad values come from each argument's own constraints in the registry."""

from __future__ import annotations

import typing

import pytest
from pydantic.fields import FieldInfo

from conftest import claude_env, sid, tree_bytes
from nexus_cli.registry import Tool, load

VALID = {"target": "codex", "text": "hi", "task": "job", "message_id": "m-1", "task_id": "t-1",
         "client": "claude", "state": "on", "action": "status", "status": "completed",
         "result": "r"}


def bad_values(info: FieldInfo) -> list[str]:
    """Values that break this argument's constraints."""
    import types

    ann = info.annotation
    union = typing.get_origin(ann) in (typing.Union, types.UnionType)
    base = [a for a in typing.get_args(ann) if a is not type(None)][0] if union else ann
    if typing.get_origin(base) is typing.Literal:
        return ["bogus-choice"]
    bad = []
    for meta in info.metadata:
        for attr, fn in (("max_length", lambda v: "x" * (v + 1)), ("ge", lambda v: str(v - 1)),
                         ("gt", lambda v: str(v)), ("le", lambda v: str(v + 1)),
                         ("min_length", lambda v: "" if v == 1 else None),
                         ("pattern", lambda v: "has space")):
            value = getattr(meta, attr, None)
            if value is not None and fn(value) is not None:
                bad.append(fn(value))
    if base in (int, float):
        bad.append("not-a-number")
    if typing.get_origin(base) is dict:
        bad.append("{not json")
    return bad


def cases() -> list[tuple[str, str, str]]:
    out = []
    for tool in load().values():
        for name, info in tool.args.model_fields.items():
            if info.annotation is bool:
                continue  # flags: present or not, never invalid
            for value in bad_values(info):
                out.append((tool.name, name, value))
    return out


def argv(tool: Tool, field: str, value: str) -> list[str]:
    args = list(tool.path)
    for name in tool.positional:
        args.append(value if name == field else VALID.get(name, "x"))
    for name, info in tool.args.model_fields.items():
        if name in tool.positional:
            continue
        if name == field:
            args += ["--" + name.replace("_", "-"), value]
        elif info.is_required():
            args += ["--" + name.replace("_", "-"), VALID.get(name, "x")]
    return args


@pytest.mark.parametrize("tool_name,field,value", cases())
def test_every_bad_argument_is_a_coded_error_and_writes_nothing(nx, hook, chdir_work, home,
                                                               tool_name, field, value):
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    before = tree_bytes(home)
    tool = load()[tool_name]
    r = nx(*argv(tool, field, value), "--json", env=claude_env(sid(1)))
    assert r.code == 2, (argv(tool, field, value), r.out, r.err)
    err = r.json["error"]
    assert err["code"] in ("invalid_argument", "usage_error"), err
    assert field in err["key"] or field.replace("_", "-") in err["reason"] or err["code"] == "usage_error"
    assert "Traceback" not in r.err and r.err.startswith("nexus: ")
    after = tree_bytes(home)
    assert {k: v for k, v in after.items() if k.endswith("nexus.db")} == \
        {k: v for k, v in before.items() if k.endswith("nexus.db")}


def test_there_are_bad_cases_for_every_tool_with_arguments():
    covered = {t for t, _, _ in cases()}
    with_args = {t.name for t in load().values()
                 if any(i.annotation is not bool for i in t.args.model_fields.values())}
    assert with_args <= covered, with_args - covered
