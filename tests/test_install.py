"""`nexus install|uninstall claude|codex` and `nexus doctor` on empty, existing, commented,
malformed and unwritable configurations."""

from __future__ import annotations

import errno
import json
import os
import tomllib
from pathlib import Path

import pytest

from nexus_cli.clients import configfile

EVENTS = {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd",
          "PermissionRequest"}


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_install_claude_on_an_empty_home(nx, fakehome, home):
    r = nx("install", "claude", "--json")
    assert r.code == 0, r.err
    assert [f["action"] for f in r.json["files"]] == ["created", "created"]
    settings = json.loads((fakehome / ".claude" / "settings.json").read_text())
    assert set(settings["hooks"]) == EVENTS
    stop = settings["hooks"]["Stop"][0]["hooks"]
    assert stop[1]["asyncRewake"] is True
    assert stop[1]["command"].endswith("nexus hook claude --wait")
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    exe = command.split()[2]
    assert os.path.isabs(exe) and os.access(exe, os.X_OK)
    assert command == f"[ -x {exe} ] || exit 0; NEXUS_HOME={home} {exe} hook claude"
    assert settings["permissions"]["allow"] == ["mcp__nexus"]
    server = json.loads((fakehome / ".claude.json").read_text())["mcpServers"]["nexus"]
    assert server == {"type": "stdio", "command": exe, "args": ["mcp"],
                      "env": {"NEXUS_HOME": str(home)}}
    before = snapshot(fakehome)
    again = nx("install", "claude", "--json").json
    assert [f["action"] for f in again["files"]] == ["unchanged", "unchanged"]
    assert snapshot(fakehome) == before  # idempotent to the byte


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_the_installed_hooks_are_silent_once_nexus_is_removed(nx, fakehome, home, tmp_path,
                                                              client):
    """`pipx uninstall nexus-cli` without `nexus uninstall` first: every handler nexus installed
    tests that its script is there and exits 0 with no output when it is not, so the client
    reports no failing hook at start, on each prompt or at each stop. While it is there, the
    handler runs it."""
    import subprocess
    import sys

    assert nx("install", client).code == 0
    config = fakehome / (".claude/settings.json" if client == "claude" else ".codex/hooks.json")
    table = json.loads(config.read_text())["hooks"]
    script = os.path.join(os.path.dirname(sys.executable), "nexus")
    commands = [h["command"] for groups in table.values() for g in groups for h in g["hooks"]]
    assert len(commands) >= len(EVENTS) and all(script in c for c in commands)
    (home / "reserved").touch()  # the reservation marker: the edit check's guard passes
    stdin = json.dumps({"hook_event_name": "Stop", "session_id": "x", "cwd": str(tmp_path)})
    env = {**os.environ, "NEXUS_RUN": "1", "NEXUS_DATABASE_URL": "postgresql:///x"}
    gone = str(tmp_path / "removed" / "bin" / "nexus")
    for command in commands:
        # every guard passes (a run, a team database, a reservation marker): only nexus is gone
        removed = command.replace(script, gone)
        assert removed != command
        done = subprocess.run(["sh", "-c", removed], input=stdin, capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=60)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), (removed, done)
    fake = tmp_path / "fake"
    fake.write_text("#!/bin/sh\necho RAN \"$@\"\n")
    fake.chmod(0o755)
    for command in commands[:1]:  # and while it is there, it runs
        done = subprocess.run(["sh", "-c", command.replace(script, str(fake))], input=stdin,
                              capture_output=True, text=True, env=env, timeout=60)
        assert done.stdout.startswith("RAN hook"), done


