"""Help that helps (issue 38, item 9): `nexus --help` lists the commands by group as the man pages
and docs do, the clients' entry points apart; every command's help ends with an example that
runs as written; the command line's help names commands, never the MCP tool names behind them."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import click
import pytest

from nexus_cli.cli import build
from nexus_cli.core.registry import GROUP_TITLES, specs
from nexus_cli.gen.manpages import _commands

CLI = {name: s for name, s in specs().items() if s["cli"]}


def context(words: list[str]) -> click.Context:
    """The click context `nexus WORDS` parses to, without running it."""
    cmd: click.Command = build()
    while isinstance(cmd, click.Group) and words:
        sub = cmd.get_command(click.Context(cmd), words[0])
        if sub is None:
            break
        cmd, words = sub, words[1:]
    return cmd.make_context(cmd.name, list(words))


@pytest.mark.parametrize("name", sorted(CLI))
def test_every_command_has_an_example_that_parses(name: str) -> None:
    spec = CLI[name]
    example = spec["example"]
    path = "nexus " + " ".join(spec["cli"]["path"])
    assert example.startswith(path + " ") or example == path, (name, example)
    words = shlex.split(example.split(" < ")[0])[1:]  # the command, not its input redirection
    ctx = context(words)
    assert ctx.command.name == spec["cli"]["path"][-1]


def test_the_example_ends_each_commands_help_and_its_manual(nx) -> None:
    shown = nx("send", "--help").out
    assert shown.rstrip().endswith("Example:\n    " + CLI["send"]["example"])
    from nexus_cli.core import data

    with open(data.path("man", "nexus-messages.1"), encoding="utf-8") as fh:
        page = fh.read()
    assert "nexus send claude@shop \\(aqthe tests pass on main\\(aq" in page or \
        "nexus send claude@shop 'the tests pass on main'" in page


def test_the_top_help_groups_the_commands_with_the_entry_points_last(nx) -> None:
    shown = nx("--help").out
    titles = [t[:1].upper() + t[1:] + ":" for t in GROUP_TITLES.values()]
    at = [shown.index(t) for t in titles if t in shown]
    assert len(at) == len(GROUP_TITLES) and at == sorted(at)  # every group, in their order
    last = shown[shown.index(titles[-1]):]
    for internal in ("hook", "mcp", "completion"):
        assert re.search(rf"^  {internal} ", last, re.M)
        assert not re.search(rf"^  {internal} ", shown[:shown.index(titles[-1])], re.M)
    assert "commands." not in shown  # no "Fs commands." filler for a command group
    for line in shown.splitlines():
        assert line.startswith("Usage:") or not line.endswith("..."), line  # none cut short


def test_no_help_names_an_mcp_tool_where_a_command_is_meant(nx) -> None:
    """`run --help` said `run_result` and `preset_list`: at a shell they are `nexus run result`
    and `nexus preset list`."""
    mcp_only = [n for n in CLI if "_" in n]
    for path, _cmd in _commands(build()):
        shown = nx(*path.split(), "--help").out
        said = [n for n in mcp_only if re.search(rf"\b{n}\b", shown)]
        assert not said, (path, said)
    assert "`nexus run result`" in nx("run", "--help").out


@pytest.mark.usefixtures("terminal")
def test_approve_without_session_names_the_session_it_means(nx, routed) -> None:
    """`--session` was required, and click's "Missing option" said nothing of which one."""
    from helpers import WORKER, A, run_hook_in_thread, until

    thread, box = run_hook_in_thread("claude", "PermissionRequest", WORKER, env=routed,
                                     tool_name="Bash", tool_input={"command": "make"},
                                     permission_mode="default")
    got = until(lambda: (r := nx("approvals", "--json", env=A).json)["pending"] and r, 60,
                "the request to show up")
    aid = got["items"][0]["id"]
    r = nx("approve", aid, "allow-once", env=A)
    assert r.code == 2 and f"session claude:{WORKER}" in r.err
    assert f"`nexus approve {aid} allow-once --session claude:{WORKER}`" in r.err
    assert nx("approvals", "--json", env=A).json["pending"] == 1  # nothing was answered
    assert nx("approve", aid, "allow-once", "--session", f"claude:{WORKER}", env=A).code == 0
    thread.join(30)
    assert box["reply"][0]["hookSpecificOutput"]["decision"]["behavior"] == "allow"


def manual_check(nx) -> dict:
    return {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}[
        "manual pages"]


@pytest.mark.skipif(not shutil.which("man"), reason="needs man(1)")
def test_man_install_puts_the_pages_where_man_looks_and_doctor_follows(nx, fakehome,
                                                                        monkeypatch) -> None:
    """`man nexus` found nothing although the pages ship: `nexus man --install` puts them where
    pipx puts its own, and doctor says so before and after, with a fix that works as written."""
    monkeypatch.delenv("MANPATH", raising=False)
    monkeypatch.setenv("SHELL", "/bin/bash")
    (fakehome / ".local" / "bin").mkdir(parents=True)  # on a login shell's PATH, as Debian's
    profile = fakehome / ".profile"  # ~/.profile puts it once it exists (and pipx and uv do)
    profile.write_text('PATH="$HOME/.local/bin:$PATH"\n')
    before = manual_check(nx)
    assert before["status"] == "warn" and before["fix"] == "run `nexus man --install`"
    assert login("man -w nexus").returncode != 0
    r = nx("man", "--install")
    assert r.code == 0 and "manual pages in" in r.out
    found = login("man -w nexus-messages")
    assert found.stdout.strip() == f"{fakehome}/.local/share/man/man1/nexus-messages.1"
    assert manual_check(nx)["status"] == "ok"
    page = fakehome / ".local/share/man/man1/nexus.1"
    page.write_text(page.read_text() + ".\\\" an older version\n")
    assert "another version" in manual_check(nx)["detail"]
    # off PATH, man does not look there: doctor's fix, followed literally, makes it look
    profile.write_text("")
    assert nx("man", "--install").code == 0
    told = manual_check(nx)
    assert told["status"] == "warn"
    command = re.fullmatch(r"run `(.+)`, then open a new shell", told["fix"])
    assert command is not None and "~/.profile" in command[1]
    assert login(command[1]).returncode == 0
    assert manual_check(nx)["status"] == "ok"


def login(command: str) -> subprocess.CompletedProcess:
    """`command` in a login bash, as a new terminal runs it."""
    return subprocess.run(["bash", "-lc", command], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)


def test_man_install_that_cannot_write_says_so(nx, fakehome) -> None:
    (fakehome / ".local" / "share").mkdir(parents=True)
    (fakehome / ".local" / "share" / "man").write_text("not a folder")
    r = nx("man", "--install")
    assert r.code == 8 and "man_unwritable" in r.err and "nexus man --install" in r.err
