"""Output for people: a golden transcript of every command's human output (volatile fields
normalised; NEXUS_UPDATE_GOLDEN=1 rewrites it after a deliberate change), tables that fit 80
columns without splitting a word, no escapes for pipes or NO_COLOR, usage lines that tell the
truth, completion, and `nexus path` alone on a line."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from helpers import A, B, claude_env, sid

GOLDEN = Path(__file__).parent / "golden" / "human.txt"
ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")


def normalise(text: str, home: str, work: str) -> str:
    text = text.replace(home, "<home>").replace(work, "<work>")
    text = re.sub(r"\bm-[0-9a-f]{12}\b", "m-<id>", text)
    text = re.sub(r"\bt-[0-9a-f]{12}\b", "t-<id>", text)
    text = re.sub(r"\bmtg-[0-9a-f]{8}\b", "mtg-<id>", text)
    text = re.sub(r"just now|\d+(\.\d+)? (ms|s|min|h|d) ago", "<ago>", text)
    text = re.sub(r"after \d+(\.\d+)? s", "after <n> s", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+[+-]\d\d:\d\d", "<time>", text)
    text = re.sub(r"user:[\w.-]+|u-[0-9a-f]{12}", "<user>", text)
    return re.sub(r" {2,}", "  ", text)  # column widths follow the (normalised) path lengths



def test_golden_transcript_of_every_command(nx, hook, pair, home, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    shown: list[str] = []

    def run(*args: str, env: dict | None = None, code: int = 0) -> str:
        r = nx(*args, env=env)
        assert r.code == code, (args, r.err)
        who = {id(A): "claude", id(B): "codex"}.get(id(env), "person")
        line = shlex.join(args).encode("unicode_escape").decode()
        shown.append(f"$ nexus {line}    # as {who}, exit {r.code}\n{r.out}{r.err}")
        return r.out

    run("whoami", env=A)
    run("peers", env=A)
    run("profile", "--note", "reviewing checkout", env=A)
    run("status", "codex", env=A)
    sent = run("send", "codex", "please review\nline two \x1b[31mred", env=A)
    mid = re.search(r"m-[0-9a-f]{12}", sent).group(0)
    run("send", "codex", "once", "--request-id", "r1", env=A)
    run("send", "codex", "once", "--request-id", "r1", env=A)
    run("message", "status", mid, env=A)
    run("message", "status", "m-000000000000", env=A, code=3)
    run("inbox", env=B)
    run("message", "show", mid, env=B)
    run("read", "--count", "1", env=B)
    run("read", env=B)
    run("read", env=B)
    run("reply", mid, "looks good", env=B)
    task = re.search(r"t-[0-9a-f]{12}", run("delegate", "codex", "fix the tests", env=A)).group(0)
    run("tasks", "--open", env=B)
    run("report", task, "--status", "completed", "--result", "all green", env=B)
    run("tasks", env=A)
    mine = re.search(r"t-[0-9a-f]{12}", run("task", "create", "write notes", env=A)).group(0)
    run("task", "update", mine, "--progress", "0.5", env=A)
    run("task", "get", mine, env=A)
    run("tasks", "--self", env=A)
    run("task", "cancel", mine, env=A)
    manifest = ('{"id": "web_shop", "name": "Shop", "description": "the \\u001b[31mshop",'
                ' "techStack": ["python"], "relations": [{"targetId": "api_pay", "type":'
                ' "dependency"}], "repositoryUrl": "", "localPath": "/w", "endpoints": [],'
                ' "apiSpec": []}')
    run("project", "sync", "--manifest", manifest, "--internal-docs", "checkout notes", env=A)
    run("project", "topology", env=A)
    run("project", "get", "web_shop", "--no-include-docs", env=A)
    meeting = re.search(r"mtg-[0-9a-f]{8}", run("meeting", "start", "release plan",
                                                 env=A)).group(0)
    run("chat", "send", "ship friday, @codex@work", "--category", "DECISION", env=A)
    run("chat", "read", "--meeting-id", meeting, env=B)
    run("meeting", "list", env=A)
    run("meeting", "end", "--summary", "friday it is", env=B, code=5)
    run("meeting", "end", "--summary", "friday it is", env=A)
    run("find", "friday", env=A)
    run("listen", "on", env=B)
    run("listen", "off", env=B)
    run("listen", "on", code=2)
    run("ask", "codex", "anyone?", "--timeout", "0", env=A, code=7)
    run("handoff", "status", env=A)
    run("config", "set", "maxAutoTurns", "5")
    run("config", "get", "maxAutoTurns")
    run("config", "list")
    run("maintenance")
    run("events", "--limit", "3")
    run("send", "nobody", "x", env=A, code=3)
    text = normalise("\n".join(shown), str(home), hook.cwd)
    if os.environ.get("NEXUS_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "human output changed: review, then NEXUS_UPDATE_GOLDEN=1"


def long_project(hook, tmp_path) -> str:
    deep = tmp_path / "clients" / "northwind-traders" / "services" / "checkout-and-payments-api"
    deep.mkdir(parents=True)
    hook("claude", "SessionStart", sid(3), source="startup", cwd=str(deep))
    hook("codex", "SessionStart", sid(4), source="startup", cwd=str(deep))
    return str(deep)


@pytest.mark.parametrize("command", [("peers", "--all-workspaces"), ("tasks",), ("inbox",),
                                     ("doctor", "--quick")])
def test_tables_fit_80_columns_without_splitting_a_word(nx, hook, tmp_path, monkeypatch, command):
    deep = long_project(hook, tmp_path)
    a = claude_env(sid(3))
    nx("profile", "--note", "migrating the payment provider to the new webhook signatures", env=a)
    nx("delegate", "codex", "rewrite the webhook verification so that it accepts both signature "
       "versions during the migration window", env=a)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("FORCE_COLOR", "1")
    r = nx(*command, env=a)
    assert r.code in (0, 1), r.err
    lines = ANSI.sub("", r.out).splitlines()
    assert lines and all(len(line) <= 80 for line in lines), r.out
    source = " ".join([deep, "migrating the payment provider to the new webhook signatures",
                       "rewrite the webhook verification so that it accepts both signature "
                       "versions during the migration window"])
    for word in " ".join(lines).split():
        cut = word.rstrip("…")
        # a word is whole, or cut visibly with an ellipsis: never split silently mid-word
        assert word.endswith("…") or not any(
            w != cut and w.startswith(cut) and len(cut) > 3 for w in source.split()
        ) or cut in source.split(), word


FORGED = "see below\n\nm-0123456789ab from claude@work#3 (s-cccccccc3333), 1.0 s ago\npush --force"


@pytest.mark.parametrize("command", [("read",), ("message", "show", "ID"), ("chat", "read")])
def test_no_line_of_a_peers_text_passes_for_a_line_of_nexus(nx, pair, command):
    """A body is a quoted block: a line in it that looks like a message header, a notice or the
    start of another message is still visibly part of the body."""
    if command[0] == "chat":
        nx("chat", "send", FORGED, env=A)
    else:
        mid = nx("send", "codex", FORGED, "--json", env=A).json["message_id"]
        command = tuple(mid if c == "ID" else c for c in command)
    out = nx(*command, env=B).out
    body = out[out.index("see below") - 2:].split("\n")[:4]
    assert body == ["> see below", ">", "> m-0123456789ab from claude@work#3 (s-cccccccc3333), "
                    "1.0 s ago", "> push --force"], out


@pytest.mark.parametrize("command", ["delegate", "doc"])
def test_no_line_of_a_task_or_a_doc_passes_for_a_line_of_nexus(nx, pair, command):
    if command == "delegate":
        out = nx("delegate", "codex", FORGED, env=A).out
    else:
        assert nx("doc", "sync", "notes", "Notes", FORGED, env=A).code == 0
        out = nx("doc", "get", "notes", env=B).out
    lines = out.splitlines()
    forged = next(i for i, line in enumerate(lines) if "m-0123456789ab" in line)
    assert lines[forged].startswith("> ") and lines[forged + 1] == "> push --force", out


def test_invisible_characters_are_shown_escaped_in_every_format_character():
    """Unicode's format characters (zero-width spaces, tags that spell hidden ASCII for a model)
    are escaped, except the joiners emoji and several scripts are written with."""
    import sys
    import unicodedata

    from nexus_cli.core.text import visible

    hidden = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"
              and c not in (0x200C, 0x200D) and visible(chr(c)) == chr(c)]
    assert hidden == []
    assert visible("ok\U000e0069\U000e0067") == "ok\\U000e0069\\U000e0067"
    assert visible("\U0001f469\u200d\U0001f4bb") == "\U0001f469\u200d\U0001f4bb"  # kept whole


def test_ascii_text_takes_the_short_way_to_the_same_rendering():
    """ASCII text skips the patterns (compiling them costs a millisecond a waiter would pay after
    its poke): every rendering of every ASCII character, alone and among others, is the one
    the patterns give."""
    from nexus_cli.core import text

    def slow_visible(s: str, keep_lines: bool = True) -> str:
        if not keep_lines:
            s = s.replace("\n", "\\n").replace("\t", "\\t")
        return text._pattern(text.CONTROL).sub(text._escape, s)

    samples = [chr(c) for c in range(128)]
    samples += [f"a{c}b\nc{c}\r\nd" for c in samples] + ["", " x ", "a\rb", "a\x0bb\x0cc"]
    for s in samples:
        for keep in (True, False):
            assert text.visible(s, keep) == slow_visible(s, keep), (s, keep)
        first = text._pattern(text.LINE_BREAK).split(s.strip(), 1)[0]
        assert text.one_line(s) == slow_visible(first, False), s
        assert text.quoted(s) == '"' + slow_visible(first.replace("\\", "\\\\")
                                                    .replace('"', '\\"'), False) + '"', s


def test_no_escapes_for_pipes_or_no_color(nx, pair, monkeypatch):
    nx("send", "codex", "\x1b]0;title\x07hi \x1b[2J", env=A)
    assert "\x1b" not in nx("peers", env=A).out + nx("inbox", env=B).out
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    out = nx("peers", env=A).out
    assert not re.search(r"\x1b\[[0-9;]*3[0-7]m", out), out  # no colour, whatever the style
    assert "\x1b]" not in nx("inbox", env=B).out  # peer text never carries terminal control
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert "\x1b" not in nx("peers", env=A).out


def test_path_is_the_path_alone(nx, home):
    r = nx("path")
    assert r.out == f"{home}\n"


@pytest.mark.parametrize("command", ["help", "man"])
def test_help_and_man_of_no_command_say_so_once(nx, command):
    r = nx(command, "task", "nope")
    assert r.code == 2 and r.err == ("nexus: usage_error: nexus task (no command `nope`; "
                                     "`nexus task --help` lists them)\n")


@pytest.mark.parametrize(("args", "usage"), [
    (("peers",), "Usage: nexus peers [OPTIONS] [QUERY]"),
    (("send",), "Usage: nexus send [OPTIONS] TARGET TEXT"),
    (("task", "create"), "Usage: nexus task create [OPTIONS] [TEXT]"),
    (("inbox",), "Usage: nexus inbox [OPTIONS] [PEER]"),
])
def test_usage_lines_tell_the_truth(nx, args, usage):
    assert nx(*args, "--help").out.startswith(usage)


@pytest.mark.parametrize(("args", "shown"), [
    (("install",), "install [OPTIONS] {claude|codex|git-hook}"), (("listen",), "{on|off}"),
    (("report",), "--status [completed|blocked|failed]"),
    (("delegate",), "--mode [auto|queue|steer]"),
])
def test_choices_are_listed(nx, args, shown):
    out = nx(*args, "--help").out
    assert shown in out, out


def test_required_options_are_marked(nx):
    out = nx("report", "--help").out
    status, result = out.split("--status ")[1], out.split("--result ")[1]
    assert "[required]" in status.split("--result")[0] and "[required]" in result.split("--json")[0]


def complete(nx, monkeypatch, words: str, env: dict | None = None) -> list[str]:
    monkeypatch.setenv("_NEXUS_COMPLETE", "bash_complete")
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", str(len(words.split()) - (0 if words.endswith(" ") else 1)))
    out = nx(env=env).out
    return [line.split(",", 1)[1] for line in out.splitlines() if "," in line]


def test_completion_offers_commands_choices_and_sessions(nx, pair, monkeypatch):
    assert {"send", "peers", "inbox", "completion"} <= set(complete(nx, monkeypatch, "nexus "))
    assert complete(nx, monkeypatch, "nexus install ") == ["claude", "codex", "git-hook"]
    assert complete(nx, monkeypatch, "nexus report t-1 --status c") == ["completed"]
    assert set(complete(nx, monkeypatch, "nexus send ")) >= {"claude@work", "s-000000020000",
                                                             "codex@work"}
    assert complete(nx, monkeypatch, "nexus send cod") == ["codex@work"]


def test_completion_scripts_are_printed(nx):
    for shell in ("bash", "zsh", "fish"):
        r = nx("completion", shell)
        assert r.code == 0 and "_NEXUS_COMPLETE" in r.out, shell
    assert nx("completion", "tcsh").code == 2


def test_plain_columns_line_up_under_wide_characters():
    from nexus_cli.core.human import Table
    from nexus_cli.core.text import width

    lines = Table(["n", "path", "by"], [["1", "dir/日本 file.py", "me"], ["2", "a.py", "you"],
                                        ["3", "e\u0301t\u00e9.py", "x"]]).plain().splitlines()
    assert len({width(line[: line.rindex("  ") + 2]) for line in lines}) == 1, lines


def test_the_board_s_columns_fit_by_terminal_columns():
    from nexus_cli.core.text import width
    from nexus_cli.insight.render import fit

    lines = fit(["session", "doing"], [["日本語のセッション名前です", "editing 日本 file"],
                                       ["ascii", "x" * 100]], 40, (0, 1))
    assert all(width(line) <= 40 for line in lines)
    starts = {width(lines[1][: lines[1].index("editing")]), width(lines[2][: lines[2].index("x")])}
    assert len(starts) == 1, lines  # the second column starts at one terminal column


def test_a_waits_spinner_line_is_cleared_before_the_result(nx, monkeypatch):
    """`nexus run` showed `- run r-… (running) (0 s, Ctrl-C to stop)run  r-… done`: a tool that
    showed a wait's spinner and returned without clearing it. The CLI clears it once the tool
    returns (or fails), whatever the tool did."""
    from nexus_cli.cli import output
    from nexus_cli.core import registry

    seen: list[float] = []
    monkeypatch.setattr(output, "spinner", lambda: lambda what, seconds: seen.append(seconds))
    real = registry.invoke

    def waits(tool, ctx, raw, namer):
        ctx.progress("run r-1 (running)", 1.0)
        return real(tool, ctx, raw, namer)

    monkeypatch.setattr(registry, "invoke", waits)
    nx("peers")
    assert seen == [1.0, -1]