@pytest.mark.parametrize("client", ["claude", "codex", "git-hook"])
def test_a_relative_nexus_home_is_installed_as_the_absolute_path_it_means(
        nx, fakehome, home, tmp_path, monkeypatch, client):
    """Hooks and MCP servers start in every session's own directory: a relative NEXUS_HOME
    written as given would give each project a store of its own."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    r = nx("install", client, "--json", env={"NEXUS_HOME": "nexus-home"})
    assert r.code == 0, r.err
    written = "".join(p.read_text() for p in [*fakehome.rglob("*"), *tmp_path.joinpath(
        ".git").rglob("*")] if p.is_file() and not p.name.endswith("-backup"))
    assert f"NEXUS_HOME={home}" in written, written  # the hooks' commands
    server_env = {"claude": f'"NEXUS_HOME": "{home}"', "codex": f'NEXUS_HOME = "{home}"'}
    if client in server_env:  # and the MCP server's environment (~/.claude.json, config.toml)
        assert server_env[client] in written, written
    assert "NEXUS_HOME=nexus-home" not in written and '"nexus-home"' not in written


def test_existing_claude_settings_are_preserved_and_uninstall_is_exact(nx, fakehome):
    (fakehome / ".claude").mkdir()
    mine = {"model": "opus", "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(.env)"]},
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
                      "Notification": [{"matcher": "",
                                        "hooks": [{"type": "command", "command": "x"}]}]}}
    claude_json = {"numStartups": 3, "projects": {"/a": {"allowedTools": []}},
                   "mcpServers": {"other": {"type": "stdio", "command": "other-server"}}}
    (fakehome / ".claude" / "settings.json").write_text(json.dumps(mine, indent=4))
    (fakehome / ".claude.json").write_text(json.dumps(claude_json))
    assert nx("install", "claude").code == 0
    settings = json.loads((fakehome / ".claude" / "settings.json").read_text())
    assert settings["model"] == "opus" and settings["permissions"]["deny"] == ["Read(.env)"]
    assert settings["permissions"]["allow"] == ["Bash(ls:*)", "mcp__nexus"]
    assert settings["hooks"]["Stop"][0] == mine["hooks"]["Stop"][0]  # theirs first, ours after
    assert len(settings["hooks"]["Stop"]) == 2
    assert settings["hooks"]["Notification"] == mine["hooks"]["Notification"]
    cj = json.loads((fakehome / ".claude.json").read_text())
    assert cj["numStartups"] == 3 and set(cj["mcpServers"]) == {"other", "nexus"}
    assert (fakehome / ".claude" / "settings.json.nexus-backup").exists()
    assert nx("uninstall", "claude").code == 0
    assert json.loads((fakehome / ".claude" / "settings.json").read_text()) == mine
    assert json.loads((fakehome / ".claude.json").read_text()) == claude_json


COMMENTED = """# my codex config
model = "gpt-5"   # the default model

[mcp_servers.docs]
command = "docs-server"  # keep me
args = ["--port", "1"]

