"""Bad input for every argument of every tool: a coded error (exit 2) that names the argument as
typed, never a traceback, never a write. The bad values come from each argument's own
constraints in the compiled schema (contract/tools.json), the same the CLI and MCP check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import A, plain, sid, tree_bytes
from nexus_cli.cli.params import dest, flag
from nexus_cli.core.registry import specs

MANIFEST = ('{"id": "web_a", "name": "A", "description": "", "techStack": [], "relations": [],'
            ' "repositoryUrl": "", "localPath": "/", "endpoints": [], "apiSpec": []}')
VALID = {"target": "codex", "text": "hi", "task": "job", "message_id": "m-1", "task_id": "t-1",
         "client": "claude", "state": "on", "action": "status", "status": "completed",
         "result": "r", "taskId": "t-1", "projectId": "web_a", "oldId": "web_a",
         "newId": "web_b", "fileName": "f.txt", "base64Content": "aGk=", "query": "q",
         "docId": "d1", "title": "t", "content": "c", "meetingId": "mtg-1", "topic": "t",
         "message": "m", "manifest": MANIFEST, "internalDocs": "d", "patch": '{"name": "n"}',
         ("host_maintenance", "action"): "prune"}


def valid(spec: dict[str, Any], name: str) -> str:
    """A good value for an argument (a choice: one of its choices; else a plain value of its
    schema, helpers.plain), so that the one bad value is the only thing wrong."""
    prop = spec["inputSchema"]["properties"][name]
    good = VALID.get((spec["name"], name), VALID.get(name))
    if good is None:
        value = plain(prop)
        value = value[0] if isinstance(value, list) else value  # one value of a list argument
        good = "x" if value is None else str(value)
    choices = prop.get("enum")
    return good if not choices or good in choices else choices[0]


def kind(prop: dict[str, Any]) -> str:
    k = prop.get("type", "string")
    return next(x for x in k if x != "null") if isinstance(k, list) else k


def bad_values(prop: dict[str, Any]) -> list[str]:
    """Values that break this argument's constraints, written as a person would type them."""
    if "enum" in prop:
        return ["bogus-choice"]
    if kind(prop) == "array":  # a list argument: one value breaking its items' constraints
        return bad_values(prop.get("items", {}))
    bad = []
    for key, make in (("maxLength", lambda v: "x" * (v + 1)), ("minimum", lambda v: str(v - 1)),
                      ("exclusiveMinimum", lambda v: str(v)), ("maximum", lambda v: str(v + 1)),
                      ("minLength", lambda v: "" if v == 1 else None),
                      ("pattern", lambda v: "has space")):
        if key in prop and make(prop[key]) is not None:
            bad.append(make(prop[key]))
    if kind(prop) in ("integer", "number"):
        bad.append("not-a-number")
    if prop.get("x-json"):
        bad += ["{not json", '"a string"', "[" * 40 + "]" * 40]
    return bad


def cases() -> list[tuple[str, str, str]]:
    out = []
    for spec in specs().values():
        if not spec["cli"]:
            continue  # an MCP-only tool (tests/test_mcp.py covers its arguments)
        for name, prop in spec["inputSchema"]["properties"].items():
            if kind(prop) == "boolean":
                continue  # flags: present or not, never invalid
            out += [(spec["name"], name, v) for v in bad_values(prop)]
    return out


def argv(spec: dict[str, Any], field: str, value: str) -> list[str]:
    args = list(spec["cli"]["path"])
    schema = spec["inputSchema"]
    for name in spec["cli"]["positional"]:
        args.append(value if name == field else valid(spec, name))
    for name in schema["properties"]:
        if name in spec["cli"]["positional"]:
            continue
        if name == field:
            args += [flag(name), value]
        elif name in schema.get("required", ()):
            args += [flag(name), valid(spec, name)]
    return args


@pytest.mark.parametrize("tool_name,field,value", cases())
def test_every_bad_argument_is_a_coded_error_and_writes_nothing(nx, pair, home, tool_name, field,
                                                               value):
    before = tree_bytes(home)
    spec = specs()[tool_name]
    r = nx(*argv(spec, field, value), "--json", env=A)
    assert r.code == 2, (argv(spec, field, value), r.out, r.err)
    err = r.json["error"]
    assert err["code"] in ("invalid_argument", "usage_error"), err
    typed = dest(field).upper() if field in spec["cli"]["positional"] else flag(field)
    # it names the argument as typed (a positional choice: quotes the value typed)
    assert err["key"].startswith(typed) or typed in err["reason"] or (
        field in spec["cli"]["positional"] and f"'{value}' is not one of" in err["reason"]), err
    assert "Traceback" not in r.err and r.err.startswith("nexus: ")
    after = tree_bytes(home)
    assert {k: v for k, v in after.items() if k.endswith("nexus.db")} == \
        {k: v for k, v in before.items() if k.endswith("nexus.db")}


def test_there_are_bad_cases_for_every_tool_with_arguments():
    covered = {t for t, _, _ in cases()}
    with_args = {s["name"] for s in specs().values() if s["cli"]
                 and any(kind(p) != "boolean" for p in s["inputSchema"]["properties"].values())}
    assert with_args <= covered, with_args - covered


