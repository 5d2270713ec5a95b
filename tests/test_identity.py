"""Who is calling: --as, the client's environment, process ancestry, else the shell user; and a
session may only act as itself."""

from __future__ import annotations

import json
import os
import sys

from helpers import claude_env, codex_env, sid
from nexus_cli.core import identity
from standin import StandIn


def test_handles_and_names():
    assert identity.handle_base("claude:8f3a1c2b-7d4e-4a1b-9c3d-2e5f6a7b8c9d") == "s-8f3a1c2b7d4e"
    assert identity.handle_base("user:alice") == "u-alice"
    assert identity.base_name("claude:x", "/home/a/my project") == "claude@my-project"


def test_project_root_is_the_git_top_level(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    deep = tmp_path / "repo" / "src" / "pkg"
    deep.mkdir(parents=True)
    assert identity.project_root(str(deep)) == str(tmp_path / "repo")
    assert identity.project_root(str(tmp_path)) == str(tmp_path)


def test_environment_names_the_caller(nx, hook, chdir_work):
    hook("claude", "SessionStart", sid(1), source="startup")
    w = nx("whoami", "--json", env=claude_env(sid(1))).json
    assert (w["id"], w["source"], w["registered"], w["status"]) == (
        f"claude:{sid(1)}", "env", True, "idle")
    w = nx("whoami", "--json", env=codex_env(sid(5))).json
    assert (w["id"], w["registered"]) == (f"codex:{sid(5)}", False)
    w = nx("whoami", "--json").json
    assert w["id"] == identity.user_id() and w["source"] == "user"


def test_a_session_may_not_act_as_another(nx, hook, chdir_work):
    hook("claude", "SessionStart", sid(1), source="startup")
    hook("codex", "SessionStart", sid(2), source="startup")
    r = nx("send", "--as", f"codex:{sid(2)}", "claude", "forged", env=claude_env(sid(1)))
    assert r.code == 5 and "impersonation_refused" in r.err
    # naming itself is fine
    r = nx("whoami", "--as", "claude@work", "--json", env=claude_env(sid(1)))
    assert r.code == 0 and r.json["source"] == "option"
    # the person at the shell may speak for a session (scripts, demos)
    r = nx("send", "--as", "codex@work", "claude", "hello", "--json")
    assert r.code == 0 and r.json["to"]["id"] == f"claude:{sid(1)}"


def test_process_ancestry_identifies_a_hookless_shell(hook, home, chdir_work, fake, tmp_path):
    """A command run by the agent's shell tool, with the client's variables scrubbed, is still
    recognised as that session through its registered client pid."""
    with StandIn("codex", str(tmp_path)) as codex:
        fake.procs[codex.pid] = fake.real.get(codex.pid)
        hook("codex", "SessionStart", sid(3), source="startup", client_pid=codex.pid)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX", "CLAUDE"))}
        env["PYTHONPATH"] = os.pathsep.join(sys.path)
        got = codex.run([sys.executable, "-m", "nexus_cli", "whoami", "--json"], env=env)
        who = json.loads(got["out"])
        assert (who["id"], who["source"]) == (f"codex:{sid(3)}", "ancestry")
        forged = codex.run([sys.executable, "-m", "nexus_cli", "send", "--as", "user:someone",
                            "x", "y"], env=env)
        assert forged["code"] == 5 and "impersonation_refused" in forged["err"]


def test_successor_inherits_the_callers_identity(nx, hook, chdir_work, fake):
    claude = fake.spawn("claude")
    hook("claude", "SessionStart", sid(1), source="startup", client_pid=claude)
    hook("claude", "SessionStart", sid(2), source="clear", client_pid=claude)
    # a process still carrying the old id (the MCP server's stale environment) is the new one
    assert nx("whoami", "--json", env=claude_env(sid(1))).json["id"] == f"claude:{sid(2)}"