# a table after the servers
[projects."/home/me/app"]
trust_level = "trusted"
"""


def test_codex_config_keeps_every_byte_outside_its_table(nx, fakehome, home):
    codex = fakehome / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(COMMENTED)
    r = nx("install", "codex", "--json")
    assert r.code == 0, r.err
    text = (codex / "config.toml").read_text()
    assert text.startswith(COMMENTED.rstrip("\n"))
    data = tomllib.loads(text)
    assert data["mcp_servers"]["nexus"]["args"] == ["mcp"]
    assert data["mcp_servers"]["nexus"]["default_tools_approval_mode"] == "approve"
    assert data["mcp_servers"]["nexus"]["env"] == {"NEXUS_HOME": str(home)}
    assert data["mcp_servers"]["docs"]["command"] == "docs-server"
    hooks = json.loads((codex / "hooks.json").read_text())["hooks"]
    assert set(hooks) == EVENTS and hooks["Stop"][0]["hooks"][1]["async"] is True
    assert any("Codex skips hooks" in n for n in r.json["notes"])
    assert nx("install", "codex", "--json").json["files"][1]["action"] == "unchanged"
    assert nx("uninstall", "codex").code == 0
    assert (codex / "config.toml").read_text() == COMMENTED
    assert not (codex / "hooks.json").exists()  # it held only what install added


def test_codex_table_in_the_middle_is_replaced_in_place_of_nothing_else(nx, fakehome):
    codex = fakehome / ".codex"
    codex.mkdir()
    text = ('a = 1\n\n[mcp_servers.nexus]\ncommand = "/old/nexus"\nargs = ["mcp"]\n\n'
            '[mcp_servers.nexus.env]\nX = "1"\n\n[tui]\ntheme = "dark" # mine\n')
    (codex / "config.toml").write_text(text)
    assert nx("install", "codex").code == 0
    new = (codex / "config.toml").read_text()
    assert new.startswith('a = 1\n\n[tui]\ntheme = "dark" # mine\n')
    assert "/old/nexus" not in new and tomllib.loads(new)["tui"] == {"theme": "dark"}


def test_a_comment_heading_the_table_after_nexus_stays_on_uninstall(nx, fakehome):
    assert nx("install", "codex").code == 0
    config = fakehome / ".codex" / "config.toml"
    mine = '# ---- my profiles (keep) ----\n[profiles.fast]\nmodel = "small"\n'
    config.write_text(config.read_text() + mine)
    assert nx("uninstall", "codex").code == 0
    assert config.read_text() == mine


@pytest.mark.parametrize("client,name,content", [
    ("claude", ".claude/settings.json", "{not json"),
    ("claude", ".claude.json", "[1, 2]"),
    ("codex", ".codex/config.toml", "model = = 'x'\n"),
    ("codex", ".codex/hooks.json", "{\"hooks\": "),
])
def test_malformed_files_are_refused_untouched(nx, fakehome, client, name, content):
    path = fakehome / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    before = snapshot(fakehome)
    r = nx("install", client)
    assert r.code == 8 and "config_invalid" in r.err and str(path) in r.err
    assert snapshot(fakehome) == before
    assert nx("install", client, "--dry-run").code == 8


def test_inline_nexus_table_is_a_conflict(nx, fakehome):
    (fakehome / ".codex").mkdir()
    (fakehome / ".codex" / "config.toml").write_text(
        'mcp_servers = { nexus = { command = "x" } }\n')
    before = snapshot(fakehome)
    r = nx("install", "codex")
    assert r.code == 8 and "config_conflict" in r.err
    assert snapshot(fakehome) == before


def test_dry_run_shows_the_diff_and_changes_nothing(nx, fakehome):
    r = nx("install", "claude", "--dry-run")
    assert r.code == 0 and "+++ " in r.out and "mcp__nexus" in r.out and "would be created" in r.out
    assert snapshot(fakehome) == {}


def test_unwritable_config_is_reported_and_nothing_half_written(nx, fakehome, monkeypatch):
    (fakehome / ".claude").write_text("a file where a directory should be")
    r = nx("install", "claude")
    assert r.code == 8 and "config_unwritable" in r.err and "Traceback" not in r.err

    (fakehome / ".claude").unlink()
    (fakehome / ".claude").mkdir()
    (fakehome / ".claude" / "settings.json").write_text("{}")

    def refuse(src, dst):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(configfile.os, "replace", refuse)
    r = nx("install", "claude")
    assert r.code == 8 and "Read-only file system" in r.err
    assert (fakehome / ".claude" / "settings.json").read_text() == "{}"
    assert not [p for p in (fakehome / ".claude").iterdir() if p.name.startswith(".settings")]


def test_project_scope(nx, fakehome, tmp_path, monkeypatch):
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    monkeypatch.chdir(proj)
    r = nx("install", "codex", "--scope", "project", "--json")
    assert r.code == 0
    assert (proj / ".codex" / "hooks.json").exists() and (proj / ".codex" / "config.toml").exists()
    assert any("trusted projects" in n for n in r.json["notes"])
    assert nx("install", "claude", "--scope", "project").code == 0
    assert "nexus" in json.loads((proj / ".mcp.json").read_text())["mcpServers"]


def test_doctor_healthy_and_broken(nx, fakehome, home):
    assert nx("install", "claude").code == 0
    assert nx("install", "codex").code == 0
    r = nx("doctor", "--quick", "--json")
    assert r.code == 0, r.out
    by_name = {c["name"]: c for c in r.json["checks"]}
    assert by_name["claude hooks"]["status"] == "ok" and by_name["codex mcp"]["status"] == "ok"
    assert by_name["claude"]["status"] == "warn"  # not on PATH here
    assert by_name["codex hook trust"]["status"] == "warn"
    # "all good" only when it is: warnings are counted, not called good
    warned = sum(c["status"] == "warn" for c in r.json["checks"])
    assert nx("doctor", "--quick").out.rstrip().endswith(f"\n{warned} warnings")
    from nexus_cli.setup.render import summary

    assert (summary(0, 0), summary(0, 1), summary(2, 3)) == ("all good", "1 warning",
                                                             "2 failed, 3 warnings")
    # break it: hooks point at an executable that does not exist
    settings = fakehome / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace(
        by_name["claude mcp"]["detail"].split(": ")[1].split()[0], "/nowhere/nexus"))
    r = nx("doctor", "--quick")
    assert r.code == 1 and "FAIL  claude hooks" in r.out
    assert "not executable: /nowhere/nexus" in r.out
    # and a corrupt store
    home.mkdir(exist_ok=True, mode=0o700)
    (home / "nexus.db").write_bytes(b"garbage" * 100)
    os.chmod(home / "nexus.db", 0o600)
    r = nx("doctor", "--quick", "--json")
    assert r.code == 1 and r.json["checks"][0]["status"] == "fail"
    assert (home / "nexus.db").read_bytes() == b"garbage" * 100


def test_doctor_notices_the_hook_table_of_an_older_nexus(nx, fakehome):
    assert nx("install", "claude").code == 0
    settings = fakehome / ".claude" / "settings.json"
    conf = json.loads(settings.read_text())
    conf["hooks"]["PreToolUse"][0]["matcher"] = "*"  # as nexus 0.1 installed it
    settings.write_text(json.dumps(conf))
    r = nx("doctor", "--quick", "--json")
    check = {c["name"]: c for c in r.json["checks"]}["claude hooks"]
    assert check["status"] == "warn" and "older nexus" in check["detail"]
    assert check["fix"] == "run `nexus install claude --scope user`"
    assert nx("install", "claude").code == 0
    check = {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}["claude hooks"]
    assert check["status"] == "ok"


def test_doctor_never_writes(nx, fakehome, home):
    before = snapshot(fakehome)
    assert nx("doctor", "--quick").code == 0
    assert snapshot(fakehome) == before and not home.exists()


def test_doctor_sees_which_codex_hooks_were_reviewed(nx, fakehome):
    """Codex 0.171 records each reviewed handler as [hooks.state."<file>:<event>:<group>:<n>"]."""
    assert nx("install", "codex").code == 0
    hooks = fakehome / ".codex" / "hooks.json"
    by_name = {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}
    assert by_name["codex hook trust"]["status"] == "warn"
    assert "of 9 nexus hooks, 9 not reviewed" in by_name["codex hook trust"]["detail"]
    state = "".join(f'\n[hooks.state."{hooks}:{e}:{g}:{n}"]\ntrusted_hash = "sha256:x"\n'
                    for e, g, n in (("session_start", 0, 0), ("user_prompt_submit", 0, 0),
                                    ("pre_tool_use", 0, 0), ("pre_tool_use", 1, 0),
                                    ("post_tool_use", 0, 0), ("stop", 0, 0), ("stop", 0, 1),
                                    ("permission_request", 0, 0), ("session_end", 0, 0)))
    config = fakehome / ".codex" / "config.toml"
    config.write_text(config.read_text() + state)
    by_name = {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}
    # a key alone is not trust: Codex runs a handler whose recorded hash matches it
    assert by_name["codex hook trust"]["status"] == "warn"
    assert "9 changed since review" in by_name["codex hook trust"]["detail"]
    from nexus_cli.clients.codex import trust

    for _, key, value in trust.hashes(str(hooks), json.loads(hooks.read_text())):
        config.write_text(config.read_text().replace(
            f'[hooks.state."{key}"]\ntrusted_hash = "sha256:x"',
            f'[hooks.state."{key}"]\ntrusted_hash = "{value}"'))
    by_name = {c["name"]: c for c in nx("doctor", "--quick", "--json").json["checks"]}
    assert by_name["codex hook trust"]["status"] == "ok"
    assert nx("install", "codex", "--json").json["files"][1]["action"] == "unchanged"


@pytest.mark.parametrize("client,name,content", [
    ("claude", ".claude/settings.json", {"hooks": {"Stop": "my-hook"}}),
    ("claude", ".claude/settings.json", {"hooks": [{"Stop": []}]}),
    ("claude", ".claude/settings.json", {"hooks": {"Stop": ["not a group"]}}),
    ("claude", ".claude/settings.json", {"permissions": {"allow": "Bash(*)"}}),
    ("claude", ".claude/settings.json", {"permissions": ["allow everything"]}),
    ("claude", ".claude.json", {"mcpServers": [{"name": "x"}]}),
    ("claude", ".claude.json", {"mcpServers": {"nexus": "x"}}),
    ("codex", ".codex/hooks.json", {"hooks": {"Stop": "my-hook"}}),
    ("codex", ".codex/config.toml", "[mcp_servers]\nnexus = 5\n"),
    ("codex", ".codex/config.toml", "mcp_servers = [1, 2]\n"),
])
def test_a_shape_nexus_does_not_understand_is_refused_byte_for_byte(nx, fakehome, client, name,
                                                                   content):
    path = fakehome / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    before = snapshot(fakehome)
    for command in ("install", "uninstall"):
        r = nx(command, client, "--json")
        assert r.code == 8 and r.json["error"]["code"] == "config_invalid", (command, r.out)
        assert "unexpected shape" in r.json["error"]["reason"]
        assert snapshot(fakehome) == before
    r = nx("doctor", "--quick", "--json")  # reports it, never crashes
    assert r.code == 1 and "Traceback" not in r.err
    failed = [c for c in r.json["checks"] if c["status"] == "fail"]
    assert failed and all("nexus install" not in c["fix"] for c in failed)


def test_uninstall_removes_only_what_carries_nexus_s_own_shape(nx, fakehome):
    (fakehome / ".claude").mkdir()
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command",
                                           "command": "audit.sh && nexus hook claude"}]}]}}
    (fakehome / ".claude" / "settings.json").write_text(json.dumps(mine))
    assert nx("install", "claude").code == 0
    assert nx("uninstall", "claude").code == 0
    assert json.loads((fakehome / ".claude" / "settings.json").read_text()) == mine
    backup = json.loads((fakehome / ".claude" / "settings.json.nexus-backup").read_text())
    assert backup["hooks"]["Stop"][0] == mine["hooks"]["Stop"][0]  # not mangled either


def test_a_symlinked_config_is_edited_at_its_target(nx, fakehome, tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "settings.json").write_text('{"model": "opus"}')
    (fakehome / ".claude").mkdir()
    (fakehome / ".claude" / "settings.json").symlink_to(dotfiles / "settings.json")
    assert nx("install", "claude").code == 0
    assert (fakehome / ".claude" / "settings.json").is_symlink()
    data = json.loads((dotfiles / "settings.json").read_text())
    assert data["model"] == "opus" and "hooks" in data
    assert nx("uninstall", "claude").code == 0
    assert json.loads((dotfiles / "settings.json").read_text()) == {"model": "opus"}


def test_a_read_only_file_is_respected(nx, fakehome):
    (fakehome / ".claude").mkdir()
    settings = fakehome / ".claude" / "settings.json"
    settings.write_text("{}")
    settings.chmod(0o444)
    before = snapshot(fakehome)
    r = nx("install", "claude", "--json")
    assert r.code == 8 and r.json["error"]["code"] == "config_unwritable"
    assert "read-only (mode 0444)" in r.json["error"]["reason"]
    assert snapshot(fakehome) == before


def test_an_install_touching_two_files_writes_both_or_neither(nx, fakehome, monkeypatch):
    (fakehome / ".claude").mkdir()
    (fakehome / ".claude" / "settings.json").write_text('{"model": "opus"}')
    (fakehome / ".claude.json").write_text('{"numStartups": 1}')
    (fakehome / ".claude.json").chmod(0o444)
    before = snapshot(fakehome)
    r = nx("install", "claude")
    assert r.code == 8 and "nothing was changed" in r.err
    assert snapshot(fakehome) == before  # settings.json was not written first
    (fakehome / ".claude.json").chmod(0o644)
    real = configfile._atomic
    calls = []

    def second_write_fails(target, text, mode):
        calls.append(target)
        if target.endswith(".claude.json"):
            raise OSError(errno.EIO, "Input/output error")
        return real(target, text, mode)

    monkeypatch.setattr(configfile, "_atomic", second_write_fails)
    r = nx("install", "claude")
    assert r.code == 8 and "Input/output error" in r.err
    monkeypatch.setattr(configfile, "_atomic", real)
    assert json.loads((fakehome / ".claude" / "settings.json").read_text()) == {"model": "opus"}
    assert json.loads((fakehome / ".claude.json").read_text()) == {"numStartups": 1}


@pytest.mark.parametrize(("client", "name"), [("codex", ".codex/hooks.json"),
                                              ("claude", ".claude/settings.json")])
@pytest.mark.parametrize("indent", [4, "\t"])
def test_a_json_file_keeps_its_indentation(nx, fakehome, client, name, indent):
    path = fakehome / name
    path.parent.mkdir(parents=True, exist_ok=True)
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "audit.sh"}]}]}}
    path.write_text(json.dumps(mine, indent=indent) + "\n")
    assert nx("install", client).code == 0
    unit = " " * indent if isinstance(indent, int) else indent
    assert f'\n{unit}"hooks": {{\n{unit}{unit}"' in path.read_text()
    assert nx("uninstall", client).code == 0
    assert path.read_text() == json.dumps(mine, indent=indent) + "\n"