def test_text_that_is_not_utf_8_is_bad_input(nx, hook, chdir_work, home):
    hook("claude", "SessionStart", sid(1), source="startup")
    before = tree_bytes(home)
    for args, env in ((("send", "claude", "bad \udcff bytes"), {}),
                      (("whoami", "--as", "claude:\udcff"), {}),
                      (("whoami",), {"CLAUDE_CODE_SESSION_ID": "\udcff\udcfe"})):
        r = nx(*args, env=env)
        assert r.code == 2 and "Traceback" not in r.err and r.err.startswith("nexus: "), (args, r)
    assert {k: v for k, v in tree_bytes(home).items() if k.endswith("nexus.db")} == \
        {k: v for k, v in before.items() if k.endswith("nexus.db")}


# -- Ctrl-C ---------------------------------------------------------------------------------------

_INTERRUPTED = """
import os, signal, sys
{setup}
from nexus_cli.__main__ import main
sys.exit(main({argv!r}))
"""


def _nexus_in_a_process(setup: str, argv: list[str], home) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX"))}
    env.update(NEXUS_HOME=str(home), PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    return subprocess.run([sys.executable, "-c", _INTERRUPTED.format(setup=setup, argv=argv)],
                          env=env, capture_output=True, text=True, timeout=60)


def test_ctrl_c_while_nexus_loads_is_exit_130_without_a_traceback(home):
    done = _nexus_in_a_process(
        "import nexus_cli.cli as c\n"
        "def boom(args):\n    raise KeyboardInterrupt\n"
        "c.main = boom", ["peers"], home)
    assert done.returncode == 130 and "nexus: interrupted" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_ctrl_c_once_the_write_is_done_does_not_call_it_interrupted(home):
    """The message is stored: exit 0 and the answer, else a script retrying on 130 sends it
    twice."""
    done = _nexus_in_a_process(
        "from nexus_cli.cli import output\n"
        "shown = output.emit\n"
        "def emit(*a, **k):\n    os.kill(os.getpid(), signal.SIGINT)\n    return shown(*a, **k)\n"
        "output.emit = emit", ["profile", "--note", "busy with the parser"], home)
    assert done.returncode == 0, done.stderr
    assert "interrupted" not in done.stderr


# -- usage errors ---------------------------------------------------------------------------------


def test_a_group_without_its_command_shows_what_it_offers(nx):
    r = nx("team")
    assert r.code == 2 and "Commands:" in r.out and "join" in r.out
    assert "\\n" not in r.out + r.err


@pytest.mark.parametrize(("argv", "where", "said"), [
    (["install"], "nexus install", "Choose from: claude, codex, git-hook"),
    (["install", "codex", "--scope"], "nexus install", "'--scope' requires an argument"),
    (["chat", "send", "--bogus", "x"], "nexus chat send", "No such option '--bogus'"),
])
def test_a_usage_error_is_one_line_naming_the_command(nx, argv, where, said):
    r = nx(*argv)
    assert r.code == 2, r.err
    assert r.err.startswith(f"nexus: usage_error: {where} (") and said in r.err, r.err
    assert f"see `{where} --help`" in r.err
    assert r.err.count("\n") == 1 and "\\n" not in r.err and "\\t" not in r.err


def test_a_negative_number_is_told_how_to_pass(nx, home):
    r = nx("config", "set", "maxAutoTurns", "-3")
    assert r.code == 2 and "goes after `--`" in r.err
    r = nx("config", "set", "maxAutoTurns", "--", "-3")
    assert r.code == 2 and "whole number from 0 to 100" in r.err


def test_text_of_spaces_alone_is_refused_like_empty_text(nx, home):
    for text, why in (("", "must not be empty"), ("   ", "must not be blank"),
                      ("\n\t ", "must not be blank")):
        r = nx("send", "codex", text)
        assert r.code == 2 and r.err.startswith(f"nexus: invalid_argument: TEXT ({why};"), r.err


def test_positional_arguments_are_described_with_their_limits(nx):
    import click

    help_text = nx("send", "--help").out
    if hasattr(click.Command, "format_arguments"):  # click 8.5 on; older ones leave it out
        assert "TEXT    The message (at most 32,000 characters)." in help_text


def test_an_mcp_call_whose_commit_fails_gets_the_error_alone(monkeypatch, home):
    """Unit: a consuming call's answer is written once it has committed; a COMMIT that fails
    (here: the tool failing after handing its result over) answers with the error alone, one
    response, nothing consumed."""
    import threading

    from nexus_cli.catalog import load
    from nexus_cli.core.errors import NexusError
    from nexus_cli.mcp import tools as mcp_tools

    def answered_then_failed(tool, ctx, args):
        with ctx.write():
            ctx.hand_over({"messages": [], "count": 0, "remaining": 0}, lambda conn: None)
            raise NexusError("store_full", "x", "the disk is full", "free some space")

    monkeypatch.setattr(mcp_tools, "invoke", answered_then_failed)
    replies: list = []
    tool = load()["read"]
    got = mcp_tools.run_tool(tool, {}, {}, {}, [], threading.Event(), replies.append)
    assert replies == [] and got is not None and got["isError"] is True
    assert got["_meta"][mcp_tools.ERROR_META]["code"] == "store_full"
