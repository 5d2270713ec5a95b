"""What a new user meets first: the documented install puts `nexus` on a login shell's PATH,
agents are told a command their shell can run, and `nexus` follows the conventions people know
(help, completion, exit codes, output without escapes when not on a terminal)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import A, sid

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_documented_install_puts_nexus_on_a_login_shell_path(tmp_path):
    """scripts/install.sh (pipx, fetched from the package index when missing: here from the
    wheelhouse scripts/test.sh made), then the greeting of a Claude Code session names `nexus`,
    which a login shell finds."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("")
    (home / ".profile").write_text('[ -f "$HOME/.bashrc" ] && . "$HOME/.bashrc"\n')
    python_dir = os.path.dirname(os.path.realpath(sys.executable))
    env = {"HOME": str(home), "PATH": f"{python_dir}:/usr/local/bin:/usr/bin:/bin",
           "PYTHONUSERBASE": str(home / ".local"), "NEXUS_HOME": str(tmp_path / "store"),
           "LANG": "C.UTF-8", "PIPX_HOME": str(home / ".local/share/pipx")}
    wheelhouse = os.environ.get("NEXUS_WHEELHOUSE")
    if wheelhouse:  # scripts/test.sh made it: the suite runs without a network
        env.update(PIP_FIND_LINKS=wheelhouse, PIP_NO_INDEX="1")
    done = subprocess.run([str(ROOT / "scripts" / "install.sh")], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    login = subprocess.run(["bash", "-lc", "command -v nexus"], env=env, capture_output=True,
                           text=True)
    nexus = login.stdout.strip()
    assert nexus == str(home / ".local" / "bin" / "nexus"), login.stderr
    assert subprocess.run(["bash", "-lc", "nexus install claude"], env=env,
                          capture_output=True).returncode == 0
    sys.path.insert(0, str(ROOT / "scripts"))
    from standin import StandIn

    with StandIn("claude", str(tmp_path / "client")) as claude:
        event = json.dumps({"hook_event_name": "SessionStart", "session_id": sid(1),
                            "cwd": str(tmp_path), "source": "startup"})
        got = claude.run([nexus, "hook", "claude"], {**env, **A}, event)
    greeting = json.loads(got["out"])["hookSpecificOutput"]["additionalContext"]
    assert "`nexus peers` lists sessions" in greeting, greeting


@pytest.mark.realprocs
def test_without_a_path_agents_are_told_the_absolute_path(hook, chdir_work):
    greeting = json.loads(hook("claude", "SessionStart", sid(1), source="startup").out)
    text = greeting["hookSpecificOutput"]["additionalContext"]
    command = re.search(r"`(\S+) peers` lists sessions", text).group(1)
    assert os.path.isabs(command) and os.access(command, os.X_OK), command
    assert "MCP tools peers, send, read" in text
