"""Wiring the clients up, and checking the set-up."""

from __future__ import annotations

from ..core.registry import Tool, register
from . import doctor, install, render

register(Tool(
    name="install", group="clients", title="Wire a client up",
    description="Install nexus's hooks and MCP server into Claude Code or Codex (idempotent; "
    "unrelated settings kept; atomic write with a backup; --dry-run shows the diff).",
    details="git-hook: the commit guard, in the git repository you are in: its pre-commit hook "
    "runs `nexus guard --staged` and refuses a commit touching a file another session holds "
    "exclusively; a pre-commit hook already there is chained (kept as pre-commit.nexus-chained "
    "and run after the check). --scope and --tools are for claude and codex. codex --trust: "
    "also record nexus's handlers as reviewed in ~/.codex/config.toml (the `trusted_hash` "
    "Codex's /hooks review writes; Codex skips hooks not reviewed or changed since), only at "
    "your own interactive terminal, never for an agent.",
    args="InstallArgs", result="InstallResult", run=install.install, render=render.install,
    positional=("client",), destructive=True, idempotent=True, mcp=False, needs_caller=False,
    example="nexus install claude",
))
register(Tool(
    name="uninstall", group="clients", title="Unwire a client",
    description="Remove exactly what `nexus install` added to a client's configuration.",
    details="codex: also takes Codex's records of nexus's handlers (`[hooks.state.\"...\"]`, "
    "written by `install --trust` or your /hooks review) out of ~/.codex/config.toml, nothing "
    "else, and moves the records of the other hooks whose place in hooks.json the removal "
    "changes (Codex keys a review by place); a file it cannot read, or records in a form it "
    "cannot edit cleanly, are left as they are and a note says so, unless other hooks move: "
    "then nothing is changed (config_conflict), else Codex would skip them. git-hook: removes "
    "the commit guard and puts back the pre-commit hook it chained; a guard edited by hand is "
    "refused (remove it yourself).",
    args="UninstallArgs", result="InstallResult", run=install.uninstall, render=render.install,
    positional=("client",), destructive=True, idempotent=True, mcp=False, needs_caller=False,
    example="nexus uninstall codex --dry-run",
))
register(Tool(
    name="doctor", group="clients", title="Check the set-up",
    description="Read-only health check: the store, each client's hooks and MCP registration, "
    "hook trust, hook speed, stuck sessions. One line per check with a fix; exits 1 when any "
    "check fails.",
    args="DoctorArgs", result="DoctorResult", run=doctor.doctor, render=render.doctor,
    read_only=True, idempotent=True, mcp=False, needs_caller=False, exit_if=("ok", False, 1),
    example="nexus doctor",
))
